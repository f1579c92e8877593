"""Classify a binlog DDL statement into TiCDC's DDL types and name the tables it touches.

A binlog only carries the statement text (plus the session's default schema and
SQL mode), not TiDB's job type, so the type is read from the text.  The type
names are the seeds' allow list (seeds 000/003); TiCDC's whitelist
(pkg/filter `ddlWhiteListMap`) also allows ActionRenameTables and
ActionMultiSchemaChange, kept here as 'rename tables' and 'multi schema change'.
Lexing is ddl.lexer's (sqlparse's); the grammar walk is ours, because MariaDB's DDL is beyond
what a generic parser models.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdcflow.core.errors import CdcflowError
from cdcflow.ddl.lexer import Cursor, Token, split_commas, tokenize

ALLOW_LIST: tuple[str, ...] = (
    "create database", "drop database", "create table", "drop table", "add column",
    "drop column", "add index", "drop index", "truncate table", "modify column",
    "rename table", "alter column default value", "alter table comment", "rename index",
    "add partition", "drop partition", "truncate partition", "create view", "drop view",
    "alter table character set", "alter database character set", "recover table",
    "add primary key", "drop primary key", "rebase auto id", "alter table index visibility",
    "exchange partition", "reorganize partition", "alter table ttl", "alter table remove ttl",
)
# Allowed by TiCDC's whitelist without a row of their own in the seeds' lists.
_EXTRA_ALLOWED = ("rename tables", "multi schema change")

_Y, _N = True, False
# Seed 000's table: (has a valid index, no valid index + force-replicate=false,
# no valid index + force-replicate=true).  CREATE INDEX and ADD INDEX share 'add index'.
REPLICATE_MATRIX: dict[str, tuple[bool, bool, bool]] = {
    "create database": (_Y, _Y, _Y),
    "drop database": (_Y, _Y, _Y),
    "alter database character set": (_Y, _Y, _Y),
    "add index": (_Y, _Y, _Y),
    "drop index": (_Y, _N, _Y),
    "add primary key": (_Y, _Y, _Y),
    "drop primary key": (_Y, _N, _Y),
    "create table": (_Y, _N, _Y),
    "drop table": (_Y, _N, _Y),
    "add column": (_Y, _N, _Y),
    "drop column": (_Y, _N, _Y),
    "truncate table": (_Y, _N, _Y),
    "modify column": (_Y, _N, _Y),
    "rename table": (_Y, _N, _Y),
    "alter column default value": (_Y, _N, _Y),
    "alter table comment": (_Y, _N, _Y),
    "rename index": (_Y, _N, _Y),
    "add partition": (_Y, _N, _Y),
    "drop partition": (_Y, _N, _Y),
    "truncate partition": (_Y, _N, _Y),
    "create view": (_Y, _N, _Y),
    "drop view": (_Y, _N, _Y),
    "alter table character set": (_Y, _N, _Y),
    "recover table": (_Y, _N, _Y),
    "rebase auto id": (_Y, _N, _Y),
    "alter table index visibility": (_Y, _N, _Y),
    "exchange partition": (_Y, _N, _Y),
    "reorganize partition": (_Y, _N, _Y),
    "alter table ttl": (_Y, _N, _Y),
    "alter table remove ttl": (_Y, _N, _Y),
}
_EXTRA_ROW = (_Y, _N, _Y)

_SKIP_HINT = ("if it need not reach the downstream, skip it with "
              "`cdcflow changefeed skip-ddl -c <changefeed> --commit-ts <ts>`")


def should_replicate(ddl_type: str, has_valid_index: bool, force_replicate: bool) -> bool:
    """Seed 000's Y/N matrix: does a DDL of this type reach the downstream?"""
    row = REPLICATE_MATRIX.get(ddl_type) or (_EXTRA_ROW if ddl_type in _EXTRA_ALLOWED else None)
    if row is None:
        raise ValueError(f"{ddl_type!r} is not an allow-listed DDL type")
    if has_valid_index:
        return row[0]
    return row[2] if force_replicate else row[1]


