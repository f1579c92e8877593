"""The privileges cdcflow's users need, and what a server's "access denied" says is missing.

The downstream user's privileges are declared once here: the docs' GRANT (docs/getting-started.md,
which tests/docs/test_getting_started.py runs as written) and the GRANT an error offers
(core.errors, ErrDownstreamPrivilege) are these.  A refusal is read from the server's text, as
MySQL, MariaDB and TiDB word it:

    1044  Access denied for user 'w'@'%' to database 'x'             (the account as created)
    1142  INSERT command denied to user 'w'@'127.0.0.1' for table `s`.`t`   (the client's host)
    1143  SELECT command denied to user 'w'@'127.0.0.1' for column 'c' in table 't'
    1227  Access denied; you need (at least one of) the SUPER privilege(s) for this operation
"""

from __future__ import annotations

import re
from typing import NamedTuple

from cdcflow.core.row_codec import quote_ident

# What the downstream user does: reads the catalogue and the rows it compares (SELECT), writes rows
# (INSERT, UPDATE, DELETE), runs the replicated DDL (CREATE, DROP, ALTER, INDEX, REFERENCES for a
# foreign key, CREATE VIEW), on each replicated schema and on `cdcflow`, where it keeps how far the
# tables bound by cascading foreign keys are applied (sink/foreign_keys.py)
DOWNSTREAM_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX", "REFERENCES",
                         "CREATE VIEW")
OWN_SCHEMA = "cdcflow"

_TABLE = re.compile(r"^(?P<priv>[A-Z][A-Z ]*?) command denied to user '(?P<user>[^']*)'@'[^']*'"
                    r"(?: for column '[^']*' in)? (?:for )?table (?P<table>.+?)\s*$")
_DATABASE = re.compile(r"Access denied for user '(?P<user>[^']*)'@'(?P<host>[^']*)' to database '(?P<db>[^']*)'")
_GLOBAL = re.compile(r"you need \(at least one of\) the (?P<privs>.+?) privilege")


class Missing(NamedTuple):
    """A privilege the server refused for want of: `privileges` (one of them is enough where the
    server lists several), `on` as GRANT writes it, `account` as GRANT writes it, and `what` in words."""

    privileges: tuple[str, ...]
    on: str
    account: str
    what: str

    def grant(self) -> str:
        return f"GRANT {', '.join(self.privileges)} ON {self.on} TO {self.account}"


def _on(schema: str) -> str:
    """A schema's privileges as GRANT names them, quoted only where its name needs it (the GRANT is
    shown inside a Markdown code span, which a backtick would end)."""
    return f"{schema}.*" if re.fullmatch(r"[A-Za-z0-9_$]+", schema) else f"{quote_ident(schema)}.*"


def _schema_of(table: str) -> str | None:
    """`s` of "`s`.`t`" (MariaDB, TiDB); None for MySQL's bare 't'."""
    names = re.findall(r"`((?:[^`]|``)*)`", table)
    return names[0] if len(names) == 2 else None


def missing_privilege(code: int | None, text: str) -> Missing | None:
    """What an access-denied error (`code`, the server's `text`) says is missing; None for any other."""
    if code in (1142, 1143) and (m := _TABLE.search(text)):
        schema = _schema_of(m["table"])
        # the error names the client's host, not the account's: the usual '%' is written, and said so
        return Missing((m["priv"],), _on(schema) if schema else m["table"], f"'{m['user']}'@'%'",
                       f"the {m['priv']} privilege on table {m['table']}")
    if code == 1044 and (m := _DATABASE.search(text)):
        # which statement met it is not said: every privilege cdcflow needs on that schema
        return Missing(DOWNSTREAM_PRIVILEGES, _on(m["db"]), f"'{m['user']}'@'{m['host']}'",
                       f"privileges on database `{m['db']}`")
    if code == 1227 and (m := _GLOBAL.search(text)):
        privileges = tuple(p.strip() for p in m["privs"].split(","))
        return Missing(privileges[:1], "*.*", "the sink URI's user",
                       f"the {' or '.join(privileges)} privilege")
    return None
