# cython: language_level=3, boundscheck=False, wraparound=False
"""Compaction's passes over a writer share's rows in C (sink.compaction), each the reference's
Arrow steps in one pass, the texts compared where the part holds them:
  spread_halves                 the part's changes keyed and spread over the writers, each writer's
                                share numbered, not copied (compaction.spread_compacted: its Arrow
                                steps are keyed_sources, the parts encoded, a filter per writer)
  table_ranks, ranked_tables,   what the first sort sorts by (compaction._sort_columns: the names
  parts_are_keys                joined, encoded and sorted; the parts compared with the keys)
  finals                        after it, where each key's run of changes ends, the row of its
                                last change and the kind it ends with, and whether the finals need
                                the second sort (compaction._finals_in_arrow, _deletes_lead)
The Arrow steps took each column into arrays of their own, compared, filtered and joined them
(0.25 us a change on the bench's bulk window, three fifths of a share's compaction; the keying
and the spread 0.23 us more).  They run where this module is not built;
tests/sink/test_compaction.py holds the two to the same output."""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
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
    got = ranked_tables(schema, table)
    return None if got is None else got[0]


def ranked_tables(schema, table):
    """table_ranks's ranks, and the distinct (schema, table) pairs in rank order (str tuples);
    None where table_ranks gives None."""
    cdef Py_ssize_t n = len(schema), i, k, found, seen = 0
    cdef Texts s, t
    cdef Py_ssize_t firsts[RANKED_TABLES]  # a row of each distinct table, in order of appearance
    cdef int64_t order[RANKED_TABLES]
    cdef int64_t *codes
    cdef int64_t swap
    cdef uintptr_t address
    _texts(schema, &s)
    _texts(table, &t)
    if len(table) != n:
        raise ValueError("columns of different lengths")
    if schema.null_count or table.null_count:
        return None
    ranks = pa.allocate_buffer(n * sizeof(int64_t))
    address = ranks.address
    codes = <int64_t *>address
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
    names = [(schema[firsts[order[k]]].as_py(), table[firsts[order[k]]].as_py()) for k in range(seen)]
    for k in range(seen):
        firsts[order[k]] = k  # firsts now maps a code to its rank
    for i in range(n):
        codes[i] = firsts[codes[i]]
    return pa.Array.from_buffers(pa.int64(), n, [None, ranks]), names


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



# the keys' distinct texts as a set open-addressed in C: compaction.spread_compacted numbers them in
# order of first appearance, as Arrow's dictionary_encode does.  A slot holds where its text is
# (the row of one of two columns), not the text: 12 bytes, so that a part's set stays in the
# caches (24-byte slots with the text's address were 3.5 times as slow on the bench's window).
cdef struct Slot:
    uint32_t tag  # the text's hash with its low bit set; 0: the slot is free
    int32_t code
    int64_t row  # the text's row: of the first column below n, of the second from n on


cdef struct Seen:
    Slot *slots
    size_t mask  # the slots' count less one (a power of two)
    int64_t count
    int64_t null_code  # -1: no null seen
    Py_ssize_t n
    Texts *first
    Texts *second


cdef inline uint64_t _hash(const char *p, int32_t n) noexcept:
    cdef uint64_t h = (<uint64_t>0xcbf29ce4 << 32) | 0x84222325  # FNV-1a, 64 bits
    cdef int32_t i
    for i in range(n):
        h = (h ^ <uint8_t>p[i]) * <uint64_t>0x100000001b3
    return h


cdef int _sized(Seen *s, size_t size) except -1:
    """The set's slots made `size` (a power of two), its texts placed again."""
    cdef size_t i, j
    cdef Slot *slots = <Slot *>PyMem_Malloc(size * sizeof(Slot))
    if slots == NULL:
        raise MemoryError()
    for i in range(size):
        slots[i].tag = 0
    if s.slots != NULL:
        for i in range(s.mask + 1):
            if s.slots[i].tag:
                j = (s.slots[i].tag >> 1) & (size - 1)
                while slots[j].tag:
                    j = (j + 1) & (size - 1)
                slots[j] = s.slots[i]
        PyMem_Free(s.slots)
    s.slots, s.mask = slots, size - 1
    return 0


