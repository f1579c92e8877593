"""The bench's pull table prints both binlog readers' events/s on the whole window."""

from __future__ import annotations

from cdcflow_devtools import bench_pull


def _row(fraction: float, **more) -> dict:
    return {"fraction": fraction, "events": 3000, "bytes": 2**20, "sequential_seconds": 1.0, "parallel_seconds": 2.0,
            "ratio": 2.0, "plan_seconds": 0.1, "decode_seconds": 0.5, "stamp_seconds": 0.1, "range_events": [3000],
            "range_seconds": [0.5], "identical": True, **more}


def test_the_table_prints_each_readers_rate_and_their_ratio(capsys):
    readers = {"events": 3000, "compiled": True, "compiled_seconds": 1.0, "python_seconds": 5.0, "identical": True,
               "speedup": 5.0}
    bench_pull.report({"parallelism": 2, "rows": [_row(0.5), _row(1.0, readers=readers)], "threshold_bytes": None})
    line = capsys.readouterr().out.splitlines()[-1]
    assert "compiled 1.00s = 3,000 events/s, Python 5.00s = 600 events/s: 5.00x" in line
    assert "DIFFERS" not in line and "NOT BUILT" not in line


def test_the_table_says_when_the_compiled_reader_was_not_built_or_the_stores_differ(capsys):
    readers = {"events": 3000, "compiled": False, "compiled_seconds": 4.0, "python_seconds": 5.0, "identical": False,
               "speedup": 1.25}
    bench_pull.report({"parallelism": 2, "rows": [_row(1.0, readers=readers)], "threshold_bytes": None})
    line = capsys.readouterr().out.splitlines()[-1]
    assert "compiled reader NOT BUILT" in line and line.endswith("OUTPUT DIFFERS")


def test_the_sequential_read_writes_the_window_to_the_store(mariadb_pair, tmp_path):
    """pull's own sequential path over a real window, as the table and the overlap part read it:
    written to the store whatever the engine, so that it can be compared file by file."""
    import pyarrow.parquet as pq

    from cdcflow.config.keys import ChangefeedConfig
    from cdcflow.core.uri import parse_source_uri
    from cdcflow.source.binlog import Position
    from cdcflow.stages import contracts

    up, _down = mariadb_pair
    up.execute("DROP DATABASE IF EXISTS bench_pull_read")
    up.execute("CREATE DATABASE bench_pull_read")
    up.execute("CREATE TABLE bench_pull_read.t (id INT PRIMARY KEY, v VARCHAR(20)) CHARSET latin1")
    start = Position(*up.binlog_head())
    up.execute("INSERT INTO bench_pull_read.t VALUES " + ",".join(f"({i}, 'façade {i}')" for i in range(50)))
    up.execute("UPDATE bench_pull_read.t SET v = 'ü' WHERE id < 10")
    head = Position(*up.binlog_head())
    window = contracts.Window(start_ts=0, start_pos=start, head=head, head_tso=0)
    events, seconds, folder = bench_pull.read_whole(parse_source_uri(up.uri), ChangefeedConfig(), tmp_path, "w", window)
    assert events == 60 and seconds > 0
    written = pq.read_table(folder)
    assert written.num_rows == 60
    assert sorted(written["op"].to_pylist()) == ["insert"] * 50 + ["update"] * 10
