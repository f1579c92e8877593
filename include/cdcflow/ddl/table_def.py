"""What a DDL statement does to a table's definition: columns in order (name, type,
nullability) and indexes (primary, unique, plain), read from the statement text.

The binlog gives the statement, not the resulting table, so the tracked schema (TiCDC's
schema storage) is evolved by interpreting the statement here.  Only what decides keys
and column order is modelled; options, partitions, defaults and comments change nothing.
Applying is tolerant (ADD of an existing column replaces it, DROP of a missing one does
nothing), so re-applying a DDL the catalogue snapshot already holds converges.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from cdcflow.ddl.lexer import Cursor, Token, split_commas

PRIMARY = "PRIMARY"
# MariaDB's implicit period columns of a table WITH SYSTEM VERSIONING that names none itself
IMPLICIT_PERIOD = ("row_start", "row_end")
# A MariaDB sequence is a table of one row: its state, and the settings only ALTER SEQUENCE
# (a DDL) changes.  Two images between two DDLs are the same row, so the settings are its key.
SEQUENCE_COLUMNS = (("next_not_cached_value", "bigint(21)"), ("minimum_value", "bigint(21)"),
                    ("maximum_value", "bigint(21)"), ("start_value", "bigint(21)"), ("increment", "bigint(21)"),
                    ("cache_size", "bigint(21) unsigned"), ("cycle_option", "tinyint(1) unsigned"),
                    ("cycle_count", "bigint(21)"))
SEQUENCE_KEY = ["minimum_value", "maximum_value", "start_value", "increment", "cache_size", "cycle_option"]


@dataclass
class TableInfo:
    # {"name", "type", "nullable"[, "collation"][, "charset"]} in order: a string column's
    # collation where a clause, the table's default or the catalogue names it
    columns: list[dict] = field(default_factory=list)
    indexes: dict[str, dict] = field(default_factory=dict)  # name -> {"columns", "unique", "primary", "prefix"}
    # a system-versioned table's period (start column, end column); None: not versioned
    period: list[str] | None = None
    sequence: bool = False  # a MariaDB sequence

    def column(self, name: str) -> dict | None:
        low = name.lower()
        return next((c for c in self.columns if c["name"].lower() == low), None)

    def valid_key(self) -> list[str] | None:
        """TiCDC's DDL-replication doc's valid index: the primary key, else a unique index whose columns are all
        NOT NULL.  None: the table has none.  A key on column prefixes counts (as in TiCDC):
        unique prefixes make the full values unique, and rows are keyed by the full values.
        The one definition: the downstream's catalogue is read into a TableInfo for it too
        (sink.downstream_tables)."""
        if self.sequence:
            return list(SEQUENCE_KEY)
        name = self.valid_key_index()
        if name is None:
            return None
        # MariaDB adds the period's end to a versioned table's unique keys (history rows share the
        # rest); the current row is the one a key's other columns find
        return [self.column(c)["name"] for c in self.indexes[name]["columns"]
                if not self.period or c.lower() != self.period[1].lower()]

    def valid_key_index(self) -> str | None:
        """The name of the index valid_key takes its columns from."""
        order = sorted(self.indexes.items(), key=lambda kv: (not kv[1]["primary"], kv[0]))
        for name, ix in order:
            if not ix["unique"] or not ix["columns"]:
                continue
            cols = [self.column(c) for c in ix["columns"]]
            if all(c is not None and (ix["primary"] or not c["nullable"]) for c in cols):
                return name
        return None

    def other_unique_keys(self) -> dict[str, list[str]]:
        """The unique indexes besides the valid key's (valid_key_index), by name: their columns,
        as the table names them (a versioned table's period end left out, as valid_key does)."""
        if self.sequence:
            return {}
        key_index, end = self.valid_key_index(), self.period[1].lower() if self.period else None
        out = {}
        for name, ix in self.indexes.items():
            cols = [self.column(c) for c in ix["columns"]]
            if name != key_index and ix["unique"] and cols and all(c is not None for c in cols):
                out[name] = [c["name"] for c in cols if c["name"].lower() != end]
        return out

    def key_collations(self, key: list[str]) -> dict[str, str | None]:
        """Per string column of `key`: its collation, None where no clause named it (the
        downstream's catalogue knows it then)."""
        cols = [self.column(c) for c in key]
        return {c["name"]: c.get("collation") for c in cols if c is not None and _is_string(c)}

    def to_dict(self) -> dict:
        extra = ({"period": self.period} if self.period else {}) | ({"sequence": True} if self.sequence else {})
        return {"columns": self.columns, "indexes": self.indexes} | extra

    @classmethod
    def from_dict(cls, d: dict) -> "TableInfo":
        return cls(list(d["columns"]), dict(d["indexes"]), d.get("period"), d.get("sequence", False))

    @classmethod
    def of_sequence(cls) -> "TableInfo":
        return cls([{"name": n, "type": t, "nullable": False} for n, t in SEQUENCE_COLUMNS], {}, sequence=True)

    def copy(self) -> "TableInfo":
        return copy.deepcopy(self)


# Words that end a column's type and start its attributes.
_ATTRS = frozenset("NOT NULL DEFAULT PRIMARY KEY UNIQUE AUTO_INCREMENT COMMENT COLLATE CHARACTER CHARSET "
                   "GENERATED AS REFERENCES CHECK ON INVISIBLE VISIBLE FIRST AFTER CONSTRAINT COLUMN_FORMAT "
                   "STORAGE SERIAL WITH WITHOUT SRID PERSISTENT VIRTUAL STORED COMPRESSED".split())


# Column types compared by a collation (BINARY, VARBINARY and BLOB compare bytes).
_STRING_TYPES = frozenset("char varchar tinytext text mediumtext longtext nchar nvarchar national character".split())


def _is_string(col: dict) -> bool:
    return col["type"].split("(")[0].split(" ")[0] in _STRING_TYPES


def _charset_clause(r: Cursor) -> tuple[str, str] | None:
    """[DEFAULT] CHARACTER SET | CHARSET | COLLATE [=] name here (consumed): ('charset' |
    'collation', lower-case name); None (nothing consumed) when none starts here."""
    start = r.i
    r.take("DEFAULT")
    what = "charset" if r.take("CHARACTER", "SET") or r.take("CHARSET") else "collation" if r.take("COLLATE") else None
    if what is None:
        r.i = start
        return None
    r.take_punct("=")
    t = r.peek()
    r.i += t is not None
    return (what, t.text.lower()) if t is not None and t.kind != "punct" else None


def _set_collation(col: dict, clause: tuple[str, str]) -> None:
    what, name = clause
    col.pop("collation", None)
    col[what] = name
    if clause == ("charset", "binary"):
        col["collation"] = "binary"


def _index_columns(toks: list[Token]) -> tuple[list[str], bool]:
    """`(a, b(10) DESC)` -> (['a', 'b'], has a prefix part)."""
    cols, prefix = [], False
    for part in split_commas(toks):
        r = Cursor(part)
        name = r.name()
        if name is None:  # an expression index part: it cannot be a key column
            return [], True
        cols.append(name)
        if r.take_punct("("):
            prefix = True
    return cols, prefix


def _column_def(r: Cursor) -> tuple[dict, list[str]]:
    """`name type attrs...` -> (column, ['primary'|'unique' inline keys])."""
    name = r.name()
    type_parts: list[str] = []
    while r.peek() and not (r.word() in _ATTRS and type_parts):
        t = r.peek()
        if t.is_punct("("):
            group = "(" + ",".join(x.text for x in r.group() if x.text != ",") + ")"
            if type_parts:
                type_parts[-1] += group
            continue
        type_parts.append(t.text.lower())
        r.i += 1
    nullable, keys, charset = True, [], []
    while r.peek():
        clause = _charset_clause(r)
        if clause is not None:
            charset.append(clause)
        elif r.take("NOT", "NULL"):
            nullable = False
        elif r.take("NULL"):
            nullable = True
        elif r.take("PRIMARY", "KEY") or r.take("KEY"):
            keys.append("primary")
        elif r.take("UNIQUE"):
            r.take("KEY") or r.take("INDEX")
            keys.append("unique")
        elif r.take("SERIAL") and r.take("DEFAULT", "VALUE"):  # SERIAL DEFAULT VALUE: NOT NULL UNIQUE
            nullable = False
            keys.append("unique")
        elif r.at_punct("("):
            r.group()  # DEFAULT (expr), CHECK (expr), AS (expr)
        else:
            r.i += 1
    type_text = " ".join(type_parts)
    if type_text.split(" ")[:1] == ["serial"]:  # SERIAL: BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
        nullable = False
        keys.append("unique")
    col = {"name": name, "type": type_text, "nullable": nullable}
    for clause in charset:
        _set_collation(col, clause)
    return col, keys


def _position(r_toks: list[Token]) -> tuple[str | None, str | None]:
    """FIRST / AFTER col at the end of a column clause."""
    words = [t.up for t in r_toks]
    for j, w in enumerate(words):
        if w == "FIRST":
            return "first", None
        if w == "AFTER" and j + 1 < len(r_toks):
            return "after", r_toks[j + 1].text
    return None, None


@dataclass(frozen=True)
class _IndexDef:
    """One key as a statement defines it."""
    name: str | None  # None: the statement names none (MySQL names it after its first column)
    columns: list[str]
    unique: bool = False
    primary: bool = False
    prefix: bool = False  # a column is indexed by a prefix only


# FOREIGN KEY, CHECK, PERIOD, SYSTEM VERSIONING: constraints that define no key.
_NOT_A_KEY = _IndexDef(None, [])


def _read_index_def(r: Cursor) -> _IndexDef | None:
    """The PRIMARY KEY / UNIQUE / INDEX / KEY / FULLTEXT / SPATIAL definition that starts here
    (consumed): _NOT_A_KEY for a constraint that is no key, None when none starts here."""
    symbol = None
    if r.take("CONSTRAINT"):
        if r.word() not in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
            symbol = r.name()  # names the index unless the index names itself
    if r.word() in ("FOREIGN", "CHECK", "PERIOD", "SYSTEM"):
        return _NOT_A_KEY
    primary = r.take("PRIMARY", "KEY")
    unique = not primary and r.take("UNIQUE")
    if not (primary or unique):
        if not (r.take("INDEX") or r.take("KEY") or r.take("FULLTEXT") or r.take("SPATIAL")
                or r.take("VECTOR")):
            return None
    r.take("INDEX") or r.take("KEY")
    r.take_if_exists()
    name = symbol
    if r.peek() is not None and not r.at_punct("(") and r.word() != "USING":
        name = r.name()
    r.take("USING") and r.name()
    cols, prefix = _index_columns(r.group())
    return _IndexDef(name, cols, unique, primary, prefix)


def _created_index(toks: list[Token]) -> _IndexDef:
    """CREATE [UNIQUE|FULLTEXT|SPATIAL] INDEX [IF NOT EXISTS] name [USING x] ON tbl (cols)."""
    r = Cursor(toks)
    r.skip_to("INDEX")
    unique = any(t.up == "UNIQUE" for t in toks[:r.i])
    r.i += 1
    r.take_if_exists()
    name = r.name()
    r.skip_to("ON")
    r.i += 1
    r.name()
    if r.take_punct("."):
        r.name()
    cols, prefix = _index_columns(r.group())
    return _IndexDef(name, cols, unique, name is not None and name.upper() == PRIMARY, prefix)


class _Table:
    """Mutations of one TableInfo, as MySQL/MariaDB apply them."""

    def __init__(self, info: TableInfo):
        self.t = info

    def put_column(self, col: dict, where: tuple[str | None, str | None], replace: str | None = None) -> None:
        cols = self.t.columns
        old = self.t.column(replace or col["name"])
        at = cols.index(old) if old is not None else len(cols)
        if old is not None:
            cols.remove(old)
        kind, after = where
        if kind == "first":
            at = 0
        elif kind == "after":
            ref = self.t.column(after)
            at = cols.index(ref) + 1 if ref is not None else len(cols)
        cols.insert(min(at, len(cols)), col)
        if replace and replace.lower() != col["name"].lower():
            for ix in self.t.indexes.values():
                ix["columns"] = [col["name"] if c.lower() == replace.lower() else c for c in ix["columns"]]
        self._pk_not_null()

    def drop_column(self, name: str) -> None:
        col = self.t.column(name)
        if col is None:
            return
        self.t.columns.remove(col)
        for key in list(self.t.indexes):
            ix = self.t.indexes[key]
            ix["columns"] = [c for c in ix["columns"] if c.lower() != name.lower()]
            if not ix["columns"]:
                del self.t.indexes[key]

    def add_index(self, name: str | None, cols: list[str], unique: bool, primary: bool, prefix: bool) -> None:
        if primary:
            name = PRIMARY
        elif not name:  # MySQL names an unnamed index after its first column: a, a_2, a_3 ...
            base, n = (cols[0] if cols else "idx"), 2
            name = base
            while name in self.t.indexes:
                name, n = f"{base}_{n}", n + 1
        self.t.indexes[name] = {"columns": cols, "unique": unique or primary, "primary": primary, "prefix": prefix}
        self._pk_not_null()

    def drop_index(self, name: str) -> None:
        for key in list(self.t.indexes):
            if key.lower() == name.lower():
                del self.t.indexes[key]

    def rename_index(self, old: str, new: str) -> None:
        for key in list(self.t.indexes):
            if key.lower() == old.lower():
                self.t.indexes[new] = self.t.indexes.pop(key)

    def _pk_not_null(self) -> None:
        pk = self.t.indexes.get(PRIMARY)
        for c in pk["columns"] if pk else ():
            col = self.t.column(c)
            if col is not None:
                col["nullable"] = False

    # -- definitions shared by CREATE TABLE and ALTER TABLE ADD
    def index_def(self, r: Cursor) -> bool:
        """Add the key defined here; False if no key or constraint is defined here."""
        ix = _read_index_def(r)
        if ix is None:
            return False
        if ix is not _NOT_A_KEY:
            self.add_index(ix.name, ix.columns, ix.unique, ix.primary, ix.prefix)
        return True

    def column_def(self, r: Cursor, where=(None, None), replace: str | None = None) -> None:
        col, keys = _column_def(r)
        if col["name"] is None:
            return
        self.put_column(col, where, replace)
        for k in keys:
            self.add_index(None, [col["name"]], True, k == "primary", False)


def create_table_info(body: list[Token], options: list[Token] = ()) -> TableInfo:
    """The TableInfo of `CREATE TABLE t (<body>) <options>`."""
    tbl = _Table(TableInfo())
    period = None
    for part in split_commas(body):
        r = Cursor(part)
        if r.word() == "PERIOD":
            period = _system_time_period(r) or period
        elif not tbl.index_def(r):
            r.i = 0
            tbl.column_def(r)
    if _versioned(options):
        _set_period(tbl.t, period)
    default = _table_default(options)
    for col in tbl.t.columns:  # the table's default collation: string columns that name none
        if default and _is_string(col) and "collation" not in col and "charset" not in col:
            col["collation"] = default
    return tbl.t


def _system_time_period(r: Cursor) -> list[str] | None:
    """`PERIOD FOR SYSTEM_TIME (start, end)` at `r`: [start, end]; None for another period (an
    application-time one, which changes no row a binlog carries)."""
    if not (r.take("PERIOD", "FOR") and r.take("SYSTEM_TIME") and r.at_punct("(")):
        return None
    names = [part[0].text for part in split_commas(r.group()) if part and part[0].is_name]
    return names if len(names) == 2 else None


def _set_period(info: TableInfo, period: list[str] | None) -> None:
    """`info` system-versioned by `period` (None: the implicit one).  MariaDB adds the period's end
    to every unique key, where information_schema shows it only for a column the table names."""
    info.period = period or list(IMPLICIT_PERIOD)
    for name in period or ():
        col = info.column(name)
        if col is not None:
            col["nullable"] = False
    if period:
        for ix in info.indexes.values():
            if ix["unique"] and period[1].lower() not in (c.lower() for c in ix["columns"]):
                ix["columns"].append(period[1])


def _versioned(options) -> bool:
    """Do a CREATE TABLE's options say WITH SYSTEM VERSIONING?"""
    words = [t.up for t in options]
    return any(words[i:i + 3] == ["WITH", "SYSTEM", "VERSIONING"] for i in range(len(words)))


def _table_default(options: list[Token]) -> str | None:
    """The collation a table's options name ([DEFAULT] COLLATE [=] x), if any."""
    r, found = Cursor(list(options)), None
    while r.peek():
        clause = _charset_clause(r)
        if clause is None:
            r.i += 1
        elif clause[0] == "collation":
            found = clause[1]
    return found


def alter_table(info: TableInfo, clause_toks: list[Token]) -> tuple[str | None, bool]:
    """Apply ALTER TABLE's clauses to `info` in place.  Returns (new name from RENAME TO,
    whether every clause was understood)."""
    tbl, rename, understood = _Table(info), None, True
    period = None  # ADD PERIOD FOR SYSTEM_TIME's columns, for the ADD SYSTEM VERSIONING beside it
    for part in split_commas(clause_toks):
        r = Cursor(part)
        w = r.word()
        if r.at("ADD", "SYSTEM", "VERSIONING"):
            _set_period(info, period or info.period)
        elif r.at("DROP", "SYSTEM", "VERSIONING"):
            info.period = None
        elif r.at("ADD", "PERIOD"):
            r.i += 1
            period = _system_time_period(r) or period
        elif w in ("ADD", "DROP"):
            r.i += 1
            if (_alter_add if w == "ADD" else _alter_drop)(tbl, r):
                break  # a partition clause takes the commas that follow
        elif w in ("MODIFY", "CHANGE"):
            r.i += 1
            _alter_column(tbl, r, change=w == "CHANGE")
        elif w == "RENAME":
            r.i += 1
            rename = _alter_rename(tbl, r) or rename
        elif r.take("CONVERT", "TO"):  # every string column takes the charset and collation
            clauses = [c for c in iter(lambda: _charset_clause(r), None)]
            for col in (c for c in info.columns if _is_string(c) and c.get("collation") != "binary"):
                for clause in clauses:
                    _set_collation(col, clause)
        elif w in _OTHER_CLAUSES:  # none changes columns or keys
            if w in _PARTITION_CLAUSES or (w == "ALTER" and r.word(1) == "PARTITION"):
                break  # partition clauses take the commas that follow
        elif w is not None and (w in _OPTION_WORDS or w == "DEFAULT"):
            continue  # table options
        else:
            understood = False
    return rename, understood


# ALTER TABLE's clauses that change no column or key, and those of them about partitions
_OTHER_CLAUSES = frozenset((
    "ALTER", "CONVERT", "ORDER", "ENABLE", "DISABLE", "FORCE", "ALGORITHM", "LOCK", "REMOVE", "TRUNCATE", "EXCHANGE",
    "REORGANIZE", "COALESCE", "REBUILD", "ANALYZE", "CHECK", "OPTIMIZE", "REPAIR", "DISCARD", "IMPORT", "PARTITION",
    "WITH", "WITHOUT", "SET"))
_PARTITION_CLAUSES = frozenset(("PARTITION", "REORGANIZE", "COALESCE", "TRUNCATE", "EXCHANGE", "REMOVE"))


def _alter_add(tbl: _Table, r: Cursor) -> bool:
    """ADD's index, column or parenthesised list of them.  True: ADD PARTITION."""
    if tbl.index_def(r):
        return False
    if r.word() in ("PARTITION",):
        return True
    r.take("COLUMN")
    r.take_if_exists()
    if r.at_punct("("):
        for sub in split_commas(r.group()):
            sr = Cursor(sub)
            if not tbl.index_def(sr):
                sr.i = 0
                tbl.column_def(sr)
        return False
    tbl.column_def(r, _position(r.rest()))
    return False


def _alter_drop(tbl: _Table, r: Cursor) -> bool:
    """DROP's primary key, index, constraint or column.  True: DROP PARTITION."""
    if r.take("PRIMARY", "KEY"):
        tbl.drop_index(PRIMARY)
    elif r.take("INDEX") or r.take("KEY") or r.take("CONSTRAINT"):
        r.take_if_exists()
        name = r.name()
        if name:
            tbl.drop_index(name)
    elif r.word() in ("FOREIGN", "CHECK", "PARTITION", "SYSTEM", "PERIOD"):
        return r.word() == "PARTITION"
    else:
        r.take("COLUMN")
        r.take_if_exists()
        name = r.name()
        if name:
            tbl.drop_column(name)
    return False


def _alter_column(tbl: _Table, r: Cursor, change: bool) -> None:
    """MODIFY's or CHANGE's column (CHANGE names the old column first)."""
    r.take("COLUMN")
    r.take_if_exists()
    old = r.name() if change else None
    start = r.i
    where = _position(r.rest())
    if old is None:
        old = r.peek().text if r.peek() else None
    r.i = start
    if old is not None and tbl.t.column(old) is not None:  # MODIFY IF EXISTS of no column: nothing
        tbl.column_def(r, where, replace=old)


def _alter_rename(tbl: _Table, r: Cursor) -> tuple[str | None, str] | None:
    """RENAME's column or index in place; the table's new (schema, name) for RENAME TO."""
    if r.take("COLUMN"):
        r.take_if_exists()
        old, _, new = r.name(), r.take("TO"), r.name()
        col = tbl.t.column(old) if old else None
        if col and new:
            tbl.put_column({**col, "name": new}, (None, None), replace=old)
    elif r.take("INDEX") or r.take("KEY"):
        old, _, new = r.name(), r.take("TO"), r.name()
        if old and new:
            tbl.rename_index(old, new)
    else:
        r.take("TO") or r.take("AS")
        first = r.name()
        return (first, r.name()) if r.take_punct(".") else (None, first)
    return None


_OPTION_WORDS = frozenset(
    "ENGINE COMMENT CHARSET CHARACTER COLLATE AUTO_INCREMENT ROW_FORMAT KEY_BLOCK_SIZE AVG_ROW_LENGTH MAX_ROWS "
    "MIN_ROWS PACK_KEYS STATS_AUTO_RECALC STATS_PERSISTENT STATS_SAMPLE_PAGES CHECKSUM TABLE_CHECKSUM "
    "PAGE_CHECKSUM DELAY_KEY_WRITE TRANSACTIONAL PAGE_COMPRESSED PAGE_COMPRESSION_LEVEL ENCRYPTED ENCRYPTION "
    "ENCRYPTION_KEY_ID IETF_QUOTES INSERT_METHOD UNION CONNECTION PASSWORD COMPRESSION TABLESPACE STORAGE "
    "DATA INDEX TTL TTL_ENABLE TTL_JOB_INTERVAL SHARD_ROW_ID_BITS PRE_SPLIT_REGIONS AUTO_ID_CACHE "
    "AUTO_RANDOM_BASE PLACEMENT CACHE NOCACHE SEQUENCE".split())


# ---------------------------------------------------------------- whole statements

def create_table_body(toks: list[Token]) -> tuple[list[Token], list[Token]] | None:
    """The tokens inside CREATE TABLE's column list and the table options after it, or None
    (LIKE / AS SELECT without one)."""
    r = Cursor(toks)
    while r.peek() and not r.at_punct("("):
        r.i += 1
    if r.peek() is None or r.word(1) == "LIKE":
        return None
    return r.group(), r.rest()


def alter_clauses(toks: list[Token]) -> list[Token]:
    """ALTER ... TABLE [IF EXISTS] name: the clause tokens after the name."""
    r = Cursor(toks)
    r.skip_to("TABLE")
    r.i += 1
    r.take_if_exists()
    r.name()
    if r.take_punct("."):
        r.name()
    return r.rest()


def create_index(info: TableInfo, toks: list[Token]) -> None:
    """Apply CREATE INDEX to `info` in place."""
    ix = _created_index(toks)
    _Table(info).add_index(ix.name, ix.columns, ix.unique, ix.primary, ix.prefix)


def drop_index(info: TableInfo, toks: list[Token]) -> None:
    """Apply DROP INDEX [IF EXISTS] name ON tbl to `info` in place."""
    r = Cursor(toks[2:])
    r.take_if_exists()
    _Table(info).drop_index(r.name() or "")


def index_name(toks: list[Token]) -> str | None:
    """The index a CREATE INDEX or ALTER TABLE ... ADD INDEX names (None: it names none)."""
    if toks and toks[0].up == "CREATE":
        return _created_index(toks).name
    for part in split_commas(alter_clauses(toks)):
        r = Cursor(part)
        if r.take("ADD"):
            ix = _read_index_def(r)
            if ix is not None and ix is not _NOT_A_KEY:
                return ix.name
    return None
