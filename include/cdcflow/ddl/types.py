"""The DDL types: one row each, read by the allow list, TiCDC's DDL-replication doc's valid-index matrix, the
event filter's `ignore-event` names and the rewriting for each downstream flavour.

A type is named as TiCDC's allow list words it (TiCDC's DDL-replication doc; CREATE INDEX and ADD
INDEX share 'add index').  TiCDC's whitelist (pkg/filter `ddlWhiteListMap`) also allows
ActionRenameTables and ActionMultiSchemaChange, which have no row in the documented lists;
TiCDC's current whitelist also replicates ActionAlterTablePartitioning and ActionRemovePartitioning
(`ALTER TABLE … PARTITION BY`, `REMOVE PARTITIONING`), which the documented list predates:
cdcflow follows today's TiCDC there.  Beyond TiCDC, cdcflow replicates what a MariaDB upstream
has of its own (TiDB cannot be its upstream, so TiCDC never meets these): system versioning,
CONVERT PARTITION / CONVERT TABLE, and sequences (TiDB has sequences, but TiCDC's whitelist
leaves their DDL out, and a table whose DEFAULT is NEXTVAL(seq) then fails downstream for good).
Each such type says what a downstream without the syntax gets (ddl.mariadb_only) and what TiCDC does.

Which sequences: MariaDB holds a sequence as a table (SHOW TABLES lists it, its one row is its
state, DROP TABLE drops it), so the table filter decides on a sequence by its name, as on any
table, whether or not a table uses it: a sequence the filter matches is created, altered, dropped
and kept at its state downstream; one it leaves out is not, and a replicated table whose DEFAULT
names such a sequence fails downstream at its CREATE TABLE (ErrExecDDLFailed, the server's
unknown-table error): add the sequence to the filter's rules.  Following a table's DEFAULT to the
sequences it names would replicate objects the rules exclude.
"""

from __future__ import annotations

from dataclasses import dataclass

CREATE_DATABASE = "create database"
DROP_DATABASE = "drop database"
CREATE_TABLE = "create table"
DROP_TABLE = "drop table"
ADD_COLUMN = "add column"
DROP_COLUMN = "drop column"
ADD_INDEX = "add index"
DROP_INDEX = "drop index"
TRUNCATE_TABLE = "truncate table"
MODIFY_COLUMN = "modify column"
RENAME_TABLE = "rename table"
ALTER_COLUMN_DEFAULT_VALUE = "alter column default value"
ALTER_TABLE_COMMENT = "alter table comment"
RENAME_INDEX = "rename index"
ADD_PARTITION = "add partition"
DROP_PARTITION = "drop partition"
TRUNCATE_PARTITION = "truncate partition"
CREATE_VIEW = "create view"
DROP_VIEW = "drop view"
ALTER_TABLE_CHARACTER_SET = "alter table character set"
ALTER_DATABASE_CHARACTER_SET = "alter database character set"
RECOVER_TABLE = "recover table"
ADD_PRIMARY_KEY = "add primary key"
DROP_PRIMARY_KEY = "drop primary key"
REBASE_AUTO_ID = "rebase auto id"
ALTER_TABLE_INDEX_VISIBILITY = "alter table index visibility"
EXCHANGE_PARTITION = "exchange partition"
REORGANIZE_PARTITION = "reorganize partition"
ALTER_TABLE_TTL = "alter table ttl"
ALTER_TABLE_REMOVE_TTL = "alter table remove ttl"
RENAME_TABLES = "rename tables"
MULTI_SCHEMA_CHANGE = "multi schema change"
ALTER_TABLE_PARTITIONING = "alter table partitioning"
REMOVE_PARTITIONING = "remove partitioning"
ALTER_TABLE_SYSTEM_VERSIONING = "alter table system versioning"
CONVERT_PARTITION = "convert partition"
CONVERT_TABLE = "convert table"
CREATE_SEQUENCE = "create sequence"
ALTER_SEQUENCE = "alter sequence"
DROP_SEQUENCE = "drop sequence"

LISTED, WHITELIST, NOT_ALLOWED = "listed", "whitelist", "no"
MARIADB = "mariadb"  # cdcflow's own: MariaDB's statements TiCDC never meets, and sequences
# TiCDC's DDL-replication doc's columns: has a valid index | no valid index, force-replicate=false | ... =true.
_MATRIX = {"Y Y Y": (True, True, True), "Y N Y": (True, False, True)}
_TTL = "TTL is a TiDB table option"
_SEQUENCES = ("TiDB: as is, and a sequence's state by SETVAL (TiDB's sequences are no tables); "
              "MySQL has no sequences: the changefeed stops there")
