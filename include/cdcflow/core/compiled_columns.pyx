# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The event store's columns, built in compiled code: a row change appended as its values'
bytes, the Arrow arrays made from the buffers when a batch is written (store.events' writer).

The compiled binlog reader (source/compiled_reader.pyx) appends the rows it decodes here
without building a Python object per row; the writer appends every other event (DDL, rows
mysql-replication decoded) from its Python values.  The arrays equal what pyarrow builds from
the same values as Python objects (core.arrow_rows.rows_batch, the reference the tests compare
with).  A row's key texts may be set after it was appended (set_keys): the key stamper keys in
batches the rows the reader could not key itself (`pending`).  A string column's bytes fill a
mapping of its own, which goes to Arrow with the batch where it holds a huge page or more
(`_Mapped`): a batch's images are not copied again, and the pages are touched once."""

from cpython.buffer cimport PyBuffer_FillInfo
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset
from posix.mman cimport MADV_HUGEPAGE, MAP_ANONYMOUS, MAP_FAILED, MAP_PRIVATE, PROT_READ, PROT_WRITE, madvise, mmap, munmap

from cdcflow.core.growth cimport capacity, grown

import pyarrow as pa

cdef object STRING = pa.string()
cdef object INT64 = pa.int64()
cdef Py_ssize_t MAX_TEXT = 0x7FFFFFFF  # a string column's bytes: int32 offsets
cdef Py_ssize_t HUGE_PAGE = 2 * 1024 * 1024
cdef Py_ssize_t LEAST_TEXT = 65536  # a string column's first mapping


cdef char* _mapped(Py_ssize_t size) except NULL:
    """`size` bytes of a fresh anonymous mapping, which the kernel may back with huge pages
    (transparent huge pages: 'always', or 'madvise' as Debian's kernels have it).  A string
    column's bytes were copied into a new bytes object at each batch: touching that fresh memory
    4 KiB page by page cost pull 0.1-0.15 s of a 0.8 s bulk window (page faults), more than the
    copy itself; a column's own mapping, handed to Arrow, is touched once, a huge page at a time."""
    cdef void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    if p == MAP_FAILED:
        raise MemoryError()
    if size >= HUGE_PAGE:
        madvise(p, size, MADV_HUGEPAGE)  # advice: where the kernel takes none, 4 KiB pages
    return <char*>p


cdef Py_ssize_t _mapping_size(Py_ssize_t size) noexcept:
    """A mapping of at least `size` bytes: whole huge pages from one up, so that all of it can
    be backed by them."""
    if size < HUGE_PAGE:
        return size
    return (size + HUGE_PAGE - 1) // HUGE_PAGE * HUGE_PAGE


cdef class _Mapped:
    """A string column's bytes given to Arrow as they are (pa.py_buffer over this object, which
    Arrow's buffer keeps): the mapping is unmapped when the last array over it goes."""

    cdef char* data
    cdef Py_ssize_t size, cap

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, self.data, self.size, 1, flags)  # the view holds self: released with it

    def __dealloc__(self):
        if self.data != NULL:
            munmap(self.data, self.cap)


# The zero bytes every column null in a whole batch is made of (_all_null): one buffer, grown to
# the largest batch, shared by the arrays (Arrow's buffers are never written)
cdef object _zeros = pa.py_buffer(b"")


