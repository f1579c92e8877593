"""`cdcflow changefeed verify` end to end through the CLI against the MariaDB pair: equal
after cycles; rows changed by hand downstream named by key with both sides' values; NULLs,
floats, decimals, TIMESTAMPs and a case-insensitive key; a keyless table as a multiset;
column definitions; the fix SQL round trip; differences found inside large chunks (cut down to
their rows) named exactly as `pt-table-sync --print` names them; a live upstream's rows not
yet applied."""

from __future__ import annotations

import json

import pytest
from e2e_helpers import cli_run, create_changefeed, query

from cdcflow import cli
from cdcflow.verify import live
from cdcflow_devtools import pt_table_sync

pytestmark = pytest.mark.e2e

S = "vfy"
CONFIG = f"force-replicate = true\n[filter]\nrules = ['{S}.*', '!{S}.skipped']\n"
TABLES = [
    f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(20), n INT NULL, f FLOAT, g DOUBLE, "
    "d DECIMAL(10,2), ts TIMESTAMP(6) NULL, b VARBINARY(8))",
    f"CREATE TABLE {S}.c (code VARCHAR(10) COLLATE utf8mb4_general_ci NOT NULL, w INT, UNIQUE KEY (code))",
    f"CREATE TABLE {S}.k (a INT, s VARCHAR(10))",
    f"CREATE TABLE {S}.skipped (id INT PRIMARY KEY)",
]
ROWS = [
    f"INSERT INTO {S}.t VALUES " + ", ".join(
        f"({i}, {'NULL' if i % 4 == 0 else repr('v,' + str(i))}, {'NULL' if i % 3 == 0 else i}, {i}.1, 0.1 + 0.{i}, "
        f"{i}.50, '2024-0{1 + i % 9}-01 12:00:00.{i:06d}', {'NULL' if i % 5 == 0 else f'X{chr(39)}0{i % 10}ff{chr(39)}'})"
        for i in range(1, 12)),
    f"INSERT INTO {S}.c VALUES ('abc', 1), ('Zeta', 2), ('été', 3)",
    f"INSERT INTO {S}.k VALUES (1, 'x'), (1, 'x'), (1, 'x'), (2, NULL), (NULL, NULL)",
]


def verify(capsys, changefeed_id: str, *args: str) -> tuple[int, dict, str]:
    capsys.readouterr()
    rc = cli.main(["changefeed", "verify", "-c", changefeed_id, *args])
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if out.out.strip() else {}), out.err


def apply_fix(down, path) -> list[str]:
    """Run the fix-SQL file on the downstream, one statement per line, as a client would."""
    statements = [line for line in path.read_text().splitlines() if line and not line.startswith("--")]
    with down.connect() as conn, conn.cursor() as cur:
        for s in statements:
            cur.execute(s)
    return statements


@pytest.fixture
def feed(mariadb_pair, spark, cdcflow_home, capsys):
    """A changefeed of schema vfy, caught up: (up, down, changefeed_id)."""
    up, down = mariadb_pair
    for db in (up, down):
        db.execute(f"DROP DATABASE IF EXISTS {S}")
    create_changefeed(capsys, up, down, "vfy", CONFIG)
    up.execute(f"CREATE DATABASE {S}", *TABLES, *ROWS)
    rc, err = cli_run(capsys, "vfy")
    assert rc == 0, err
    return up, down, "vfy"


def _keys(result) -> dict:
    return {(d["table"], json.dumps(d["key"])): d["kind"] for d in result["differences"]}


def test_equal_then_three_rows_changed_by_hand_then_fixed(feed, capsys, tmp_path):
    up, down, changefeed_id = feed
    rc, result, err = verify(capsys, changefeed_id, "--chunk-size", "3")
    assert rc == 0 and result["status"] == "equal", err
    assert result["tables_checked"] == 3  # the filter leaves vfy.skipped out
    assert {t["table"]: t["chunks"] for t in result["tables"]} == {f"{S}.t": 4, f"{S}.c": 2, f"{S}.k": 1}
    assert result["rows_compared"] == 11 + 3 + 5  # each row once, not once per side
    assert "3 table(s), 7 chunk(s), 19 row(s) compared" in err, err

    down.execute(f"DELETE FROM {S}.t WHERE id = 2", f"UPDATE {S}.t SET v = 'changed' WHERE id = 7",
                 f"INSERT INTO {S}.t (id, v) VALUES (100, 'new')")
    fix = tmp_path / "fix.sql"
    rc, result, err = verify(capsys, changefeed_id, "--chunk-size", "3", "--fix-sql", str(fix))
    assert rc == 2 and result["status"] == "different", err
    assert _keys(result) == {(f"{S}.t", '{"id": "2"}'): "missing downstream",
                             (f"{S}.t", '{"id": "7"}'): "different",
                             (f"{S}.t", '{"id": "100"}'): "extra downstream"}
    changed = next(d for d in result["differences"] if d["kind"] == "different")
    assert changed["columns"] == ["v"]
    assert (changed["upstream"]["v"], changed["downstream"]["v"]) == ("v,7", "changed")
    extra = next(d for d in result["differences"] if d["kind"] == "extra downstream")
    assert extra["upstream"] is None and extra["downstream"]["v"] == "new"
    assert "3 difference(s)" in err and str(fix) in err

    last = query(capsys, changefeed_id)["cdcflow"]["last_verify"]
    assert last["status"] == "different" and len(last["differences"]) == 3

    assert len([s for s in apply_fix(down, fix) if not s.startswith("SET SESSION")]) == 3
    rc, result, err = verify(capsys, changefeed_id, "--chunk-size", "3")
    assert rc == 0 and result["status"] == "equal", err
    assert query(capsys, changefeed_id)["cdcflow"]["last_verify"]["status"] == "equal"


