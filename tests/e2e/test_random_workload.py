"""A randomized workload of DDL and DML over several cycles, compared table by table after
each: inserts with NULLs and extreme values of every column type the type tests cover,
updates, key changes and key swaps (primary and unique keys, integer, case-insensitive string
and composite keys), deletes, multi-statement transactions, ADD / DROP / MODIFY COLUMN,
ADD / DROP INDEX, RENAME, TRUNCATE, CREATE and DROP TABLE; as shops have them: VIRTUAL and
STORED generated columns (arithmetic and JSON-extracted, some indexed), values a lax session
stores (INSERT IGNORE and sql_mode=''), foreign keys with ON DELETE CASCADE / SET NULL and ON
UPDATE CASCADE (on other tables, on children, on themselves: the parent's key swaps, deletes
and whole-table deletes cascade), online schema changes as pt-online-schema-change and gh-ost
run them, downstream tables given keys of their own, DDL from sessions whose character set is
not UTF-8, tables of such character sets (created from a session in them) with ENUM and SET
members beyond ASCII, transactions that write a MyISAM table and roll back to savepoints,
UUID / INET6 / INET4 values ending in zero bytes, and an insert-only schema under a value
filter with TiDB's functions (its downstream holds what the filter keeps).

Seeded: three fixed seeds run in `make test`; `CDCFLOW_RANDOM_SEED=<seed>` replays one run
exactly (the statements are written to the test's output as they run, for reading) and
`make random-workload SEEDS=N` runs N more, drawn at random."""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from decimal import Decimal

import pymysql
import pytest
from e2e_helpers import assert_consistent, cli_run, create_changefeed, query

pytestmark = pytest.mark.e2e

SCHEMA = "rnd"
CYCLES = 4
OPS_PER_CYCLE = 30
MAX_ROWS = 12


# --- values of every column type ------------------------------------------------------

