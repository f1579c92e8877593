"""stages.pull_keys: the key texts pull writes beside each change's images are what apply
computed before pull wrote them (sink.compaction.keyed_changes, folding by sink.collation_key):
a real binlog window over a key of every column type and of every kind of collation, keyed by
the tracked schema as the window's DDLs leave it (a DDL that changes a key mid-window too)."""

from __future__ import annotations

from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

from cdcflow.core import tso
from cdcflow.config.keys import ChangefeedConfig
from cdcflow.core.row_codec import decode_image
from cdcflow.core.uri import parse_source_uri
from cdcflow.ddl.tracker import SchemaTracker
from cdcflow.sink.collation_key import KeyFolder, comparison
from cdcflow.sink.compaction import keyed_changes
from cdcflow.sink.connection import connect
from cdcflow.sink.downstream_tables import catalogue_key
from cdcflow.sink.table_keys import by_table, keyed_by_pull
from cdcflow.source.binlog import head_position
from cdcflow.stages import contracts
from cdcflow.stages.engine import Engine
from cdcflow.stages.pull import read_sequentially
from cdcflow.store.events import RunFolder

DB = "pullkeys"
_S = ["'a'", "'A'", "'a '", "'é'", "'E'", "'e'", "'é '", "'ß'", "'ss'", "'b'"]  # spellings that fold together under some collations
# (table, the key column's type, values it takes in turn): every kind of key column and collation
KEY_KINDS = [
    ("t_int", "INT", ["1", "-7", "2147483647"]),
    ("t_ubig", "BIGINT UNSIGNED", ["0", "18446744073709551615", "5"]),
    ("t_tiny", "TINYINT", ["-128", "127", "0"]),
    ("t_dec", "DECIMAL(20,6)", ["1.5", "-0.000001", "99999999999999.999999"]),
    ("t_dbl", "DOUBLE", ["1.5", "-2e300", "0"]),
    ("t_flt", "FLOAT", ["1.25", "-3.5", "0"]),
    ("t_date", "DATE", ["'2024-02-29'", "'1000-01-01'", "'9999-12-31'"]),
    ("t_dtm", "DATETIME(6)", ["'2024-02-29 01:02:03.000004'", "'1970-01-01 00:00:00'", "'9999-12-31 23:59:59.999999'"]),
    ("t_ts", "TIMESTAMP(3)", ["'2024-02-29 01:02:03.456'", "'2038-01-19 03:14:07'", "'1970-01-02 00:00:00'"]),
    ("t_time", "TIME(2)", ["'-838:59:59'", "'01:02:03.45'", "'838:59:59'"]),
    ("t_year", "YEAR", ["2024", "1901", "2155"]),
    ("t_bit", "BIT(12)", ["b'101'", "b'111111111111'", "b'0'"]),
    ("t_enum", "ENUM('a','B','c')", ["'a'", "'B'", "'c'"]),
    ("t_set", "SET('x','Y','z')", ["'x'", "'x,Y'", "''"]),
    ("t_binary", "BINARY(4)", ["x'00'", "x'61'", "x'41000000'"]),
    ("t_varbinary", "VARBINARY(8)", ["'a'", "'A'", "'a '"]),
    ("t_uuid", "UUID", ["'00000000-0000-0000-0000-000000000001'", "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
                        "'123e4567-e89b-12d3-a456-426614174000'"]),
    ("t_inet6", "INET6", ["'::1'", "'2001:db8::ff00:42:8329'", "'::ffff:192.0.2.1'"]),
    ("t_binchar", "VARCHAR(8) CHARACTER SET binary", _S),
    ("t_ci", "VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", _S),
    ("t_uca", "VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci", _S),
    ("t_bin", "VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", _S),
    ("t_nopad_ci", "VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_nopad_ci", _S),
    ("t_nopad_bin", "VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin", _S),
    ("t_char_ci", "CHAR(6) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci", _S),
    ("t_latin1", "VARCHAR(8) CHARACTER SET latin1", _S),  # no COLLATE: the downstream's default says
    ("t_latin1_bin", "VARCHAR(8) CHARACTER SET latin1 COLLATE latin1_bin", _S),
    ("t_latin1_de", "VARCHAR(8) CHARACTER SET latin1 COLLATE latin1_german2_ci", _S),
]
# a primary key and other unique keys: pull writes each change's conflict keys (sink.conflict_keys)
UNIQ = "CREATE TABLE t_uniq (id INT PRIMARY KEY, email VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL, " \
       "code INT NULL, UNIQUE KEY ux_email (email), UNIQUE KEY ux_code (code))"