def test_nulls_floats_timestamps_collations_and_a_keyless_table(feed, capsys, tmp_path):
    up, down, changefeed_id = feed
    down.execute(
        f"UPDATE {S}.t SET n = 0 WHERE id = 3",             # NULL -> 0
        f"UPDATE {S}.t SET v = '' WHERE id = 4",            # NULL -> ''
        f"UPDATE {S}.t SET f = 5.2 WHERE id = 5",           # 5.1 -> 5.2 in a FLOAT
        f"UPDATE {S}.t SET g = g + 0.000001 WHERE id = 6",  # a DOUBLE's sixth decimal
        f"UPDATE {S}.t SET d = 8.51 WHERE id = 8",
        f"UPDATE {S}.t SET ts = ts + INTERVAL 1 MICROSECOND WHERE id = 9",
        f"UPDATE {S}.c SET code = 'ABC' WHERE code = 'abc'",  # the same key under _ci: one row differs
        f"DELETE FROM {S}.k WHERE a = 1 LIMIT 1",             # one of three equal rows
        f"INSERT INTO {S}.k VALUES (NULL, NULL)",             # a second all-NULL row
    )
    fix = tmp_path / "fix.sql"
    rc, result, err = verify(capsys, changefeed_id, "--fix-sql", str(fix))
    assert rc == 2, err
    got = {(d["table"], json.dumps(d["key"]), d["kind"], tuple(d.get("columns", ()))) for d in result["differences"]}
    assert got == {
        (f"{S}.t", '{"id": "3"}', "different", ("n",)),
        (f"{S}.t", '{"id": "4"}', "different", ("v",)),
        (f"{S}.t", '{"id": "5"}', "different", ("f",)),
        (f"{S}.t", '{"id": "6"}', "different", ("g",)),
        (f"{S}.t", '{"id": "8"}', "different", ("d",)),
        (f"{S}.t", '{"id": "9"}', "different", ("ts",)),
        (f"{S}.c", '{"code": "abc"}', "different", ("code",)),
        (f"{S}.k", '{"a": "1", "s": "x"}', "missing downstream", ()),
        (f"{S}.k", '{"a": null, "s": null}', "extra downstream", ()),
    }
    n3 = next(d for d in result["differences"] if d["key"] == {"id": "3"})
    assert (n3["upstream"]["n"], n3["downstream"]["n"]) == (None, "0")
    ts9 = next(d for d in result["differences"] if d["key"] == {"id": "9"})
    assert (ts9["upstream"]["ts"], ts9["downstream"]["ts"]) == ("2024-01-01 12:00:00.000009",
                                                                "2024-01-01 12:00:00.000010")

    apply_fix(down, fix)
    rc, result, err = verify(capsys, changefeed_id)
    assert rc == 0 and result["status"] == "equal", (err, result["differences"])
    assert down.query(f"SELECT code FROM {S}.c WHERE w = 1") == [("abc",)]
    assert down.query(f"SELECT COUNT(*) FROM {S}.k WHERE a = 1") == [(3,)]


def test_column_definitions_and_tables_are_compared(feed, capsys):
    up, down, changefeed_id = feed
    down.execute(f"ALTER TABLE {S}.t MODIFY d DECIMAL(12,2)", f"ALTER TABLE {S}.t DROP COLUMN b",
                 f"ALTER TABLE {S}.c ADD COLUMN extra INT", f"CREATE TABLE {S}.only_down (x INT)")
    rc, result, err = verify(capsys, changefeed_id)
    assert rc == 2, err
    assert {(p["table"], p["column"], p["problem"]) for p in result["column_problems"]} == {
        (f"{S}.t", "d", "different type"), (f"{S}.t", "b", "missing downstream"),
        (f"{S}.c", "extra", "extra downstream")}
    assert result["table_problems"] == [{"table": f"{S}.only_down", "problem": "extra downstream"}]
    assert result["differences"] == []  # the columns both sides have hold the same values

    rc, result, err = verify(capsys, changefeed_id, "--tables", f"{S}.k")
    assert rc == 0 and result["tables_checked"] == 1, err