cdef object _all_null(Py_ssize_t n, bint text):
    """A column of `n` nulls over the shared zero bytes: its validity bits, its offsets or its
    values all zero, as the column's own would be, without new memory.  A batch's columns that
    only DDLs or other sources fill (start_ts, the DDLs' session, fk_checks_off, ...) were 10 MB
    of the 104 MB the bench's bulk window kept, each batch's copied into memory new to the
    process, whose first touches are most of pull's time in the kernel (docs/performance.md)."""
    global _zeros
    cdef Py_ssize_t need = (n + 1) * 8
    if _zeros.size < need:
        _zeros = pa.py_buffer(bytes(need))
    validity = _zeros.slice(0, (n + 7) // 8)
    if text:
        return pa.Array.from_buffers(STRING, n, [validity, _zeros.slice(0, (n + 1) * sizeof(int32_t)), _zeros.slice(0, 0)], n)
    return pa.Array.from_buffers(INT64, n, [validity, _zeros.slice(0, n * sizeof(int64_t))], n)


cdef _Mapped _hand_over(char* data, Py_ssize_t size, Py_ssize_t cap):
    cdef _Mapped m = _Mapped.__new__(_Mapped)
    m.data, m.size, m.cap = data, size, cap
    return m


cdef class Column:
    """One column's values: int64, or UTF-8 texts; a validity byte per row."""

    def __cinit__(self, bint text):
        self.text = text
        self.patched = None

    def __dealloc__(self):
        PyMem_Free(self.valid)
        PyMem_Free(self.ints)
        PyMem_Free(self.offsets)
        if self.data != NULL:
            munmap(self.data, self.cap)

    cdef int _rows(self, Py_ssize_t more) except -1:
        cdef Py_ssize_t cap
        if self.n + more <= self.rows_cap:
            return 0
        cap = capacity(self.rows_cap, self.n + more, 1024)
        self.valid = <uint8_t*>grown(self.valid, cap)
        if self.text:
            self.offsets = <int32_t*>grown(self.offsets, (cap + 1) * sizeof(int32_t))
            if self.n == 0:
                self.offsets[0] = 0
        else:
            self.ints = <int64_t*>grown(self.ints, cap * sizeof(int64_t))
        self.rows_cap = cap
        return 0

    cdef int put_null(self) except -1:
        self._rows(1)
        self.valid[self.n] = 0
        if self.text:
            self.offsets[self.n + 1] = <int32_t>self.size
        else:
            self.ints[self.n] = 0
        self.n += 1
        return 0

    cdef int put_int(self, int64_t v) except -1:
        self._rows(1)
        self.valid[self.n] = 1
        self.ints[self.n] = v
        self.n += 1
        return 0

    cdef int put_text(self, const char* s, Py_ssize_t size) except -1:
        self._rows(1)
        if self.size + size > self.cap:
            self._bytes(self.size + size)
        memcpy(self.data + self.size, s, size)
        self.size += size
        self.valid[self.n] = 1
        self.offsets[self.n + 1] = <int32_t>self.size
        self.n += 1
        return 0

    cdef int _bytes(self, Py_ssize_t need) except -1:
        """Room for `need` bytes of text: a larger mapping with the bytes held moved into it
        (twice as large, capacity's way; a batch's first as large as the last batch took)."""
        cdef Py_ssize_t cap
        cdef char* grown_to
        if need > MAX_TEXT:
            raise OverflowError("a batch's column holds more than 2 GiB of text")
        cap = _mapping_size(capacity(self.cap, need, max(LEAST_TEXT, self.last_cap)))
        grown_to = _mapped(cap)
        if self.data != NULL:
            memcpy(grown_to, self.data, self.size)
            munmap(self.data, self.cap)
        self.data, self.cap = grown_to, cap
        return 0

    cdef int put_object(self, object v) except -1:
        cdef bytes b
        if v is None:
            return self.put_null()
        if self.text:
            b = (<str?>v).encode("utf-8")
            return self.put_text(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))
        return self.put_int(v)

    cdef int pad(self, Py_ssize_t rows) except -1:
        while self.n < rows:
            self.put_null()
        return 0

    cdef object value(self, Py_ssize_t row):
        if not self.valid[row]:
            return None
        if self.text:
            return PyUnicode_DecodeUTF8(self.data + self.offsets[row], self.offsets[row + 1] - self.offsets[row], NULL)
        return self.ints[row]

    cdef object array(self):
        """The column as an Arrow array (its patched rows as set)."""
        cdef Py_ssize_t i, nulls = 0
        cdef bytes bitmap
        cdef uint8_t* bits
        for i in range(self.n):
            nulls += not self.valid[i]
        if nulls == self.n and self.n and not self.patched:
            return _all_null(self.n, self.text)
        validity = None
        if nulls:
            bitmap = PyBytes_FromStringAndSize(NULL, (self.n + 7) // 8)
            bits = <uint8_t*>PyBytes_AS_STRING(bitmap)
            memset(bits, 0, (self.n + 7) // 8)
            for i in range(self.n):
                if self.valid[i]:
                    bits[i >> 3] |= 1 << (i & 7)
            validity = pa.py_buffer(bitmap)
        if self.text:
            if self.n == 0:
                arr = pa.array([], STRING)
            else:
                if self.size >= HUGE_PAGE:
                    # the bytes go with the array, not copied (_mapped); the next batch maps its own
                    data = pa.py_buffer(_hand_over(self.data, self.size, self.cap))
                    self.last_cap, self.data, self.cap = self.cap, NULL, 0
                else:  # a few pages: copied, the mapping kept for the next batch
                    data = pa.py_buffer(PyBytes_FromStringAndSize(self.data, self.size))
                arr = pa.Array.from_buffers(STRING, self.n, [
                    validity, pa.py_buffer(PyBytes_FromStringAndSize(<char*>self.offsets, (self.n + 1) * sizeof(int32_t))),
                    data], nulls)
        else:
            arr = pa.Array.from_buffers(INT64, self.n, [
                validity, pa.py_buffer(PyBytes_FromStringAndSize(<char*>self.ints, self.n * sizeof(int64_t)))], nulls)
        if self.patched:
            values = arr.to_pylist()
            for row, text in self.patched.items():
                values[row] = text
            arr = pa.array(values, STRING)
        return arr

    cdef void clear(self):
        self.n = self.size = 0
        self.patched = None

    cdef void cut(self, Py_ssize_t n):
        """Back to `n` rows."""
        if n < self.n:
            self.n = n
            if self.text:
                self.size = self.offsets[n]


cdef class EventColumns:
    """The rows of one batch of the event store, a Column per field of the event record
    (`names`, `text`: whether each is a string column).  A batch is written (`on_full`) when it
    holds `batch_rows` rows or `batch_chars` characters of images and statements, as the
    writer's reference counts them."""

    def __init__(self, names, text, Py_ssize_t batch_rows, Py_ssize_t batch_chars, on_full,
                 Py_ssize_t pending_batch=2000):
        self.names = list(names)
        self.columns = [Column(t) for t in text]
        by = dict(zip(self.names, self.columns))
        self.commit_ts, self.seq, self.schema, self.table, self.op = (
            by["commit_ts"], by["seq"], by["schema"], by["table"], by["op"])
        self.before, self.after, self.pk, self.before_key, self.after_key = (
            by["before"], by["after"], by["pk"], by["before_key"], by["after_key"])
        self.fk_checks_off, self.gtid, self.start_file, self.start_pos, self.event_time = (
            by["fk_checks_off"], by["gtid"], by["start_file"], by["start_pos"], by["event_time"])
        self.batch_rows, self.batch_chars, self.on_full = batch_rows, batch_chars, on_full
        self.pending_batch, self.on_pending = pending_batch, None

    def __dealloc__(self):
        PyMem_Free(self.pending)

    def wait_for_keys(self, on_pending) -> None:
        """Rows added from here on wait for their key texts (a stamper is attached): `on_pending`
        is called when `pending_batch` of them wait."""
        self.mark_pending, self.on_pending = True, on_pending

    def add(self, tuple values, Py_ssize_t chars) -> None:
        """One event from its Python values, in the fields' order; `chars`: the characters of
        its images and statement."""
        cdef Py_ssize_t i
        cdef Column c
        for i in range(len(self.columns)):
            c = <Column>self.columns[i]
            c.pad(self.n)
            c.put_object(values[i])
        if self.mark_pending and values[self.names.index("op")] != "ddl":
            self.add_pending(self.n)
        self.end_row(chars)

    cdef int add_pending(self, Py_ssize_t row) except -1:
        if self.npending == self.pending_cap:
            self.pending_cap = max(256, self.pending_cap * 2)
            self.pending = <int64_t*>grown(self.pending, self.pending_cap * sizeof(int64_t))
        self.pending[self.npending] = row
        self.npending += 1
        return 0

    cdef int end_row(self, Py_ssize_t chars) except -1:
        """The row appended to the columns it sets is complete."""
        self.n += 1
        self.chars += chars
        if self.npending >= self.pending_batch and self.on_pending is not None:
            self.on_pending()
        if self.n >= self.batch_rows or self.chars >= self.batch_chars:
            self.full()
        return 0

    cdef int full(self) except -1:
        self.on_full()
        return 0

    cdef int truncate(self, Py_ssize_t n, Py_ssize_t npending, Py_ssize_t chars) except -1:
        """Back to `n` rows (a rows event given up half-way goes to the Python decoder)."""
        cdef Column c
        for c in self.columns:
            c.cut(n)
        self.n, self.npending, self.chars = n, npending, chars
        return 0

    def pending_rows(self) -> list:
        """The rows waiting for their key texts, (index, schema, table, op, before, after,
        commit_ts) each; no longer waiting."""
        cdef Py_ssize_t i, row
        out = []
        for i in range(self.npending):
            row = self.pending[i]
            out.append((row, self.schema.value(row), self.table.value(row), self.op.value(row),
                        self.before.value(row), self.after.value(row), self.commit_ts.value(row)))
        self.npending = 0
        return out

    def set_keys(self, rows, before_keys, after_keys) -> None:
        """Rows' key texts, set after they were appended."""
        for c, texts in ((self.before_key, before_keys), (self.after_key, after_keys)):
            if c.patched is None:
                c.patched = {}
            c.patched.update(zip(rows, texts))

    def take(self, schema):
        """The held rows as a record batch of `schema`; the columns emptied for the next."""
        cdef Column c
        for c in self.columns:
            c.pad(self.n)
        batch = pa.RecordBatch.from_arrays([c.array() for c in self.columns], schema=schema)
        for c in self.columns:
            c.clear()
        self.base += self.n
        self.n = self.chars = 0
        return batch


cdef class KeyRun:
    """The rows of one table the compiled reader keyed itself since the key stamper last looked
    (stages.pull_keys: its key spans)."""

    def __init__(self, schema, table):
        self.schema, self.table = schema, table
        self.pair_values, self.pair_keys = Column(True), Column(True)

    def taken(self) -> None:
        """The stamper has recorded them."""
        self.seen = False

    def pairs(self):
        """(conflict-key values, key texts) as string arrays, the ones held since; or None."""
        if not self.pair_values.n:
            return None
        out = self.pair_values.array(), self.pair_keys.array()
        self.pair_values.clear()
        self.pair_keys.clear()
        return out
