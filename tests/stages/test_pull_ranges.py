"""pull's parallel path gives exactly the events the sequential read gives: one real binlog
window (every column type, a DDL in the middle that changes a table between ranges, a
transaction larger than a range, a binlog file change) read both ways, every event compared,
through Spark tasks writing the event store."""

from __future__ import annotations

import dataclasses
from concurrent.futures import Future
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
from type_matrix import COLUMNS, ROWS

from cdcflow.core import tso
from cdcflow.config.keys import ChangefeedConfig
from cdcflow.core.uri import parse_source_uri
from cdcflow.source.binlog import BinlogReader, Position, head_position
from cdcflow.source.binlog_ranges import cuts, range_server_id, window_bytes
from cdcflow.stages import contracts, pull_ranges
from cdcflow.stages.engine import Engine
from cdcflow.store.events import FIELDS, IMAGE_BYTES, RunFolder

RANGES = 6


@pytest.fixture(scope="module")
def window(mariadb_pair):
    up, _ = mariadb_pair
    uri = parse_source_uri(up.uri)
    conn = uri.connect()
    start = head_position(conn, with_gtid=True)  # each range's DDLs and the end get the GTID position too
    up.execute("DROP DATABASE IF EXISTS pr", "CREATE DATABASE pr")
    up.execute("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'", "SET SESSION time_zone = '+05:30'",
               f"CREATE TABLE t ({COLUMNS})", *[f"INSERT INTO t VALUES {r}" for r in ROWS], database="pr")
    up.execute("CREATE TABLE k (id INT PRIMARY KEY, v VARCHAR(20))", database="pr")
    for i in range(20):
        up.execute(f"INSERT INTO k VALUES ({i}, 'v{i}')", database="pr")
    # statements in latin1 and gbk sessions: their bytes, not UTF-8, are in the binlog (the DDL's
    # text, MariaDB's Annotate_rows of the rows), which the cuts' probes read
    with up.connect() as c8, c8.cursor() as cur:
        for names, sql in (("latin1", "CREATE TABLE pr.l1 (id INT PRIMARY KEY, v VARCHAR(9) DEFAULT 'd\xe9j\xe0') "
                                      "CHARSET latin1"),
                           ("latin1", "INSERT INTO pr.l1 VALUES (1, 'gar\xe7on'), (2, 'na\xefve')"),
                           ("gbk", "INSERT INTO pr.k VALUES (20, '中文')"), ("gbk", "DELETE FROM pr.k WHERE id = 20")):
            cur.execute(f"SET NAMES {names}")
            cur.execute(sql.encode(names))
            c8.commit()
    # a transaction larger than a range: one insert of many big rows, then updates
    up.execute("CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)", database="pr")
    up.execute("BEGIN", "INSERT INTO big SELECT seq, REPEAT('x', 20000) FROM seq_1_to_300",
               "UPDATE big SET b = REPEAT('y', 100) WHERE id <= 50", "DELETE FROM k WHERE id < 5", "COMMIT",
               database="pr")
    up.execute("FLUSH BINARY LOGS")
    # the table changes between ranges: rows before and after the DDL decode by its new map
    up.execute("ALTER TABLE k ADD COLUMN w INT DEFAULT 7 FIRST", database="pr")
    for i in range(20, 40):
        up.execute(f"INSERT INTO k (id, v, w) VALUES ({i}, 'v{i}', {i})", database="pr")
    up.execute("UPDATE t SET vc = 'changed', j = '{\"x\": 1}' WHERE id IN (1, 3)", "DELETE FROM t WHERE id = 5",
               database="pr")
    # a mixed-engine transaction rolling back to a savepoint, then one rolled back whole
    up.execute("CREATE TABLE m (id INT PRIMARY KEY) ENGINE=MyISAM",
               "BEGIN", "INSERT INTO m VALUES (1)", "INSERT INTO k (id, v) VALUES (100, 'kept')", "SAVEPOINT s",
               "INSERT INTO k (id, v) VALUES (101, 'undone')", "ROLLBACK TO s", "COMMIT",
               "BEGIN", "INSERT INTO m VALUES (2)", "CREATE TEMPORARY TABLE tmp (x INT)",
               "INSERT INTO k (id, v) VALUES (102, 'undone')", "ROLLBACK", database="pr")
    head = head_position(conn)
    try:
        yield uri, conn, start, head
    finally:
        conn.close()


