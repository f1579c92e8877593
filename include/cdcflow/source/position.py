"""A binlog position (file, offset) and the GTID position of the transactions before it, and
the binlog files a server holds."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Position:
    """`file` and `pos` are where a reader starts on the server they came from; `gtid` (the
    server's text, source.gtid.GtidPosition) names the same boundary on any server of the same
    replication topology.  A checkpoint moved to a new source by `update --source-uri` has a
    GTID and no file until a cycle locates it there (source.gtid_locate)."""

    file: str | None
    pos: int | None
    gtid: str | None = None

    def to_dict(self) -> dict:
        return {"file": self.file, "pos": self.pos, "gtid": self.gtid}

    @classmethod
    def from_dict(cls, d: dict) -> "Position":
        pos = d.get("pos")
        return cls(d.get("file"), None if pos is None else int(pos), d.get("gtid"))

    def key(self) -> tuple:
        # binlog files are numbered with a fixed-width suffix, so names order like the log
        return (self.file, self.pos)


def binlog_sizes(conn) -> dict[str, int]:
    """The binlog files the server holds, oldest first, each with its size in bytes."""
    with conn.cursor() as cur:
        cur.execute("SHOW BINARY LOGS")
        return {r[0]: int(r[1]) for r in cur.fetchall()}


def available_logs(conn) -> list[str]:
    return list(binlog_sizes(conn))
