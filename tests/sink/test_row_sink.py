"""sink.row_sink: one segment's row changes written to the real downstream, from Spark partitions
or from this process, by the tracked key or the downstream's, in commit order where no key or a
cascading foreign key asks for it; and a refusal placed in the segment."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

from cdcflow.core.arrow_rows import rows_batch
from cdcflow.core.errors import MYSQL_TXN_ERROR, TABLE_NOT_EXISTS, CdcflowError
from cdcflow.core.event import Event
from cdcflow.core.row_codec import encode_image
from cdcflow.core.sink_params import SinkOptions
from cdcflow.sink import connection
from cdcflow.sink import row_sink as row_sink_module
from cdcflow.sink.row_sink import KEY_TEXTS, ROW_COLUMNS, PartRows, RowSink
from cdcflow.sink.table_keys import by_table
from cdcflow.stages.contracts import KeySpan
from cdcflow.store.events import EVENT_SCHEMA, EVENT_SPARK_SCHEMA, FIELDS

DB = "rowsink"
TRACKED = {(DB, "k"): [(0, ["id"], True, {"id": None})]}  # the tracker's key of rowsink.k over the window


@pytest.fixture
def down(mariadb_pair):
    _, down = mariadb_pair
    down.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}",
                 f"CREATE TABLE {DB}.k (id INT PRIMARY KEY, v VARCHAR(5))",
                 f"CREATE TABLE {DB}.nk (a INT, b INT)",
                 f"CREATE TABLE {DB}.p (id INT PRIMARY KEY)",
                 f"CREATE TABLE {DB}.c (id INT PRIMARY KEY, pid INT, "
                 f"FOREIGN KEY (pid) REFERENCES {DB}.p (id) ON DELETE CASCADE)")
    return down


@pytest.fixture
def conn(down):
    c = connection.connect(args_of(down))
    yield c
    c.close()


def args_of(down) -> dict:
    return {"host": HOST, "port": down.port, "user": ROOT_USER, "password": ROOT_PASSWORD}


def row_sink(spark, conn, down, events=None, **kw) -> RowSink:
    # a marker of its own per sink: the marker table outlives the test's schema
    options = {"changefeed_id": "rs", "force_replicate": False, "marker": f"rs@{time.time():.6f}", "safe": True,
               "replay_until": 0,
               "event": lambda what, **f: (events if events is not None else []).append((what, f)), **kw}
    return RowSink(spark, conn, args_of(down), SinkOptions(worker_count=2), TRACKED, **options)


def changes(*rows) -> pa.Table:
    """(table, commit_ts, seq, op, before, after) as the event store holds them."""
    events = [Event(commit_ts=ts, seq=seq, schema=DB, table=t, op=op, before=encode_image(b), after=encode_image(a))
              for t, ts, seq, op, b, a in rows]
    return pa.Table.from_batches([rows_batch([tuple(getattr(e, f) for f in FIELDS) for e in events], EVENT_SCHEMA)])


def frame(spark, tmp_path, table: pa.Table):
    pq.write_table(table, tmp_path / "rows.parquet")
    return spark.read.schema(EVENT_SPARK_SCHEMA).parquet(str(tmp_path / "rows.parquet"))


KEYED = changes(("k", 10, 0, "insert", None, {"id": 1, "v": "a"}), ("k", 10, 1, "insert", None, {"id": 2, "v": "b"}),
                ("k", 10, 2, "insert", None, {"id": 3, "v": "c"}),
                ("k", 11, 0, "update", {"id": 2, "v": "b"}, {"id": 2, "v": "bb"}),
                ("k", 12, 0, "delete", {"id": 3, "v": "c"}, None),
                ("k", 30, 0, "insert", None, {"id": 9, "v": "late"}))  # above the segment's barrier


@pytest.mark.parametrize("where", ["spark", "one task", "driver"])
def test_a_segments_keyed_rows_land_as_their_final_images(spark, tmp_path, conn, down, where):
    # the driver gets the segment's rows in hand (apply's small segments); Spark reads the window's,
    # and writes a segment within the process's bounds in one task, a larger one after a shuffle
    local = PartRows(KEYED.filter(pc.less_equal(KEYED["commit_ts"], 20)).select(list(ROW_COLUMNS))) \
        if where == "driver" else None
    down.execute(f"INSERT INTO {DB}.k VALUES (3, 'old')")
    written = row_sink(spark, conn, down).write_segment(frame(spark, tmp_path, KEYED), [(DB, "k")], 5, 20, 5, local,
                                                        one_task=where == "one task")
    assert down.query(f"SELECT id, v FROM {DB}.k ORDER BY id") == [(1, "a"), (2, "bb")]
    assert written.rows == 3 and written.statements >= 2 and written.workers >= 1 and written.skipped_tables == []


def test_rows_at_or_below_the_segments_start_are_not_written_again(spark, tmp_path, conn, down):
    row_sink(spark, conn, down).write_segment(frame(spark, tmp_path, KEYED), [(DB, "k")], 10, 20, 5)
    assert down.query(f"SELECT id, v FROM {DB}.k ORDER BY id") == [(2, "bb")]  # ts 10's inserts were below


def test_a_table_missing_downstream_is_retryable_at_the_barrier(spark, tmp_path, conn, down):
    gone = changes(("gone", 10, 0, "insert", None, {"id": 1}))
    with pytest.raises(CdcflowError) as e:
        row_sink(spark, conn, down).write_segment(frame(spark, tmp_path, gone), [(DB, "gone")], 5, 20, 1)
    assert e.value.code == TABLE_NOT_EXISTS and e.value.retryable and e.value.ts == 20
    assert "rowsink.gone does not exist downstream" in e.value.message and e.value.changefeed == "rs"


KEYLESS = changes(("nk", 10, 0, "insert", None, {"a": 1, "b": 1}), ("nk", 11, 0, "insert", None, {"a": 1, "b": 1}),
                  ("nk", 12, 0, "update", {"a": 1, "b": 1}, {"a": 1, "b": 2}))


def test_a_keyless_table_the_tracker_does_not_know_is_skipped(spark, tmp_path, conn, down):
    events = []
    written = row_sink(spark, conn, down, events).write_segment(frame(spark, tmp_path, KEYLESS), [(DB, "nk")],
                                                                 5, 20, 3)
    assert written.skipped_tables == ["rowsink.nk"] and written.rows == 0
    assert [what for what, _ in events] == ["rows skipped"] and down.query(f"SELECT * FROM {DB}.nk") == []


def test_force_replicate_writes_a_keyless_table_in_commit_order(spark, tmp_path, conn, down):
    written = row_sink(spark, conn, down, force_replicate=True).write_segment(
        frame(spark, tmp_path, KEYLESS), [(DB, "nk")], 5, 20, 3)
    # one of the two equal rows changed: whole rows matched, one at a time
    assert sorted(down.query(f"SELECT a, b FROM {DB}.nk")) == [(1, 1), (1, 2)] and written.rows == 3


def test_a_value_the_column_cannot_hold_names_its_row(spark, tmp_path, conn, down):
    long = changes(("k", 10, 0, "insert", None, {"id": 1, "v": "a"}),
                   ("k", 11, 0, "insert", None, {"id": 7, "v": "x" * 9}))
    with pytest.raises(CdcflowError) as e:
        row_sink(spark, conn, down).write_segment(frame(spark, tmp_path, long), [(DB, "k")], 5, 20, 2)
    err = e.value
    assert err.code == MYSQL_TXN_ERROR and err.retryable and err.changefeed == "rs"
    assert "1406" in err.message and "(the row with key id = 7)" in err.message and err.ts == 11


CASCADE = changes(("p", 10, 0, "insert", None, {"id": 1}), ("c", 11, 0, "insert", None, {"id": 10, "pid": 1}),
                  ("p", 12, 0, "delete", {"id": 1}, None))


def test_tables_a_cascading_key_binds_are_written_once_in_commit_order(spark, tmp_path, conn, down):
    sink = row_sink(spark, conn, down)
    rows = frame(spark, tmp_path, CASCADE)
    # the parent's DELETE runs with the key's checks on: the downstream's cascade removes the child
    assert sink.write_segment(rows, [(DB, "c"), (DB, "p")], 5, 20, 3).rows == 3
    assert down.query(f"SELECT * FROM {DB}.p") == [] and down.query(f"SELECT * FROM {DB}.c") == []
    assert down.query("SELECT applied_ts FROM cdcflow.fk_applied WHERE changefeed = %s", (sink.marker,)) == [(20,)]
    # a replay of the segment (a kill before the checkpoint moved) finds the marker and writes nothing
    down.execute(f"INSERT INTO {DB}.p VALUES (5)")
    assert sink.write_segment(rows, [(DB, "c"), (DB, "p")], 5, 20, 3).rows == 0
    assert down.query(f"SELECT * FROM {DB}.p") == [(5,)]


# pull's texts for two inserts, saying both rows are one key (as a folding collation would say
# of two spellings): apply compacts them to one only where it keys the segment by pull's texts
ONE_KEY = changes(("k", 10, 0, "insert", None, {"id": 1, "v": "a"}), ("k", 11, 0, "insert", None, {"id": 2, "v": "b"}))
ONE_KEY = ONE_KEY.set_column(FIELDS.index("after_key"), "after_key", pa.array(['["one"]'] * 2, pa.string()))


def span(key, collations, first=10, last=11) -> dict:
    return by_table([KeySpan(schema=DB, table="k", first_ts=first, last_ts=last, key=key, collations=collations)])


@pytest.mark.parametrize("pulled, final", [
    (span(["id"], {"id": None}), [(2, "b")]),  # pull keyed the segment by its key: its texts are used
    (span(["v"], {"v": "utf8mb4_general_ci"}), [(1, "a"), (2, "b")]),  # by another key: apply keys it itself
    ({(DB, "k"): [*span(["id"], {"id": None}, last=10)[(DB, "k")], *span(["v"], {}, first=11)[(DB, "k")]]},
     [(1, "a"), (2, "b")]),
    (None, [(1, "a"), (2, "b")]),  # a window pulled before pull wrote key texts
], ids=["same-key", "other-key", "key-changed-inside", "no-texts"])
@pytest.mark.parametrize("where", ["spark", "driver", "driver-ahead"])
def test_apply_keys_by_pulls_texts_only_where_pull_keyed_by_the_segments_key(spark, tmp_path, conn, down, pulled,
                                                                              final, where, monkeypatch):
    """driver-ahead: the rows made ready while an earlier segment is written
    (RowSink.writer_input_ahead, which assumes pull keyed every table by its key): taken where it
    did, made again where not."""
    sink = row_sink(spark, conn, down, key_spans=pulled)
    rows = ONE_KEY.select([*ROW_COLUMNS, *KEY_TEXTS])
    local = None if where == "spark" else PartRows(rows)
    if where == "driver-ahead":
        seg = SimpleNamespace(lo=5, hi=20, tables=[(DB, "k")])
        local = PartRows(rows, sink.writer_input_ahead(seg, seg, rows))  # the segment whole: its own part
        made = []
        writer_input_in_process = row_sink_module._writer_input_in_process
        monkeypatch.setattr(row_sink_module, "_writer_input_in_process",
                            lambda *a: made.append(a) or writer_input_in_process(*a))
    written = sink.write_segment(frame(spark, tmp_path, ONE_KEY), [(DB, "k")], 5, 20, 2, local)
    assert down.query(f"SELECT id, v FROM {DB}.k ORDER BY id") == final and written.rows == len(final)
    assert (written.keyed_by_pull, written.keyed_here) == ((1, 0) if len(final) == 1 else (0, 1))
    if where == "driver-ahead":
        assert (local.ahead is not None) == (pulled is not None)
        assert len(made) == (0 if len(final) == 1 else 1)  # made again only where pull's keys are not taken