def _stored(e: dict) -> dict:
    """An event's fields as pull stores them: with its images' bytes beside them (store.events)."""
    return {**{f: e[f] for f in FIELDS},
            IMAGE_BYTES: sum(len((e[c] or "").encode()) for c in ("before", "after"))}


def sequential(uri, start, head, prev_ts, exact_head: bool = True):
    """The window read as a cycle reads it in one piece (its head the upstream's: exact)."""
    events = []
    reader = BinlogReader(uri, 4242, start, head, prev_ts=prev_ts, exact_head=exact_head)
    reader.read(events.append)
    return reader, [dataclasses.asdict(e) for e in events]


def transaction_starts(conn, start, head) -> list:
    """Every place a range may start, by reading every event header: the oracle `cuts`
    must agree with without reading them."""
    from cdcflow.source.binlog import available_logs

    from cdcflow.source.gtid_locate import events  # lazy: as available_logs

    out = []
    for name in [f for f in available_logs(conn) if start.file <= f <= head.file]:
        rows = list(events(conn, name, start.pos if name == start.file else 4))
        for (kind0, _p, end0, _i), (kind, at, _e, _i2) in zip(rows, rows[1:]):
            if name == head.file and at >= head.pos:
                break
            if kind == "Gtid" and kind0 in ("Xid", "Query") and end0 == at:
                out.append(Position(name, at))
    return out


@pytest.mark.parametrize("ranges", [2, 4, 6, 40])
def test_cuts_are_transaction_starts_near_even_shares(window, ranges):
    uri, conn, start, head = window
    starts = set(transaction_starts(conn, start, head))
    assert len(starts) > 40 and len({p.file for p in starts}) == 2
    found = cuts(conn, start, head, ranges)
    assert found and set(found) <= starts
    assert found == sorted(found, key=lambda p: (p.file, p.pos)) and len(set(found)) == len(found)
    assert len(found) <= ranges - 1
    total = window_bytes(conn, start, head)
    share = total / ranges
    # the one large transaction (about 6 MB of the window) cannot be cut: every other range
    # is within a share and a probe's error of its goal
    sizes = [window_bytes(conn, s, e) for s, e in zip([start, *found], [*found, head])]
    small = sorted(sizes)[:-1]
    assert all(s <= 2 * share for s in small), (sizes, share)


def test_a_transaction_start_is_found_across_probe_pages():
    from cdcflow.source import binlog_ranges as br

    page = br.PROBE_ROWS
    # a long transaction: a GTID, then row events across three pages, then its end and the next GTID
    events = [("Gtid", 100, 140)] + [("Write_rows_v1", 140 + i * 10, 150 + i * 10) for i in range(3 * page)]
    end = events[-1][2]
    events += [("Xid", end, end + 31), ("Gtid", end + 31, end + 70)]

    def pages(at):
        i = next(n for n, e in enumerate(events) if e[1] == at)
        return events[i:i + page]

    assert br._first_start(events[:page], pages, hi=10**9) == end + 31
    assert br._first_start(events[:page], pages, hi=end + 31) is None  # the window ends before it
    assert br._first_start([("Xid", 5, 36)], pages, hi=10**9) is None