cdef inline void _text_at(Seen *s, int64_t row, const char **p, int32_t *n) noexcept:
    """The text of `row` (Seen's numbering) and its length, in p and n."""
    cdef Texts *t = s.first if row < s.n else s.second
    cdef Py_ssize_t i = row if row < s.n else row - s.n
    cdef int32_t a = t.offs[t.offset + i]
    p[0], n[0] = t.data + a, t.offs[t.offset + i + 1] - a


cdef int64_t _code(Seen *s, int64_t row) except -1:
    """The text of `row` (Seen's numbering): its number among the distinct texts seen so far (a new
    one: the next)."""
    cdef int32_t n, m
    cdef const char *p
    cdef const char *q
    cdef uint32_t tag
    cdef size_t j
    if _null(s.first if row < s.n else s.second, row if row < s.n else row - s.n):
        if s.null_code < 0:
            s.null_code = s.count
            s.count += 1
        return s.null_code
    _text_at(s, row, &p, &n)
    tag = <uint32_t>(_hash(p, n) | 1)
    j = (tag >> 1) & s.mask
    while s.slots[j].tag:
        if s.slots[j].tag == tag:
            _text_at(s, s.slots[j].row, &q, &m)
            if m == n and memcmp(q, p, n) == 0:
                return s.slots[j].code
        j = (j + 1) & s.mask
    s.slots[j].tag, s.slots[j].code, s.slots[j].row = tag, <int32_t>s.count, row
    s.count += 1
    if <size_t>s.count * 2 > s.mask:
        _sized(s, (s.mask + 1) * 2)
    return s.count - 1


cdef enum:  # a change's op, by its text
    OTHER_OP = 0
    INSERT_OP = 1
    UPDATE_OP = 2
    DELETE_OP = 3


cdef inline int _op(Texts *t, Py_ssize_t i) noexcept:
    cdef int32_t a = t.offs[t.offset + i], n = t.offs[t.offset + i + 1] - a
    if n == 6 and memcmp(t.data + a, b"insert", 6) == 0:
        return INSERT_OP
    if n == 6 and memcmp(t.data + a, b"update", 6) == 0:
        return UPDATE_OP
    if n == 6 and memcmp(t.data + a, b"delete", 6) == 0:
        return DELETE_OP
    return OTHER_OP


cdef inline int _half(int op, Texts *b, Texts *a, Py_ssize_t i, bint upsert) noexcept:
    """Row i's change in one half of compaction.keyed_sources (the DELETEs, `upsert` False: of a
    DELETE or a key-changing UPDATE; the upserts: of anything but a DELETE): 0 where it has
    none there, else its kind's letter, with 1 added where its sub is 0 (the DELETE half of a
    split UPDATE)."""
    cdef bint split = op == UPDATE_OP and not (not _null(b, i) and not _null(a, i) and _same(b, i, a, i))
    if upsert:
        if op == DELETE_OP:
            return 0
        return INSERT if op == INSERT_OP or split else UPDATE
    if op == DELETE_OP:
        return DELETE
    return DELETE + 1 if split else 0