def test_a_separator_inside_strings_charsets_json_and_blobs(feed, capsys):
    up, down, changefeed_id = feed
    up.execute(f"CREATE TABLE {S}.ty (id INT PRIMARY KEY, s VARCHAR(20), s2 VARCHAR(20), j JSON, bl BLOB)",
               f"INSERT INTO {S}.ty VALUES (1, 'a,b', 'c', '{{\"k\": [1, 2]}}', X'00FF2C'), "
               f"(2, 'été', NULL, NULL, ''), (3, '', 'x', '[]', NULL)")
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    down.execute(f"ALTER TABLE {S}.ty MODIFY s VARCHAR(20) CHARACTER SET latin1")  # the same text in latin1
    rc, result, err = verify(capsys, changefeed_id, "--tables", f"{S}.ty")
    assert rc == 0 and result["status"] == "equal", (err, result["differences"])

    # the same characters joined alike, a ',' moved from one column to the next: a difference
    down.execute(f"UPDATE {S}.ty SET s = 'a', s2 = 'b,c' WHERE id = 1", f"UPDATE {S}.ty SET bl = NULL WHERE id = 2",
                 f"UPDATE {S}.ty SET s = NULL WHERE id = 3")
    rc, result, err = verify(capsys, changefeed_id, "--tables", f"{S}.ty")
    assert rc == 2, err
    assert {(d["key"]["id"], tuple(d["columns"])) for d in result["differences"]} == {
        ("1", ("s", "s2")), ("2", ("bl",)), ("3", ("s",))}


# Tables large enough that a differing 1,000-row chunk is cut twice before rows are read
# (comparison.ROW_LEVEL_ROWS): even ids upstream, so rows only the downstream has fall between them.
LARGE = {f"{S}.big": ["id"], f"{S}.pair": ["a", "b"]}
LARGE_TABLES = [
    f"CREATE TABLE {S}.big (id INT PRIMARY KEY, v VARCHAR(40), d DECIMAL(12,3), at DATETIME(6), f DOUBLE)",
    f"CREATE TABLE {S}.pair (a INT NOT NULL, b VARCHAR(12) NOT NULL, w INT, PRIMARY KEY (a, b))",
    f"INSERT INTO {S}.big SELECT seq * 2, CONCAT('v,', seq), seq / 7, '2024-01-01' + INTERVAL seq SECOND, seq / 3 "
    "FROM seq_1_to_4000",
    f"INSERT INTO {S}.pair SELECT seq DIV 3 * 2, CONCAT('k', seq MOD 3), seq FROM seq_0_to_5999",
]
INJECTED = {  # (table, key as text forms) -> what verify must call it
    **{(f"{S}.big", (str(i),)): "different" for i in (2, 1000, 1002, 4444, 8000)},
    **{(f"{S}.big", (str(i),)): "missing downstream" for i in (4, 3000, 7998)},
    **{(f"{S}.big", (str(i),)): "extra downstream" for i in (-7, 1, 2001, 8001, 9999)},
    **{(f"{S}.pair", k): "different" for k in (("0", "k0"), ("1500", "k2"))},
    **{(f"{S}.pair", k): "missing downstream" for k in (("2000", "k1"),)},
    **{(f"{S}.pair", k): "extra downstream" for k in (("777", "k9"), ("3998", "k3"))},
}