def test_parallel_pull_writes_every_event_as_the_sequential_read(window, spark, tmp_path):
    uri, conn, start, head = window
    prev_ts = tso.compose(1_000_000)
    reader, expected = sequential(uri, start, head, prev_ts)
    assert {e["op"] for e in expected} == {"insert", "update", "delete", "ddl"}
    assert all(e["gtid_position"] for e in expected if e["op"] == "ddl") and reader.last_pos.gtid

    cfg = ChangefeedConfig(pull_parallelism=RANGES, pull_parallel_min_bytes=0, event_store=str(tmp_path))
    cycle = SimpleNamespace(source=uri, config=cfg, engine=Engine.of(cfg), changefeed_id="pr-feed", run_id="r1",
                            folder=RunFolder(str(tmp_path), "pr-feed", "r1"))
    win = contracts.Window(start_ts=prev_ts, start_pos=start, head=head, head_tso=prev_ts)
    assert pull_ranges.wanted(cycle, win)
    starts = pull_ranges.plan(cycle, win)
    # the large transaction cannot be cut: the shares inside it move to the next transaction
    # start, which here is in the next binlog file
    assert 2 <= len(starts) <= RANGES and len({p.file for p in starts}) == 2
    sizes = [window_bytes(conn, s, e) for s, e in zip(starts, [*starts[1:], head])]
    big = [e for e in expected if e["table"] == "big"]
    # the large transaction alone holds more bytes than the average range
    assert len(big) > 300 and sum(len(e["after"] or "") for e in big) > window_bytes(conn, start, head) / RANGES

    pulled, timing = pull_ranges.read(spark, cycle, win, 4242, starts)
    assert timing["range_events"] and sum(timing["range_events"]) == pulled.events

    got = pq.read_table(cycle.folder.path("raw")).to_pylist()
    key = lambda e: (e["commit_ts"], e["seq"], e["op"] == "ddl")  # noqa: E731
    assert len(got) == len(expected) == pulled.events
    assert sorted(got, key=key) == sorted((_stored(e) for e in expected), key=key)
    assert pulled.end_ts == reader.last_ts and pulled.transactions == reader.transactions
    assert pulled.end_pos == reader.last_pos and pulled.aborted_ts == sorted(reader.aborted_ts)
    assert pulled.rolled_back == reader.rolled_back and len(reader.rolled_back) == 1 and reader.aborted_ts
    assert not cycle.folder.exists(pull_ranges.RANGES_FOLDER)
    assert all(s > 0 for s in sizes)


def test_ranges_end_at_the_head_past_a_new_binlogs_header_as_the_sequential_read(mariadb_pair, tmp_path):
    """A window whose last transaction is followed by a new binlog's header alone (FLUSH BINARY
    LOGS, as after a restart): its last range ends at the head, as the sequential read does,
    so that the next window does not read the header again; a window bounded by
    max-window-bytes ends at its last transaction's end (its bound may fall inside an event)."""
    up, _ = mariadb_pair
    uri = parse_source_uri(up.uri)
    conn = uri.connect()
    try:
        start = head_position(conn, with_gtid=True)
        up.execute("DROP DATABASE IF EXISTS pr_header", "CREATE DATABASE pr_header",
                   "CREATE TABLE pr_header.t (id INT PRIMARY KEY, v VARCHAR(200))")
        for i in range(60):
            up.execute(f"INSERT INTO pr_header.t VALUES ({i}, REPEAT('v', 200))")
        last = head_position(conn)
        head = Position(*up.new_binlog())
    finally:
        conn.close()
    prev_ts = tso.compose(1_000_000)
    reader, _events = sequential(uri, start, head, prev_ts)
    assert (reader.last_pos.file, reader.last_pos.pos) == (head.file, head.pos)
    cfg = ChangefeedConfig(pull_parallelism=2, pull_parallel_min_bytes=0, event_store=str(tmp_path))
    for bounded, ends_at in ((False, head), (True, Position(head.file, 4))):
        cycle = SimpleNamespace(source=uri, config=cfg, engine=Engine.of(cfg), changefeed_id="pr-header",
                                run_id=f"r{bounded}", folder=RunFolder(str(tmp_path), "pr-header", f"r{bounded}"))
        win = contracts.Window(start_ts=prev_ts, start_pos=start, head=head, head_tso=prev_ts, bounded=bounded)
        starts = pull_ranges.plan(cycle, win)
        assert len(starts) == 2 and starts[1].key() < last.key()
        pulled, _timing = pull_ranges.read(None, cycle, win, 4242, starts)
        assert pulled.events == 3 + 60 and pulled.transactions == reader.transactions
        assert (pulled.end_pos.file, pulled.end_pos.pos) == (ends_at.file, ends_at.pos)
        if not bounded:
            assert pulled.end_pos == reader.last_pos


class Starting(Future):
    """A Spark session that is up once it has been asked `after` times whether it is."""

    def __init__(self, session, after: int):
        super().__init__()
        self.set_result(session)
        self.asked, self.after = 0, after

    def done(self) -> bool:
        self.asked += 1
        return self.asked > self.after


@pytest.mark.parametrize("after, remote, where", [(0, False, "embedded"), (10_000, False, ""),
                                                  (10_000, True, "embedded")],
                         ids=["embedded-up", "embedded-starting", "connect-starting"])
