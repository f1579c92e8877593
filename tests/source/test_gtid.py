"""The GTID position type: MariaDB's per-domain positions and MySQL's GTID sets, one code path."""

from __future__ import annotations

import pytest

from cdcflow.source.gtid import MARIADB, MYSQL, GtidPosition, after, gtid_of_event

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
U2 = "b5c2a9a0-0000-11ef-8000-000000000002"


def test_mariadb_parse_format_and_advance():
    g = GtidPosition.parse("1-2-7, 0-1-42")
    assert g.flavor == MARIADB and str(g) == "0-1-42,1-2-7"
    assert str(g.copy().add("0-3-43")) == "0-3-43,1-2-7"  # the domain's last GTID, whatever server wrote it
    # GTID_LIST's text: several servers of one domain, the highest seq is the position
    assert str(GtidPosition.parse("[0-1-42,0-2-50,1-1-3]")) == "0-2-50,1-1-3"
    assert str(GtidPosition.parse("[]")) == "" and not GtidPosition.parse("[]")


def test_mariadb_has_covers_lacks():
    g = GtidPosition.parse("0-1-42,1-2-7")
    assert g.has("0-1-42") and g.has("0-9-1") and not g.has("0-1-43") and not g.has("2-1-1")
    assert g.covers(GtidPosition.parse("0-1-40")) and g.covers(GtidPosition.parse("0-1-42,1-2-7"))
    assert g.lacks(GtidPosition.parse("0-1-43,2-1-1")) == ["domain 0 is at 0-1-42, below 0-1-43",
                                                           "domain 2 (up to 2-1-1) is absent"]


def test_mysql_sets():
    g = GtidPosition.parse(f"{U2}:1-3,\n{U1.upper()}:1-5:7-9")
    assert g.flavor == MYSQL and str(g) == f"{U1}:1-5:7-9,{U2}:1-3"
    g.add(f"{U1}:6")  # fills the gap: one interval
    assert str(g) == f"{U1}:1-9,{U2}:1-3"
    g.add(f"{U1}:10").add(f"{U1}:12")
    assert str(g) == f"{U1}:1-10:12,{U2}:1-3"
    assert g.has(f"{U1}:12") and not g.has(f"{U1}:11") and not g.has(f"{U2}:4")
    assert g.covers(GtidPosition.parse(f"{U1}:2-8"))
    assert g.lacks(GtidPosition.parse(f"{U1}:9-14,{U2}:1-5")) == [f"{U1}:11:13-14", f"{U2}:4-5"]
    assert str(GtidPosition.parse(f"{U1}:1-3").then(GtidPosition.parse(f"{U1}:4-6:9"))) == f"{U1}:1-6:9"


def test_mysql_sets_read_from_a_binlog_start_at_one():
    g = GtidPosition.parse(f"{U1}:50-100:120,{U2}:3")
    assert str(g.from_first()) == f"{U1}:1-100:120,{U2}:1-3"
    assert str(GtidPosition.parse("0-1-5").from_first()) == "0-1-5"  # MariaDB's positions have no sets


def test_then_and_after():
    assert str(GtidPosition.parse("0-1-5,1-1-2").then(GtidPosition.parse("0-2-9"))) == "0-2-9,1-1-2"
    assert after("0-1-5", "0-1-6") == "0-1-6"
    assert after(None, "0-1-6") is None  # unknown stays unknown
    assert after(f"{U1}:1-5", "00000000-0000-0000-0000-000000000000:0") == f"{U1}:1-5"  # anonymous


def test_refuses_what_is_no_gtid():
    for text in ("0-1", "nope", f"{U1}:a-b", f"{U1}:tag:1-3", f"0-1-2,{U1}:1"):
        with pytest.raises(ValueError):
            GtidPosition.parse(text)


def test_gtid_of_binlog_event_rows():
    assert gtid_of_event("Gtid", "BEGIN GTID 0-11-14") == "0-11-14"
    assert gtid_of_event("Gtid", "GTID 0-11-13") == "0-11-13"
    assert gtid_of_event("Gtid", f"SET @@SESSION.GTID_NEXT= '{U1}:42'") == f"{U1}:42"
    assert gtid_of_event("Gtid", "SET @@SESSION.GTID_NEXT= 'ANONYMOUS'") is None
    assert gtid_of_event("Query", "BEGIN") is None
