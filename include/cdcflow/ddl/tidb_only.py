"""DDL that only some downstreams understand: what each downstream flavour gets.

TiDB-only DDL (TTL, REMOVE TTL, RECOVER/FLASHBACK TABLE) replicates to TiDB as is and has
no MySQL/MariaDB equivalent: towards those the changefeed stops at it, naming the statement,
its commit ts and how to get past it.  Index visibility has an equivalent everywhere but
MySQL 5.x: TiDB and MySQL 8 say INVISIBLE / VISIBLE, MariaDB (10.6+) IGNORED / NOT IGNORED,
so `ALTER INDEX i <visibility>` is rewritten into the downstream's words (both ways: a
MariaDB upstream's IGNORED reaches TiDB as INVISIBLE).  `ALTER TABLE ... AUTO_INCREMENT = n`
(rebase auto id) means the same everywhere and runs as is.
"""

from __future__ import annotations

import re

from cdcflow.core.errors import DDL_UNSUPPORTED_DOWNSTREAM, CdcflowError
from cdcflow.ddl.lexer import Cursor, tokenize
from cdcflow.ddl.types import TIDB_ONLY_TYPES, VISIBILITY_TYPES

TIDB, MYSQL8, MYSQL5, MARIADB = "tidb", "mysql8", "mysql5", "mariadb"

# the words for (hidden, shown) per flavour; None: the flavour has no invisible indexes
VISIBILITY_WORDS = {
    TIDB: ("INVISIBLE", "VISIBLE"),
    MYSQL8: ("INVISIBLE", "VISIBLE"),
    MARIADB: ("IGNORED", "NOT IGNORED"),
    MYSQL5: None,
}


def flavour(kind: str, version: str) -> str:
    """The flavour of a downstream from downstream_kind.detect's (kind, version)."""
    v = version.lower()
    if kind == "tidb":
        return TIDB
    if "mariadb" in v:
        return MARIADB
    major = re.match(r"\s*(\d+)", v)
    return MYSQL8 if major and int(major.group(1)) >= 8 else MYSQL5


def unsupported(ddl, changefeed_id: str, target: str, why: str) -> CdcflowError:
    ts = ddl.commit_ts
    return CdcflowError(
        f"DDL {ddl.name or ddl.query} cannot run on a {target} downstream: {why}",
        changefeed=changefeed_id, ts=ts, statement=ddl.query, code=DDL_UNSUPPORTED_DOWNSTREAM,
        hint=f"replace it with an equivalent the downstream accepts: `cdcflow changefeed replace-ddl -c {changefeed_id} "
             f"--commit-ts {ts} --sql \"...\"`, or skip it: `cdcflow changefeed skip-ddl -c {changefeed_id} --commit-ts {ts}` "
             "(or ignore such DDL in the config with [[filter.event-filters]] ignore-event); then resume")


def for_downstream(ddl, target: str, changefeed_id: str) -> str:
    """The statement to run on a downstream of flavour `target` for one DDL entry (stages.contracts.DdlEntry); raises
    a non-retryable CdcflowError where the downstream has no equivalent."""
    types = {ddl.type, *ddl.sub_types}
    if target != TIDB:
        for t in sorted(types & set(TIDB_ONLY_TYPES)):
            raise unsupported(ddl, changefeed_id, target, TIDB_ONLY_TYPES[t])
    query = ddl.query
    if not types & VISIBILITY_TYPES:
        return query
    words = VISIBILITY_WORDS[target]
    if words is None:
        raise unsupported(ddl, changefeed_id, target, "MySQL before 8.0 has no invisible indexes")
    return _with_visibility_words(query, ddl.sql_mode, *words)


def _with_visibility_words(query: str, sql_mode: str | None, hidden: str, shown: str) -> str:
    """`query` with the visibility of every `ALTER INDEX i <visibility>` in the words given."""
    out, done = [], 0
    r = Cursor(tokenize(query, sql_mode))
    while r.peek():
        if not r.take("ALTER"):
            r.i += 1
        elif (r.take("INDEX") or r.take("KEY")) and r.name() is not None:
            first = r.peek()
            hide = r.take("IGNORED") or r.take("INVISIBLE")
            if hide or r.take("NOT", "IGNORED") or r.take("VISIBLE"):
                out += [query[done:first.start], hidden if hide else shown]
                done = r.toks[r.i - 1].end
    return "".join(out) + query[done:]