def spread_halves(op, before_key, after_key, Py_ssize_t workers):
    """compaction.keyed_sources's rows and their spread over `workers` writers in one pass, without
    the keys' texts copied: the changes of the DELETE half (of each DELETE and key-changing UPDATE,
    its before key), then of the upsert half (of each change but a DELETE, its after key), each
    to the writer its key's number modulo `workers` gives, the keys (a null one of them) numbered
    in order of first appearance in that order (dictionary_encode's, null_encoding="encode").
    For each writer with changes, in writer order: (the writer, each change's image number as
    compaction.images_of numbers them (row i's before image i, its after image n + i; int64),
    its row (int64), its sub (int32), its kind (string)), the changes in that order.  `op`,
    `before_key`, `after_key`: string arrays of one chunk each, `op` without nulls."""
    cdef Py_ssize_t n = len(op), i, k, m, half
    cdef size_t size
    cdef Texts o, b, a
    cdef Seen seen
    cdef int32_t *writer
    cdef uint8_t *half_kind  # each half's _half, from the first pass for the second
    cdef int64_t *counts
    cdef int64_t *fill
    cdef int c
    cdef uintptr_t address
    cdef int64_t **images_at
    cdef int64_t **rows_at
    cdef int32_t **subs_at
    cdef uint8_t **kinds_at
    cdef int32_t *offsets_out
    if workers < 1:
        raise ValueError("no writer")
    _texts(op, &o)
    _texts(before_key, &b)
    _texts(after_key, &a)
    if len(before_key) != n or len(after_key) != n:
        raise ValueError("columns of different lengths")
    if op.null_count:
        raise ValueError("a change without its op")
    seen.slots, seen.mask, seen.count, seen.null_code, seen.n, seen.first, seen.second = NULL, 0, 0, -1, n, &b, &a
    size = 1024
    while size < <size_t>n:  # about as many keys as rows: grown once at most
        size *= 2
    _sized(&seen, size)
    writer = <int32_t *>PyMem_Malloc(max(2 * n, 1) * sizeof(int32_t))
    half_kind = <uint8_t *>PyMem_Malloc(max(2 * n, 1))
    counts = <int64_t *>PyMem_Malloc(workers * sizeof(int64_t))
    fill = <int64_t *>PyMem_Malloc(workers * sizeof(int64_t))
    images_at = <int64_t **>PyMem_Malloc(workers * sizeof(void *))
    rows_at = <int64_t **>PyMem_Malloc(workers * sizeof(void *))
    subs_at = <int32_t **>PyMem_Malloc(workers * sizeof(void *))
    kinds_at = <uint8_t **>PyMem_Malloc(workers * sizeof(void *))
    try:
        if writer == NULL or half_kind == NULL or counts == NULL or fill == NULL or images_at == NULL \
                or rows_at == NULL or subs_at == NULL or kinds_at == NULL:
            raise MemoryError()
        for k in range(workers):
            counts[k] = 0
        for half in range(2):
            for i in range(n):
                c = _half(_op(&o, i), &b, &a, i, half == 1)
                half_kind[half * n + i] = <uint8_t>c
                if c == 0:
                    writer[half * n + i] = -1
                    continue
                k = _code(&seen, half * n + i) % workers
                writer[half * n + i] = <int32_t>k
                counts[k] += 1
        out, buffers = [], []
        for k in range(workers):
            m = counts[k]
            made = None if not m else (pa.allocate_buffer(m * 8), pa.allocate_buffer(m * 8),
                                       pa.allocate_buffer(m * 4), pa.allocate_buffer((m + 1) * 4),
                                       pa.allocate_buffer(m))
            buffers.append(made)
            fill[k] = 0
            if made is None:
                continue
            address = made[0].address
            images_at[k] = <int64_t *>address
            address = made[1].address
            rows_at[k] = <int64_t *>address
            address = made[2].address
            subs_at[k] = <int32_t *>address
            address = made[3].address
            offsets_out = <int32_t *>address
            for i in range(m + 1):
                offsets_out[i] = <int32_t>i
            address = made[4].address
            kinds_at[k] = <uint8_t *>address
        for half in range(2):
            for i in range(n):
                k = writer[half * n + i]
                if k < 0:
                    continue
                m = fill[k]
                fill[k] += 1
                c = half_kind[half * n + i]
                images_at[k][m] = half * n + i
                rows_at[k][m] = i
                subs_at[k][m] = 0 if c == DELETE + 1 else 1
                kinds_at[k][m] = DELETE if c == DELETE + 1 else c
        for k in range(workers):
            made = buffers[k]
            if made is None:
                continue
            m = counts[k]
            out.append((k, pa.Array.from_buffers(pa.int64(), m, [None, made[0]]),
                        pa.Array.from_buffers(pa.int64(), m, [None, made[1]]),
                        pa.Array.from_buffers(pa.int32(), m, [None, made[2]]),
                        pa.Array.from_buffers(pa.string(), m, [None, made[3], made[4]])))
        return out
    finally:
        PyMem_Free(seen.slots)
        PyMem_Free(writer)
        PyMem_Free(half_kind)
        PyMem_Free(counts)
        PyMem_Free(fill)
        PyMem_Free(images_at)
        PyMem_Free(rows_at)
        PyMem_Free(subs_at)
        PyMem_Free(kinds_at)
