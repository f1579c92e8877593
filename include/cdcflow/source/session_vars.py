"""The upstream session a DDL query event recorded (core.ddl_session), as names the
downstream can set.

The event gives collations by number, and the numbers differ between servers (MariaDB's
UCA 14 collations, MySQL's 0900 ones): the upstream that wrote them names them.  A session
in the SYSTEM time zone is recorded as 'SYSTEM', the upstream host's zone: it becomes that
zone's offset at the statement's time.  character_set_client is left out: the statement is
decoded in it (source.query_text) and reaches the downstream as UTF-8.
"""

from __future__ import annotations

from datetime import datetime, timezone

from cdcflow.core.uri import DbUri

# MariaDB 10.10+ lists its UCA 14 collations' numbers only in the applicability table
COLLATION_QUERIES = (
    "SELECT ID, FULL_COLLATION_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY",
    "SELECT ID, COLLATION_NAME FROM information_schema.COLLATIONS",
)


class SessionVars:
    """Reads the session of each DDL query event; asks the upstream (one connection, opened
    at the first DDL that needs it) for what the event gives by number or as SYSTEM."""

    def __init__(self, uri: DbUri):
        self.uri = uri
        self._conn = None
        self._collations: dict[int, str] | None = None

    def fields(self, ev) -> dict:
        """The Event fields (ddl_*) of a QueryEvent."""
        micro = getattr(ev, "hrnow", None) or getattr(ev, "microseconds", None) or 0
        zone = getattr(ev, "time_zone", None)
        zone = zone.decode() if isinstance(zone, bytes) else zone
        if zone and zone.upper() == "SYSTEM":
            zone = self._system_offset(ev.timestamp)
        out = {"ddl_time_us": ev.timestamp * 1_000_000 + micro, "ddl_time_zone": zone or None}
        if getattr(ev, "collation_server", None) is not None:
            out["ddl_collation_connection"] = self._collation(ev.collation_connection)
            out["ddl_collation_server"] = self._collation(ev.collation_server)
        return out

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _cursor(self):
        if self._conn is None:
            self._conn = self.uri.connect()
        return self._conn.cursor()

    def _collation(self, number: int) -> str | None:
        if self._collations is None:
            self._collations = {}
            with self._cursor() as cur:
                for q in COLLATION_QUERIES:
                    try:
                        cur.execute(q)
                    except Exception:  # a server without the applicability table's columns
                        continue
                    self._collations = {int(i): n for i, n in cur.fetchall() if i is not None}
                    if self._collations:
                        break
        return self._collations.get(number)

    def _system_offset(self, seconds: int) -> str:
        with self._cursor() as cur:
            cur.execute("SET SESSION time_zone = 'SYSTEM'")
            cur.execute("SELECT FROM_UNIXTIME(%s)", (seconds,))
            local = cur.fetchone()[0]
        utc = datetime.fromtimestamp(seconds, timezone.utc).replace(tzinfo=None)
        minutes = round((local - utc).total_seconds() / 60)
        sign = "-" if minutes < 0 else "+"
        return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