@dataclass(frozen=True)
class TableName:
    schema: str
    table: str


@dataclass(frozen=True)
class DDLInfo:
    kind: str  # 'ddl' | 'not-ddl'
    type: str | None  # an ALLOW_LIST type, 'rename tables' or 'multi schema change'; None if not allowed
    allowed: bool  # in TiCDC's allow list
    statement_name: str  # 'CREATE INDEX', 'ALTER TABLE ADD INDEX', 'CREATE PROCEDURE', ...
    schema: str | None  # the database of a database statement, else the first table's schema
    tables: tuple[TableName, ...]  # every table named, in order (CREATE TABLE a LIKE b: a, b)
    renames: tuple[tuple[TableName, TableName], ...]  # (old, new) of RENAME TABLE / ALTER ... RENAME
    sub_types: tuple[str, ...]  # the clause types of a multi schema change, else (type,)
    is_schema_level: bool
    if_exists: bool  # IF [NOT] EXISTS anywhere in the statement


class DDLParseError(CdcflowError):
    """A DDL statement cdcflow cannot classify: the changefeed stops until an operator acts."""

    def __init__(self, message: str, *, statement: str, **kw):
        kw.setdefault("code", "CDCFLOW:ErrDDLUnparseable")
        kw.setdefault("retryable", False)
        kw.setdefault("hint", _SKIP_HINT)
        super().__init__(message, statement=statement, **kw)


# ---------------------------------------------------------------- statement tables

# Statements a ROW binlog carries as QueryEvents that are not DDL at all.
_NOT_DDL = frozenset(
    "BEGIN COMMIT ROLLBACK SAVEPOINT RELEASE XA START INSERT UPDATE DELETE REPLACE SELECT "
    "LOAD CALL DO USE LOCK UNLOCK HANDLER WITH VALUES TABLE EXECUTE PREPARE DEALLOCATE SHOW "
    "EXPLAIN DESCRIBE DESC BINLOG".split())
# Administrative statements: DDL-like, never replicated.
_ADMIN = {"ANALYZE": "ANALYZE TABLE", "OPTIMIZE": "OPTIMIZE TABLE", "CHECK": "CHECK TABLE",
          "REPAIR": "REPAIR TABLE", "FLUSH": "FLUSH", "GRANT": "GRANT", "REVOKE": "REVOKE",
          "INSTALL": "INSTALL PLUGIN", "UNINSTALL": "UNINSTALL PLUGIN", "CHECKSUM": "CHECKSUM TABLE"}
# CREATE/ALTER/DROP objects outside the allow list, and how statement names spell them.
_OTHER_OBJECTS = {
    **{w: w for w in "PROCEDURE FUNCTION TRIGGER EVENT USER ROLE SEQUENCE SERVER TABLESPACE PACKAGE "
                     "INSTANCE STATISTICS BINDING".split()},
    "LOGFILE": "LOGFILE GROUP", "RESOURCE": "RESOURCE GROUP", "SPATIAL": "SPATIAL REFERENCE SYSTEM",
    "PLACEMENT": "PLACEMENT POLICY", "UNDO": "UNDO TABLESPACE"}
# Words between CREATE/ALTER/DROP and the object that change what the statement means or not.
_FLAGS = frozenset("TEMPORARY UNIQUE FULLTEXT AGGREGATE ONLINE OFFLINE IGNORE VECTOR".split())

