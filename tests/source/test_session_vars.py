"""The upstream session a DDL query event recorded, as the downstream sets it."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

from cdcflow.source.session_vars import SessionVars


class Upstream(SessionVars):
    """SessionVars with the upstream's answers given."""

    def __init__(self, collations=None, local=None):
        super().__init__(uri=None)
        self.asked = []
        self.answers = {"COLLATION": collations or [], "FROM_UNIXTIME": [(local,)]}

    def _cursor(self):
        outer = self

        class Cursor:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def execute(self, sql, args=None):
                outer.asked.append(sql)
                self.rows = next((rows for k, rows in outer.answers.items() if k in sql), [])

            def fetchall(self):
                return self.rows

            def fetchone(self):
                return self.rows[0]

        return Cursor()


def event(**status):
    return SimpleNamespace(timestamp=1_700_000_000, **status)


def test_time_with_microseconds_from_either_server():
    assert Upstream().fields(event(hrnow=123456))["ddl_time_us"] == 1_700_000_000_123_456  # MariaDB
    assert Upstream().fields(event(microseconds=7))["ddl_time_us"] == 1_700_000_000_000_007  # MySQL
    plain = Upstream()
    assert plain.fields(event()) == {"ddl_time_us": 1_700_000_000_000_000, "ddl_time_zone": None}
    assert plain.asked == []  # nothing to look up


def test_zone_and_collations_named_by_the_upstream():
    up = Upstream(collations=[(8, "latin1_swedish_ci"), (2304, "utf8mb4_uca1400_ai_ci"), (None, "x")])
    got = up.fields(event(time_zone=b"+05:00", character_set_client=33, collation_connection=2304,
                          collation_server=8))
    assert got["ddl_time_zone"] == "+05:00"
    assert (got["ddl_collation_connection"], got["ddl_collation_server"]) == ("utf8mb4_uca1400_ai_ci",
                                                                              "latin1_swedish_ci")
    up.fields(event(collation_connection=8, collation_server=8))
    assert sum("COLLATION" in q for q in up.asked) == 1  # asked once per read


def test_system_zone_becomes_the_upstreams_offset_then():
    east = Upstream(local=datetime(2023, 11, 15, 3, 43, 20))  # 1700000000 is 22:13:20 UTC
    assert east.fields(event(time_zone=b"SYSTEM"))["ddl_time_zone"] == "+05:30"
    west = Upstream(local=datetime(2023, 11, 14, 19, 13, 20))
    assert west.fields(event(time_zone=b"SYSTEM"))["ddl_time_zone"] == "-03:00"