UNIQ_CHANGES = ["INSERT INTO t_uniq VALUES (1, 'a@x', NULL), (2, 'b@x', 5), (3, 'c@x', 7), (6, 'f@x', 9)",
                "UPDATE t_uniq SET email = 'A@x ' WHERE id = 1",  # the same value as ux_email compares it
                "UPDATE t_uniq SET code = NULL WHERE id = 2", "DELETE FROM t_uniq WHERE id = 1",
                # 4 takes the email 1 held, 'C@X' the one 3 held (as ux_email compares them) and 3
                # takes 5, which 2 held: later in the window, and another key's each time
                "INSERT INTO t_uniq VALUES (4, 'a@x', NULL)", "UPDATE t_uniq SET email = 'd@x', code = 5 WHERE id = 3",
                "INSERT INTO t_uniq VALUES (5, 'C@X', NULL)"]
# the same table where no two keys share a value: nothing tangled
APART = "CREATE TABLE t_apart (id INT PRIMARY KEY, u INT, UNIQUE KEY (u))"
APART_CHANGES = ["INSERT INTO t_apart VALUES (1, 1), (2, 2)", "UPDATE t_apart SET u = 3 WHERE id = 1",
                 "UPDATE t_apart SET u = 1 WHERE id = 1", "DELETE FROM t_apart WHERE id = 2",
                 "INSERT INTO t_apart VALUES (3, NULL), (4, NULL)"]  # NULLs are no shared value
MULTI = "CREATE TABLE t_multi (a VARCHAR(8) COLLATE utf8mb4_general_ci NOT NULL, b INT NOT NULL, " \
        "c VARCHAR(4) CHARACTER SET latin1 NOT NULL, v INT, UNIQUE KEY (a, b, c))"  # no primary key: the unique one


def _changes(table: str, values: list[str]) -> list[str]:
    """Each value inserted, updated to the next (a key change, or a respelling of the same key),
    and deleted."""
    out = []
    for i, v in enumerate(values):
        out += [f"INSERT INTO {table} VALUES ({v}, {i})", f"UPDATE {table} SET v = v + 100 WHERE k = {v}"]
        nxt = values[(i + 1) % len(values)]
        out += [f"UPDATE IGNORE {table} SET k = {nxt} WHERE k = {v}", f"DELETE FROM {table}"]
    return out