_MARIADB_ONLY = "never meets it: TiDB, its upstream, has no such statement"
_NO_SEQUENCES = ("skipped: its whitelist (pkg/filter ddlWhiteListMap) has no sequence action, so a table whose "
                 "DEFAULT is NEXTVAL(seq) fails downstream")


@dataclass(frozen=True)
class DDLType:
    name: str
    allowed: str  # LISTED: a row of the documented allow list; WHITELIST: TiCDC's only; MARIADB; NOT_ALLOWED
    matrix: str | None  # TiCDC's DDL-replication doc's row: 'Y Y Y' or 'Y N Y'
    event: str | None = None  # TiCDC's ignore-event name where it is not the type's own
    alter_table: bool = True  # also ignored by ignore-event 'alter table' (TiCDC's alterTableSubType)
    tidb_only: str | None = None  # why no downstream but TiDB has an equivalent: it stops there
    visibility_words: bool = False  # index visibility is spelled per downstream flavour
    aliases: tuple[str, ...] = ()  # more ignore-event names, stored as `event_name`
    elsewhere: str | None = None  # what a downstream without the syntax (TiDB, MySQL) gets, where it differs
    ticdc: str | None = None  # what TiCDC does, where cdcflow does otherwise

    @property
    def event_name(self) -> str:
        return self.event or self.name

    @property
    def replicate(self) -> tuple[bool, bool, bool] | None:
        return _MATRIX.get(self.matrix)


ROWS: tuple[DDLType, ...] = (
    DDLType(CREATE_DATABASE, LISTED, "Y Y Y", alter_table=False, aliases=("create schema",)),
    DDLType(DROP_DATABASE, LISTED, "Y Y Y", alter_table=False, aliases=("drop schema",)),
    DDLType(CREATE_TABLE, LISTED, "Y N Y", alter_table=False),
    DDLType(DROP_TABLE, LISTED, "Y N Y", alter_table=False),
    DDLType(ADD_COLUMN, LISTED, "Y N Y"),
    DDLType(DROP_COLUMN, LISTED, "Y N Y"),
    DDLType(ADD_INDEX, LISTED, "Y Y Y", "create index"),
    DDLType(DROP_INDEX, LISTED, "Y N Y"),
    DDLType(TRUNCATE_TABLE, LISTED, "Y N Y", alter_table=False),
    DDLType(MODIFY_COLUMN, LISTED, "Y N Y"),
    DDLType(RENAME_TABLE, LISTED, "Y N Y"),
    DDLType(ALTER_COLUMN_DEFAULT_VALUE, LISTED, "Y N Y", "set default value"),
    DDLType(ALTER_TABLE_COMMENT, LISTED, "Y N Y", "modify table comment"),
    DDLType(RENAME_INDEX, LISTED, "Y N Y"),
    DDLType(ADD_PARTITION, LISTED, "Y N Y", "add table partition"),
    DDLType(DROP_PARTITION, LISTED, "Y N Y", "drop table partition"),
    DDLType(TRUNCATE_PARTITION, LISTED, "Y N Y", "truncate table partition"),
    DDLType(CREATE_VIEW, LISTED, "Y N Y", alter_table=False),
    DDLType(DROP_VIEW, LISTED, "Y N Y", alter_table=False),
    DDLType(ALTER_TABLE_CHARACTER_SET, LISTED, "Y N Y", "modify table charset and collate"),
    DDLType(ALTER_DATABASE_CHARACTER_SET, LISTED, "Y Y Y", "modify schema charset and collate", alter_table=False),
    DDLType(RECOVER_TABLE, LISTED, "Y N Y", alter_table=False,
            tidb_only="RECOVER TABLE / FLASHBACK TABLE restore a dropped table from TiDB's GC window"),
    DDLType(ADD_PRIMARY_KEY, LISTED, "Y Y Y"),
    DDLType(DROP_PRIMARY_KEY, LISTED, "Y N Y"),
    DDLType(REBASE_AUTO_ID, LISTED, "Y N Y"),
    DDLType(ALTER_TABLE_INDEX_VISIBILITY, LISTED, "Y N Y", "alter index visibility", visibility_words=True),
    DDLType(EXCHANGE_PARTITION, LISTED, "Y N Y", "exchange table partition"),
    DDLType(REORGANIZE_PARTITION, LISTED, "Y N Y", "reorganize table partition"),
    DDLType(ALTER_TABLE_TTL, LISTED, "Y N Y", "alter ttl info", tidb_only=_TTL),
    DDLType(ALTER_TABLE_REMOVE_TTL, LISTED, "Y N Y", "alter ttl remove", tidb_only=_TTL),
    DDLType(RENAME_TABLES, WHITELIST, "Y N Y", "rename table"),
    DDLType(MULTI_SCHEMA_CHANGE, WHITELIST, "Y N Y"),
    DDLType(ALTER_TABLE_PARTITIONING, WHITELIST, "Y N Y"),
    DDLType(REMOVE_PARTITIONING, WHITELIST, "Y N Y", "remove table partitioning"),
    # the period columns are the downstream's to compute, or it has none: the rows never carry
    # them (filter.system_versioning), so a downstream without system versioning keeps the table as is
    DDLType(ALTER_TABLE_SYSTEM_VERSIONING, MARIADB, "Y N Y",
            elsewhere="not run: TiDB and MySQL have no system versioning, and the rows reach them without "
                      "the period columns; CREATE TABLE … WITH SYSTEM VERSIONING runs without the versioning "
                      "clauses and period columns",
            ticdc=_MARIADB_ONLY),
    DDLType(CONVERT_PARTITION, MARIADB, "Y N Y",
            elsewhere="CREATE TABLE t LIKE src; ALTER TABLE t REMOVE PARTITIONING; ALTER TABLE src EXCHANGE "
                      "PARTITION p WITH TABLE t; ALTER TABLE src DROP PARTITION p", ticdc=_MARIADB_ONLY),
    DDLType(CONVERT_TABLE, MARIADB, "Y N Y",
            elsewhere="ALTER TABLE src ADD PARTITION (<the partition>); ALTER TABLE src EXCHANGE PARTITION p "
                      "WITH TABLE t; DROP TABLE t", ticdc=_MARIADB_ONLY),
    # a sequence is a table in MariaDB (its row is its state): the table filter and the valid-index
    # rule read it as one, its settings its key
    DDLType(CREATE_SEQUENCE, MARIADB, "Y Y Y", alter_table=False,
            elsewhere=_SEQUENCES, ticdc=_NO_SEQUENCES),
    DDLType(ALTER_SEQUENCE, MARIADB, "Y Y Y", alter_table=False,
            elsewhere=_SEQUENCES, ticdc=_NO_SEQUENCES),
    DDLType(DROP_SEQUENCE, MARIADB, "Y Y Y", alter_table=False,
            elsewhere=_SEQUENCES, ticdc=_NO_SEQUENCES),
)
BY_NAME: dict[str, DDLType] = {r.name: r for r in ROWS}