def _int(lo: int, hi: int):
    return lambda r: r.choice([lo, hi, 0, 1, -1 if lo < 0 else hi // 2, r.randint(lo, hi)])


def _text(alphabet: str, longest: int):
    return lambda r: "".join(r.choice(alphabet) for _ in range(r.randint(0, longest)))


def _bytes(longest: int):
    return lambda r: bytes(r.randrange(256) for _ in range(r.randint(0, longest)))


def _decimal(r) -> Decimal:
    sign = r.choice(["", "-"])
    return Decimal(f"{sign}{r.randint(0, 10 ** r.randint(0, 35) - 1)}.{r.randint(0, 10 ** 30 - 1):030d}")


def _time(r, fraction: bool) -> str:
    h = r.choice([0, 838, r.randint(0, 838)])
    frac = f".{0 if h == 838 else r.randint(0, 999999):06d}" if fraction else ""  # 838:59:59 is the most
    return f"{r.choice(['', '-'])}{h}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}{frac}"


def _datetime(r, lo: int, hi: int, fraction: bool) -> str:
    frac = f".{r.randint(0, 999999):06d}" if fraction else ""
    return (f"{r.randint(lo, hi):04d}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d} "
            f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}{frac}")


def _json(r, depth: int = 0):
    kind = r.randrange(6 if depth < 2 else 4)
    if kind == 0:
        return r.choice([None, True, False])
    if kind == 1:
        return r.choice([0, -1, 2 ** 53, r.uniform(-1e9, 1e9), 1.5])
    if kind in (2, 3):
        return _text(TEXT, 8)(r)
    if kind == 4:
        return [_json(r, depth + 1) for _ in range(r.randint(0, 3))]
    return {_text("abcxyz", 4)(r): _json(r, depth + 1) for _ in range(r.randint(0, 3))}


def _uuid(r) -> str:
    """A UUID whose last bytes are zero more often than not."""
    digits = "".join(r.choice("0123456789abcdef") for _ in range(32))
    # a version (1-5) and variant the server accepts; the nil UUID too
    digits = digits[:12] + r.choice("12345") + digits[13:16] + r.choice("89ab") + digits[17:]
    digits = digits[:32 - r.choice([0, 2, 4, 12, 32])].ljust(32, "0")
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


ASCII_TEXT = "abcXYZ 09'\"\\\n\t%_"
TEXT = ASCII_TEXT + "éÿ€😀汉"
LATIN1 = "abcXYZ 09'\"\\%_éÿÑ½"

# The column types of tests/e2e/test_type_fidelity.py, each with a generator of its values
TYPES = {
    "TINYINT": _int(-128, 127), "TINYINT UNSIGNED": _int(0, 255),
    "SMALLINT": _int(-32768, 32767), "SMALLINT UNSIGNED": _int(0, 65535),
    "MEDIUMINT": _int(-8388608, 8388607), "MEDIUMINT UNSIGNED": _int(0, 16777215),
    "INT": _int(-2 ** 31, 2 ** 31 - 1), "INT UNSIGNED": _int(0, 2 ** 32 - 1),
    "BIGINT": _int(-2 ** 63, 2 ** 63 - 1), "BIGINT UNSIGNED": _int(0, 2 ** 64 - 1),
    "DECIMAL(65,30)": _decimal,
    "DECIMAL(5,2) UNSIGNED": lambda r: Decimal(f"{r.randint(0, 999)}.{r.randint(0, 99):02d}"),
    "FLOAT": lambda r: r.choice([0.0, -1.5, 3.25, 1e-10, 3.4e38, float(r.randint(-10 ** 6, 10 ** 6)) / 8,
                                 r.uniform(-1e6, 1e6)]),
    "DOUBLE": lambda r: r.choice([0.0, -0.0, 1.7976931348623157e308, 2.2250738585072014e-308, 0.1,
                                  r.uniform(-1e12, 1e12)]),
    "DATE": lambda r: _datetime(r, 1000, 9999, False)[:10],
    "DATETIME(6)": lambda r: _datetime(r, 1000, 9999, True),
    "DATETIME": lambda r: _datetime(r, 1000, 9999, False),
    "TIMESTAMP(6) NULL DEFAULT NULL": lambda r: _datetime(r, 1971, 2037, True),
    "TIME(6)": lambda r: _time(r, True),
    "TIME": lambda r: _time(r, False),
    "YEAR": lambda r: r.choice([1901, 2155, 0, r.randint(1901, 2155)]),
    "CHAR(10)": _text(TEXT, 10),
    "VARCHAR(40)": _text(TEXT, 40),
    "TEXT": _text(TEXT, 200),
    "VARCHAR(20) CHARACTER SET latin1": _text(LATIN1, 20),
    "BINARY(4)": _bytes(4),
    "VARBINARY(300)": _bytes(300),
    "BLOB": _bytes(1000),
    "LONGBLOB": _bytes(3000),
    "ENUM('a','b','c d')": lambda r: r.choice(["a", "b", "c d"]),
    "SET('a','b','c','d')": lambda r: ",".join(x for x in "abcd" if r.random() < 0.5),
    "BIT(1)": _int(0, 1), "BIT(64)": _int(0, 2 ** 64 - 1), "BIT(5)": _int(0, 31),
    "JSON": lambda r: json.dumps(_json(r)),
    # fixed-size binaries in the binlog, often ending in zero bytes (which the row image leaves out)
    "UUID": lambda r: _uuid(r),
    "INET6": lambda r: r.choice(["::", "1::", "fe80::", "2001:db8::", "::ffff:0.0.0.0", "::1",
                                 ":".join(f"{r.randrange(65536):x}" for _ in range(r.randint(1, 7))) + "::"]),
    "INET4": lambda r: r.choice(["0.0.0.0", "10.0.0.0", "192.168.0.0", ".".join(str(r.randrange(256)) for _ in range(4))]),
}

# MODIFY COLUMN: a type each value of the old one fits in
WIDER = {
    "TINYINT": "SMALLINT", "SMALLINT": "MEDIUMINT", "MEDIUMINT": "INT", "INT": "BIGINT",
    "TINYINT UNSIGNED": "SMALLINT UNSIGNED", "SMALLINT UNSIGNED": "MEDIUMINT UNSIGNED",
    "MEDIUMINT UNSIGNED": "INT UNSIGNED", "INT UNSIGNED": "BIGINT UNSIGNED",
    "FLOAT": "DOUBLE", "DATETIME": "DATETIME(6)", "TIME": "TIME(6)", "CHAR(10)": "VARCHAR(40)",
    "VARCHAR(40)": "TEXT", "BLOB": "LONGBLOB", "BINARY(4)": "VARBINARY(300)", "BIT(5)": "BIT(64)",
    "ENUM('a','b','c d')": "ENUM('a','b','c d','e')",
}
TYPES["ENUM('a','b','c d','e')"] = lambda r: r.choice(["a", "b", "c d", "e"])

# Indexable without a prefix length; TEXT, BLOB and JSON are left out of indexes
UNINDEXED = ("TEXT", "BLOB", "LONGBLOB", "JSON")


# session character set -> letters of it for names, defaults and comments (SET NAMES gbk, ...);
# tables of these character sets hold them in their text columns
SESSION_LETTERS = {"gbk": "名字你好默认表", "sjis": "ソ表予定", "latin1": "éàüÑ", "cp1251": "имяПриветЁ"}
# ... and ENUM and SET members of them, which a table of the set is given (sjis' ソ and 表 end in
# the byte 0x5C; the binlog holds a member in its column's character set)
NON_ASCII_MEMBERS = {"gbk": ("名字", "你好", "默认表"), "sjis": ("ソ", "表", "予定"), "latin1": ("é", "àü", "Ñ"),
                     "cp1251": ("имя", "Привет", "Ёж")}


def _member_types() -> dict[str, str]:
    """An ENUM and a SET type of each set's members (their values' generators added to TYPES):
    {type: its character set}."""
    types = {}
    for charset, members in NON_ASCII_MEMBERS.items():
        listed = ",".join(f"'{m}'" for m in members)
        types[f"ENUM({listed})"] = types[f"SET({listed})"] = charset
        TYPES[f"ENUM({listed})"] = lambda r, m=members: r.choice(m)
        TYPES[f"SET({listed})"] = lambda r, m=members: ",".join(x for x in m if r.random() < 0.5)
    return types


MEMBER_TYPES = _member_types()
# the text types, whose values a table of another character set than utf8mb4 draws from its letters
TEXT_LENGTHS = {"CHAR(10)": 10, "VARCHAR(40)": 40, "TEXT": 200}


def types_for(charset: str) -> list[str]:
    """The column types a table of `charset` may have: no other set's members."""
    return [typ for typ in TYPES if MEMBER_TYPES.get(typ, charset) == charset]


NONTX = "nontx"  # a MyISAM table the savepoint transactions write beside the model's tables


# --- the model: what tables and columns exist (rows are read from the upstream) ---------

@dataclass
class Table:
    name: str
    key: list[tuple[str, str]]  # (column, type) of the primary key
    charset: str = "utf8mb4"  # the table's default character set
    columns: dict[str, str] = field(default_factory=dict)  # the other columns: name -> TYPES key
    not_null: set[str] = field(default_factory=set)
    unique: str | None = None  # a NOT NULL UNIQUE column (besides the key)
    indexes: list[str] = field(default_factory=list)
    generated: dict[str, str] = field(default_factory=dict)  # generated column -> its definition
    pinned: set[str] = field(default_factory=set)  # columns a generated column reads: never dropped
    down_keys: list[str] = field(default_factory=list)  # keys only the downstream has
    referenced: bool = False  # the parent of a foreign key: TRUNCATE and DROP refused upstream


@dataclass
class Child:
    """A table whose `pid` references a parent's key (another table's, a child's, or its own)
    with a cascading action: its rows change in the parent's statements, never in the binlog."""
    name: str
    parent: Table | Child | None  # None: itself
    on_delete: str


KEY_KINDS = {
    "int": [("id", "INT")],
    "ci_string": [("k", "VARCHAR(20) COLLATE utf8mb4_general_ci")],
    "composite": [("a", "INT"), ("b", "VARCHAR(10) COLLATE utf8mb4_bin")],
}


# A generated column's definition per key kind, over the key (which no DDL here drops)
GENERATED_OF_KEY = {
    "int": "BIGINT AS (`id` DIV 3)",
    "ci_string": "INT AS (CHAR_LENGTH(`k`))",
    "composite": "VARCHAR(30) AS (CONCAT(`b`, '-', `a`))",
}
# ... and over a JSON column: the JSON-extracted column shops index
# (JSON's text is utf8mb4's, whatever the table's character set)
JSON_EXTRACTED = "VARCHAR(80) CHARACTER SET utf8mb4 AS (LEFT(JSON_UNQUOTE(JSON_EXTRACT(`{c}`, '$.a')), 60))"
# Indexable columns whose type no MODIFY here widens into an unindexable one (a downstream-only
# key on a VARCHAR(40) would stop the downstream's own MODIFY to TEXT: the DBA's affair, not ours)
DOWN_KEYABLE = ("INT", "BIGINT", "DATE", "DATETIME(6)", "DECIMAL(5,2) UNSIGNED", "YEAR", "DOUBLE")


def _folded(key: tuple) -> tuple:
    """A key as a case-insensitive index compares it (keys are drawn from ASCII letters)."""
    return tuple(str(v).lower() for v in key)


class Workload:
    def __init__(self, rng: random.Random, conn, log, down=None):
        self.r, self.conn, self.log, self.down = rng, conn, log, down
        self.tables: dict[str, Table] = {}
        self.children: list[Child] = []
        self.counter = 0

    # -- helpers --
    def sql(self, stmt: str, args=None) -> None:
        with self.conn.cursor() as cur:
            self.log.append(cur.mogrify(stmt, args) if args is not None else stmt)
            cur.execute(stmt, args)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def keys(self, t: Table) -> list[tuple]:
        cols = ", ".join(f"`{c}`" for c, _ in t.key)
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT {cols} FROM {SCHEMA}.`{t.name}`")
            return [tuple(row) for row in cur.fetchall()]

    def new_key(self, t: Table) -> tuple:
        taken = {_folded(k) for k in self.keys(t)}
        while True:
            key = tuple(self.r.randint(-1000, 100000) if typ == "INT" else _text("abcdefXYZ", 6)(self.r) or "x"
                        for _, typ in t.key)
            if _folded(key) not in taken:
                return key

    def where(self, t: Table, key: tuple) -> tuple[str, list]:
        return " AND ".join(f"`{c}` = %s" for c, _ in t.key), list(key)

    def value(self, t: Table, column: str):
        if column not in t.not_null and self.r.random() < 0.2:
            return None
        if column == t.unique:
            return self.fresh("u")
        typ = t.columns[column]
        if t.charset in SESSION_LETTERS and typ in TEXT_LENGTHS:  # what the table's character set holds
            return _text(ASCII_TEXT + SESSION_LETTERS[t.charset], TEXT_LENGTHS[typ])(self.r)
        return TYPES[typ](self.r)

    def in_session(self, charset: str, stmt: str) -> None:
        """`stmt` from a session whose character set is `charset`: the statement in its bytes."""
        self.log.append(f"-- in a {charset} session: {stmt}")
        conn = pymysql.connect(host=self.conn.host, port=self.conn.port, user=self.conn.user,
                               password=self.conn.password, charset=charset, autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(stmt)
        finally:
            conn.close()

    # -- DDL --
    def create_table(self, charset: str | None = None) -> None:
        """A table of `charset`, or drawn: now and then one of another character set than
        utf8mb4 (created from a session in it), which has ENUM and SET columns of members of its
        own beyond ASCII."""
        kind = self.r.choice(list(KEY_KINDS))
        if charset is None:
            charset = self.r.choice(list(SESSION_LETTERS)) if self.r.random() < 0.35 else "utf8mb4"
        t = Table(self.fresh("t"), KEY_KINDS[kind], charset)
        if charset != "utf8mb4":
            for typ, of in MEMBER_TYPES.items():
                if of == charset:
                    t.columns[self.fresh("c")] = typ
        for _ in range(self.r.randint(3, 6)):
            t.columns[self.fresh("c")] = self.r.choice(types_for(charset))
        if kind == "int" and self.r.random() < 0.6:
            t.unique = self.fresh("code")
            t.columns[t.unique] = "VARCHAR(40)"
            t.not_null.add(t.unique)
        if self.r.random() < 0.5:
            t.generated[self.fresh("g")] = f"{GENERATED_OF_KEY[kind]} {self.r.choice(['VIRTUAL', 'STORED'])}"
        if "JSON" in t.columns.values() and self.r.random() < 0.6:
            source = next(c for c, typ in t.columns.items() if typ == "JSON")
            t.generated[self.fresh("gj")] = f"{JSON_EXTRACTED.format(c=source)} {self.r.choice(['VIRTUAL', 'STORED'])}"
            t.pinned.add(source)
        cols = [f"`{c}` {typ} NOT NULL" for c, typ in t.key]
        cols += [f"`{c}` {typ}" + (" NOT NULL" if c in t.not_null else "") for c, typ in t.columns.items()]
        cols += [f"`{g}` {definition}" for g, definition in t.generated.items()]
        cols.append(f"PRIMARY KEY ({', '.join(f'`{c}`' for c, _ in t.key)})")
        if t.unique:
            cols.append(f"UNIQUE KEY ({t.unique})")
        cols += [f"KEY ({g})" for g in t.generated if self.r.random() < 0.5]
        stmt = f"CREATE TABLE {SCHEMA}.`{t.name}` ({', '.join(cols)}) DEFAULT CHARSET = {charset}"
        if charset == "utf8mb4":
            self.sql(stmt)
        else:
            self.in_session(charset, stmt)
        self.tables[t.name] = t

    def drop_table(self, t: Table) -> None:
        if len(self.tables) > 2 and not t.referenced:
            self.sql(f"DROP TABLE {SCHEMA}.`{t.name}`")
            del self.tables[t.name]

    def rename_table(self, t: Table) -> None:
        new = self.fresh("r")
        self.sql(f"RENAME TABLE {SCHEMA}.`{t.name}` TO {SCHEMA}.`{new}`")
        del self.tables[t.name]
        t.name = new
        self.tables[new] = t

    def truncate(self, t: Table) -> None:
        if t.referenced:  # refused on a parent; its DELETE cascades to every child instead
            return self.sql(f"DELETE FROM {SCHEMA}.`{t.name}`")
        self.sql(f"TRUNCATE TABLE {SCHEMA}.`{t.name}`")

    def add_column(self, t: Table) -> None:
        c, typ = self.fresh("c"), self.r.choice(types_for(t.charset))
        where = self.r.choice(["", " FIRST", f" AFTER `{self.r.choice(list(t.columns) or [t.key[0][0]])}`"])
        extra = ""
        if typ in ("INT", "VARCHAR(40)", "DECIMAL(5,2) UNSIGNED", "DATE") and self.r.random() < 0.5:
            default = {"INT": "7", "VARCHAR(40)": "'dflt'", "DECIMAL(5,2) UNSIGNED": "1.25",
                       "DATE": "'2001-02-03'"}[typ]
            extra = f" NOT NULL DEFAULT {default}"
            t.not_null.add(c)
        elif typ == "DATETIME(6)" and self.r.random() < 0.5:
            extra = " DEFAULT CURRENT_TIMESTAMP(6)"  # existing rows get the DDL's own time
        self.sql(f"ALTER TABLE {SCHEMA}.`{t.name}` ADD COLUMN `{c}` {typ}{extra}{where}")
        t.columns[c] = typ

    def drop_column(self, t: Table) -> None:
        droppable = [c for c in t.columns if c != t.unique and c not in t.pinned]
        if len(droppable) > 1:
            c = self.r.choice(droppable)
            self.sql(f"ALTER TABLE {SCHEMA}.`{t.name}` DROP COLUMN `{c}`")
            del t.columns[c]
            t.not_null.discard(c)
            t.indexes = [i for i in t.indexes if not i.endswith("_" + c)]

    def modify_column(self, t: Table) -> None:
        widenable = [c for c, typ in t.columns.items() if typ in WIDER and c not in t.not_null | t.pinned]
        if widenable:
            c = self.r.choice(widenable)
            t.columns[c] = WIDER[t.columns[c]]
            self.sql(f"ALTER TABLE {SCHEMA}.`{t.name}` MODIFY COLUMN `{c}` {t.columns[c]}")

    def add_generated(self, t: Table) -> None:
        """ADD COLUMN … AS (…) VIRTUAL/STORED, sometimes with an index on it."""
        kind = next(k for k, cols in KEY_KINDS.items() if cols == t.key)
        g = self.fresh("g")
        t.generated[g] = f"{GENERATED_OF_KEY[kind]} {self.r.choice(['VIRTUAL', 'STORED'])}"
        index = f", ADD INDEX (`{g}`)" if self.r.random() < 0.5 else ""
        self.sql(f"ALTER TABLE {SCHEMA}.`{t.name}` ADD COLUMN `{g}` {t.generated[g]}{index}")

    def drop_generated(self, t: Table) -> None:
        if t.generated:
            g = self.r.choice(sorted(t.generated))
            del t.generated[g]
            self.sql(f"ALTER TABLE {SCHEMA}.`{t.name}` DROP COLUMN `{g}`")

    def add_index(self, t: Table) -> None:
        indexable = [c for c, typ in t.columns.items() if typ not in UNINDEXED]
        if indexable:
            c = self.r.choice(indexable)
            name = f"{self.fresh('i')}_{c}"
            self.sql(self.r.choice([f"ALTER TABLE {SCHEMA}.`{t.name}` ADD INDEX `{name}` (`{c}`)",
                                    f"CREATE INDEX `{name}` ON {SCHEMA}.`{t.name}` (`{c}`)"]))
            t.indexes.append(name)

    def drop_index(self, t: Table) -> None:
        if t.indexes:
            name = t.indexes.pop(self.r.randrange(len(t.indexes)))
            self.sql(self.r.choice([f"ALTER TABLE {SCHEMA}.`{t.name}` DROP INDEX `{name}`",
                                    f"DROP INDEX `{name}` ON {SCHEMA}.`{t.name}`"]))

    # -- DML --
    def insert(self, t: Table) -> None:
        if len(self.keys(t)) >= MAX_ROWS:
            return self.delete(t)
        rows = []
        for _ in range(self.r.randint(1, 3)):
            key = self.new_key(t)
            if any(_folded(key) == _folded(row[:len(key)]) for row in rows):
                continue
            rows.append(key + tuple(self.value(t, c) for c in t.columns))
        names = [c for c, _ in t.key] + list(t.columns)
        marks = "(" + ", ".join(["%s"] * len(names)) + ")"
        self.sql(f"INSERT INTO {SCHEMA}.`{t.name}` ({', '.join(f'`{c}`' for c in names)}) VALUES "
                 + ", ".join([marks] * len(rows)), [v for row in rows for v in row])

    def online_alter(self, t: Table) -> None:
        """An online schema change as pt-online-schema-change or gh-ost runs it (their tables'
        names, the ALTER on the copy, the rows copied, the atomic cut-over RENAME, the drop)."""
        if t.referenced:  # the children's keys would follow the old table
            return
        shadow, trash = (f"_{t.name}_new", f"_{t.name}_old") if self.r.random() < 0.5 else \
            (f"_{t.name}_gho", f"_{t.name}_del")
        names = ", ".join(f"`{c}`" for c in [k for k, _ in t.key] + list(t.columns))
        self.sql(f"CREATE TABLE {SCHEMA}.`{shadow}` LIKE {SCHEMA}.`{t.name}`")
        if shadow.endswith("_gho"):
            self.sql(f"CREATE TABLE {SCHEMA}.`_{t.name}_ghc` (id BIGINT PRIMARY KEY, hint VARCHAR(64), value TEXT)")
            self.sql(f"INSERT INTO {SCHEMA}.`_{t.name}_ghc` VALUES (1, 'state', 'migrating')")
        c, typ = self.fresh("c"), self.r.choice(types_for(t.charset))
        self.sql(f"ALTER TABLE {SCHEMA}.`{shadow}` ADD COLUMN `{c}` {typ}")
        self.sql(f"INSERT INTO {SCHEMA}.`{shadow}` ({names}) SELECT {names} FROM {SCHEMA}.`{t.name}`")
        self.sql(f"RENAME TABLE {SCHEMA}.`{t.name}` TO {SCHEMA}.`{trash}`, {SCHEMA}.`{shadow}` TO {SCHEMA}.`{t.name}`")
        self.sql(f"DROP TABLE {SCHEMA}.`{trash}`")
        if shadow.endswith("_gho"):
            self.sql(f"DROP TABLE {SCHEMA}.`_{t.name}_ghc`")
        t.columns[c] = typ

    # -- foreign keys with cascades --
    def create_child(self, _t: Table) -> None:
        parents = [t for t in self.tables.values() if t.key == KEY_KINDS["int"]] + self.children
        parent = self.r.choice(sorted(parents, key=lambda p: p.name) + [None]) if parents else None
        child = Child(self.fresh("fk"), parent, self.r.choice(["CASCADE", "SET NULL"]))
        target = f"`{child.name}`" if parent is None else f"`{parent.name}`"
        self.sql(f"CREATE TABLE {SCHEMA}.`{child.name}` (id INT PRIMARY KEY, pid INT NULL, note VARCHAR(20), "
                 f"KEY (pid), FOREIGN KEY (pid) REFERENCES {SCHEMA}.{target} (id) "
                 f"ON DELETE {child.on_delete} ON UPDATE CASCADE)")
        if isinstance(parent, Table):
            parent.referenced = True
        self.children.append(child)

    def _ids(self, name: str) -> list[int]:
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT id FROM {SCHEMA}.`{name}`")
            return [row[0] for row in cur.fetchall()]

    def _parent_id(self, child: Child):
        ids = self._ids(child.name if child.parent is None else child.parent.name)
        return self.r.choice(ids + [None]) if ids else None

    def child_write(self, _t: Table) -> None:
        """An insert, an update of the note or of the reference, or a delete (cascading on)."""
        if not self.children:
            return self.create_child(_t)
        child = self.r.choice(self.children)
        ids = self._ids(child.name)
        op = self.r.choice(["insert", "insert", "note", "repoint", "delete"]) if ids else "insert"
        if op == "insert" and len(ids) < MAX_ROWS:
            new = self.r.choice([i for i in range(1, 3 * MAX_ROWS) if i not in ids])
            self.sql(f"INSERT INTO {SCHEMA}.`{child.name}` VALUES (%s, %s, %s)",
                     [new, self._parent_id(child), _text("abc", 8)(self.r)])
        elif op == "note":
            self.sql(f"UPDATE {SCHEMA}.`{child.name}` SET note = %s WHERE id = %s",
                     [_text("xyz", 8)(self.r), self.r.choice(ids)])
        elif op == "repoint":
            self.sql(f"UPDATE {SCHEMA}.`{child.name}` SET pid = %s WHERE id = %s",
                     [self._parent_id(child), self.r.choice(ids)])
        elif ids:
            self.sql(f"DELETE FROM {SCHEMA}.`{child.name}` WHERE id = %s", [self.r.choice(ids)])

    def lax_insert(self, t: Table) -> None:
        """A row a lax session stores: out-of-range numbers clipped, strings cut, ENUM/SET
        non-members as the error value, impossible dates zeroed (INSERT IGNORE, or sql_mode='')."""
        if len(self.keys(t)) >= MAX_ROWS or not t.columns:
            return
        lax = {"INT": 2 ** 40, "TINYINT UNSIGNED": -5, "BIGINT UNSIGNED": -1, "CHAR(10)": "x" * 30,
               "VARCHAR(40)": "y" * 90, "ENUM('a','b','c d')": "not a member", "SET('a','b','c','d')": "a,zz",
               "DATE": "2024-02-30", "DATETIME": "2024-13-01 00:00:00", "DECIMAL(5,2) UNSIGNED": "12345.678",
               "YEAR": 3000, "BIT(5)": 99, "TIME": "900:00:00",
               # the ENUM error value and a SET without its unknown member in another character set
               **{typ: "not a member" if typ.startswith("ENUM") else f"{NON_ASCII_MEMBERS[cs][0]},zz"
                  for typ, cs in MEMBER_TYPES.items()}}
        names = [c for c, _ in t.key] + list(t.columns)
        row = list(self.new_key(t)) + [lax.get(typ, self.value(t, c)) if c != t.unique else self.fresh("u")
                                       for c, typ in t.columns.items()]
        marks = ", ".join(["%s"] * len(names))
        columns = ", ".join(f"`{c}`" for c in names)
        if self.r.random() < 0.5:
            self.sql(f"INSERT IGNORE INTO {SCHEMA}.`{t.name}` ({columns}) VALUES ({marks})", row)
            return
        self.sql("SET SESSION sql_mode = ''")
        try:
            self.sql(f"INSERT INTO {SCHEMA}.`{t.name}` ({columns}) VALUES ({marks})", row)
        finally:
            self.sql("SET SESSION sql_mode = DEFAULT")

    def update(self, t: Table) -> None:
        keys = self.keys(t)
        if not keys or not t.columns:
            return
        for key in self.r.sample(keys, min(len(keys), self.r.randint(1, 3))):
            cols = self.r.sample(list(t.columns), self.r.randint(1, len(t.columns)))
            where, args = self.where(t, key)
            self.sql(f"UPDATE {SCHEMA}.`{t.name}` SET {', '.join(f'`{c}` = %s' for c in cols)} WHERE {where}",
                     [self.value(t, c) for c in cols] + args)

    def change_key(self, t: Table) -> None:
        keys = self.keys(t)
        if keys:
            key = self.r.choice(keys)
            if t.key[0][0] == "k" and self.r.random() < 0.5:  # a respelling: the same key under _ci
                new = (key[0].swapcase(),)
            else:
                new = self.new_key(t)
            where, args = self.where(t, key)
            self.sql(f"UPDATE {SCHEMA}.`{t.name}` SET {', '.join(f'`{c}` = %s' for c, _ in t.key)} WHERE {where}",
                     list(new) + args)

    def swap_keys(self, t: Table) -> None:
        """Two rows exchange their keys (or unique values), in one transaction through a free one."""
        keys = self.keys(t)
        if len(keys) < 2:
            return
        a, b = self.r.sample(keys, 2)
        if t.unique and self.r.random() < 0.5:
            col = t.unique
            with self.conn.cursor() as cur:
                wa, aa = self.where(t, a)
                wb, ab = self.where(t, b)
                cur.execute(f"SELECT `{col}` FROM {SCHEMA}.`{t.name}` WHERE {wa}", aa)
                ua = cur.fetchone()[0]
                cur.execute(f"SELECT `{col}` FROM {SCHEMA}.`{t.name}` WHERE {wb}", ab)
                ub = cur.fetchone()[0]
            steps = [(wa, aa, "swap-tmp"), (wb, ab, ua), (wa, aa, ub)]
            sets = f"`{col}` = %s"
            self.sql("BEGIN")
            for where, args, value in steps:
                self.sql(f"UPDATE {SCHEMA}.`{t.name}` SET {sets} WHERE {where}", [value] + args)
            self.sql("COMMIT")
            return
        tmp = self.new_key(t)
        sets = ", ".join(f"`{c}` = %s" for c, _ in t.key)
        self.sql("BEGIN")
        for old, new in ((a, tmp), (b, a), (tmp, b)):
            where, args = self.where(t, old)
            self.sql(f"UPDATE {SCHEMA}.`{t.name}` SET {sets} WHERE {where}", list(new) + args)
        self.sql("COMMIT")

    def delete(self, t: Table) -> None:
        keys = self.keys(t)
        if keys:
            where, args = self.where(t, self.r.choice(keys))
            self.sql(f"DELETE FROM {SCHEMA}.`{t.name}` WHERE {where}", args)

    def transaction(self, t: Table) -> None:
        self.sql("BEGIN")
        for _ in range(self.r.randint(2, 4)):
            self.r.choice([self.insert, self.update, self.change_key, self.delete])(t)
        self.sql("COMMIT")

    def session_ddl(self, t: Table) -> None:
        """ADD COLUMN from a session whose character set is not UTF-8: its name, default and
        comment written in that character set (issue 42); the table's own, if it has one of them
        (its default must be text of it)."""
        charset = t.charset if t.charset in SESSION_LETTERS else self.r.choice(list(SESSION_LETTERS))
        letters = SESSION_LETTERS[charset]
        c = _text(letters, 3)(self.r) + self.fresh("_")
        text = _text(letters, 6)(self.r)
        self.in_session(charset, f"ALTER TABLE {SCHEMA}.`{t.name}` ADD COLUMN `{c}` VARCHAR(40) DEFAULT '{text}' "
                                 f"COMMENT '{charset}: {text}'")
        t.columns[c] = "VARCHAR(40)"

    def savepoint_transaction(self, t: Table) -> None:
        """A transaction that writes a MyISAM table and rolls back to savepoints (nested, by
        chance), then commits or, now and then, rolls back whole: the server writes its
        savepoints and rollbacks into the binlog with the rows they undo."""
        self.sql("BEGIN")
        self.transaction_ops(t, 0, 2)
        self.sql(f"INSERT INTO {SCHEMA}.`{NONTX}` VALUES (%s, %s) ON DUPLICATE KEY UPDATE v = v + 1",
                 [self.r.randint(1, 50), self.r.randint(0, 9)])
        names = []
        for _ in range(self.r.randint(1, 3)):
            names.append(self.fresh("sp"))
            self.sql(f"SAVEPOINT `{names[-1]}`")
            self.transaction_ops(t, 1, 2)
            if self.r.random() < 0.6:
                back = self.r.randrange(len(names))
                self.sql(f"ROLLBACK TO SAVEPOINT `{names[back]}`")
                del names[back + 1:]
        self.transaction_ops(t, 0, 1)
        self.sql("ROLLBACK" if self.r.random() < 0.2 else "COMMIT")

    def transaction_ops(self, t: Table, least: int, most: int) -> None:
        for _ in range(self.r.randint(least, most)):
            self.r.choice([self.insert, self.update, self.delete])(t)

    OPS = {  # op: weight
        "insert": 8, "update": 6, "change_key": 3, "swap_keys": 3, "delete": 3, "transaction": 3,
        "add_column": 2, "drop_column": 1, "modify_column": 1, "add_index": 1, "drop_index": 1,
        "rename_table": 1, "truncate": 0.5, "create_table": 1, "drop_table": 0.5,
        "add_generated": 1, "drop_generated": 0.5, "lax_insert": 2, "create_child": 0.7, "child_write": 5,
        "online_alter": 1, "session_ddl": 1, "savepoint_transaction": 2,
    }

    def key_the_downstream(self) -> None:
        """Give a replicated table a key of the downstream's own: an index, or a unique key the
        upstream's key makes unique (its column and the key), as a reporting replica has."""
        t = self.r.choice(sorted(self.tables.values(), key=lambda t: t.name))
        keyable = [c for c, typ in t.columns.items() if typ in DOWN_KEYABLE and c not in t.pinned]
        if not keyable:
            return
        c, name = self.r.choice(keyable), self.fresh("dk")
        unique = self.r.random() < 0.5
        parts = ", ".join([f"`{c}`"] + [f"`{k}`" for k, _ in t.key] if unique else [f"`{c}`"])
        stmt = f"ALTER TABLE {SCHEMA}.`{t.name}` ADD {'UNIQUE ' if unique else ''}KEY `{name}` ({parts})"
        self.log.append(f"-- downstream: {stmt}")
        with self.down.cursor() as cur:
            cur.execute(stmt)
        t.down_keys.append(name)
        t.pinned.add(c)  # a DROP COLUMN upstream would drop it from the downstream's key

    def step(self) -> None:
        op = self.r.choices(list(self.OPS), weights=list(self.OPS.values()))[0]
        if op == "create_table":
            return self.create_table()
        getattr(self, op)(self.r.choice(sorted(self.tables.values(), key=lambda t: t.name)))


# --- a value-filtered schema: insert-only, its downstream holds the rows the filter keeps ---

VF_SCHEMA = "rnd_vf"
# `s` compares byte by byte, as TiCDC compares every string (its process runs without TiDB's new
# collations; docs/guides/filters.md: value expressions), so MySQL's WHERE over the upstream agrees with it
VF_COLUMNS = {"n": "INT", "s": "VARCHAR(20) COLLATE utf8mb4_nopad_bin", "d": "DATE",
              "e": "ENUM('a','b','c d')", "x": "DECIMAL(10,2)", "f": "DOUBLE", "b": "VARBINARY(8)"}


def _vf_values(r: random.Random) -> list:
    return [r.choice([None, r.randint(-50, 250)]), r.choice([None, _text("abAB ", 4)(r)]),
            r.choice([None, _datetime(r, 1990, 2010, False)[:10]]), r.choice([None, "a", "b", "c d"]),
            r.choice([None, Decimal(f"{r.randint(-999, 999)}.{r.randint(0, 99):02d}")]),
            r.choice([None, r.uniform(-100, 100)]), r.choice([None, _text("ab", 3)(r).encode()])]


def _vf_expression(r: random.Random) -> str:
    """One `ignore-insert-value-expr`, comparing like with like (the type-by-literal matrix is
    tests/filter/test_value_expr.py's); MySQL's WHERE over the upstream says which rows it drops."""
    simple = [f"n > {r.randint(-50, 250)}", f"s = '{_text('abAB ', 3)(r)}'", f"d < '{r.randint(1990, 2010)}-06-01'",
              f"e = '{r.choice(['a', 'b', 'c d'])}'", f"x >= {r.randint(-999, 999)}.5", f"f < {r.uniform(-100, 100):.3f}",
              "n IS NULL", f"s LIKE '{r.choice('abAB')}%'", f"e IN ('a', 'c d')", f"b = '{_text('ab', 2)(r)}'"]
    # TiDB's functions (filter/mysql_eval/functions.py), each case also in the matrix against the server
    calls = [f"YEAR(d) < {r.randint(1990, 2010)}", f"MONTH(d) IN (1, 2, {r.randint(3, 12)})",
             f"DATEDIFF(d, '2000-01-01') > {r.randint(-3000, 3000)}",
             f"d < DATE_SUB('{r.randint(1995, 2012)}-01-01', INTERVAL {r.randint(1, 5)} YEAR)",
             f"DATE_FORMAT(d, '%Y-%m') < '{r.randint(1990, 2010)}-06'", "d < CURDATE()",
             f"CONCAT(s, '-', e) = '{_text('ab', 1)(r)}-a'", f"CHAR_LENGTH(TRIM(s)) > {r.randint(0, 3)}",
             f"SUBSTRING(s, 1, 1) = '{r.choice('abAB ')}'", f"UPPER(s) LIKE 'A%'", f"s REGEXP '^[ab]+$'",
             f"LOCATE('b', s) = {r.randint(0, 2)}", f"REPLACE(s, ' ', '') = '{_text('ab', 2)(r)}'",
             f"MOD(n, {r.randint(2, 7)}) = {r.randint(-1, 3)}", f"ABS(n) < {r.randint(0, 100)}",
             f"ROUND(x) > {r.randint(-999, 999)}", f"FLOOR(f) = {r.randint(-5, 5)}", f"TRUNCATE(x, 0) < 0",
             f"GREATEST(COALESCE(n, 0), {r.randint(0, 100)}) = {r.randint(0, 100)}",
             f"CASE WHEN n > {r.randint(0, 200)} THEN e ELSE 'b' END = 'b'", f"IF(n IS NULL, -1, n) < 0",
             f"NULLIF(e, 'a') IS NULL", f"CAST(x AS SIGNED) > {r.randint(-999, 999)}", f"HEX(b) LIKE '61%'"]
    left, right = r.sample(simple + calls * 2, 2)  # the calls more often: each is one of many
    return r.choice([left, f"{left} AND {right}", f"{left} OR {right}", f"NOT ({left})"])


def _vf_rows(db, where: str = "TRUE") -> list[tuple]:
    with db.connect() as c, c.cursor() as cur:
        cur.execute(f"SELECT * FROM {VF_SCHEMA}.t WHERE {where} ORDER BY id")
        return list(cur.fetchall())


# --- the test -----------------------------------------------------------------------------

def _seeds() -> list[int]:
    """CDCFLOW_RANDOM_SEED=<seed> replays one; CDCFLOW_RANDOM_SEEDS=N draws N (make random-workload)."""
    if os.environ.get("CDCFLOW_RANDOM_SEED"):
        return [int(os.environ["CDCFLOW_RANDOM_SEED"])]
    if os.environ.get("CDCFLOW_RANDOM_SEEDS"):
        return [random.SystemRandom().randrange(2 ** 32) for _ in range(int(os.environ["CDCFLOW_RANDOM_SEEDS"]))]
    return [20261125, 7, 4242]


@pytest.mark.parametrize("seed", _seeds())
def test_random_ddl_and_dml_over_several_cycles(mariadb_pair, spark, cdcflow_home, capsys, seed):
    print(f"random workload seed {seed} (CDCFLOW_RANDOM_SEED={seed} replays it)")
    up, down = mariadb_pair
    r = random.Random(seed)
    expression = _vf_expression(r)
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"DROP DATABASE IF EXISTS {VF_SCHEMA}")
    create_changefeed(capsys, up, down, "random", f"[filter]\nrules = ['{SCHEMA}.*', '{VF_SCHEMA}.*']\n"
                      f"[[filter.event-filters]]\nmatcher = ['{VF_SCHEMA}.*']\n"
                      f"ignore-insert-value-expr = \"{expression}\"\n")
    log: list[str] = [f"-- value filter on {VF_SCHEMA}.t: {expression}"]
    conn, down_conn = up.connect(), down.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION time_zone = '+05:30'")  # TIMESTAMP literals are read in it
        work = Workload(r, conn, log, down_conn)
        work.sql(f"CREATE DATABASE {SCHEMA}")
        work.sql(f"CREATE DATABASE {VF_SCHEMA}")
        work.sql(f"CREATE TABLE {VF_SCHEMA}.t (id INT PRIMARY KEY, "
                 + ", ".join(f"{c} {typ}" for c, typ in VF_COLUMNS.items()) + ")")
        work.sql(f"CREATE TABLE {SCHEMA}.`{NONTX}` (id INT PRIMARY KEY, v INT) ENGINE=MyISAM")
        work.create_table(r.choice(list(SESSION_LETTERS)))  # one of another character set than utf8mb4 at least
        for _ in range(2):
            work.create_table()
        vf_id = 0
        for cycle in range(CYCLES):
            start = len(log)
            for _ in range(OPS_PER_CYCLE):
                work.step()
                if r.random() < 0.2:
                    vf_id += 1
                    work.sql(f"INSERT INTO {VF_SCHEMA}.t VALUES ({', '.join(['%s'] * (len(VF_COLUMNS) + 1))})",
                             [vf_id] + _vf_values(r))
            rc, err = cli_run(capsys, "random")
            where = (f"seed {seed}, cycle {cycle + 1}; its statements:\n" + "\n".join(log[start:]))
            assert rc == 0, f"{err}\n{where}"
            try:
                # the downstream's own keys are the one difference of definition it may have
                assert_consistent(up, down, [SCHEMA], allow={f"{SCHEMA}.{t.name}": {"indexes"}
                                                             for t in work.tables.values() if t.down_keys})
                assert _vf_rows(down) == _vf_rows(up, f"({expression}) IS NOT TRUE"), f"value filter {expression}"
            except AssertionError as e:
                raise AssertionError(f"{e}\n{where}") from None
            if r.random() < 0.7:
                work.key_the_downstream()
        assert query(capsys, "random")["state"] == "normal"
        log.append(f"-- value filter kept {len(_vf_rows(down))} of {vf_id} rows")
    finally:
        conn.close()
        down_conn.close()
        print("\n".join(log))
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"DROP DATABASE IF EXISTS {VF_SCHEMA}")