# ALTER TABLE clauses by their leading words (A/B: either word; first match wins):
# leading words | clause name ('=': the words matched; none: a modifier, not a clause) |
# TiCDC type ('-': not allow-listed).
_CLAUSE_TABLE = """
ADD PRIMARY                                  | ADD PRIMARY KEY          | add primary key
ADD UNIQUE/INDEX/KEY/FULLTEXT/SPATIAL/VECTOR | ADD INDEX                | add index
ADD FOREIGN                                  | ADD FOREIGN KEY          | -
ADD CHECK                                    | ADD CHECK                | -
ADD PARTITION                                | ADD PARTITION            | add partition
ADD SYSTEM                                   | ADD SYSTEM VERSIONING    | -
ADD PERIOD                                   | ADD PERIOD               | -
ADD                                          | ADD COLUMN               | add column
DROP PRIMARY                                 | DROP PRIMARY KEY         | drop primary key
DROP INDEX/KEY                               | DROP INDEX               | drop index
DROP FOREIGN                                 | DROP FOREIGN KEY         | -
DROP CONSTRAINT                              | DROP CONSTRAINT          | -
DROP CHECK                                   | DROP CHECK               | -
DROP PARTITION                               | DROP PARTITION           | drop partition
DROP SYSTEM                                  | DROP SYSTEM VERSIONING   | -
DROP PERIOD                                  | DROP PERIOD              | -
DROP                                         | DROP COLUMN              | drop column
MODIFY                                       | MODIFY COLUMN            | modify column
CHANGE                                       | CHANGE COLUMN            | modify column
RENAME COLUMN                                | RENAME COLUMN            | modify column
RENAME INDEX/KEY                             | RENAME INDEX             | rename index
RENAME                                       | RENAME                   | rename table
ALTER INDEX/KEY                              | ALTER INDEX              | alter table index visibility
ALTER CHECK/CONSTRAINT                       | =                        | -
ALTER                                        | ALTER COLUMN             | alter column default value
TRUNCATE PARTITION                           | TRUNCATE PARTITION       | truncate partition
EXCHANGE PARTITION                           | EXCHANGE PARTITION       | exchange partition
REORGANIZE PARTITION                         | REORGANIZE PARTITION     | reorganize partition
COALESCE/REBUILD/ANALYZE/CHECK PARTITION     | =                        | -
OPTIMIZE/REPAIR/DISCARD/IMPORT PARTITION     | =                        | -
REMOVE PARTITIONING                          | REMOVE PARTITIONING      | -
REMOVE TTL                                   | REMOVE TTL               | alter table remove ttl
PARTITION BY                                 | PARTITION BY             | -
CONVERT TO                                   | CONVERT TO CHARACTER SET | alter table character set
CONVERT PARTITION/TABLE                      | =                        | -
DISCARD/IMPORT TABLESPACE                    | =                        | -
ENABLE/DISABLE KEYS                          | =                        | -
ORDER BY                                     | ORDER BY                 | -
SET TIFLASH                                  | SET TIFLASH REPLICA      | -
WITH/WITHOUT VALIDATION                      |                          | -
"""


def _parse_clause_table(text: str) -> tuple[tuple[tuple[frozenset[str], ...], str, str | None], ...]:
    rows = []
    for line in text.strip().splitlines():
        lead, name, type_ = (c.strip() for c in line.split("|"))
        rows.append((tuple(frozenset(w.split("/")) for w in lead.split()), name, None if type_ == "-" else type_))
    return tuple(rows)


_CLAUSES = _parse_clause_table(_CLAUSE_TABLE)

