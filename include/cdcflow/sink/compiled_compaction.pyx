# cython: language_level=3, boundscheck=False, wraparound=False
"""The end of compaction.compacted_order in one C pass over the sorted rows: where each key's run
of changes starts and ends, the row of its last change and the kind it ends with, and whether
the finals need the second sort (compaction._deletes_lead).  The Arrow steps it stands for took
each run's columns into arrays of their own, compared them, filtered them and made the kinds
(0.25 us a change, half of a writer share's compaction on the bench's bulk window); here the
texts are compared where the part holds them and only the two columns the writers read are
made.  Its reference is those Arrow steps (compaction._finals_in_arrow), which run where this
module is not built, and tests/sink/test_compaction.py holds the two to the same finals."""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t, uintptr_t
from libc.string cimport memcmp

import pyarrow as pa

STRING_ID, INT64_ID, UINT64_ID = pa.string().id, pa.int64().id, pa.uint64().id

cdef enum:  # the kinds' letters
    DELETE = 68  # D
    INSERT = 73  # I
    UPDATE = 85  # U


cdef struct Texts:
    const int32_t *offs
    const char *data
    const uint8_t *valid  # NULL: no nulls
    Py_ssize_t offset


cdef int _texts(object array, Texts *t) except -1:
    cdef uintptr_t address
    if array.type.id != STRING_ID:
        raise TypeError(f"texts of type {array.type}, not string")
    bufs = array.buffers()
    t.valid, t.data, t.offset = NULL, NULL, array.offset
    if bufs[0] is not None and array.null_count:
        address = bufs[0].address
        t.valid = <const uint8_t *>address
    address = bufs[1].address
    t.offs = <const int32_t *>address
    if bufs[2] is not None:
        address = bufs[2].address
        t.data = <const char *>address
    return 0


cdef inline bint _null(Texts *t, Py_ssize_t i) noexcept:
    i += t.offset
    return t.valid != NULL and not (t.valid[i >> 3] >> (i & 7)) & 1


cdef inline bint _same(Texts *t, Py_ssize_t i, Py_ssize_t j) noexcept:
    """Rows i and j hold the same text, a null the same as a null (compaction.run_starts)."""
    cdef bint ni = _null(t, i), nj = _null(t, j)
    cdef int32_t a, b, c, d
    if ni or nj:
        return ni and nj
    a, b = t.offs[t.offset + i], t.offs[t.offset + i + 1]
    c, d = t.offs[t.offset + j], t.offs[t.offset + j + 1]
    return b - a == d - c and memcmp(t.data + a, t.data + c, b - a) == 0


cdef inline uint8_t _kind(Texts *t, Py_ssize_t i) noexcept:
    """Row i's kind, its first character (I, U, D: any other counts as U, as in the Arrow steps);
    0: an empty one."""
    cdef int32_t a = t.offs[t.offset + i]
    if _null(t, i) or t.offs[t.offset + i + 1] == a:
        return 0
    return <uint8_t>t.data[a]


cdef const void *_values(object array, int type_id, size_t width) except NULL:
    cdef uintptr_t address
    if array.type.id != type_id:
        raise TypeError(f"values of type {array.type}")
    if array.null_count:
        raise ValueError("a null where every row has a value")
    address = array.buffers()[1].address
    return <const void *>(address + <uintptr_t>(array.offset * width))


def finals(order, tables, part, key, kind):
    """Of rows sorted by `order` (sort_indices over the tables' rank, the part, the key where
    given, then commit order), each run of one table and part (and key) at its last row: (the
    rows, int64; their kinds, D where the last change is a DELETE, else I where the first is an
    INSERT, else U), in the runs' order; None where those finals are not in DELETES_FIRST order
    already (a part of several keys, an upsert's key sorting before a delete's: the caller sorts
    them).  `tables`: each row's table as a number (int64); `part`, `key` (or None), `kind`:
    string arrays, one chunk each."""
    cdef Py_ssize_t n = len(order), i, runs = 0, start = 0
    cdef const uint64_t *o = <const uint64_t *>_values(order, UINT64_ID, 8)
    cdef const int64_t *rank = <const int64_t *>_values(tables, INT64_ID, 8)
    cdef Texts p, k, kd
    cdef bint keyed = key is not None, ends, same_part
    cdef uint8_t first, last, made, prev = 0
    cdef int64_t *rows
    cdef int32_t *offsets
    cdef uint8_t *kinds
    cdef uint64_t r, s
    _texts(part, &p)
    _texts(kind, &kd)
    if keyed:
        _texts(key, &k)
    if len(tables) != n or len(part) != n or len(kind) != n or (keyed and len(key) != n):
        raise ValueError("columns of different lengths")
    if kind.null_count:
        raise ValueError("a change without its kind")
    rows = <int64_t *>PyMem_Malloc(max(n, 1) * sizeof(int64_t))
    kinds = <uint8_t *>PyMem_Malloc(max(n, 1))
    offsets = <int32_t *>PyMem_Malloc((n + 1) * sizeof(int32_t))
    try:
        if rows == NULL or kinds == NULL or offsets == NULL:
            raise MemoryError()
        for i in range(n):
            r = o[i]
            if r >= <uint64_t>n:
                raise IndexError(f"row {r} of {n}")
            if i + 1 < n:
                s = o[i + 1]
                if s >= <uint64_t>n:
                    raise IndexError(f"row {s} of {n}")
                ends = rank[r] != rank[s] or not _same(&p, r, s) or (keyed and not _same(&k, r, s))
            else:
                ends = True
            if not ends:
                continue
            first, last = _kind(&kd, o[start]), _kind(&kd, r)
            if first == 0 or last == 0:
                raise ValueError("a change of an empty kind")
            made = DELETE if last == DELETE else INSERT if first == INSERT else UPDATE
            # DELETES_FIRST: within one part a key written (an upsert) before another's DELETE
            # asks for the second sort
            if runs and prev != DELETE and made == DELETE:
                same_part = rank[rows[runs - 1]] == rank[r] and _same(&p, rows[runs - 1], r)
                if same_part:
                    return None
            rows[runs], kinds[runs], prev = <int64_t>r, made, made
            runs += 1
            start = i + 1
        for i in range(runs + 1):
            offsets[i] = <int32_t>i
        out_rows = pa.Array.from_buffers(pa.int64(), runs, [None, pa.py_buffer(
            PyBytes_FromStringAndSize(<const char *>rows, runs * sizeof(int64_t)))])
        out_kinds = pa.Array.from_buffers(pa.string(), runs, [None, pa.py_buffer(
            PyBytes_FromStringAndSize(<const char *>offsets, (runs + 1) * sizeof(int32_t))), pa.py_buffer(
            PyBytes_FromStringAndSize(<const char *>kinds, runs))])
    finally:
        PyMem_Free(rows)
        PyMem_Free(kinds)
        PyMem_Free(offsets)
    return out_rows, out_kinds
