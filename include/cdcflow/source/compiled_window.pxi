# Included by compiled_reader.pyx: BinlogReader.read's loop over the records the compiled reader
# decodes itself, for pull's sequential path and its ranges.
#
# source.binlog.BinlogReader.read is the reference: it reads every record and makes an Event of
# each row.  A Window takes the records of a window's frequent events here (a MariaDB GTID, an
# XID, a bare BEGIN, the rows events of tables the reader decodes) and follows the transactions
# as read does (its commit ts, seq, GTID, where it starts and ends), writing each row straight
# into the event store's columns (core/compiled_columns.pyx) with its key texts where the key
# stamper (stages.pull_keys.KeyStamper.plan_for) says the key is the image's own values.  Every
# other record goes to read's loop, with the transaction's state handed over in the reader's
# attributes (store) and taken back after (load): the reference's code acts on it.

from cdcflow.core import tso
from cdcflow.source.gtid import is_anonymous
from cdcflow.source.position import Position

cdef int LOGICAL_BITS = tso.LOGICAL_BITS
cdef i64 NO_FOREIGN_KEY_CHECKS = 0x0002  # as source.binlog's

# a Window's GTID of the transaction read (Window.gtid_kind)
cdef enum:
    GTID_NONE = 0
    GTID_NUMBERS = 1
    GTID_TEXT = 2
    PENDING_DOMAINS = 16

# how a table's rows are keyed (Plan.key_mode), as KeyStamper.plan_for says
cdef enum:
    KEY_NONE = 0  # no key texts and no span: no stamper, or a table the filter drops
    KEY_PENDING = 1  # the stamper keys them in its batches (a folding collation, conflict keys, ...)
    KEY_HERE = 2  # keyed here from the image's values (no key: no text), counted in the table's KeyRun


cdef inline int copy_within(Buf b, Py_ssize_t start, Py_ssize_t end) except -1:
    """b's bytes [start, end) appended to b (reserved first: the copy must not read freed bytes)."""
    b.reserve(end - start)
    memcpy(b.data + b.size, b.data + start, end - start)
    b.size += end - start
    return 0


cdef Py_ssize_t utf8_chars(const uint8_t* s, Py_ssize_t n) except -2:
    """The characters of UTF-8 text, -1 where it is not strict UTF-8 (what bytes.decode refuses:
    overlong forms, surrogates, past U+10FFFF): the reader's strings are copied as they are."""
    cdef Py_ssize_t i = 0, chars = 0
    cdef uint8_t c, c1
    while i < n:
        c = s[i]
        chars += 1
        if c < 0x80:
            i += 1
        elif c < 0xC2:
            return -1
        elif c < 0xE0:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return -1
            i += 2
        elif c < 0xF0:
            if i + 2 >= n:
                return -1
            c1 = s[i + 1]
            if (c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return -1
            if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 >= 0xA0):
                return -1
            i += 3
        elif c < 0xF5:
            if i + 3 >= n:
                return -1
            c1 = s[i + 1]
            if (c1 & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
                return -1
            if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 >= 0x90):
                return -1
            i += 4
        else:
            return -1
    return chars


