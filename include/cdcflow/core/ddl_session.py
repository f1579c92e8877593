"""What of the upstream session a DDL ran in replays with it downstream.

A binlog query event records the session's time (seconds, and microseconds where the
statement used them: MySQL's Q_MICROSECONDS, MariaDB's Q_HRNOW), its time zone where the
statement used one (Q_TIME_ZONE_CODE) and its collations (Q_CHARSET_CODE).  A DDL that
fills existing rows with the current time, or reads a TIMESTAMP literal, means what it
meant upstream only in that time and zone.
"""

from __future__ import annotations

import msgspec


class DdlSession(msgspec.Struct, frozen=True):
    time_us: int | None = None  # the statement's time, microseconds since the epoch
    time_zone: str | None = None  # as the upstream session named it ('+05:00', 'Europe/Berlin')
    collation_connection: str | None = None
    collation_server: str | None = None

    @classmethod
    def of(cls, event) -> "DdlSession":
        """The session a DDL event (core.event.Event) recorded."""
        return cls(time_us=event.ddl_time_us, time_zone=event.ddl_time_zone,
                   collation_connection=event.ddl_collation_connection,
                   collation_server=event.ddl_collation_server)

    def timestamp(self) -> str | None:
        """The time as `SET timestamp` takes it: seconds with six decimals."""
        if self.time_us is None:
            return None
        return f"{self.time_us // 1_000_000}.{self.time_us % 1_000_000:06d}"
