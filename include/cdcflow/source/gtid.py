"""A GTID position: which transactions a binlog position stands after, as MariaDB and MySQL name them.

MariaDB names a transaction `domain-server-seq` and a position by the last GTID of each
domain (`@@gtid_binlog_pos`, `0-1-42,1-2-7`): in a domain, seq grows with every transaction
(gtid_strict_mode), so "at or below seq" is "applied".  MySQL names one `uuid:n` and a
position by the set of transactions executed (`@@gtid_executed`, `uuid:1-42:50-60,uuid2:1-7`).
One type holds either, parsed from and printed to the servers' own text, so the checkpoint,
the failover check (source.gtid_locate) and the readers share one code path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARIADB, MYSQL = "mariadb", "mysql"

_MARIADB_GTID = re.compile(r"^(\d+)-(\d+)-(\d+)$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")


def _uuid(text: str) -> str:
    u = text.strip().lower().replace("-", "")
    return f"{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}"


@dataclass
class GtidPosition:
    """MariaDB: {domain: (server, seq)}; MySQL: {uuid: [(first, last), ...]} (sorted, disjoint,
    inclusive).  An empty position holds no transaction (either flavour)."""

    domains: dict[int, tuple[int, int]] = field(default_factory=dict)
    sets: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> "GtidPosition":
        """A position from `0-1-42,1-2-7` or `uuid:1-5:7,uuid2:3` (newlines, spaces and MariaDB's
        GTID_LIST brackets allowed; several GTIDs of one MariaDB domain: the highest seq)."""
        out = cls()
        for part in (text or "").replace("\n", "").strip().strip("[]").split(","):
            part = part.strip()
            if not part:
                continue
            m = _MARIADB_GTID.match(part)
            if m:
                d, s, n = int(m[1]), int(m[2]), int(m[3])
                if d not in out.domains or out.domains[d][1] < n:
                    out.domains[d] = (s, n)
                continue
            uuid, _, rest = part.partition(":")
            if not _UUID.match(uuid) or not rest:
                raise ValueError(f"not a GTID: {part!r} (MariaDB 'domain-server-seq' or MySQL 'uuid:1-5')")
            for interval in rest.split(":"):
                lo, _, hi = interval.partition("-")
                if not lo.isdigit() or (hi and not hi.isdigit()):
                    raise ValueError(f"not a GTID interval: {interval!r} in {part!r} (MySQL tagged GTIDs are "
                                     "not supported)")
                out._add_interval(_uuid(uuid), int(lo), int(hi or lo))
        if out.domains and out.sets:
            raise ValueError(f"a GTID position mixes MariaDB and MySQL GTIDs: {text!r}")
        return out

    @property
    def flavor(self) -> str | None:
        return MARIADB if self.domains else MYSQL if self.sets else None

    def __bool__(self) -> bool:
        return bool(self.domains or self.sets)

    def __str__(self) -> str:
        if self.domains:
            return ",".join(f"{d}-{s}-{n}" for d, (s, n) in sorted(self.domains.items()))
        return ",".join(f"{u}:" + ":".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ivs)
                        for u, ivs in sorted(self.sets.items()))

    def copy(self) -> "GtidPosition":
        return GtidPosition(dict(self.domains), {u: list(ivs) for u, ivs in self.sets.items()})

    # -- moving on --------------------------------------------------------------------------

    def add(self, gtid: str) -> "GtidPosition":
        """The position after the transaction `gtid` (in place; returns self).  MariaDB: the
        domain's last GTID becomes it; MySQL: it joins the set."""
        m = _MARIADB_GTID.match(gtid)
        if m:
            self.domains[int(m[1])] = (int(m[2]), int(m[3]))
        else:
            uuid, _, n = gtid.rpartition(":")
            self._add_interval(_uuid(uuid), int(n), int(n))
        return self

    def then(self, later: "GtidPosition") -> "GtidPosition":
        """This position followed by the transactions `later` names (read after it, in
        binlog order): MariaDB's domains take later's last GTIDs, MySQL's sets join."""
        out = self.copy()
        out.domains.update(later.domains)
        for u, ivs in later.sets.items():
            for lo, hi in ivs:
                out._add_interval(u, lo, hi)
        return out

    def _add_interval(self, uuid: str, lo: int, hi: int) -> None:
        ivs = self.sets.setdefault(uuid, [])
        if ivs and ivs[-1][1] + 1 >= lo >= ivs[-1][0]:  # the common case: the next transaction
            ivs[-1] = (ivs[-1][0], max(hi, ivs[-1][1]))
            return
        ivs.append((lo, hi))
        ivs.sort()
        merged = [ivs[0]]
        for a, b in ivs[1:]:
            if a <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        self.sets[uuid] = merged

    def from_first(self) -> "GtidPosition":
        """MySQL: every uuid's set from transaction 1 on (in place; returns self).  A file's
        Previous_gtids event can lack the start of a set (DM's getGTIDsForPos says so and resets
        it as here): a position read from the binlog then names what the server executed."""
        for u, ivs in self.sets.items():
            ivs[0] = (1, ivs[0][1])
            self.sets[u] = []
            for lo, hi in ivs:
                self._add_interval(u, lo, hi)
        return self

    # -- comparing --------------------------------------------------------------------------

    def has(self, gtid: str) -> bool:
        """Whether the transaction `gtid` is at or below this position."""
        m = _MARIADB_GTID.match(gtid)
        if m:
            last = self.domains.get(int(m[1]))
            return last is not None and int(m[3]) <= last[1]
        uuid, _, n = gtid.rpartition(":")
        return any(lo <= int(n) <= hi for lo, hi in self.sets.get(_uuid(uuid), ()))

    def lacks(self, other: "GtidPosition") -> list[str]:
        """What of `other` this position does not reach, in words ([] when it covers other):
        MariaDB per domain (absent, or a lower seq), MySQL per uuid the intervals missing."""
        out = []
        for d, (s, n) in sorted(other.domains.items()):
            mine = self.domains.get(d)
            if mine is None:
                out.append(f"domain {d} (up to {d}-{s}-{n}) is absent")
            elif mine[1] < n:
                out.append(f"domain {d} is at {d}-{mine[0]}-{mine[1]}, below {d}-{s}-{n}")
        for u, ivs in sorted(other.sets.items()):
            missing = _minus(ivs, self.sets.get(u, []))
            if missing:
                out.append(f"{u}:" + ":".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in missing))
        return out

    def covers(self, other: "GtidPosition") -> bool:
        return not self.lacks(other)


