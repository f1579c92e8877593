# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled binlog reader: the stream connection's packets read and the frequent events
decoded here, every other packet handed to mysql-replication (binlog_events.Slow).

It yields binlog_events' records.  Decoded here: MariaDB GTID events, XID events, a Query
event that is a bare BEGIN, Table_map events whose bytes were seen before (the first one of
each definition is parsed by mysql-replication, whose table map the Python reader's rows
events need too), and the rows events (v1, v2) of tables whose every column has a reader in
row_decoder's table (_spec) and whose images are FULL.  Each column's text is written as
row_decoder's reader writes it; anything unexpected in a rows event (a short packet, bytes
that are no text of the column's charset, ...) sends the whole event to mysql-replication,
which decodes it or raises the error the Python reader raises.  A TRANSACTION_PAYLOAD event
(MySQL 8's binlog_transaction_compression) is replaced by the packets of the events it holds
(binlog_events.Slow.payload), read here as any other.

Over a window (compiled_window.pxi: Window), the rows events it decodes go no further as
records: their rows are written into the event store's columns (core/compiled_columns.pyx) in
the same loop, with their key texts, and the transactions around them are followed here too.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.conversion cimport Py_DTSF_ADD_DOT_0, PyOS_double_to_string
from libc.math cimport isfinite
from libc.stdlib cimport atoi
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport uint8_t, uint32_t
from libc.string cimport memcmp, memcpy, strchr, strlen

from cdcflow.core.compiled_columns cimport Column, EventColumns, KeyRun
from cdcflow.core.growth cimport room

ctypedef long long i64  # a signed column's value; u64 the bytes read from an image (le(), be())
ctypedef unsigned long long u64

import json

import pymysql.err
from pymysql.constants import CR
from pymysql.protocol import MysqlPacket

from cdcflow.source import binlog_events, row_decoder

cdef object K_ROTATE = binlog_events.ROTATE
cdef object K_GTID = binlog_events.GTID
cdef object K_XID = binlog_events.XID
cdef object K_QUERY = binlog_events.QUERY
cdef object K_ROWS = binlog_events.ROWS
cdef object ROWS_HERE = object()  # Records.next_record: a rows event left for a Window to read
cdef object GTID_HERE = object()  # and a MariaDB GTID event, as numbers
cdef object XID_HERE = object()  # and an XID event
cdef object float_text = row_decoder.float_text
cdef object json_string = row_decoder.json_string

# event types (MySQL's binlog_event.h, MariaDB's log_event.h)
cdef enum:
    QUERY_EVENT = 2
    ROTATE_EVENT = 4
    FORMAT_DESCRIPTION_EVENT = 15
    XID_EVENT = 16
    TABLE_MAP_EVENT = 19
    ANONYMOUS_GTID_EVENT = 34
    TRANSACTION_PAYLOAD_EVENT = 40
    ANNOTATE_ROWS_EVENT = 160
    MARIADB_GTID_EVENT = 162
    MAX_PACKET = 0xFFFFFF
    TABLE_CACHE_ENTRIES = 4096  # as source.table_maps' cache
    READ_CHUNK = 262144

# column readers (row_decoder._spec's kinds)
cdef enum:
    C_INT = 1
    C_FLOAT = 2
    C_DATE = 3
    C_DATETIME2 = 4
    C_TIMESTAMP2 = 5
    C_DECIMAL = 6
    C_STRING = 7
    C_UTF8 = 8
    C_BYTES = 9
cdef dict KINDS = {"int": C_INT, "float": C_FLOAT, "date": C_DATE, "datetime2": C_DATETIME2,
                   "timestamp2": C_TIMESTAMP2, "decimal": C_DECIMAL, "string": C_STRING, "bytes": C_BYTES}
cdef int DECIMAL_BYTES[10]
DECIMAL_BYTES[:] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4]
cdef const char* B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


class Fallback(Exception):
    """The event is mysql-replication's to decode."""


cdef struct Col:
    int kind
    int a  # int bytes / float bytes / fsp / precision / length bytes
    int b  # signed / scale / padded size
    const char* name  # '"name":' in UTF-8
    Py_ssize_t name_len


