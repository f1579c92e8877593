"""contracts.ApplyResult adds up apply's writes: sums, the largest figures, where each part was
written, and the tables that changed (a table skipped for want of a key did not)."""

from __future__ import annotations

from cdcflow.sink.row_sink import Written
from cdcflow.stages import contracts
from cdcflow.stages.contracts import ApplyResult


def test_writes_add_up_and_say_where_they_ran():
    stats = ApplyResult(safe_mode=False)
    stats.add(Written(rows=3, statements=1, workers=None, rows_held=3, keyed_here=1), in_process=True)
    stats.add(Written(rows=5, statements=2, workers=4, rows_held=2, upsert_fallbacks=1, keyed_by_pull=2,
                      skipped_tables=["db.nokey"]), in_process=False)
    stats.add(Written(rows=1, statements=1, workers=2), in_process=False)
    assert (stats.rows_written, stats.statements, stats.upsert_fallbacks) == (9, 4, 1)
    assert (stats.workers, stats.rows_held) == (4, 3)  # the most, not the sum
    assert (stats.keyed_by_pull, stats.keyed_here) == (2, 1)
    assert (stats.segments_in_process, stats.segments_in_spark) == (1, 2)
    stats.changed([("db", "t"), ("db", "nokey")])
    stats.changed([("db", "a")])
    assert stats.changed_tables == ["db.a", "db.t"]


def test_no_write_leaves_workers_unset_and_the_rate_unknown_in_no_time():
    stats = ApplyResult(safe_mode=True, rows_in=10)
    stats.took(0.0)
    assert (stats.apply_seconds, stats.rows_per_second) == (0.0, None)
    stats.took(2.0)
    assert (stats.apply_seconds, stats.rows_per_second) == (2.0, 5.0)
    assert "workers" not in contracts.plain(stats)