# TiCDC's DDL-replication doc's allow list, in their order, and TiCDC's DDL-replication doc's Y/N matrix over it.
ALLOW_LIST: tuple[str, ...] = tuple(r.name for r in ROWS if r.allowed == LISTED)
REPLICATE_MATRIX: dict[str, tuple[bool, bool, bool]] = {r.name: r.replicate for r in ROWS if r.allowed == LISTED}
# Every allowed type (the allow list and TiCDC's whitelist extras) -> its ignore-event name.
DDL_EVENT_NAMES: dict[str, str] = {r.name: r.event_name for r in ROWS if r.allowed != NOT_ALLOWED}
# Every ignore-event name of a DDL type, allowed or not, aliases included.
EVENT_NAMES: frozenset[str] = frozenset(n for r in ROWS for n in (r.event_name, *r.aliases))
EVENT_NAME_ALIASES: dict[str, str] = {a: r.event_name for r in ROWS for a in r.aliases}
# A type's name where TiCDC's ignore-event name is another: what users write by mistake.
EVENT_NAME_HINTS: dict[str, str] = {r.name: r.event for r in ROWS if r.event}
ALTER_TABLE_TYPES: frozenset[str] = frozenset(r.name for r in ROWS if r.allowed != NOT_ALLOWED and r.alter_table)
TIDB_ONLY_TYPES: dict[str, str] = {r.name: r.tidb_only for r in ROWS if r.tidb_only}
VISIBILITY_TYPES: frozenset[str] = frozenset(r.name for r in ROWS if r.visibility_words)
# cdcflow's own types (MariaDB's statements, sequences) -> what a downstream without the syntax gets
MARIADB_TYPES: dict[str, str] = {r.name: r.elsewhere for r in ROWS if r.allowed == MARIADB}


def should_replicate(ddl_type: str, has_valid_index: bool, force_replicate: bool) -> bool:
    """TiCDC's DDL-replication doc's Y/N matrix: does a DDL of this type reach the downstream?"""
    row = BY_NAME.get(ddl_type)
    if row is None or row.allowed == NOT_ALLOWED:
        raise ValueError(f"{ddl_type!r} is not an allow-listed DDL type")
    has, no_key, forced = row.replicate
    if has_valid_index:
        return has
    return forced if force_replicate else no_key