@pytest.fixture(scope="module")
def pulled(mariadb_pair, tmp_path_factory):
    """The window pulled with key texts: (its row events, its spans, the downstream's parameters)."""
    up, down = mariadb_pair
    ddls = [f"CREATE TABLE {t} (k {ty} NOT NULL PRIMARY KEY, v INT)" for t, ty, _ in KEY_KINDS] + [MULTI, UNIQ, APART]
    # the downstream holds the tables as they end: its catalogue gives the collations no clause named
    down.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}")
    down.execute(*ddls, "CREATE TABLE rekeyed (id INT NOT NULL, v VARCHAR(8) COLLATE utf8mb4_general_ci NOT NULL, "
                        "PRIMARY KEY (v))", database=DB)
    uri = parse_source_uri(up.uri)
    conn = uri.connect()
    start = head_position(conn)
    up.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}")
    up.execute("SET SESSION sql_mode = ''", *ddls, database=DB)
    for t, _ty, values in KEY_KINDS:
        up.execute("SET SESSION sql_mode = ''", *_changes(t, values), database=DB)
    up.execute("INSERT INTO t_multi VALUES ('a', 1, 'x', 0), ('b', 1, 'ß', 0)",
               "UPDATE t_multi SET a = 'A', c = 'X ' WHERE b = 1 AND a = 'a'",
               "UPDATE t_multi SET b = 2 WHERE a = 'b'", "DELETE FROM t_multi WHERE a = 'A'", database=DB)
    up.execute(*UNIQ_CHANGES, *APART_CHANGES, database=DB)
    # a DDL inside the window changes the key: the changes after it are keyed by the new one
    up.execute("CREATE TABLE rekeyed (id INT PRIMARY KEY, v VARCHAR(8) COLLATE utf8mb4_general_ci NOT NULL)",
               "INSERT INTO rekeyed VALUES (1, 'a'), (2, 'b')", "UPDATE rekeyed SET v = 'A' WHERE id = 1",
               "ALTER TABLE rekeyed DROP PRIMARY KEY, ADD PRIMARY KEY (v)",
               "UPDATE rekeyed SET id = 3 WHERE v = 'a'", "UPDATE rekeyed SET v = 'B ' WHERE id = 2", database=DB)
    head = head_position(conn)
    conn.close()
    sink = {"host": HOST, "port": down.port, "user": ROOT_USER, "password": ROOT_PASSWORD}
    prev_ts = tso.compose(1_000_000)
    folder = RunFolder(str(tmp_path_factory.mktemp("pull-keys")), "pk-feed", "r1")
    cfg = ChangefeedConfig()
    cycle = SimpleNamespace(source=uri, config=cfg, engine=Engine.of(cfg), changefeed_id="pk-feed", folder=folder)
    window = contracts.Window(start_ts=prev_ts, start_pos=start, head=head, head_tso=prev_ts)
    read_sequentially(cycle, window, 4343, {"tracker": SchemaTracker(), "sink": sink, "sql_mode": None})
    events = [e for e in pq.read_table(folder.path("raw")).to_pylist() if e["op"] != "ddl" and e["schema"] == DB]
    return events, contracts.KEY_SPANS.read(folder), sink


def _apply_keys(events: list[dict], sink: dict, table: str, key: list[str], collations: dict) -> list[tuple]:
    """(before's key, after's) of each change as apply computes them (keyed_changes)."""
    name = f"{DB}.{table}"
    cols = {c: [e[c] for e in events] for c in ("schema", "table", "commit_ts", "seq", "op", "before", "after")}
    keyed = [r for b in keyed_changes(iter([pa.RecordBatch.from_pydict(cols)]), {name: key},
                                      KeyFolder({name: collations}, sink)) for r in b.to_pylist()]
    out, rows = [], iter(keyed)
    for e in events:
        if e["op"] == "insert":
            out.append((None, next(rows)["key"]))
        elif e["op"] == "delete":
            out.append((next(rows)["key"], None))
        else:
            r = next(rows)
            out.append((r["key"], next(rows)["key"]) if r["sub"] == 0 else (r["key"], r["key"]))
    return out


@pytest.mark.parametrize("table", [t for t, _, _ in KEY_KINDS] + ["t_multi"])
def test_pulls_key_texts_are_what_apply_computes(pulled, table):
    events, spans, sink = pulled
    mine = [e for e in events if e["table"] == table]
    conn = connect(sink)
    try:
        key, collations = catalogue_key(conn, DB, table)
    finally:
        conn.close()
    assert mine and key
    # keyed by the key apply writes by, each column compared as the downstream's collation compares
    (span,) = [s for s in spans if s.table == table]
    assert span.key == key and keyed_by_pull(by_table(spans), (DB, table), 0, 2 ** 62, key, span.collations)
    for c in key:
        down = collations.get(c)
        assert comparison(span.collations.get(c)) == comparison(down)
        assert span.collations.get(c) == down or not comparison(down)[1]  # a weighed one: by the same name
    assert [(e["before_key"], e["after_key"]) for e in mine] == _apply_keys(mine, sink, table, key, collations)


