"""The bench's floor (cdcflow_devtools.bench_floor) reads every statement the writers sent from
the downstream's general log, prepared executions among them, and sends them again as they
were sent: text as text, a prepared execution prepared, with the parameters the log wrote in."""

from __future__ import annotations

import decimal

from cdcflow_devtools import bench_floor
from cdcflow_devtools.bench_workload import SCHEMA
from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

from cdcflow.core.row_codec import encode_image
from cdcflow.sink import connection
from cdcflow.sink.row_writer import RowWriter, raw_form


def test_prepared_executions_are_replayed_prepared_with_their_parameters(mariadb_pair):
    _, down = mariadb_pair
    down.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}",
                 f"CREATE TABLE {SCHEMA}.t (id INT PRIMARY KEY, s VARCHAR(20), d DECIMAL(10,2), f DOUBLE, n INT)")
    rows = [{"id": i, "s": f"it's {i} é\n\\", "d": decimal.Decimal("-1.50"), "f": i / 3, "n": None if i % 2 else -i}
            for i in range(1, 11)]
    conn = connection.connect({"host": HOST, "port": down.port, "user": ROOT_USER, "password": ROOT_PASSWORD})
    try:
        bench_floor.start_capture(down)
        form = raw_form()
        writer = RowWriter(conn, 4, form=form)  # two full batches prepared, the last two rows as text
        writer.replace_rows(SCHEMA, "t", tuple(rows[0]), [form.read(encode_image(r)) for r in rows], "REPLACE",
                            [1] * len(rows), ["id"])
        phases = bench_floor.captured(down)
    finally:
        conn.close()
    sent = [s for p in phases for sqls in p.connections.values() for s in sqls]
    assert [type(s) for s in sent] == [tuple, tuple, str]
    assert sent[0][0].count("?") == 4 * 5
    written = down.query(f"SELECT id, s, d, f, n FROM {SCHEMA}.t ORDER BY id")
    assert len(written) == 10
    down.execute(f"TRUNCATE TABLE {SCHEMA}.t")
    bench_floor.replay(down, phases)
    assert down.query(f"SELECT id, s, d, f, n FROM {SCHEMA}.t ORDER BY id") == written


def test_a_logged_execution_read_back_to_its_literals():
    template = "REPLACE INTO `s`.`t` (`a`, `b`, `c`) VALUES (?, ?, ?),(?, ?, ?)"
    logged = "REPLACE INTO `s`.`t` (`a`, `b`, `c`) VALUES (1, 'x\\'y, )', NULL),(-2, '', 1.5e300)"
    assert bench_floor._filled(template, logged) == ["1", "'x\\'y, )'", "NULL", "-2", "''", "1.5e300"]
    assert bench_floor._filled(template, logged.replace("`t`", "`u`")) is None
    assert bench_floor.prepared_again(["DELETE FROM x WHERE a IN (?)", template], logged)[0] == template
    assert bench_floor.prepared_again([], logged) == logged


def test_the_floor_and_the_cycle_are_split_alike_by_segment(tmp_path):
    """A segment is its row phases and the DDL that ends it, in the replay as in the cycle's log
    (apply's start, each DDL applied, then applied), so the two can be set side by side."""
    from cdcflow_devtools import bench_census

    phases = [bench_floor.Phase(), bench_floor.Phase(), bench_floor.Phase(ddl="ALTER TABLE t ADD c INT"),
              bench_floor.Phase(), bench_floor.Phase(ddl="CREATE INDEX i ON t (c)"), bench_floor.Phase()]
    assert [round(s, 2) for s in bench_floor.segment_seconds(phases, [0.5, 0.25, 0.1, 0.75, 0.2, 0.4])] \
        == [0.85, 0.95, 0.4]
    assert bench_floor.ddl_seconds(phases, [0.5, 0.25, 0.1, 0.75, 0.2, 0.4]) == [0.1, 0.2]  # the DDLs' own
    log = tmp_path / "cycle.log"
    ev = "{time} cdcflow {name} · changefeed c · {{}}"
    log.write_text("\n".join([
        ev.format(time="2026-12-01 10:00:00,000", name="barriers"),
        ev.format(time="2026-12-01 10:00:00,100", name="downstream"),
        "an unstructured line",
        ev.format(time="2026-12-01 10:00:01,000", name="ddl applied"),
        ev.format(time="2026-12-01 10:00:02,250", name="ddl applied"),
        ev.format(time="2026-12-01 10:00:02,750", name="applied"),
        ev.format(time="2026-12-01 10:00:02,760", name="finished")]) + "\n")
    assert [round(s, 3) for s in bench_census.apply_segment_seconds(log)] == [0.9, 1.25, 0.5]


def test_the_parts_of_a_segment_replay_one_after_the_other():
    """Apply's writers of two parts of a segment (its slices) may hold one key on two
    sessions: the catalogue question apply asks before each part ends a phase, so that the replay
    keeps the parts in order, as a DDL does; statements of one part on several sessions stay one
    phase."""
    put = f"REPLACE INTO {SCHEMA}.t VALUES "
    asked = _plan_question()
    rows = [(1.0, 7, "Query", asked),
            (1.1, 1, "Query", put + "(1, 'a')"), (1.2, 2, "Query", put + "(2, 'b')"),
            (1.3, 1, "Query", put + "(3, 'c')"),
            (2.0, 7, "Query", asked),
            (2.1, 2, "Query", put + "(1, 'a2')"), (2.2, 1, "Query", put + "(2, 'b2')"),
            (2.3, 2, "Query", put + "(3, 'c2')"),
            (3.0, 7, "Query", f"ALTER TABLE {SCHEMA}.t ADD COLUMN c INT"),
            (3.1, 1, "Query", put + "(1, 'a3', 1)")]
    phases = bench_floor.phases_of(rows)
    assert [(p.ddl, sorted(map(tuple, p.connections.values()))) for p in phases] == [
        (None, [(put + "(1, 'a')", put + "(3, 'c')"), (put + "(2, 'b')",)]),
        (None, [(put + "(1, 'a2')", put + "(3, 'c2')"), (put + "(2, 'b2')",)]),
        (f"ALTER TABLE {SCHEMA}.t ADD COLUMN c INT", []),
        (None, [(put + "(1, 'a3', 1)",)])]


def _plan_question() -> str:
    """The catalogue question apply's plan asks before a part (downstream_tables.table_columns),
    as the general log writes it: its parameters filled in."""
    from fake_downstream import FakeConn

    from cdcflow.sink.downstream_tables import table_columns

    conn = FakeConn()
    table_columns(conn, [(SCHEMA, "t"), (SCHEMA, "u")])
    assert len(conn.sql) == 1
    sql, params = conn.sql[0]
    return sql % tuple(f"'{p}'" for p in params)