def test_differences_in_large_chunks_are_the_rows_pt_table_sync_finds(feed, capsys, tmp_path):
    up, down, changefeed_id = feed
    up.execute(*LARGE_TABLES, database=S)  # the sequence engine's tables live in the current database
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    down.execute(
        f"UPDATE {S}.big SET v = 'changed' WHERE id IN (2, 1000)", f"UPDATE {S}.big SET d = d + 0.001 WHERE id = 1002",
        f"UPDATE {S}.big SET at = at + INTERVAL 1 MICROSECOND WHERE id = 4444",
        f"UPDATE {S}.big SET f = NULL WHERE id = 8000", f"DELETE FROM {S}.big WHERE id IN (4, 3000, 7998)",
        f"INSERT INTO {S}.big (id, v) VALUES (-7, 'x'), (1, 'y'), (2001, 'z'), (8001, NULL), (9999, 'w')",
        f"UPDATE {S}.pair SET w = -1 WHERE (a, b) IN ((0, 'k0'), (1500, 'k2'))",
        f"DELETE FROM {S}.pair WHERE a = 2000 AND b = 'k1'",
        f"INSERT INTO {S}.pair VALUES (777, 'k9', 0), (3998, 'k3', 0)")
    fix = tmp_path / "fix.sql"
    rc, result, err = verify(capsys, changefeed_id, "--tables", *LARGE, "--chunk-size", "1000", "--fix-sql", str(fix))
    assert rc == 2, err
    found = {(d["table"], tuple(d["key"][c] for c in LARGE[d["table"]])): d["kind"] for d in result["differences"]}
    assert found == INJECTED
    assert {t["table"]: t["chunks"] for t in result["tables"]} == {f"{S}.big": 5, f"{S}.pair": 7}

    printed = pt_table_sync.run(up.port, down.port, [S], list(LARGE))
    changes = pt_table_sync.parse(printed)
    # pt-table-sync 3.2.1 starts its first chunk at the source's smallest key: a row only the
    # destination has below it is not found (verify's first chunk is open-ended)
    below_min = (f"{S}.big", ("-7",))
    assert pt_table_sync.changed_keys(changes, LARGE) == set(INJECTED) - {below_min}
    assert len(changes) == len(INJECTED) - 1, printed

    apply_fix(down, fix)
    rc, result, err = verify(capsys, changefeed_id, "--tables", *LARGE, "--chunk-size", "1000")
    assert rc == 0 and result["status"] == "equal", (err, result["differences"])
    assert pt_table_sync.run(up.port, down.port, [S], list(LARGE)) == ""


def test_rows_the_changefeed_has_not_applied_yet(feed, capsys, monkeypatch):
    up, down, changefeed_id = feed
    up.execute(f"UPDATE {S}.t SET v = 'later' WHERE id = 1", f"INSERT INTO {S}.t (id) VALUES (50)")
    rc, result, err = verify(capsys, changefeed_id, "--wait", "0")
    assert rc == 3 and result["status"] == "not yet applied", err
    assert result["differences"] == [] and len(result["not_yet_applied"]) == 2
    assert "not applied yet" in err

    # a running changefeed: a cycle applies the rows while verify waits for its checkpoint
    ran = []

    def a_cycle_runs(seconds):
        if not ran:
            ran.append(cli_run(capsys, changefeed_id))

    monkeypatch.setattr(live, "_sleep", a_cycle_runs)
    rc, result, err = verify(capsys, changefeed_id, "--wait", "5m")
    assert ran and ran[0][0] == 0
    assert rc == 0 and result["status"] == "equal" and result["rechecks"] == 1, err


def test_rows_written_while_verify_runs_are_not_what_it_compares(feed, capsys, monkeypatch):
    """The upstream keeps writing while verify waits for the changefeed: the rows it found differing
    are compared again once applied, and rows that appear only later are not this verify's."""
    up, down, changefeed_id = feed
    up.execute(f"INSERT INTO {S}.t (id) VALUES (60)")  # not applied when verify starts
    later = iter(range(61, 70))

    def a_cycle_runs_then_a_row_comes(seconds):
        assert cli_run(capsys, changefeed_id)[0] == 0
        up.execute(f"INSERT INTO {S}.t (id) VALUES ({next(later)})")  # after the cycle: not yet applied

    monkeypatch.setattr(live, "_sleep", a_cycle_runs_then_a_row_comes)
    rc, result, err = verify(capsys, changefeed_id, "--wait", "5m")
    assert rc == 0 and result["status"] == "equal" and result["rechecks"] == 1, (err, result["differences"])
    assert up.query(f"SELECT COUNT(*) FROM {S}.t WHERE id > 60") == [(1,)]  # a row came while it ran
    assert cli_run(capsys, changefeed_id)[0] == 0


def test_an_unreachable_downstream_or_unknown_changefeed_is_one_line(feed, capsys):
    from cdcflow.config.spec_store import load_spec, save_spec
    from cdcflow_devtools.mariadb import free_port

    up, down, changefeed_id = feed
    spec = load_spec(changefeed_id)
    spec.sink_uri = spec.sink_uri.replace(f":{down.port}/", f":{free_port()}/")
    save_spec(spec)
    rc, result, err = verify(capsys, changefeed_id)
    assert rc == 1 and result == {}
    assert err.startswith(f"Error: changefeed {changefeed_id}: verify cannot reach the downstream") and err.count("\n") == 1
    assert "ErrDownstreamUnreachable" not in err and "start the downstream" in err
    rc, result, err = verify(capsys, "no-such-feed")
    assert rc == 1 and err.count("\n") == 1 and "no-such-feed" in err
