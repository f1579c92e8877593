"""The downstream's foreign keys that redo the cascades a binlog leaves out, and how far a
changefeed's rows of those tables are applied.

InnoDB runs ON DELETE / ON UPDATE CASCADE and SET NULL inside the engine: the child rows it
changes are not in a row binlog, and a native replica gets them by running the parent's change
with its own foreign key.  cdcflow does the same for the tables those keys bind: the
segment's tables connected (through any foreign key, so that a RESTRICT key among them sees
its rows in the upstream's order too) to a key whose action changes rows are written in commit
order in one downstream transaction (row_writer.apply_in_commit_order).  That transaction also
moves this changefeed's row in `cdcflow.fk_applied` to the segment's end, so a replay after a
kill (before the checkpoint moved) leaves out the changes already there instead of redoing a
cascade over rows that changed since.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

import pymysql

from cdcflow.core.privileges import missing_privilege
from cdcflow.ddl.types import DROP_DATABASE, DROP_TABLE

from cdcflow.filter.cascade_fk import CHANGING
from cdcflow.sink.row_writer import apply_in_commit_order

# Words of a DDL that may add, drop or rename a foreign key (a comment saying them too: read
# again, to be safe); the other DDLs leave the keys as they were (ForeignKeys.ddl_ran).
_KEY_WORDS = re.compile(r"\b(REFERENCES|FOREIGN|CONSTRAINT|RENAME|ENGINE)\b", re.IGNORECASE)
MARKER_TABLE = "`cdcflow`.`fk_applied`"
_MARKER_DDL = ("CREATE DATABASE IF NOT EXISTS `cdcflow`",
               f"CREATE TABLE IF NOT EXISTS {MARKER_TABLE} (changefeed VARCHAR(255) PRIMARY KEY, "
               "applied_ts BIGINT UNSIGNED NOT NULL)")


@dataclass
class CascadeGroup:
    """The segment's tables ("schema.table") written in commit order, and which of them are the
    parent of a row-changing key (their UPDATEs and DELETEs run with foreign_key_checks = 1)."""
    tables: set[str] = field(default_factory=set)
    parents: set[str] = field(default_factory=set)
    versioned: frozenset[str] = frozenset()  # tables the downstream versions itself (row_sink)
    setval: frozenset[str] = frozenset()  # sequences whose state goes by SETVAL (sink.sequence_state)


# the information schema's view of every foreign key; on MariaDB it opens every table of the
# server to answer (read_keys)
_REFERENTIAL = ("SELECT CONSTRAINT_SCHEMA, TABLE_NAME, UNIQUE_CONSTRAINT_SCHEMA, REFERENCED_TABLE_NAME, "
                "DELETE_RULE, UPDATE_RULE FROM information_schema.REFERENTIAL_CONSTRAINTS")


def _decoded(column: str, part: int) -> str:
    """The schema (part 1) or table (part -1) of a "schema/table" name of InnoDB's dictionary,
    which writes both in the server's file-name encoding: decoded by the server itself."""
    return (f"CONVERT(CAST(CAST(SUBSTRING_INDEX({column}, '/', {part}) AS BINARY) AS CHAR CHARACTER SET filename) "
            "USING utf8mb4)")


# MariaDB's InnoDB dictionary: the same keys, read without opening a table (the login needs PROCESS)
_INNODB_DICTIONARY = ("SELECT " + ", ".join(_decoded(c, p) for c in ("FOR_NAME", "REF_NAME") for p in (1, -1))
                      + ", TYPE FROM information_schema.INNODB_SYS_FOREIGN")
# SYS_FOREIGN.TYPE's bits (InnoDB's dict0mem.h) as the information schema words a key's rules;
# a rule with none of its bits is RESTRICT
_TYPE_BITS = {"delete": ((1, "CASCADE"), (2, "SET NULL"), (16, "NO ACTION")),
              "update": ((4, "CASCADE"), (8, "SET NULL"), (32, "NO ACTION"))}


def _rule(type_bits: int, on: str) -> str:
    return next((rule for bit, rule in _TYPE_BITS[on] if type_bits & bit), "RESTRICT")


def read_keys(conn) -> list[tuple]:
    """Every foreign key the server has now: (schema, table, parent schema, parent table, delete
    rule, update rule).  Every schema's: a chain of keys may pass through tables a segment does
    not touch.  On MariaDB, from InnoDB's dictionary where the login may read it (PROCESS): the
    information schema's view opens every table of the server to answer (MariaDB 10.11, 2,000
    tables: 44-84 ms with them in its caches, 11.8 s at the first read after the server started;
    the dictionary: 0.2-0.8 ms), and only InnoDB keeps foreign keys."""
    with conn.cursor() as cur:
        if "MariaDB" in conn.get_server_info():
            try:
                return dictionary_keys(cur)
            except pymysql.MySQLError as e:
                missing = missing_privilege(*e.args[:2]) if len(e.args) > 1 else None
                if missing is None or missing.privileges[0] != "PROCESS":
                    raise
        return referential_keys(cur)