cdef class Buf:
    """A growing byte buffer: one image's text."""
    cdef char* data
    cdef Py_ssize_t size, cap

    def __cinit__(self):
        self.cap = 4096
        self.data = <char*>PyMem_Malloc(self.cap)
        self.size = 0
        if self.data == NULL:
            raise MemoryError()

    def __dealloc__(self):
        PyMem_Free(self.data)

    cdef inline int reserve(self, Py_ssize_t n) except -1:
        return room(<void**>&self.data, &self.cap, self.size + n, 1, 4096)

    cdef inline int put(self, const char* s, Py_ssize_t n) except -1:
        self.reserve(n)
        memcpy(self.data + self.size, s, n)
        self.size += n
        return 0

    cdef inline int put_str(self, str s) except -1:
        b = s.encode("utf-8")
        return self.put(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))


cdef class Plan:
    """One table definition: its record's TableInfo, its columns' readers (None: a column
    without one, the table's rows events go to mysql-replication), its Table object."""
    cdef object info
    cdef object table
    cdef Col* cols
    cdef int n
    cdef bint fast
    cdef list keep  # the bytes and names the Col pointers point into
    cdef bytes full  # the columns-present bitmap of a FULL image
    cdef bytes map_bytes  # its Table_map event's bytes (the key of Records.tables)
    cdef bint system  # info.system: a system schema's table, whose rows are not read
    cdef list names  # the columns' names (a key's columns are found by them)
    cdef bytes schema_b, table_b, pk_b  # the record's texts, in UTF-8 (pk_b None: no key)
    cdef Py_ssize_t* vstart  # where each column's value text starts and ends in the image read last
    cdef Py_ssize_t* vend
    # how a Window keys its rows, as the key stamper said for its DDL generation `key_gen`
    # (compiled_window.pxi: KEY_*), the key's columns by index, and where the keyed rows are counted
    cdef long key_gen
    cdef int key_mode
    cdef int* key_idx
    cdef int nkey
    cdef KeyRun run
    # the conflict keys written beside the key (sink.conflict_keys): each unique key's text before
    # its values, and its columns by index (those of key u: uniq_cols[uniq_at[u]:uniq_at[u + 1]])
    cdef int nuniq
    cdef list uniq_prefix
    cdef int* uniq_cols
    cdef int* uniq_at

    def __dealloc__(self):
        PyMem_Free(self.cols)
        PyMem_Free(self.vstart)
        PyMem_Free(self.vend)
        PyMem_Free(self.key_idx)
        PyMem_Free(self.uniq_cols)
        PyMem_Free(self.uniq_at)