def test_the_ranges_run_where_the_session_can_take_them_at_once(window, spark, tmp_path, after, remote, where):
    """An embedded session already up takes the ranges as Spark tasks; one still starting
    leaves them to child processes of pull's, which do not wait for it; a Connect server's
    session is waited for (its tasks may run on other machines).  The same events, ts and
    Pulled record every way."""
    from cdcflow.stages.pull import read_window

    uri, conn, start, head = window
    prev_ts = tso.compose(1_000_000)
    reader, expected = sequential(uri, start, head, prev_ts)
    cfg = ChangefeedConfig(pull_parallelism=3, pull_parallel_min_bytes=0, event_store=str(tmp_path))
    cycle = SimpleNamespace(source=uri, config=cfg, engine=Engine.of(cfg), changefeed_id="pr-feed", run_id="r2",
                            folder=RunFolder(str(tmp_path), "pr-feed", "r2"))
    win = contracts.Window(start_ts=prev_ts, start_pos=start, head=head, head_tso=prev_ts)
    starting = Starting(spark, after)
    pulled, detail = read_window(pull_ranges.SparkLater(starting, elsewhere=remote), cycle, win, 4242)

    assert detail["spark"] == where
    assert detail["ranges"] > 1 and sum(detail["range_events"]) == pulled.events
    got = pq.read_table(cycle.folder.path("raw")).to_pylist()
    key = lambda e: (e["commit_ts"], e["seq"], e["op"] == "ddl")  # noqa: E731
    assert sorted(got, key=key) == sorted((_stored(e) for e in expected), key=key)
    assert (pulled.end_ts, pulled.transactions, pulled.events) == (reader.last_ts, reader.transactions, len(expected))
    assert pulled.end_pos == reader.last_pos and pulled.aborted_ts == sorted(reader.aborted_ts)
    assert pulled.rolled_back == reader.rolled_back and len(reader.rolled_back) == 1 and reader.aborted_ts
    assert not cycle.folder.exists(pull_ranges.RANGES_FOLDER)


def test_range_server_ids_never_repeat_within_a_changefeed_nor_take_a_default_id():
    ids = {range_server_id(1_000_123, i) for i in range(1024)}
    assert len(ids) == 1024 and min(ids) > 1_001_000_000 and max(ids) < 2**32
    with pytest.raises(ValueError):
        range_server_id(1_000_123, 1024)


def test_pull_parallelism_asks_for_the_cores_by_default_and_1_turns_it_off(monkeypatch):
    monkeypatch.setattr(pull_ranges.os, "cpu_count", lambda: 6)
    assert pull_ranges.ranges_asked(ChangefeedConfig()) == 6
    assert pull_ranges.ranges_asked(ChangefeedConfig(pull_parallelism=3)) == 3
    win = contracts.Window(start_ts=1, start_pos=Position("b.000001", 4), head=Position("b.000002", 4), head_tso=1)
    assert not pull_ranges.wanted(SimpleNamespace(config=ChangefeedConfig(pull_parallelism=1)), win)
    # an idle window, or one that stops at a target-ts, is read in one process whatever the config
    assert not pull_ranges.wanted(SimpleNamespace(config=ChangefeedConfig()),
                                  contracts.Window(start_ts=1, start_pos=win.start_pos, head=win.start_pos, head_tso=1))
    assert not pull_ranges.wanted(SimpleNamespace(config=ChangefeedConfig()),
                                  contracts.Window(start_ts=1, start_pos=win.start_pos, head=win.head, head_tso=1,
                                                   target_ts=5))
    # the window's size over two files from the spans prepare recorded: no connection (the cycle has no source)
    spans = [("b.000001", 4, 90), ("b.000002", 4, 30)]
    for least, wanted in ((112, True), (113, False)):
        assert pull_ranges.wanted(SimpleNamespace(config=ChangefeedConfig(pull_parallel_min_bytes=least)),
                                  contracts.Window(start_ts=1, start_pos=Position("b.000001", 4),
                                                   head=Position("b.000002", 30), head_tso=1, spans=spans)) == wanted


@pytest.mark.parametrize("engine, after", [("spark", 0), ("spark", 10_000), ("auto", 0)],
                         ids=["spark-up", "spark-starting", "auto"])
