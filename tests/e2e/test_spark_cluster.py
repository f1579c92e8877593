"""Whole cycles on a Spark standalone cluster: a master and two workers from the pyspark
package (JVMs of their own on 127.0.0.1), `cdcflow changefeed run` as the driver with
`spark-master = "spark://…"`, so the stages' tasks, the row writers among them, run in
executor JVMs the workers launch; the event store is given as a URI they all reach.  The engine
is forced to Spark: filter's copy, barrier's counts and apply's keying, compaction and writers run
as tasks in those executors (in standalone mode the driver runs no task), a segment over
local-segment-rows after Spark's shuffle, the others in one task each."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest
from e2e_helpers import assert_consistent, create_changefeed, cycle_result, query, run_in_own_process

from cdcflow_devtools import spark_standalone

pytestmark = pytest.mark.e2e

S = "cluster_e2e"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = spark_standalone.start(tmp_path_factory.mktemp("spark-cluster"), workers=2)
    try:
        yield c
    finally:
        c.stop()


def test_a_cycle_on_a_standalone_cluster(mariadb_pair, cdcflow_home, capsys, cluster, tmp_path):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}")
    store = f"file://{tmp_path}/events"
    create_changefeed(capsys, up, down, "on-cluster",
                      f"[filter]\nrules = ['{S}.*']\n[[filter.event-filters]]\nmatcher = ['{S}.t']\n"
                      # an expression no row matches: evaluated in Spark's tasks too
                      "ignore-insert-value-expr = \"v = 'never'\"\n"
                      f"[cdcflow]\nengine = \"spark\"\nspark-master = \"{cluster.master_url}\"\n"
                      f"event-store = \"{store}\"\nshuffle-partitions = 2\n"
                      # pull's ranges too, whatever the window's size
                      "pull-parallelism = 2\npull-parallel-min-bytes = 0\n"
                      # the first segment (about 4,000 changes) keyed and spread by Spark's shuffle, a
                      # task per writer; the others (within the bound) in one task each
                      "local-segment-rows = 1000\n")
    up.execute(f"CREATE DATABASE {S}",
               f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(40), n INT)",
               f"INSERT INTO {S}.t SELECT seq, CONCAT('row ', seq), seq % 7 FROM {S}.seq_1_to_3000",
               f"UPDATE {S}.t SET id = id + 10000 WHERE id % 5 = 0",
               f"DELETE FROM {S}.t WHERE n = 3",
               # DDL between the rows, and a table created mid-window, in the same cycle (one driver
               # process: a second one would prove nothing the first does not, at twice the cost)
               f"ALTER TABLE {S}.t ADD COLUMN w INT", f"UPDATE {S}.t SET w = n * 2 WHERE id < 500",
               f"CREATE TABLE {S}.u (k VARCHAR(10) PRIMARY KEY)", f"INSERT INTO {S}.u VALUES ('a'), ('b')")
    try:
        events = tmp_path / "spark-events"
        events.mkdir()
        # Spark's event log of the driver: which stage each task belonged to and which executor ran it
        submit = (f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file://{events} "
                  "--conf spark.eventLog.compress=false pyspark-shell")
        run = run_in_own_process("on-cluster", timeout=900, env={"SPARK_LOCAL_IP": "127.0.0.1", "CDCFLOW_ENGINE": "",
                                                                  "PYSPARK_SUBMIT_ARGS": submit})
        result = cycle_result(run)
        assert result["spark_session"]
        assert result["pull"]["ranges"] > 1 and result["pull"]["spark"] == "cluster", result["pull"]
        # every row step in the cluster's tasks: the value filter's and filter's copy, barrier's counts,
        # and apply's segments (rows before the ALTER, between it and the CREATE, after it)
        assert (result["filter"]["ran_in"], result["barrier"]["ran_in"]) == ("spark", "spark")
        assert result["apply"]["segments_in_process"] == 0 and result["apply"]["segments_in_spark"] == 3
        assert_consistent(up, down, [S])
        assert query(capsys, "on-cluster")["state"] == "normal"

        # each step's tasks ran in the executors: pull's ranges, filter's copy, barrier's counts and
        # apply's writers, by the source file that started the stage (PySpark's call site)
        ran = _executors_by_call_site(events)
        for step in ("stages/pull_ranges.py", "stages/rows.py", "stages/barrier.py", "sink/row_sink.py"):
            ids = set().union(*[ids for site, ids in ran.items() if step in site])
            assert ids and "driver" not in ids, (step, ran)
        assert len(set().union(*ran.values())) == 2, ran  # both workers' executors ran tasks
        # and those executors ran where the two workers launched them: each holds a folder of the
        # cycle's app
        for work in cluster.worker_dirs():
            apps = sorted(p.name for p in work.glob("app-*"))
            assert len(apps) == 1, (work, apps)
            assert all(any((app_dir / e / "stderr").is_file() for e in os.listdir(app_dir))
                       for app_dir in work.glob("app-*"))
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")


def _executors_by_call_site(events: Path) -> dict[str, set[str]]:
    """From a Spark event log: per stage name (PySpark's "<action> at <file>:<line>"), the ids of
    the executors that ran its tasks."""
    names, ran = {}, defaultdict(set)
    for log in events.rglob("events_*"):  # the application's folder of rolled logs
        for line in log.read_text().splitlines():
            e = json.loads(line)
            if e["Event"] == "SparkListenerStageSubmitted":
                names[e["Stage Info"]["Stage ID"]] = e["Stage Info"]["Stage Name"]
            elif e["Event"] == "SparkListenerTaskEnd":
                ran[e["Stage ID"]].add(e["Task Info"]["Executor ID"])
    by_name = defaultdict(set)
    for stage, ids in ran.items():
        by_name[names.get(stage, str(stage))] |= ids
    return dict(by_name)