def _minus(ivs: list[tuple[int, int]], minus: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The intervals of `ivs` not in `minus` (both sorted, disjoint)."""
    out = []
    for lo, hi in ivs:
        for a, b in minus:
            if b < lo or a > hi:
                continue
            if a > lo:
                out.append((lo, a - 1))
            lo = b + 1
            if lo > hi:
                break
        if lo <= hi:
            out.append((lo, hi))
    return out


def after(position: str | None, gtid: str | None) -> str | None:
    """The position after the transaction `gtid` that follows `position` (None: unknown)."""
    if position is None:
        return None
    return position if is_anonymous(gtid) else str(GtidPosition.parse(position).add(gtid))


def is_anonymous(gtid: str | None) -> bool:
    """MySQL's anonymous transactions (gtid_mode OFF) carry no GTID of their own."""
    return not gtid or gtid.startswith("00000000-0000-0000-0000-000000000000")


def gtid_of_event(kind: str, info: str) -> str | None:
    """The GTID a `SHOW BINLOG EVENTS` row of a transaction's GTID event names (MariaDB's `Gtid`,
    'BEGIN GTID 0-1-42'; MySQL's `Gtid`, "SET @@SESSION.GTID_NEXT= 'uuid:42'"), None for any
    other row and for MySQL's anonymous transactions."""
    if kind != "Gtid":
        return None
    m = re.search(r"GTID (\d+-\d+-\d+)", info) or re.search(r"GTID_NEXT\s*=\s*'([0-9a-fA-F-]{36}:\d+)'", info)
    return m[1] if m else None


PREVIOUS_GTIDS = ("Gtid_list", "Previous_gtids")  # the event at a binlog file's start naming its position