def test_a_cycle_with_pull_parallelism_reads_in_ranges_and_replicates(mariadb_pair, spark, cdcflow_home, capsys,
                                                                      monkeypatch, engine, after):
    """Through the CLI: a changefeed whose config turns the parallel path on replicates a
    window read in several ranges (every type, a DDL between them), the run says how many;
    on engine spark with its Spark session up at once (Spark tasks), or up only after pull is
    done (child processes); on auto, whose process reads this window whole, no session starts
    at all (child processes)."""
    from e2e_helpers import assert_consistent, cli_run, create_changefeed

    from cdcflow.launch import sessions
    from cdcflow.store import metastore

    started = []
    monkeypatch.setattr(sessions, "start_session", lambda *a, **kw: started.append(a) or Starting(spark, after))
    monkeypatch.delenv("CDCFLOW_ENGINE", raising=False)  # the config decides here

    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS prc", "CREATE DATABASE prc")
    create_changefeed(capsys, up, down, "prc-feed",
                      f"[cdcflow]\npull-parallelism = 4\npull-parallel-min-bytes = 0\nengine = '{engine}'\n")
    up.execute("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'", "SET SESSION time_zone = '+05:30'",
               f"CREATE TABLE t ({COLUMNS})", *[f"INSERT INTO t VALUES {r}" for r in ROWS], database="prc")
    up.execute("CREATE TABLE k (id INT PRIMARY KEY, v INT)", *[f"INSERT INTO k VALUES ({i}, {i})" for i in range(30)],
               "ALTER TABLE k ADD COLUMN w VARCHAR(5) DEFAULT 'x'",
               *[f"UPDATE k SET v = v + 1, w = 'y' WHERE id = {i}" for i in range(0, 30, 3)], database="prc")
    rc, err = cli_run(capsys, "prc-feed")
    assert rc == 0, err
    run = metastore.recent_runs("prc-feed", 1)[0]
    assert run.stats["pull"]["ranges"] > 1 and run.stats["pull"]["pulled"] > 40
    assert run.stats["pull"]["spark"] == ("embedded" if engine == "spark" and not after else "")
    assert bool(started) == (engine == "spark")
    assert_consistent(up, down, ["prc"])


def test_pull_parallelism_is_checked_in_the_config():
    from cdcflow.config.parsing import config_from_dict
    from cdcflow.core.errors import CdcflowError

    cfg = config_from_dict({"cdcflow": {"pull-parallelism": 8, "pull-parallel-min-bytes": 1024}})
    assert (cfg.pull_parallelism, cfg.pull_parallel_min_bytes) == (8, 1024)
    assert config_from_dict(cfg.to_dict()) == cfg
    with pytest.raises(CdcflowError, match="pull-parallelism"):
        config_from_dict({"cdcflow": {"pull-parallelism": 2000}})


def test_parallel_ranges_write_the_sequential_reads_key_texts_or_none(window, spark, tmp_path, mariadb_pair):
    """Each range follows the window's DDLs from its own start: where it knows the table's key it
    writes the texts the sequential read writes, and where it does not (a table an earlier range
    created) it writes none, and its spans say so, so apply keys those changes itself."""
    from cdcflow.ddl.tracker import SchemaTracker
    from cdcflow.stages.pull import read_sequentially
    from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

    uri, _conn, start, head = window
    prev_ts = tso.compose(1_000_000)
    sink = {"host": HOST, "port": mariadb_pair[1].port, "user": ROOT_USER, "password": ROOT_PASSWORD}
    read = {}
    for way, parallelism in (("sequential", 1), ("ranges", RANGES)):
        cfg = ChangefeedConfig(pull_parallelism=parallelism, pull_parallel_min_bytes=0, event_store=str(tmp_path))
        cycle = SimpleNamespace(source=uri, config=cfg, engine=Engine.of(cfg), changefeed_id="pr-feed", run_id=way,
                                folder=RunFolder(str(tmp_path), "pr-feed", way))
        win = contracts.Window(start_ts=prev_ts, start_pos=start, head=head, head_tso=prev_ts)
        keys = {"tracker": SchemaTracker(), "sink": sink, "sql_mode": None}
        if way == "sequential":
            read_sequentially(cycle, win, 4242, keys)
        else:
            pull_ranges.read(spark, cycle, win, 4242, pull_ranges.plan(cycle, win), keys)
        events = {(e["commit_ts"], e["seq"]): e for e in pq.read_table(cycle.folder.path("raw")).to_pylist()
                  if e["op"] != "ddl"}
        read[way] = events, contracts.KEY_SPANS.read(cycle.folder)
    (seq, seq_spans), (par, par_spans) = read["sequential"], read["ranges"]
    assert seq.keys() == par.keys() and all(s.key for s in seq_spans if s.table in ("k", "big"))
    texts = lambda e: (e["before_key"], e["after_key"])  # noqa: E731
    stamped = [at for at, e in par.items() if texts(e) != (None, None)]
    assert stamped and len(stamped) < len(par)  # the first range knows its tables; a later one not all
    assert all(texts(par[at]) == texts(seq[at]) for at in stamped)
    for s in par_spans:  # every change a span covers was keyed as it says: by the sequential read's key, or not
        mine = [e for at, e in par.items() if (e["schema"], e["table"]) == (s.schema, s.table)
                and s.first_ts <= at[0] <= s.last_ts]
        assert mine and all((texts(e) != (None, None)) == (s.key is not None) for e in mine)
    covered = {(s.schema, s.table, s.first_ts, s.last_ts) for s in seq_spans}
    assert all((e["schema"], e["table"]) in {(c[0], c[1]) for c in covered} for e in seq.values())