cdef class Window:
    """The records of a window read over Records, less those it acts on itself (see above).
    `reader`: the BinlogReader (its _trx_ts, _seq, _trx_gtid, _trx_start, _cur_file, last_ts,
    _file, _pos, transactions, read_gtids hold the state between records); `cols`: the event
    writer's columns; `keys`: the KeyStamper (None: no key texts); `next_ts`: the reader's own
    commit ts numbering (None: tso.for_binlog_event's)."""
    cdef Records records
    cdef object reader, keys, next_ts
    cdef EventColumns cols
    cdef long gen  # the stamper's DDL generation: a DDL is read by read's loop, so it changes only there
    cdef bint in_trx, handed, dirty
    cdef i64 trx_ts, seq, last_ts, target_ts, end_pos, start_pos, head_pos, transactions
    cdef object trx_gtid, cur_file, end_file, start_file, head_file
    cdef object gtid_b, start_file_b  # the transaction's GTID (a string's) and start file, in UTF-8
    # the transaction's GTID: none, a MariaDB GTID as numbers (GTID_HERE; its text in gtid_text)
    # or the string trx_gtid; and the MariaDB GTIDs of transactions read, not yet added to
    # read_gtids: each domain's last (read_gtids keeps only that), at most PENDING_DOMAINS
    cdef int gtid_kind
    cdef u64 g_domain, g_server, g_seq
    cdef char gtid_text[64]
    cdef int gtid_len
    cdef u64 pend_domain[PENDING_DOMAINS]
    cdef u64 pend_server[PENDING_DOMAINS]
    cdef u64 pend_seq[PENDING_DOMAINS]
    cdef int npend
    cdef int file_vs_head  # the file read now against the head's: -1, 0, 1
    cdef Buf scratch  # one rows event's images and key texts
    cdef Buf value  # one conflict-key value's text
    cdef Py_ssize_t* spans  # per row of it: before, after, before's key, after's key (start, end each), its characters
    cdef Py_ssize_t spans_cap

    def __init__(self, reader, EventColumns cols, keys, next_ts):
        self.reader, self.cols, self.keys, self.next_ts = reader, cols, keys, next_ts
        self.target_ts = reader.target_ts or 0
        self.head_file, self.head_pos = reader.head.file, reader.head.pos
        self.scratch, self.value = Buf(), Buf()
        self.handed = True  # the state is the reader's: taken at the first record

    def __dealloc__(self):
        PyMem_Free(self.spans)

    def over(self, Records records):
        """Read on over `records` (a dump connected again starts another)."""
        records.columnar = True
        self.records = records
        return self

    def __iter__(self):
        return self

    cdef load(self):
        r = self.reader
        t = r._trx_ts
        self.in_trx = t is not None
        self.trx_ts = t if self.in_trx else 0
        self.seq, self.trx_gtid, self.last_ts, self.transactions = r._seq, r._trx_gtid, r.last_ts, r.transactions
        self.gtid_b = None if self.trx_gtid is None else self.trx_gtid.encode("utf-8")
        self.gtid_kind = GTID_NONE if self.trx_gtid is None else GTID_TEXT
        start = r._trx_start
        self.start_file, self.start_pos = start.file, start.pos
        self.start_file_b = self.start_file.encode("utf-8")
        self.end_file, self.end_pos, self.cur_file = r._file, r._pos, r._cur_file
        if self.keys is not None:
            self.gen = self.keys.generation
        self.file_vs_head = 0 if self.cur_file == self.head_file else (1 if self.cur_file > self.head_file else -1)

    cdef store(self):
        r = self.reader
        r._trx_ts = self.trx_ts if self.in_trx else None
        if self.gtid_kind == GTID_NUMBERS:
            self.trx_gtid = PyUnicode_DecodeUTF8(self.gtid_text, self.gtid_len, NULL)
        r._seq, r._trx_gtid, r.last_ts, r.transactions = self.seq, self.trx_gtid, self.last_ts, self.transactions
        r._trx_start = Position(self.start_file, self.start_pos)
        r._file, r._pos, r._cur_file = self.end_file, self.end_pos, self.cur_file
        self.add_gtids()
        self.handed = self.dirty = True

    cdef bint past_head(self, i64 ev_start):
        """BinlogReader.read's test of an event outside a transaction: the next cycle's."""
        return self.file_vs_head > 0 or (self.file_vs_head == 0 and ev_start >= self.head_pos)

    cdef bint begin(self, uint32_t ev_time) except -1:
        cdef i64 ts
        if self.next_ts is not None:
            ts = self.next_ts(ev_time)
        else:
            ts = max(self.last_ts + 1, (<i64>ev_time * 1000) << LOGICAL_BITS)
        if self.target_ts and ts > self.target_ts:
            self.reader.stopped_at_target = True
            return False
        self.trx_ts, self.seq, self.in_trx = ts, 0, True
        if self.dirty:  # read's loop may have set a savepoint
            self.reader._savepoints.clear()
            self.dirty = False
        return True

    cdef end(self, i64 end_pos):
        self.last_ts = self.trx_ts
        self.end_file, self.end_pos = self.cur_file, end_pos
        cdef int i
        if self.gtid_kind == GTID_NUMBERS:
            for i in range(self.npend):
                if self.pend_domain[i] == self.g_domain:
                    break
            else:
                if self.npend == PENDING_DOMAINS:
                    self.add_gtids()
                i = self.npend
                self.npend += 1
                self.pend_domain[i] = self.g_domain
            self.pend_server[i], self.pend_seq[i] = self.g_server, self.g_seq
        elif self.gtid_kind == GTID_TEXT and not is_anonymous(self.trx_gtid):
            self.add_gtids()  # in the order read
            self.reader.read_gtids.add(self.trx_gtid)
        self.transactions += 1
        self.in_trx = False
        self.trx_gtid = self.gtid_b = None
        self.gtid_kind = GTID_NONE
        if self.start_file is not self.cur_file:
            self.start_file, self.start_file_b = self.cur_file, self.cur_file.encode("utf-8")
        self.start_pos = end_pos

    cdef add_gtids(self):
        """The MariaDB GTIDs held as numbers, added to the reader's read_gtids."""
        cdef int i
        for i in range(self.npend):
            self.reader.read_gtids.add(f"{self.pend_domain[i]}-{self.pend_server[i]}-{self.pend_seq[i]}")
        self.npend = 0

    def __next__(self):
        cdef Records R = self.records
        if self.handed:
            self.load()
            self.handed = False
        while True:
            rec = R.next_record()
            if rec is None:
                self.store()
                raise StopIteration
            if rec is XID_HERE:
                if not self.in_trx and self.past_head(R.r_start):
                    self.store()
                    raise StopIteration
                if self.in_trx:
                    self.end(R.r_end)
                continue
            if rec is GTID_HERE:
                if not self.in_trx and self.past_head(R.r_start) or not self.begin(R.r_time):
                    self.store()
                    raise StopIteration
                self.g_domain, self.g_server, self.g_seq = R.g_domain, R.g_server, R.g_seq
                self.gtid_len = put_digits(self.gtid_text, self.g_domain, 1)
                self.gtid_len += put_after(self.gtid_text + self.gtid_len, c'-', self.g_server, 1)
                self.gtid_len += put_after(self.gtid_text + self.gtid_len, c'-', self.g_seq, 1)
                self.gtid_kind = GTID_NUMBERS
                self.trx_gtid = self.gtid_b = None
                continue
            if rec is ROWS_HERE:
                if not self.in_trx and (self.past_head(R.r_start) or not self.begin(R.r_time)):
                    self.store()
                    raise StopIteration
                if R.r_plan.system:
                    continue
                rec = self.rows(R.r_plan)
                if rec is None:
                    continue
            else:
                kind = rec[0]
                if kind == K_GTID or kind == K_XID or (kind == K_QUERY and rec[5] is None):
                    if not self.in_trx and self.past_head(rec[1]):
                        self.store()
                        raise StopIteration
                    if kind == K_XID:
                        if self.in_trx:
                            self.end(rec[3])
                        continue
                    if kind == K_GTID or not self.in_trx:  # a GTID always begins one, BEGIN where none is open
                        if not self.begin(rec[2]):
                            self.store()
                            raise StopIteration
                    if kind == K_GTID:
                        self.trx_gtid = rec[3]
                        self.gtid_b = None if rec[3] is None else rec[3].encode("utf-8")
                        self.gtid_kind = GTID_NONE if rec[3] is None else GTID_TEXT
                    continue
            self.store()
            return rec

    cdef key_plan(self, Plan plan):
        """The plan's keying for the stamper's DDL generation now."""
        cdef int i
        if self.keys is None:
            plan.key_mode = KEY_NONE
            return
        gen = self.gen
        if plan.key_gen == gen:
            return
        mode, key, run, unique = self.keys.plan_for(plan.info.schema, plan.info.table)
        unique = unique or []
        if mode == KEY_HERE and key is not None and not all(c in plan.names for c in key) or not all(
                c in plan.names for _p, cols in unique for c in cols):
            mode = KEY_PENDING  # an image without a key's column: the stamper says what it makes of it
        PyMem_Free(plan.key_idx)
        PyMem_Free(plan.uniq_cols)
        PyMem_Free(plan.uniq_at)
        plan.key_idx, plan.nkey, plan.uniq_cols, plan.uniq_at, plan.nuniq = NULL, 0, NULL, NULL, 0
        if mode == KEY_HERE and key is not None:
            plan.nkey = len(key)
            plan.key_idx = <int*>PyMem_Malloc(max(1, plan.nkey) * sizeof(int))
            plan.nuniq = len(unique)
            plan.uniq_prefix = [prefix for prefix, _cols in unique]
            plan.uniq_at = <int*>PyMem_Malloc((plan.nuniq + 1) * sizeof(int))
            plan.uniq_cols = <int*>PyMem_Malloc(max(1, sum(len(cols) for _p, cols in unique)) * sizeof(int))
            if plan.key_idx == NULL or plan.uniq_at == NULL or plan.uniq_cols == NULL:
                raise MemoryError()
            for i in range(plan.nkey):
                plan.key_idx[i] = plan.names.index(key[i])
            plan.uniq_at[0] = 0
            for i, (_prefix, cols) in enumerate(unique):
                for j, c in enumerate(cols):
                    plan.uniq_cols[plan.uniq_at[i] + j] = plan.names.index(c)
                plan.uniq_at[i + 1] = plan.uniq_at[i] + len(cols)
        plan.key_mode, plan.run, plan.key_gen = mode, run, gen

    cdef int conflict_keys(self, Plan plan, Py_ssize_t key_start, Py_ssize_t key_end) except -1:
        """The (value, key) pairs of the image read last into the scratch buffer, whose key text
        is there at [key_start, key_end), into its table's KeyRun (sink.conflict_keys.ConflictValues
        .pairs: a unique key's text before its values, each value folded wider than any collation,
        between unit separators; none where a value is NULL)."""
        cdef Buf b = self.scratch, v = self.value
        cdef int u, j, c
        cdef Py_ssize_t s, e, k, part
        cdef const char* t
        cdef bytes prefix
        cdef bint plain
        for u in range(plan.nuniq):
            prefix = plan.uniq_prefix[u]
            v.size = 0
            v.put(prefix, len(prefix))
            for j in range(plan.uniq_at[u], plan.uniq_at[u + 1]):
                c = plan.uniq_cols[j]
                s, e = plan.vstart[c], plan.vend[c]
                t = b.data + s
                if e - s == 4 and memcmp(t, b"null", 4) == 0:
                    break  # a unique key does not hold NULLs against each other
                if j > plan.uniq_at[u]:
                    v.put(b"\x1f", 1)
                if plan.cols[c].kind == C_INT:
                    v.put(t, e - s)  # str(int): the image's text
                    continue
                plain = e - s >= 2 and t[0] == b'"'
                k = 1
                while plain and k < e - s - 1:
                    plain = t[k] != b'\\' and <uint8_t>t[k] < 0x80
                    k += 1
                if not plain:  # escaped, not ASCII, or no string: as the Python reader's value folds
                    v.put_str(self.keys.value_part(PyUnicode_DecodeUTF8(t, e - s, NULL)))
                    continue
                part = v.size
                v.reserve(e - s)
                for k in range(1, e - s - 1):  # ASCII lower-cased, its trailing spaces dropped
                    v.data[v.size] = t[k] + 32 if b'A' <= t[k] <= b'Z' else t[k]
                    v.size += 1
                while v.size > part and v.data[v.size - 1] == b' ':
                    v.size -= 1
            else:
                plan.run.pair_values.put_text(v.data, v.size)
                plan.run.pair_keys.put_text(b.data + key_start, key_end - key_start)
        return 0

    cdef int key_text(self, Plan plan) except -1:
        """The key text of the image read last into the scratch buffer (sink.compaction.Keyer's:
        its key's values as the image writes them, a JSON array)."""
        cdef Buf b = self.scratch
        cdef int i, c
        b.put(b"[", 1)
        for i in range(plan.nkey):
            if i:
                b.put(b",", 1)
            c = plan.key_idx[i]
            copy_within(b, plan.vstart[c], plan.vend[c])
        return b.put(b"]", 1)

    cdef object rows(self, Plan plan):
        """The rows of the rows event Records left, decoded into the scratch buffer whole (an
        event the reader cannot read goes to mysql-replication whole: its record is returned),
        then appended to the columns."""
        cdef Records R = self.records
        cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(R.r_payload)
        cdef Py_ssize_t at = R.r_at, end = R.r_end, nrows = 0, i, chars, got
        cdef Py_ssize_t* sp
        cdef Buf b = self.scratch
        cdef int etype = R.r_etype
        cdef bint update = etype == 24 or etype == 31, insert = etype == 23 or etype == 30
        cdef bint keyed
        cdef EventColumns cols = self.cols
        self.key_plan(plan)
        keyed = plan.key_mode == KEY_HERE and plan.key_idx != NULL
        b.size = 0
        pairs_before = plan.run.pair_values.n if keyed and plan.nuniq else 0
        try:
            while at < end:  # a row of only NULLs is its null bitmap alone: one byte
                room(<void**>&self.spans, &self.spans_cap, nrows + 1, 9 * sizeof(Py_ssize_t), 64)
                sp = self.spans + nrows * 9
                for i in range(8):
                    sp[i] = -1
                chars = 0
                for i in range(2):  # before, then after
                    if (i == 0 and insert) or (i == 1 and not update and not insert):
                        continue
                    sp[i * 2] = b.size
                    at = read_image(plan, d, at, end, b)
                    sp[i * 2 + 1] = b.size
                    got = utf8_chars(<const uint8_t*>b.data + sp[i * 2], b.size - sp[i * 2])
                    if got < 0:
                        raise Fallback()
                    chars += got
                    if keyed:
                        sp[4 + i * 2] = b.size
                        self.key_text(plan)
                        sp[5 + i * 2] = b.size
                        if plan.nuniq:
                            self.conflict_keys(plan, sp[4 + i * 2], sp[5 + i * 2])
                sp[8] = chars
                nrows += 1
        except (Fallback, UnicodeDecodeError, LookupError):
            if keyed and plan.nuniq:  # the rows read so far go again, through the Python decoder
                plan.run.pair_values.cut(pairs_before)
                plan.run.pair_keys.cut(pairs_before)
            return R.slow.record(R.r_payload)
        op = b"update" if update else (b"insert" if insert else b"delete")
        for i in range(nrows):
            sp = self.spans + i * 9
            cols.commit_ts.put_int(self.trx_ts)
            cols.seq.put_int(self.seq)
            self.seq += 1
            cols.schema.put_text(plan.schema_b, len(plan.schema_b))
            cols.table.put_text(plan.table_b, len(plan.table_b))
            cols.op.put_text(op, len(op))
            put_span(cols.before, b, sp[0], sp[1])
            put_span(cols.after, b, sp[2], sp[3])
            if plan.pk_b is None:
                cols.pk.put_null()
            else:
                cols.pk.put_text(plan.pk_b, len(plan.pk_b))
            put_span(cols.before_key, b, sp[4], sp[5])
            put_span(cols.after_key, b, sp[6], sp[7])
            if R.r_flags & NO_FOREIGN_KEY_CHECKS:
                cols.fk_checks_off.put_int(1)
            else:
                cols.fk_checks_off.put_null()
            if self.gtid_kind == GTID_NUMBERS:
                cols.gtid.put_text(self.gtid_text, self.gtid_len)
            elif self.gtid_kind == GTID_TEXT:
                cols.gtid.put_text(self.gtid_b, len(self.gtid_b))
            else:
                cols.gtid.put_null()
            cols.start_file.put_text(self.start_file_b, len(self.start_file_b))
            cols.start_pos.put_int(self.start_pos)
            cols.event_time.put_int(R.r_time)
            if plan.key_mode == KEY_PENDING:
                cols.add_pending(cols.n)
            elif plan.key_mode == KEY_HERE:
                plan.run.row(cols.base + cols.n, self.trx_ts)
            cols.end_row(sp[8])
        return None


cdef inline int put_span(Column c, Buf b, Py_ssize_t start, Py_ssize_t end) except -1:
    if start < 0:
        return c.put_null()
    return c.put_text(b.data + start, end - start)