# Table options (also space-separated inside one clause): option word -> (clause name, type).
_OPTIONS: dict[str, tuple[str, str | None]] = {
    "COMMENT": ("COMMENT", "alter table comment"),
    "CHARSET": ("CHARACTER SET", "alter table character set"),
    "CHARACTER": ("CHARACTER SET", "alter table character set"),
    "COLLATE": ("CHARACTER SET", "alter table character set"),
    "AUTO_INCREMENT": ("AUTO_INCREMENT", "rebase auto id"),
    **{w: ("TTL", "alter table ttl") for w in ("TTL", "TTL_ENABLE", "TTL_JOB_INTERVAL")},
    "ALGORITHM": ("", None), "LOCK": ("", None),  # modifiers
    "DATA": ("DATA DIRECTORY", None), "INDEX": ("INDEX DIRECTORY", None),
    "WITH": ("WITH SYSTEM VERSIONING", None),
    **{w: (w, None) for w in (
        "ENGINE ROW_FORMAT KEY_BLOCK_SIZE AVG_ROW_LENGTH MAX_ROWS MIN_ROWS PACK_KEYS "
        "STATS_AUTO_RECALC STATS_PERSISTENT STATS_SAMPLE_PAGES CHECKSUM TABLE_CHECKSUM "
        "PAGE_CHECKSUM DELAY_KEY_WRITE TRANSACTIONAL PAGE_COMPRESSED PAGE_COMPRESSION_LEVEL "
        "ENCRYPTED ENCRYPTION ENCRYPTION_KEY_ID IETF_QUOTES INSERT_METHOD UNION "
        "CONNECTION PASSWORD COMPRESSION TABLESPACE STORAGE SECONDARY_ENGINE "
        "SECONDARY_ENGINE_ATTRIBUTE ENGINE_ATTRIBUTE AUTOEXTEND_SIZE SEQUENCE SHARD_ROW_ID_BITS "
        "PRE_SPLIT_REGIONS AUTO_ID_CACHE AUTO_RANDOM_BASE PLACEMENT FORCE CACHE NOCACHE").split()},
}
_NO_VALUE_OPTIONS = frozenset({"FORCE", "CACHE", "NOCACHE"})
_OPTION_STARTS = frozenset(_OPTIONS) | {"DEFAULT"}
# One table attribute however many options set it (CHARSET ... COLLATE ... is one change).
_ATTRIBUTE_TYPES = frozenset({"alter table comment", "alter table character set", "rebase auto id", "alter table ttl"})


# ---------------------------------------------------------------- the walk

def _not_ddl(name: str) -> DDLInfo:
    return DDLInfo("not-ddl", None, False, name, None, (), (), (), False, False)


