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
