"""Classify a binlog DDL statement into TiCDC's DDL types and name the tables it touches.

A binlog only carries the statement text (plus the session's default schema and
SQL mode), not TiDB's job type, so the type (ddl.types) is read from the text.
Lexing is ddl.lexer's; the grammar walk is ours, because MariaDB's DDL is beyond
what a generic parser models.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdcflow.core.errors import DDL_UNPARSEABLE, CdcflowError
from cdcflow.ddl import types as T
from cdcflow.ddl.lexer import Cursor, Token, split_commas, tokenize

_SKIP_HINT = ("if it need not reach the downstream, skip it with "
              "`cdcflow changefeed skip-ddl -c <changefeed> --commit-ts <ts>`")


@dataclass(frozen=True)
class TableName:
    schema: str
    table: str


@dataclass(frozen=True)
class DDLInfo:
    kind: str  # 'ddl' | 'not-ddl' | 'dml' (a row change logged as a statement; tables: the one it writes)
    type: str | None  # an allowed ddl.types name; None if not allowed
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
        kw.setdefault("code", DDL_UNPARSEABLE)
        kw.setdefault("hint", _SKIP_HINT)
        super().__init__(message, statement=statement, **kw)


# ---------------------------------------------------------------- statement tables

# Statements a ROW binlog carries as QueryEvents that are not DDL at all.
_NOT_DDL = frozenset(
    "BEGIN COMMIT ROLLBACK SAVEPOINT RELEASE XA START LOAD USE LOCK UNLOCK HANDLER TABLE EXECUTE "
    "PREPARE DEALLOCATE SHOW EXPLAIN DESCRIBE DESC BINLOG".split())
# Row changes a session with binlog_format STATEMENT or MIXED logs as QueryEvents.  A SELECT,
# DO, VALUES or WITH is logged only when a stored function it calls writes, a CALL's writes are
# logged statement by statement: in a binlog, each of them changed rows.
_DML = frozenset("INSERT UPDATE DELETE REPLACE CALL SELECT DO WITH VALUES".split())
_DML_MODIFIERS = frozenset("LOW_PRIORITY DELAYED HIGH_PRIORITY QUICK IGNORE".split())
# What may follow the one table of a single-table UPDATE / DELETE (anything else: several tables).
_DML_AFTER_TABLE = {"UPDATE": frozenset({"SET"}),
                    "DELETE": frozenset({None, "WHERE", "ORDER", "LIMIT", "RETURNING", "PARTITION"})}
# Administrative statements: DDL-like, never replicated.
_ADMIN = {"ANALYZE": "ANALYZE TABLE", "OPTIMIZE": "OPTIMIZE TABLE", "CHECK": "CHECK TABLE",
          "REPAIR": "REPAIR TABLE", "FLUSH": "FLUSH", "GRANT": "GRANT", "REVOKE": "REVOKE",
          "INSTALL": "INSTALL PLUGIN", "UNINSTALL": "UNINSTALL PLUGIN", "CHECKSUM": "CHECKSUM TABLE"}
# CREATE/ALTER/DROP objects outside the allow list, and how statement names spell them.
_OTHER_OBJECTS = {
    **{w: w for w in "PROCEDURE FUNCTION TRIGGER EVENT USER ROLE SERVER TABLESPACE PACKAGE "
                     "INSTANCE STATISTICS BINDING".split()},
    "LOGFILE": "LOGFILE GROUP", "RESOURCE": "RESOURCE GROUP", "SPATIAL": "SPATIAL REFERENCE SYSTEM",
    "PLACEMENT": "PLACEMENT POLICY", "UNDO": "UNDO TABLESPACE"}
# Words between CREATE/ALTER/DROP and the object that change what the statement means or not.
_FLAGS = frozenset("TEMPORARY UNIQUE FULLTEXT AGGREGATE ONLINE OFFLINE IGNORE VECTOR".split())

# ALTER TABLE clauses by their leading words (A/B: either word; first match wins):
# leading words | clause name ('=': the words matched; '': a modifier, not a clause) |
# TiCDC type (None: not allow-listed).
_CLAUSES = tuple((tuple(frozenset(w.split("/")) for w in lead.split()), name, type_) for lead, name, type_ in (
    ("ADD PRIMARY",                                  "ADD PRIMARY KEY",          T.ADD_PRIMARY_KEY),
    ("ADD UNIQUE/INDEX/KEY/FULLTEXT/SPATIAL/VECTOR", "ADD INDEX",                T.ADD_INDEX),
    ("ADD FOREIGN",                                  "ADD FOREIGN KEY",          None),
    ("ADD CHECK",                                    "ADD CHECK",                None),
    ("ADD PARTITION",                                "ADD PARTITION",            T.ADD_PARTITION),
    ("ADD SYSTEM",                                   "ADD SYSTEM VERSIONING",    T.ALTER_TABLE_SYSTEM_VERSIONING),
    ("ADD PERIOD",                                   "ADD PERIOD",               T.ALTER_TABLE_SYSTEM_VERSIONING),
    ("ADD",                                          "ADD COLUMN",               T.ADD_COLUMN),
    ("DROP PRIMARY",                                 "DROP PRIMARY KEY",         T.DROP_PRIMARY_KEY),
    ("DROP INDEX/KEY",                               "DROP INDEX",               T.DROP_INDEX),
    ("DROP FOREIGN",                                 "DROP FOREIGN KEY",         None),
    ("DROP CONSTRAINT",                              "DROP CONSTRAINT",          None),
    ("DROP CHECK",                                   "DROP CHECK",               None),
    ("DROP PARTITION",                               "DROP PARTITION",           T.DROP_PARTITION),
    ("DROP SYSTEM",                                  "DROP SYSTEM VERSIONING",   T.ALTER_TABLE_SYSTEM_VERSIONING),
    ("DROP PERIOD",                                  "DROP PERIOD",              T.ALTER_TABLE_SYSTEM_VERSIONING),
    ("DROP",                                         "DROP COLUMN",              T.DROP_COLUMN),
    ("MODIFY",                                       "MODIFY COLUMN",            T.MODIFY_COLUMN),
    ("CHANGE",                                       "CHANGE COLUMN",            T.MODIFY_COLUMN),
    ("RENAME COLUMN",                                "RENAME COLUMN",            T.MODIFY_COLUMN),
    ("RENAME INDEX/KEY",                             "RENAME INDEX",             T.RENAME_INDEX),
    ("RENAME",                                       "RENAME",                   T.RENAME_TABLE),
    ("ALTER INDEX/KEY",                              "ALTER INDEX",              T.ALTER_TABLE_INDEX_VISIBILITY),
    ("ALTER CHECK/CONSTRAINT",                       "=",                        None),
    ("ALTER",                                        "ALTER COLUMN",             T.ALTER_COLUMN_DEFAULT_VALUE),
    ("TRUNCATE PARTITION",                           "TRUNCATE PARTITION",       T.TRUNCATE_PARTITION),
    ("EXCHANGE PARTITION",                           "EXCHANGE PARTITION",       T.EXCHANGE_PARTITION),
    ("REORGANIZE PARTITION",                         "REORGANIZE PARTITION",     T.REORGANIZE_PARTITION),
    ("COALESCE/REBUILD/ANALYZE/CHECK PARTITION",     "=",                        None),
    ("OPTIMIZE/REPAIR/DISCARD/IMPORT PARTITION",     "=",                        None),
    ("REMOVE PARTITIONING",                          "REMOVE PARTITIONING",      T.REMOVE_PARTITIONING),
    ("REMOVE TTL",                                   "REMOVE TTL",               T.ALTER_TABLE_REMOVE_TTL),
    ("PARTITION BY",                                 "PARTITION BY",             T.ALTER_TABLE_PARTITIONING),
    ("CONVERT TO",                                   "CONVERT TO CHARACTER SET", T.ALTER_TABLE_CHARACTER_SET),
    ("CONVERT PARTITION",                            "CONVERT PARTITION",        T.CONVERT_PARTITION),
    ("CONVERT TABLE",                                "CONVERT TABLE",            T.CONVERT_TABLE),
    ("DISCARD/IMPORT TABLESPACE",                    "=",                        None),
    ("ENABLE/DISABLE KEYS",                          "=",                        None),
    ("ORDER BY",                                     "ORDER BY",                 None),
    ("SET TIFLASH",                                  "SET TIFLASH REPLICA",      None),
    ("WITH/WITHOUT VALIDATION",                      "",                         None),
))

# Table options (also space-separated inside one clause): option word -> (clause name, type).
_OPTIONS: dict[str, tuple[str, str | None]] = {
    "COMMENT": ("COMMENT", T.ALTER_TABLE_COMMENT),
    "CHARSET": ("CHARACTER SET", T.ALTER_TABLE_CHARACTER_SET),
    "CHARACTER": ("CHARACTER SET", T.ALTER_TABLE_CHARACTER_SET),
    "COLLATE": ("CHARACTER SET", T.ALTER_TABLE_CHARACTER_SET),
    "AUTO_INCREMENT": ("AUTO_INCREMENT", T.REBASE_AUTO_ID),
    **{w: ("TTL", T.ALTER_TABLE_TTL) for w in ("TTL", "TTL_ENABLE", "TTL_JOB_INTERVAL")},
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
_ATTRIBUTE_TYPES = frozenset({T.ALTER_TABLE_COMMENT, T.ALTER_TABLE_CHARACTER_SET, T.REBASE_AUTO_ID,
                              T.ALTER_TABLE_TTL})


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
        if first in _DML or self.at("LOAD", "DATA") or self.at("LOAD", "XML"):
            return self.dml()
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

    def dml(self) -> DDLInfo:
        """A row change logged as a statement, with the table it writes where that can be read
        (INSERT/REPLACE/LOAD and single-table UPDATE/DELETE), else none."""
        verb = self.word()
        self.i += 1
        if verb == "LOAD":
            verb = f"LOAD {self.word()}"
            self.skip_to("INTO")  # past the file name and REPLACE/IGNORE
            self.take("INTO")
            self.take("TABLE")
        while self.word() in _DML_MODIFIERS:
            self.i += 1
        if verb in ("INSERT", "REPLACE"):
            self.take("INTO")
        readable = verb in ("INSERT", "REPLACE", "UPDATE") or verb.startswith("LOAD") or (
            verb == "DELETE" and self.take("FROM"))  # not DELETE t1, t2 FROM ...
        tables: tuple[TableName, ...] = ()
        if readable:
            try:
                tables = (self.table(),)
            except DDLParseError:
                tables = ()
            if verb in _DML_AFTER_TABLE:
                self.take("AS")
                if self.word() not in _DML_AFTER_TABLE[verb] and self.peek() is not None and self.peek().is_name:
                    self.i += 1  # an alias
                if self.word() not in _DML_AFTER_TABLE[verb]:
                    tables = ()  # several tables (a join, or DELETE ... USING)
        return DDLInfo("dml", None, False, verb, tables[0].schema if tables else None, tables, (), (), False,
                       False)

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
            return self.ddl("CREATE DATABASE", T.CREATE_DATABASE, schema=db)
        if obj == "TABLE":
            self.take_if_exists()
            tables = [self.table()]
            if self.take("LIKE") or (self.take_punct("(") and self.take("LIKE")):
                tables.append(self.table())
            if "TEMPORARY" in mods:  # session-local: not part of the replicated schema
                return self.ddl("CREATE TEMPORARY TABLE", None, tables)
            name = "CREATE OR REPLACE TABLE" if "OR REPLACE" in mods else "CREATE TABLE"
            return self.ddl(name, T.CREATE_TABLE, tables)
        if obj == "INDEX":
            self.take_if_exists()
            self.name("an index name")
            self.skip_to("ON")  # USING BTREE may stand before ON
            if not self.take("ON"):
                self.fail("CREATE INDEX without ON <table>")
            return self.ddl("CREATE INDEX", T.ADD_INDEX, [self.table()])
        if obj == "VIEW":
            self.take_if_exists()
            name = "CREATE OR REPLACE VIEW" if "OR REPLACE" in mods else "CREATE VIEW"
            return self.ddl(name, T.CREATE_VIEW, [self.table()])
        if obj == "SEQUENCE":
            self.take_if_exists()
            if "TEMPORARY" in mods:  # session-local, as a temporary table
                return self.ddl("CREATE TEMPORARY SEQUENCE", None, [self.table()])
            name = "CREATE OR REPLACE SEQUENCE" if "OR REPLACE" in mods else "CREATE SEQUENCE"
            return self.ddl(name, T.CREATE_SEQUENCE, [self.table()])
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
            return self.ddl("DROP DATABASE", T.DROP_DATABASE, schema=self.name("a database name"))
        if obj in ("TABLE", "TABLES"):
            tables = self.table_list()
            if "TEMPORARY" in mods:
                return self.ddl("DROP TEMPORARY TABLE", None, tables)
            return self.ddl("DROP TABLE", T.DROP_TABLE, tables)
        if obj == "VIEW":
            return self.ddl("DROP VIEW", T.DROP_VIEW, self.table_list())
        if obj == "SEQUENCE":
            if "TEMPORARY" in mods:
                return self.ddl("DROP TEMPORARY SEQUENCE", None, self.table_list())
            return self.ddl("DROP SEQUENCE", T.DROP_SEQUENCE, self.table_list())
        if obj == "INDEX":
            index = self.name("an index name")
            if not self.take("ON"):
                self.fail("DROP INDEX without ON <table>")
            # TiDB runs DROP INDEX `PRIMARY` as ActionDropPrimaryKey.
            type_ = T.DROP_PRIMARY_KEY if index.upper() == "PRIMARY" else T.DROP_INDEX
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
        type_ = T.RENAME_TABLE if len(renames) == 1 else T.RENAME_TABLES
        return self.ddl("RENAME TABLE", type_, tables, renames)

    def truncate(self) -> DDLInfo:
        self.take("TABLE")
        return self.ddl("TRUNCATE TABLE", T.TRUNCATE_TABLE, [self.table()])

    def recover(self) -> DDLInfo:  # TiDB: RECOVER TABLE [BY JOB n | t], FLASHBACK TABLE t [TO u]
        if not self.take("TABLE"):
            return self.not_allowed(f"{self.toks[0].text.upper()} {self.word() or ''}".strip())
        if self.take("BY", "JOB"):
            return self.ddl("RECOVER TABLE", T.RECOVER_TABLE)
        tables = [self.table()]
        if self.take("TO"):  # FLASHBACK TABLE t TO u recovers t under the name u
            tables.append(self.table())
        return self.ddl(f"{self.toks[0].text.upper()} TABLE", T.RECOVER_TABLE, tables)

    def alter(self) -> DDLInfo:
        self.modifiers()
        obj = self.object_word()
        if obj == "TABLE":
            return self.alter_table()
        if obj in ("DATABASE", "SCHEMA"):
            return self.alter_database()
        if obj == "VIEW":  # same effect as CREATE OR REPLACE VIEW
            return self.ddl("ALTER VIEW", T.CREATE_VIEW, [self.table()])
        if obj == "SEQUENCE":
            self.take_if_exists()
            return self.ddl("ALTER SEQUENCE", T.ALTER_SEQUENCE, [self.table()])
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
            return self.ddl("ALTER DATABASE CHARACTER SET", T.ALTER_DATABASE_CHARACTER_SET, schema=db)
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
        return self.ddl(stmt, T.MULTI_SCHEMA_CHANGE, tables, renames, sub_types=types)

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
                    name, type_ = "DROP PRIMARY KEY", T.DROP_PRIMARY_KEY
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
            elif name == "CONVERT PARTITION":  # CONVERT PARTITION p TO TABLE t: the table it makes
                self.skip_to("TO", "TABLE")
                self.i += 2
                tables.append(self.table())
            elif name == "CONVERT TABLE":  # CONVERT TABLE t TO PARTITION p ...: the table it takes
                self.i = 2
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