def test_a_unique_value_two_ranges_share_tangles_its_keys_as_the_sequential_read_does(mariadb_pair, spark,
                                                                                      tmp_path):
    """Key 1 gives up a unique value in the window's first transaction and key 2 takes it in its
    last, ranges apart: each range sees one of them only, and the driver, with every range's
    conflict-key pairs, lists both keys in every span of the table (sink.conflict_keys), as the
    sequential read does; key 3, whose value moves to a value no other key held, is not listed."""
    from cdcflow.ddl.classify import classify
    from cdcflow.ddl.tracker import SchemaTracker
    from cdcflow.stages.pull import read_sequentially
    from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

    up, down = mariadb_pair
    create = "CREATE TABLE sw (id INT PRIMARY KEY, u INT NOT NULL, UNIQUE KEY uu (u))"
    up.execute("DROP DATABASE IF EXISTS prt", "CREATE DATABASE prt")
    up.execute(create, "CREATE TABLE fill (id INT PRIMARY KEY, b LONGBLOB)",
               "INSERT INTO sw VALUES (1, 10), (2, 20), (3, 30)", database="prt")
    uri = parse_source_uri(up.uri)
    conn = uri.connect()
    start = head_position(conn)
    up.execute("UPDATE sw SET u = 11 WHERE id = 1", database="prt")
    for i in range(8):  # the ranges' bytes between them
        up.execute(f"INSERT INTO fill SELECT seq + {i * 40}, REPEAT('x', 20000) FROM seq_1_to_40",
                   "UPDATE sw SET u = u + 100 WHERE id = 3", database="prt")
    up.execute("UPDATE sw SET u = 10 WHERE id = 2", database="prt")
    head = head_position(conn)
    conn.close()
    sink = {"host": HOST, "port": down.port, "user": ROOT_USER, "password": ROOT_PASSWORD}
    prev_ts = tso.compose(1_000_000)
    spans = {}
    for way, parallelism in (("sequential", 1), ("ranges", 4)):
        tracker = SchemaTracker()
        tracker.apply(classify(create, "prt"), create, "", 1)
        cfg = ChangefeedConfig(pull_parallelism=parallelism, pull_parallel_min_bytes=0, event_store=str(tmp_path))
        cycle = SimpleNamespace(source=uri, config=cfg, engine=Engine.of(cfg), changefeed_id="prt-feed", run_id=way,
                                folder=RunFolder(str(tmp_path), "prt-feed", way))
        win = contracts.Window(start_ts=prev_ts, start_pos=start, head=head, head_tso=prev_ts)
        keys = {"tracker": tracker, "sink": sink, "sql_mode": None}
        if way == "sequential":
            read_sequentially(cycle, win, 4242, keys)
        else:
            starts = pull_ranges.plan(cycle, win)
            assert len(starts) == 4
            pull_ranges.read(spark, cycle, win, 4242, starts, keys)
        spans[way] = [s for s in contracts.KEY_SPANS.read(cycle.folder) if s.table == "sw"]
    assert len(spans["sequential"]) == 1 and len(spans["ranges"]) == 4  # each range saw some of sw's changes
    assert all(s.tangled == ["[1]", "[2]"] and not s.all_tangled for s in spans["sequential"] + spans["ranges"])
