# cython: language_level=3, boundscheck=False, wraparound=False
"""Compaction's passes over a writer share's rows in C (sink.compaction), each the reference's
Arrow steps in one pass, the texts compared where the share holds them:
  table_ranks, parts_are_keys   what the first sort sorts by (compaction._sort_columns: the names
                                joined, encoded and sorted; the parts compared with the keys)
  finals                        after it, where each key's run of changes ends, the row of its
                                last change and the kind it ends with, and whether the finals need
                                the second sort (compaction._finals_in_arrow, _deletes_lead)
The Arrow steps took each column into arrays of their own, compared, filtered and joined them
(0.25 us a change on the bench's bulk window, three fifths of a share's compaction).  They run
where this module is not built; tests/sink/test_compaction.py holds the two to the same output."""

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


cdef inline bint _same(Texts *a, Py_ssize_t i, Texts *b, Py_ssize_t j) noexcept:
    """Row i of a and row j of b hold the same text, a null the same as a null
    (compaction.run_starts)."""
    cdef bint ni = _null(a, i), nj = _null(b, j)
    cdef int32_t x, y, u, v
    if ni or nj:
        return ni and nj
    x, y = a.offs[a.offset + i], a.offs[a.offset + i + 1]
    u, v = b.offs[b.offset + j], b.offs[b.offset + j + 1]
    return y - x == v - u and memcmp(a.data + x, b.data + u, y - x) == 0


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
                ends = rank[r] != rank[s] or not _same(&p, r, &p, s) or (keyed and not _same(&k, r, &k, s))
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
                same_part = rank[rows[runs - 1]] == rank[r] and _same(&p, rows[runs - 1], &p, r)
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


cdef enum:
    RANKED_TABLES = 64  # more distinct tables than this in one share: the Arrow steps rank them
MOST_TABLES_RANKED = RANKED_TABLES


cdef inline int _compared(Texts *t, Py_ssize_t i, Py_ssize_t j) noexcept:
    """Row i's text against row j's, byte by byte, a text before any longer one it starts: <0, 0, >0."""
    cdef int32_t a = t.offs[t.offset + i], b = t.offs[t.offset + i + 1]
    cdef int32_t x = t.offs[t.offset + j], y = t.offs[t.offset + j + 1]
    cdef int c = memcmp(t.data + a, t.data + x, min(b - a, y - x))
    return c if c else (b - a) - (y - x)


cdef inline bint _pair_before(Texts *s, Texts *t, Py_ssize_t i, Py_ssize_t j) noexcept:
    """(schema, table) of row i sorts before row j's: as their texts joined by NUL do
    (compaction._sort_columns), NUL sorting below every byte of a name."""
    cdef int c = _compared(s, i, j)
    return c < 0 or (c == 0 and _compared(t, i, j) < 0)


def table_ranks(schema, table):
    """Each row's (schema, table) as its rank among the distinct ones (int64): what
    compaction._sort_columns's Arrow steps give by joining the names with NUL, encoding and
    sorting them; None where a name is null or the rows name more than RANKED_TABLES tables."""
    cdef Py_ssize_t n = len(schema), i, k, found, seen = 0
    cdef Texts s, t
    cdef Py_ssize_t firsts[RANKED_TABLES]  # a row of each distinct table, in order of appearance
    cdef int64_t order[RANKED_TABLES]
    cdef int64_t *codes
    cdef int64_t swap
    _texts(schema, &s)
    _texts(table, &t)
    if len(table) != n:
        raise ValueError("columns of different lengths")
    if schema.null_count or table.null_count:
        return None
    codes = <int64_t *>PyMem_Malloc(max(n, 1) * sizeof(int64_t))
    try:
        if codes == NULL:
            raise MemoryError()
        found = -1
        for i in range(n):
            # rows of one table come in runs: the row before's first
            if found >= 0 and _same(&s, i, &s, firsts[found]) and _same(&t, i, &t, firsts[found]):
                codes[i] = found
                continue
            found = -1
            for k in range(seen):
                if _same(&s, i, &s, firsts[k]) and _same(&t, i, &t, firsts[k]):
                    found = k
                    break
            if found < 0:
                if seen == RANKED_TABLES:
                    return None
                firsts[seen] = i
                found = seen
                seen += 1
            codes[i] = found
        # the distinct tables sorted (a few: an insertion sort), then each code's rank
        for k in range(seen):
            order[k] = k
        for k in range(1, seen):
            i = k
            while i > 0 and _pair_before(&s, &t, firsts[order[i]], firsts[order[i - 1]]):
                swap, order[i], order[i - 1] = order[i], order[i - 1], order[i]
                i -= 1
        for k in range(seen):
            firsts[order[k]] = k  # firsts now maps a code to its rank
        for i in range(n):
            codes[i] = firsts[codes[i]]
        return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(
            PyBytes_FromStringAndSize(<const char *>codes, n * sizeof(int64_t)))])
    finally:
        PyMem_Free(codes)


def parts_are_keys(part, key):
    """Whether every row's part is its key (both null counts as the same): compaction._sort_columns
    then sorts by the part alone."""
    cdef Py_ssize_t n = len(part), i
    cdef Texts p, k
    _texts(part, &p)
    _texts(key, &k)
    if len(key) != n:
        raise ValueError("columns of different lengths")
    for i in range(n):
        if not _same(&p, i, &k, i):
            return False
    return True