@pytest.mark.parametrize("table, same, different", [
    ("t_ci", [("a", "A"), ("a", "a "), ("e", "é")], [("a", "b")]),
    ("t_uca", [("a", "A"), ("ss", "ß")], [("a", "é ")]),
    ("t_bin", [("a", "a ")], [("a", "A"), ("e", "é")]),
    ("t_nopad_ci", [("a", "A")], [("a", "a ")]),
    ("t_nopad_bin", [], [("a", "a "), ("a", "A")]),
    ("t_latin1", [("a", "A"), ("a", "a ")], [("a", "b")]),
    ("t_latin1_bin", [("a", "a ")], [("a", "A")]),
    ("t_binchar", [], [("a", "a "), ("a", "A")]),
])
def test_a_key_folds_as_its_collation_compares(pulled, table, same, different):
    """The texts say what the collation says: equal for spellings it takes as one key (case,
    accents, trailing spaces under PAD SPACE), different where it tells them apart."""
    events, _spans, _sink = pulled
    texts = {}
    for e in events:
        if e["table"] == table:
            for img, k in ((e["before"], e["before_key"]), (e["after"], e["after_key"])):
                if img is not None:
                    v = decode_image(img)["k"]
                    texts[v.decode() if isinstance(v, bytes) else v] = k
    for a, b in same:
        assert texts[a] == texts[b], (a, b)
    for a, b in different:
        assert texts[a] != texts[b], (a, b)


def test_a_ddl_that_changes_the_key_changes_the_key_of_the_changes_after_it(pulled):
    events, spans, _sink = pulled
    mine = [(s.key, s.collations) for s in spans if s.table == "rekeyed"]
    assert mine == [(["id"], {}), (["v"], {"v": "utf8mb4_general_ci"})]
    first, second = [s for s in spans if s.table == "rekeyed"]
    assert first.last_ts < second.first_ts
    after = [e for e in events if e["table"] == "rekeyed" and e["commit_ts"] >= second.first_ts]
    # the update of id keeps its key v ('A' as the collation weighs it); 'b' -> 'B ' is the same key too
    assert [e["op"] for e in after] == ["update", "update"]
    assert all(e["before_key"] == e["after_key"] and e["before_key"].startswith('[{"w":') for e in after)
    spans_by = by_table(spans)
    assert keyed_by_pull(spans_by, (DB, "rekeyed"), second.first_ts - 1, second.last_ts, ["v"],
                         {"v": "utf8mb4_general_ci"})
    # a segment over both keys, or one apply writes by another key: apply keys it itself
    assert not keyed_by_pull(spans_by, (DB, "rekeyed"), 0, second.last_ts, ["v"], {"v": "utf8mb4_general_ci"})
    assert not keyed_by_pull(spans_by, (DB, "rekeyed"), 0, first.last_ts, ["v"], {"v": "utf8mb4_general_ci"})
    assert not keyed_by_pull(None, (DB, "rekeyed"), 0, first.last_ts, ["id"], {})  # an old window: no spans


def test_only_the_tables_the_filter_passes_are_keyed(pulled):
    """A filtered-out table's rows never reach apply: pull asks no key of it (nor the
    downstream's catalogue) and writes no texts or spans for it."""
    from cdcflow.core.event import Event
    from cdcflow.stages.pull_keys import KeyStamper

    events, _spans, sink = pulled
    fields = set(Event.__dataclass_fields__)
    mine = [Event(**{k: v for k, v in e.items() if k in fields and k not in ("before_key", "after_key")})
            for e in events if e["table"] in ("t_int", "t_ci")]
    stamper = KeyStamper(SchemaTracker(), sink, None, ((f"{DB}.t_int",), False))
    out: list[Event] = []
    add = stamper.wrap(out.append)
    for ev in mine:
        add(ev)
    spans = stamper.close()
    assert len(out) == len(mine) and [s.table for s in spans] == ["t_int"]
    assert all(e.after_key or e.before_key for e in out if e.table == "t_int")
    assert all(e.after_key is None and e.before_key is None for e in out if e.table == "t_ci")


def test_the_keys_that_share_another_unique_keys_value_in_the_window_are_tangled(pulled):
    """The spans of a table with other unique keys list the keys whose changes share a value of
    one with another key's anywhere in the window (folded as ux_email compares it; a NULL is no
    value): 1 and 4 share 'a@x', 3 and 5 'c@x', 2 and 3 the code 5; 6 of t_uniq, and every key
    of t_apart, where values move but never between keys, are not."""
    _events, spans, _sink = pulled
    assert [s.tangled for s in spans if s.table == "t_uniq"] == [["[1]", "[2]", "[3]", "[4]", "[5]"]]
    assert [s.tangled for s in spans if s.table == "t_apart"] == [[]]
    assert not any(s.tangled or s.all_tangled for s in spans if s.table not in ("t_uniq",))