class _Walker(Cursor):
    def __init__(self, toks: list[Token], default_schema: str | None, query: str):
        super().__init__(toks)
        self.default_schema, self.query = default_schema, query
        self.if_exists = False

    def fail(self, reason: str):
        raise DDLParseError(f"cannot classify DDL statement: {reason}", statement=self.query)

    def take_if_exists(self) -> bool:
        found = super().take_if_exists()
        self.if_exists |= found
        return found

    def name(self, what: str = "a name") -> str:
        t = self.peek()
        if super().name() is None:
            note = (" (double quotes quote names only when sql_mode has ANSI_QUOTES)"
                    if t and t.text.startswith('"') else "")
            self.fail(f"expected {what}, found {t.text if t else 'end of statement'!r}{note}")
        return t.text

    def table(self) -> TableName:
        first = self.name("a table name")
        if self.take_punct("."):
            return TableName(first, self.name("a table name"))
        if not self.default_schema:
            self.fail(f"table {first!r} is not qualified and the session has no default schema")
        return TableName(self.default_schema, first)

    def table_list(self) -> list[TableName]:
        out = [self.table()]
        while self.take_punct(","):
            out.append(self.table())
        return out

    def modifiers(self) -> set[str]:
        """Skip what may stand between CREATE/ALTER/DROP and the object word; return the flags."""
        seen: set[str] = set()
        while True:
            w = self.word()
            if self.take("OR", "REPLACE"):
                seen.add("OR REPLACE")
            elif self.take("SQL", "SECURITY"):
                self.i += 1
            elif w in ("ALGORITHM", "DEFINER"):  # ALGORITHM = MERGE; DEFINER = user@host | CURRENT_USER
                self.i += 1
                self.take_punct("=")
                self.i += 1
                if w == "DEFINER" and self.take_punct("("):
                    self.take_punct(")")
                t = self.peek()
                if w == "DEFINER" and t and t.text.startswith("@"):  # `u`@`h`, 'u'@'h' or u@h
                    self.i += 2 if t.text == "@" else 1
            elif w in _FLAGS or (w == "SPATIAL" and self.word(1) in ("INDEX", "KEY")):
                seen.add(w)
                self.i += 1
            else:
                return seen

    # -- results
    def ddl(self, name: str, type_: str | None, tables=(), renames=(), sub_types=None,
            schema: str | None = None) -> DDLInfo:
        tables = tuple(tables)
        level = not tables and schema is not None  # database statements name a schema, no table
        if schema is None and tables:
            schema = tables[0].schema
        subs = tuple(sub_types) if sub_types is not None else ((type_,) if type_ else ())
        return DDLInfo("ddl", type_, type_ is not None, name, schema, tables, tuple(renames),
                       subs, level, self.if_exists)

    def not_allowed(self, name: str) -> DDLInfo:
        return self.ddl(name, None)

    # -- statements
    def statement(self) -> DDLInfo:
        first = self.word()
        if not self.toks:
            return _not_ddl("EMPTY")
        if first == "SET":
            return self.set_statement()
        if first in _NOT_DDL:
            second = self.word(1) if first in ("XA", "START", "LOAD", "LOCK", "UNLOCK", "RELEASE") else None
            return _not_ddl(f"{first} {second}" if second else first)
        if first in _ADMIN:
            return self.not_allowed(_ADMIN[first])
        handler = {"CREATE": self.create, "DROP": self.drop, "ALTER": self.alter, "RENAME": self.rename,
                   "TRUNCATE": self.truncate, "RECOVER": self.recover, "FLASHBACK": self.recover}.get(first)
        if handler is None:
            self.fail(f"unknown statement {self.toks[0].text!r}")
        self.i += 1
        return handler()

    def set_statement(self) -> DDLInfo:
        if self.at("SET", "PASSWORD"):
            return self.not_allowed("SET PASSWORD")
        if self.at("SET", "DEFAULT", "ROLE"):
            return self.not_allowed("SET DEFAULT ROLE")
        if self.at("SET", "STATEMENT"):  # MariaDB: SET STATEMENT var=value [, ...] FOR <statement>
            for j, t in enumerate(self.toks):
                if t.up == "FOR":
                    return _Walker(self.toks[j + 1:], self.default_schema, self.query).statement()
        return _not_ddl("SET")

    def create(self) -> DDLInfo:
        mods = self.modifiers()
        obj = self.object_word()
        if obj in ("DATABASE", "SCHEMA"):
            self.take_if_exists()
            db = self.name("a database name")
            return self.ddl("CREATE DATABASE", "create database", schema=db)
        if obj == "TABLE":
            self.take_if_exists()
            tables = [self.table()]
            if self.take("LIKE") or (self.take_punct("(") and self.take("LIKE")):
                tables.append(self.table())
            if "TEMPORARY" in mods:  # session-local: not part of the replicated schema
                return self.ddl("CREATE TEMPORARY TABLE", None, tables)
            name = "CREATE OR REPLACE TABLE" if "OR REPLACE" in mods else "CREATE TABLE"
            return self.ddl(name, "create table", tables)
        if obj == "INDEX":
            self.take_if_exists()
            self.name("an index name")
            self.skip_to("ON")  # USING BTREE may stand before ON
            if not self.take("ON"):
                self.fail("CREATE INDEX without ON <table>")
            return self.ddl("CREATE INDEX", "add index", [self.table()])
        if obj == "VIEW":
            self.take_if_exists()
            name = "CREATE OR REPLACE VIEW" if "OR REPLACE" in mods else "CREATE VIEW"
            return self.ddl(name, "create view", [self.table()])
        return self.other_object("CREATE", obj)

    def object_word(self) -> str | None:
        """The word naming what CREATE/ALTER/DROP acts on (consumed)."""
        self.obj_text = self.peek().text if self.peek() else "end of statement"
        obj = self.word()
        self.i += 1
        return obj

    def other_object(self, verb: str, obj: str | None) -> DDLInfo:
        if obj in _OTHER_OBJECTS:
            return self.not_allowed(f"{verb} {_OTHER_OBJECTS[obj]}")
        self.fail(f"unknown object after {verb}: {self.obj_text!r}")

    def drop(self) -> DDLInfo:
        mods = self.modifiers()
        obj = self.object_word()
        if obj == "PREPARE":
            return _not_ddl("DROP PREPARE")
        self.take_if_exists()
        if obj in ("DATABASE", "SCHEMA"):
            return self.ddl("DROP DATABASE", "drop database", schema=self.name("a database name"))
        if obj in ("TABLE", "TABLES"):
            tables = self.table_list()
            if "TEMPORARY" in mods:
                return self.ddl("DROP TEMPORARY TABLE", None, tables)
            return self.ddl("DROP TABLE", "drop table", tables)
        if obj == "VIEW":
            return self.ddl("DROP VIEW", "drop view", self.table_list())
        if obj == "INDEX":
            index = self.name("an index name")
            if not self.take("ON"):
                self.fail("DROP INDEX without ON <table>")
            # TiDB runs DROP INDEX `PRIMARY` as ActionDropPrimaryKey.
            type_ = "drop primary key" if index.upper() == "PRIMARY" else "drop index"
            return self.ddl("DROP INDEX", type_, [self.table()])
        return self.other_object("DROP", obj)

    def rename(self) -> DDLInfo:
        if not (self.take("TABLE") or self.take("TABLES")):
            if self.at("USER"):
                return self.not_allowed("RENAME USER")
            self.fail("RENAME must be followed by TABLE")
        self.take_if_exists()
        renames = []
        while True:
            old = self.table()
            if not self.take("NOWAIT") and self.take("WAIT"):
                self.i += 1
            if not self.take("TO"):
                self.fail("RENAME TABLE expects <old> TO <new>")
            renames.append((old, self.table()))
            if not self.take_punct(","):
                break
        tables = [t for pair in renames for t in pair]
        type_ = "rename table" if len(renames) == 1 else "rename tables"
        return self.ddl("RENAME TABLE", type_, tables, renames)

    def truncate(self) -> DDLInfo:
        self.take("TABLE")
        return self.ddl("TRUNCATE TABLE", "truncate table", [self.table()])

    def recover(self) -> DDLInfo:  # TiDB: RECOVER TABLE [BY JOB n | t], FLASHBACK TABLE t [TO u]
        if not self.take("TABLE"):
            return self.not_allowed(f"{self.toks[0].text.upper()} {self.word() or ''}".strip())
        if self.take("BY", "JOB"):
            return self.ddl("RECOVER TABLE", "recover table")
        tables = [self.table()]
        if self.take("TO"):  # FLASHBACK TABLE t TO u recovers t under the name u
            tables.append(self.table())
        return self.ddl(f"{self.toks[0].text.upper()} TABLE", "recover table", tables)

    def alter(self) -> DDLInfo:
        self.modifiers()
        obj = self.object_word()
        if obj == "TABLE":
            return self.alter_table()
        if obj in ("DATABASE", "SCHEMA"):
            return self.alter_database()
        if obj == "VIEW":  # same effect as CREATE OR REPLACE VIEW
            return self.ddl("ALTER VIEW", "create view", [self.table()])
        return self.other_object("ALTER", obj)

    def alter_database(self) -> DDLInfo:
        db = self.default_schema
        t = self.peek()
        if t and (t.kind == "ident" or (t.kind == "word" and t.up not in (
                "DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "COMMENT", "READ", "ENCRYPTION",
                "UPGRADE", "PLACEMENT", "SET"))):
            db = self.name()
        if not db:
            self.fail("ALTER DATABASE names no database and the session has no default schema")
        words = [t.up for t in self.toks[self.i:] if t.up and t.up != "DEFAULT"]
        if {"CHARACTER", "CHARSET", "COLLATE"} & set(words):
            return self.ddl("ALTER DATABASE CHARACTER SET", "alter database character set", schema=db)
        return self.ddl(f"ALTER DATABASE {words[0] if words else ''}".strip(), None, schema=db)

    def alter_table(self) -> DDLInfo:
        self.take_if_exists()
        table = self.table()
        tables, renames, clauses = [table], [], []
        for chunk in split_commas(self.toks[self.i:]):
            sub = _Walker(chunk, self.default_schema, self.query)
            greedy = sub.alter_clause(clauses, table, tables, renames)
            self.if_exists |= sub.if_exists
            if greedy:  # partition lists and ORDER BY take the commas that follow
                break
        kept, seen = [], set()
        for name, type_ in clauses:
            if type_ not in _ATTRIBUTE_TYPES or type_ not in seen:
                kept.append((name, type_))
                seen.add(type_)
        names = list(dict.fromkeys(n for n, _ in kept))
        stmt = " ".join(["ALTER TABLE", ", ".join(names)]).strip()
        # Clauses outside the allow list (ENGINE=, FORCE, ADD FOREIGN KEY, ...) ride along with
        # allow-listed ones, as the whole statement is what the downstream runs.
        types = [t for _, t in kept if t]
        if not types:
            return self.ddl(stmt, None, tables)
        if len(types) == 1:
            return self.ddl(stmt, types[0], tables, renames)
        return self.ddl(stmt, "multi schema change", tables, renames, sub_types=types)

    def alter_clause(self, clauses: list, table: TableName, tables: list, renames: list) -> bool:
        """Classify one comma-separated ALTER TABLE clause; True when it swallows the rest."""
        lead = [t.up for t in self.toks[:8]]
        if lead[:2] == ["ADD", "CONSTRAINT"]:  # ADD CONSTRAINT [IF NOT EXISTS] [symbol] <kind>
            rest = lead[2:]
            if rest[:1] == ["IF"]:
                self.if_exists, rest = True, rest[3:]
            if rest[:1] not in (["PRIMARY"], ["UNIQUE"], ["FOREIGN"], ["CHECK"]):
                rest = rest[1:]
            lead = ["ADD", *rest]
        if any(lead[k:k + 2] == ["IF", "EXISTS"] for k in range(4)) or \
                any(lead[k:k + 3] == ["IF", "NOT", "EXISTS"] for k in range(4)):
            self.if_exists = True
        for words, name, type_ in _CLAUSES:
            if len(lead) < len(words) or not all(w in alts for w, alts in zip(lead, words)):
                continue
            if name == "=":
                name = " ".join(lead[:len(words)])
            if name == "DROP INDEX":
                idx = [t for t in self.toks[2:] if t.up not in ("IF", "EXISTS")][:1]
                if idx and idx[0].text.upper() == "PRIMARY":
                    name, type_ = "DROP PRIMARY KEY", "drop primary key"
            elif name == "ALTER COLUMN":
                if not any(a in ("SET", "DROP") and b == "DEFAULT" for a, b in zip(lead, lead[1:])):
                    type_ = None
            elif name == "RENAME":
                self.i = 1
                self.take("TO") or self.take("AS")
                new = self.table()
                tables.append(new)
                renames.append((table, new))
            elif name == "EXCHANGE PARTITION":
                self.skip_to("WITH", "TABLE")
                self.i += 2
                tables.append(self.table())
            if name:
                clauses.append((name, type_))
            return "PARTITION" in name or name == "ORDER BY"
        self.table_options(clauses)
        return False

    def table_options(self, clauses: list) -> None:
        """`ENGINE=InnoDB COMMENT 'x' DEFAULT CHARSET=utf8mb4`: options need no commas between them."""
        while self.peek():
            self.take("DEFAULT")
            w = self.word()
            if w not in _OPTIONS:
                self.fail(f"unknown ALTER TABLE clause at {self.peek().text if self.peek() else 'end'!r}")
            name, type_ = _OPTIONS[w]
            self.i += 1
            if name:
                clauses.append((name, type_))
            if w in _NO_VALUE_OPTIONS:
                continue
            if w == "CHARACTER":
                self.take("SET")
            self.take_punct("=")
            depth, first = 0, True
            while self.peek():  # the value: up to the next option word outside parentheses
                t = self.peek()
                if depth == 0 and not first and t.up in _OPTION_STARTS:
                    break
                if t.kind == "punct":
                    depth += (t.text == "(") - (t.text == ")")
                self.i += 1
                first = False


def classify(query: str, default_schema: str | None, sql_mode: str = "") -> DDLInfo:
    """Classify one QueryEvent statement: its TiCDC DDL type, allow-list verdict and tables."""
    return _Walker(tokenize(query, sql_mode), default_schema or None, query).statement()
