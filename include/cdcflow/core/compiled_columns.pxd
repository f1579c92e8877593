# The event store's columns built in compiled code (compiled_columns.pyx): what the compiled
# binlog reader (source/compiled_reader.pyx) appends a row change to without a Python object.
from libc.stdint cimport int32_t, int64_t, uint8_t


cdef class Column:
    cdef bint text  # a string column (offsets and bytes), else int64 values
    cdef Py_ssize_t n, rows_cap  # rows held, rows allocated
    cdef uint8_t* valid  # a byte per row
    cdef int64_t* ints
    cdef int32_t* offsets  # n + 1 of them
    cdef char* data  # a mapping of its own (NULL: none yet), handed to Arrow with the batch (array)
    cdef Py_ssize_t size, cap  # bytes held, mapped
    cdef Py_ssize_t last_cap  # the mapping the last batch's bytes took: the next one's first size
    cdef dict patched  # row -> text set after the row was appended (set_text)

    cdef int _rows(self, Py_ssize_t more) except -1
    cdef int put_null(self) except -1
    cdef int put_int(self, int64_t v) except -1
    cdef int put_text(self, const char* s, Py_ssize_t size) except -1
    cdef int _bytes(self, Py_ssize_t need) except -1
    cdef int put_object(self, object v) except -1
    cdef int pad(self, Py_ssize_t rows) except -1
    cdef object value(self, Py_ssize_t row)
    cdef object array(self)
    cdef void clear(self)
    cdef void cut(self, Py_ssize_t n)


cdef class EventColumns:
    cdef readonly list columns
    cdef readonly list names
    cdef Column commit_ts, seq, schema, table, op, before, after, pk, before_key, after_key
    cdef Column fk_checks_off, gtid, start_file, start_pos, event_time
    cdef readonly Py_ssize_t n  # rows held
    cdef readonly Py_ssize_t base  # rows written before these (a row's number in the file: base + its index)
    cdef readonly Py_ssize_t chars  # the characters of the held rows' images and statements
    cdef readonly Py_ssize_t batch_rows, batch_chars  # a batch is written when either is reached
    cdef object on_full  # called when a batch is reached (the writer writes it)
    cdef object on_pending  # called when `pending_batch` rows wait for their keys (the stamper keys them)
    cdef readonly Py_ssize_t pending_batch
    cdef public bint mark_pending  # rows added from Python wait for their keys (a stamper is attached)
    cdef int64_t* pending  # the held rows that wait for key texts, by index
    cdef readonly Py_ssize_t npending
    cdef Py_ssize_t pending_cap

    cdef int add_pending(self, Py_ssize_t row) except -1
    cdef int end_row(self, Py_ssize_t chars) except -1
    cdef int full(self) except -1
    cdef int truncate(self, Py_ssize_t n, Py_ssize_t npending, Py_ssize_t chars) except -1


cdef class KeyRun:
    cdef readonly object schema, table
    cdef readonly bint seen  # rows of the table came since the stamper last looked
    cdef readonly int64_t first_row, first_ts, last_ts  # the first of them (its row number), its ts, the last's
    cdef Column pair_values, pair_keys  # their conflict-key values and key texts (sink.conflict_keys)

    cdef inline void row(self, int64_t number, int64_t ts):
        if not self.seen:
            self.seen, self.first_row, self.first_ts = True, number, ts
        self.last_ts = ts