cdef Plan make_plan(object info, object specs, object table):
    cdef Plan p = Plan()
    cdef int i
    p.info, p.table, p.keep = info, table, []
    p.system = info.system
    p.key_gen = -1
    p.fast = bool(specs) and all(s is not None for _n, s in specs)
    if not p.fast:
        return p
    p.n = len(specs)
    p.names = [json.loads(name[:len(name) - 1]) for name, _spec in specs]  # a spec's name is its JSON text, '"id":' 
    p.schema_b, p.table_b = info.schema.encode("utf-8"), info.table.encode("utf-8")
    p.pk_b = None if info.pk is None else info.pk.encode("utf-8")
    p.cols = <Col*>PyMem_Malloc(max(1, p.n) * sizeof(Col))
    p.vstart = <Py_ssize_t*>PyMem_Malloc(max(1, p.n) * sizeof(Py_ssize_t))
    p.vend = <Py_ssize_t*>PyMem_Malloc(max(1, p.n) * sizeof(Py_ssize_t))
    if p.cols == NULL or p.vstart == NULL or p.vend == NULL:
        raise MemoryError()
    nbytes = (p.n + 7) // 8
    p.full = bytes([0xFF] * (p.n // 8)) + (bytes([(1 << (p.n % 8)) - 1]) if p.n % 8 else b"")
    for i, (name, spec) in enumerate(specs):
        nb = name.encode("utf-8")
        p.keep.append(nb)
        p.cols[i].name = PyBytes_AS_STRING(nb)
        p.cols[i].name_len = PyBytes_GET_SIZE(nb)
        kind = KINDS[spec[0]]
        p.cols[i].a = p.cols[i].b = 0
        if kind == C_INT:
            p.cols[i].a, p.cols[i].b = spec[1], spec[2]
        elif kind == C_FLOAT:
            p.cols[i].a = spec[1]
        elif kind in (C_DATETIME2, C_TIMESTAMP2):
            p.cols[i].a = spec[1] or 0
        elif kind == C_DECIMAL:
            p.cols[i].a, p.cols[i].b = spec[1], spec[2]
            if spec[1] <= 0 or spec[2] < 0 or spec[2] > spec[1]:
                p.fast = False
        elif kind == C_STRING:
            p.cols[i].a = spec[1]
            encoding, errors = spec[2], spec[3]
            if errors == "strict" and (encoding is None or encoding.lower().replace("-", "") == "utf8"):
                kind = C_UTF8
            else:
                # the codec's name and errors, as Python strings the reader passes to bytes.decode
                p.cols[i].b = len(p.keep)
                p.keep.append((encoding or "utf-8", errors))
        elif kind == C_BYTES:
            p.cols[i].a, p.cols[i].b = spec[1], spec[2]
        p.cols[i].kind = kind
    return p


include "compiled_values.pxi"


cdef Py_ssize_t read_image(Plan plan, const uint8_t* d, Py_ssize_t at, Py_ssize_t end, Buf out) except -1:
    """One row image's text from `at`, appended to `out`; returns where the next one starts.
    Where each column's value text starts and ends in `out`: plan.vstart, plan.vend."""
    cdef int i, n = plan.n, size
    cdef Py_ssize_t nulls = at, length
    cdef const uint8_t* v
    cdef Col* c
    cdef u64 u
    cdef i64 s
    cdef char tmp[32]
    cdef const char* tag
    cdef double f
    cdef float f4
    at += (n + 7) // 8
    if at > end:
        raise Fallback()
    out.put(b"{", 1)
    for i in range(n):
        c = &plan.cols[i]
        if i:
            out.put(b",", 1)
        out.put(c.name, c.name_len)
        plan.vstart[i] = out.size
        if d[nulls + (i >> 3)] & (1 << (i & 7)):
            out.put(b"null", 4)
            plan.vend[i] = out.size
            continue
        v = d + at
        if c.kind == C_INT:
            size = c.a
            if at + size > end:
                raise Fallback()
            u = le(v, size)
            if c.b and size < 8 and u >> (size * 8 - 1):
                s = <i64>u - (<i64>1 << (size * 8))
                out.put(tmp, put_signed(tmp, s, False))
            elif c.b and size == 8:
                out.put(tmp, put_signed(tmp, <i64>u, False))
            else:
                out.put(tmp, put_digits(tmp, u, 1))
            at += size
        elif c.kind == C_UTF8 or c.kind == C_STRING or c.kind == C_BYTES:
            size = c.a
            if at + size > end:
                raise Fallback()
            length = <Py_ssize_t>le(v, size)
            if at + size + length > end:
                raise Fallback()
            v += size
            if c.kind == C_BYTES:
                put_base64(out, v, length, c.b)
            elif c.kind == C_UTF8 and not needs_escape(v, length):
                out.put(b'"', 1)
                out.put(<const char*>v, length)  # checked as UTF-8 with the whole image
                out.put(b'"', 1)
            elif c.kind == C_UTF8:
                put_escaped(out, v, length)  # its bytes checked as UTF-8 with the whole image
            else:
                codec, errors = plan.keep[c.b]
                out.put_str(json_string(PyBytes_FromStringAndSize(<const char*>v, length).decode(codec, errors)))
            at += size + length
        elif c.kind == C_DECIMAL:
            size = DECIMAL_BYTES[(c.a - c.b) % 9] + (c.a - c.b) // 9 * 4 + c.b // 9 * 4 + DECIMAL_BYTES[c.b % 9]
            if at + size > end:
                raise Fallback()
            put_decimal(out, v, c.a, c.b, size)
            at += size
        elif c.kind == C_DATETIME2:
            size = 5 + (c.a + 1) // 2
            if at + size > end:
                raise Fallback()
            u = be(v, 5)
            put_datetime(out, ((u >> 22) & 0x1FFFF) // 13, ((u >> 22) & 0x1FFFF) % 13, (u >> 17) & 31,
                         (u >> 12) & 31, (u >> 6) & 63, u & 63, frac_us(v + 5, c.a))
            at += size
        elif c.kind == C_TIMESTAMP2:
            size = 4 + (c.a + 1) // 2
            if at + size > end:
                raise Fallback()
            put_timestamp(out, be(v, 4), frac_us(v + 4, c.a))
            at += size
        elif c.kind == C_DATE:
            if at + 3 > end:
                raise Fallback()
            u = le(v, 3)
            tag = "da" if valid_date(u >> 9, (u >> 5) & 15, u & 31) else "tt"
            size = put_tag(tmp, tag)
            size += put_date_text(tmp + size, u >> 9, (u >> 5) & 15, u & 31)
            memcpy(tmp + size, b'"}', 2)
            out.put(tmp, size + 2)
            at += 3
        elif c.kind == C_FLOAT:
            size = c.a
            if at + size > end:
                raise Fallback()
            if size == 4:
                memcpy(&f4, v, 4)
                f = f4
            else:
                memcpy(&f, v, 8)
            if isfinite(f):
                put_float(out, f)
            else:
                out.put_str(float_text(f))  # tagged
            at += size
        else:
            raise Fallback()
        plan.vend[i] = out.size
    out.put(b"}", 1)
    return at


cdef class Records:
    """The records of a binlog dump, read from the connection `conn` (pymysql's, the dump
    requested on it); `slow`: a binlog_events.Slow over the same stream."""
    cdef object conn, read1, slow, row_ops
    cdef bytes chunk  # bytes read from the connection and not yet taken, from `at`
    cdef Py_ssize_t at
    cdef int checksum, seq
    cdef bint layout  # the post-headers are the lengths read here (binlog_events.Slow.standard_layout)
    cdef readonly i64 log_pos  # the end of the last event read in its file (where a dump resumes)
    cdef dict tables  # a Table_map event's bytes -> Plan
    cdef dict by_id  # table id -> Plan
    cdef Buf before, after
    cdef list pending  # the packets of the events of a TRANSACTION_PAYLOAD read last, from `next_inner`
    cdef Py_ssize_t next_inner
    # a Window reads the rows events it decodes itself: _rows gives ROWS_HERE and leaves the event here
    cdef bint columnar
    cdef bytes r_payload
    cdef Py_ssize_t r_at, r_end
    cdef i64 r_start
    cdef uint32_t r_time
    cdef int r_etype, r_flags
    cdef Plan r_plan
    cdef u64 g_domain, g_server, g_seq  # a MariaDB GTID event's, left for a Window (GTID_HERE)

    def __init__(self, conn, use_checksum, slow, row_ops, log_pos):
        self.conn, self.slow, self.row_ops, self.log_pos = conn, slow, row_ops, log_pos
        self.read1 = conn._rfile.read1
        self.chunk, self.at = b"", 0
        self.checksum = 4 if use_checksum else 0
        self.seq = conn._next_seq_id
        self.tables, self.by_id = {}, {}
        self.layout = slow.standard_layout()
        self.before, self.after = Buf(), Buf()

    def __iter__(self):
        return self

    cdef bytes _bytes(self, Py_ssize_t n):
        """The next `n` bytes of the connection, read in large chunks (a read call per packet
        header and body cost as much as decoding a small event)."""
        cdef Py_ssize_t have = PyBytes_GET_SIZE(self.chunk) - self.at
        cdef bytes out
        if have >= n:
            out = self.chunk[self.at:self.at + n]
            self.at += n
            return out
        parts = [self.chunk[self.at:]]
        self.chunk, self.at = b"", 0
        while have < n:
            try:
                more = self.read1(READ_CHUNK)
            except OSError as e:  # as pymysql's _read_bytes
                self.conn._force_close()
                raise pymysql.err.OperationalError(CR.CR_SERVER_LOST,
                                                   f"Lost connection to MySQL server during query ({e})") from e
            if not more:
                self.conn._force_close()
                raise pymysql.err.OperationalError(CR.CR_SERVER_LOST, "Lost connection to MySQL server during query")
            if have + len(more) > n:
                parts.append(more[:n - have])
                self.chunk, self.at = more, n - have
                have = n
            else:
                parts.append(more)
                have += len(more)
        return b"".join(parts)

    cdef object _packet(self):
        """The next packet's payload, None at the end of the dump (pymysql's _read_packet and
        mysql-replication's EOF test)."""
        cdef bytes header, part
        cdef const uint8_t* h
        cdef Py_ssize_t length
        parts = []
        while True:
            if PyBytes_GET_SIZE(self.chunk) - self.at >= 4:  # read where it is, no bytes made of it
                h = <const uint8_t*>PyBytes_AS_STRING(self.chunk) + self.at
                self.at += 4
            else:
                header = self._bytes(4)
                h = <const uint8_t*>PyBytes_AS_STRING(header)
            length = h[0] | (h[1] << 8) | (h[2] << 16)
            if h[3] != self.seq:
                self.conn._force_close()
                if h[3] == 0:  # MariaDB sends an error packet numbered 0 at shutdown
                    raise pymysql.err.OperationalError(CR.CR_SERVER_LOST,
                                                       "Lost connection to MySQL server during query")
                raise pymysql.err.InternalError(f"Packet sequence number wrong - got {h[3]} expected {self.seq}")
            self.seq = (self.seq + 1) % 256
            parts.append(self._bytes(length))
            if length < MAX_PACKET:
                break
        part = parts[0] if len(parts) == 1 else b"".join(parts)
        if PyBytes_GET_SIZE(part) and (<const uint8_t*>PyBytes_AS_STRING(part))[0] == 0xFF:
            MysqlPacket(part, self.conn.encoding).raise_for_error()
        if PyBytes_GET_SIZE(part) < 9 and PyBytes_GET_SIZE(part) and (<const uint8_t*>PyBytes_AS_STRING(part))[0] == 0xFE:
            return None
        return part

    def __next__(self):
        rec = self.next_record()
        if rec is None:
            raise StopIteration
        return rec

    cdef object next_record(self):
        """The next record (ROWS_HERE: a rows event a Window reads), None at the end of the dump."""
        cdef bytes payload
        cdef const uint8_t* d
        cdef Py_ssize_t n, body, end
        cdef uint32_t timestamp, server_id, event_size, log_pos
        cdef int etype
        cdef bint inner
        while True:
            inner = False
            if self.pending is not None:
                if self.next_inner < len(self.pending):
                    got = self.pending[self.next_inner]
                    self.next_inner += 1
                    inner = True
                else:
                    self.pending = None
                    self.slow.payload_start = None
            if not inner:
                got = self._packet()
                if got is None:
                    return None
            payload = got
            d = <const uint8_t*>PyBytes_AS_STRING(payload)
            n = PyBytes_GET_SIZE(payload)
            if n < 20 or d[0] != 0:
                continue  # not an event (pymysql's is_ok_packet)
            timestamp = <uint32_t>le(d + 1, 4)
            etype = d[5]
            server_id = <uint32_t>le(d + 6, 4)
            event_size = <uint32_t>le(d + 10, 4)
            log_pos = <uint32_t>le(d + 14, 4)
            body = 20
            end = 1 + <Py_ssize_t>event_size - self.checksum
            # where BinlogReader takes the event to start: the end less mysql-replication's
            # event_size, which leaves out the header and the checksum (binlog_events.record_of)
            start = <i64>log_pos - <i64>event_size + 19 + self.checksum
            if log_pos and etype != ROTATE_EVENT and not inner:
                self.log_pos = log_pos  # a payload's events end where it does: read, it is read whole
            if etype == TRANSACTION_PAYLOAD_EVENT and not inner:
                self.pending, self.next_inner = self.slow.payload(payload), 0
                self.slow.payload_start = <i64>log_pos - <i64>event_size
                continue
            if end > n or end < body or (not self.layout and etype != FORMAT_DESCRIPTION_EVENT):
                rec = self.slow.record(payload)
            elif etype == MARIADB_GTID_EVENT and end - body >= 13:
                if self.columnar:  # the Window keeps it as numbers
                    self.r_start, self.r_time = start, timestamp
                    self.g_domain, self.g_server, self.g_seq = le(d + body + 8, 4), server_id, le(d + body, 8)
                    return GTID_HERE
                return (K_GTID, start, timestamp, f"{le(d + body + 8, 4)}-{server_id}-{le(d + body, 8)}")
            elif etype == XID_EVENT:
                if self.columnar:  # the Window reads its start and end here
                    self.r_start, self.r_end = start, log_pos
                    return XID_HERE
                return (K_XID, start, timestamp, log_pos)
            elif etype == QUERY_EVENT and self._is_begin(d, body, end):
                return (K_QUERY, start, timestamp, log_pos, "BEGIN", None)
            elif etype == TABLE_MAP_EVENT:
                self._table_map(payload, body, end)
                continue
            elif etype == ANONYMOUS_GTID_EVENT or etype == ANNOTATE_ROWS_EVENT:
                # no record: mysql-replication's NotImplementedEvent, passed over (event_types.PASSED_OVER);
                # MariaDB writes an ANNOTATE_ROWS before each statement's rows events, one a transaction
                continue
            elif etype in self.row_ops:
                rec = self._rows(payload, etype, body, end, start, timestamp)
            else:
                rec = self.slow.record(payload)
                if etype == FORMAT_DESCRIPTION_EVENT:
                    self.layout = self.slow.standard_layout()
                if etype == ROTATE_EVENT:
                    self.by_id.clear()  # table ids are not kept across a server's restart
                    self.log_pos = self.slow.stream.log_pos
            if rec is not None:
                return rec

    cdef bint _is_begin(self, const uint8_t* d, Py_ssize_t body, Py_ssize_t end):
        """A Query event whose statement is BEGIN (post-header of 13 bytes: the schema's length
        at 8, the status variables' at 11)."""
        cdef Py_ssize_t q
        if end - body < 13:
            return False
        q = body + 13 + le(d + body + 11, 2) + d[body + 8] + 1
        return end - q == 5 and d[q - 1] == 0 and memcmp(d + q, "BEGIN", 5) == 0

    cdef _table_map(self, bytes payload, Py_ssize_t body, Py_ssize_t end):
        cdef Plan plan
        cdef const char* d = PyBytes_AS_STRING(payload)
        table_id = le(<const uint8_t*>d + body, 6)
        plan = self.by_id.get(table_id)
        if plan is not None and PyBytes_GET_SIZE(plan.map_bytes) == end - body and memcmp(
                PyBytes_AS_STRING(plan.map_bytes), d + body, end - body) == 0:
            return  # the id's table map as read last (one a transaction): the stream's is it too
        key = payload[body:end]
        plan = self.tables.get(key)
        if plan is None:
            got = self.slow.table(payload)  # mysql-replication parses it, and keeps it in its table map
            if got is None:
                return
            info, specs, parsed_id, table = got
            plan = make_plan(info, specs, table)
            plan.map_bytes = key
            if len(self.tables) >= TABLE_CACHE_ENTRIES:
                self.tables.clear()
            self.tables[key] = plan
            self.by_id[parsed_id] = plan
            return
        self.slow.stream.table_map[table_id] = plan.table
        self.by_id[table_id] = plan

    cdef object _rows(self, bytes payload, int etype, Py_ssize_t body, Py_ssize_t end, i64 start,
                      uint32_t timestamp):
        cdef Plan plan
        cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(payload)
        cdef Py_ssize_t at, nb
        cdef u64 ncols
        cdef bint update = etype == 24 or etype == 31
        cdef int flags
        if end - body < 10:
            return self.slow.record(payload)
        plan = self.by_id.get(le(d + body, 6))
        if plan is None or not plan.fast:
            return self.slow.record(payload)
        flags = <int>le(d + body + 6, 2)
        at = body + 8
        if etype >= 30:  # v2: the extra data's length, itself included
            at = body + 10 + <Py_ssize_t>le(d + body + 8, 2) - 2
        if at >= end:
            return self.slow.record(payload)
        ncols = d[at]  # a length-encoded count: one byte below 251 columns
        if ncols >= 251:
            return self.slow.record(payload)
        at += 1
        nb = (plan.n + 7) // 8
        if ncols != <u64>plan.n or at + nb * (2 if update else 1) > end:
            return self.slow.record(payload)
        if not is_full(d + at, plan.full, nb) or (update and not is_full(d + at + nb, plan.full, nb)):
            return self.slow.record(payload)  # not a FULL image
        at += nb * (2 if update else 1)
        if self.columnar:
            self.r_payload, self.r_at, self.r_end, self.r_start, self.r_time = payload, at, end, start, timestamp
            self.r_etype, self.r_flags, self.r_plan = etype, flags, plan
            return ROWS_HERE
        op = self.row_ops[etype]
        if plan.info.system:
            return (K_ROWS, start, timestamp, plan.info, flags, op, [])
        rows = []
        try:
            while at < end:  # a row of only NULLs is its null bitmap alone: one byte
                self.before.size = self.after.size = 0
                if update:
                    at = read_image(plan, d, at, end, self.before)
                    before = PyUnicode_DecodeUTF8(self.before.data, self.before.size, NULL)
                    at = read_image(plan, d, at, end, self.after)
                    rows.append((before, PyUnicode_DecodeUTF8(self.after.data, self.after.size, NULL)))
                else:
                    at = read_image(plan, d, at, end, self.after)
                    text = PyUnicode_DecodeUTF8(self.after.data, self.after.size, NULL)
                    rows.append((None, text) if etype == 23 or etype == 30 else (text, None))
        except (Fallback, UnicodeDecodeError, LookupError):
            return self.slow.record(payload)
        return (K_ROWS, start, timestamp, plan.info, flags, op, rows)


include "compiled_window.pxi"