def dictionary_keys(cur) -> list[tuple]:
    """read_keys's rows from MariaDB's InnoDB dictionary."""
    cur.execute(_INNODB_DICTIONARY)
    return [(s, t, ps, p, _rule(bits, "delete"), _rule(bits, "update")) for s, t, ps, p, bits in cur.fetchall()]


def referential_keys(cur) -> list[tuple]:
    """read_keys's rows from the information schema's view."""
    cur.execute(_REFERENTIAL)
    return list(cur.fetchall())


def cascade_group(keys: list[tuple], tables: list[tuple[str, str]]) -> CascadeGroup:
    """The segment's `tables` bound by a row-changing foreign key among `keys` (read_keys)."""
    if not tables or not any(d in CHANGING or u in CHANGING for *_, d, u in keys):
        return CascadeGroup()
    # connected components over every key; a component holding a row-changing key is written in order
    root: dict[str, str] = {}

    def find(t: str) -> str:
        while root.setdefault(t, t) != t:
            t = root[t]
        return t

    for s, t, ps, p, _d, _u in keys:
        root[find(f"{s}.{t}")] = find(f"{ps}.{p}")
    cascading = {find(f"{ps}.{p}") for _s, _t, ps, p, d, u in keys if d in CHANGING or u in CHANGING}
    wanted = {f"{s}.{t}" for s, t in tables}
    return CascadeGroup(tables={t for t in wanted if t in root and find(t) in cascading},
                        parents={f"{ps}.{p}" for _s, _t, ps, p, d, u in keys
                                 if (d in CHANGING or u in CHANGING) and f"{ps}.{p}" in wanted})


class ForeignKeys:
    """The downstream's foreign keys through one apply: read when a segment first needs them, and
    again after a DDL that may have changed them (after the DDLs before each segment ran, as the
    downstream has them then).  Reading them opens every table of the downstream, so a window of
    thousands of DDLs on thousands of tables must not read them per DDL: only a DDL naming
    REFERENCES, FOREIGN, CONSTRAINT, RENAME or ENGINE, a DROP DATABASE, or a DROP TABLE of a
    table a key binds makes them read again.  Any other DDL cannot change them: MariaDB, MySQL and TiDB
    refuse to drop a column or an index a foreign key needs."""

    def __init__(self, conn):
        self.conn = conn
        self._keys: list[tuple] | None = None

    def group(self, tables: list[tuple[str, str]]) -> CascadeGroup:
        if not tables:
            return CascadeGroup()
        if self._keys is None:
            self._keys = read_keys(self.conn)
        return cascade_group(self._keys, tables)

    def ddl_ran(self, ddl_type: str | None, queries: list[str], tables: list[tuple[str, str]] = ()) -> None:
        """A DDL of `ddl_type` on `tables` ran as `queries`: forget the keys if it may have changed them."""
        if self._keys is None:
            return
        if ddl_type in (None, DROP_DATABASE) or any(_KEY_WORDS.search(q) for q in queries):
            self._keys = None
        elif ddl_type == DROP_TABLE:
            bound = {(k[0], k[1]) for k in self._keys} | {(k[2], k[3]) for k in self._keys}
            if any(tuple(t) in bound for t in tables):
                self._keys = None


def marker_id(changefeed_id: str, created_at: float) -> str:
    """The changefeed's row in the marker table: a changefeed created again under the same id
    starts from nothing."""
    return f"{changefeed_id}@{created_at:.6f}"


def applied_up_to(conn, marker: str) -> int:
    """The commit ts up to which this changefeed's cascade-bound rows are downstream (0: none)."""
    with conn.cursor() as cur:
        for stmt in _MARKER_DDL:
            cur.execute(stmt)
        cur.execute(f"SELECT applied_ts FROM {MARKER_TABLE} WHERE changefeed = %s", (marker,))
        row = cur.fetchone()
    return int(row[0]) if row else 0


def mark_applied(cur, marker: str, ts: int) -> None:
    """Inside the transaction that wrote the rows: they are applied up to `ts`."""
    cur.execute(f"REPLACE INTO {MARKER_TABLE} (changefeed, applied_ts) VALUES (%s, %s)", (marker, ts))


def write_group(conn, changes: Iterable[dict], keys: dict[str, list[str] | None], generated: dict[str, frozenset[str]],
                group: CascadeGroup, upsert: bool, marker: str, hi: int, prepared: bool = False) -> int:
    """The group's changes (commit order, after the marker's ts) and the marker moved to `hi`, in
    one downstream transaction: a kill rolls all of it back, and once committed a replay of the
    segment finds the marker and writes none of it again.  `prepared`: the sink's cache-prep-stmts."""
    conn.begin()
    try:
        n = apply_in_commit_order(conn, changes, keys, generated, group.parents, upsert, group.versioned,
                                  group.setval, prepared)
        with conn.cursor() as cur:
            mark_applied(cur, marker, hi)
        conn.commit()
    except BaseException:
        try:
            conn.rollback()
        except Exception:  # noqa: BLE001 - the connection is gone: the server rolled it back
            pass
        raise
    return n
