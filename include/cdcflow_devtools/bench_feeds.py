"""`make bench PARTS=feeds`: many changefeeds on one Airflow, as `make airflow` runs it.

    python -m cdcflow_devtools.bench_feeds [--feeds 20] [--parse 1,20,100] [--concurrent 5] [--dir DIR]

- parse: dags/changefeeds.py parsed as the DAG processor parses it (a DagBag of the file, in a
  fresh process that has imported Airflow: the file's own imports and every DAG it builds), with
  1, 20 and 100 specs, and 20 of which one does not parse; the median of three processes.
- page: N changefeeds, each on a schema of its own on one upstream, on an `airflow standalone`
  (a free port, an AIRFLOW_HOME of its own) beside a Spark Connect server: the Changefeeds page
  (its HTML, the list and a detail it asks the API for), the first request (cold) and the
  median of five more (warm), with every changefeed caught up and then behind; and the list's
  lags computed in process one changefeed after another (what the list did before) and together
  (live_lag.live_lags).
- spark: a cycle of each changefeed on that shared Spark Connect server (`changefeed run
  --spark-remote`: the sessions a DAG's Spark tasks open), one after another and then C at a
  time: wall times, the Spark stages' seconds, and the server's memory (its JVM and Python workers).

Everything runs under --dir on free ports and is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cdcflow_devtools.bench_common import STAGES, PeakRss, say, stage_seconds
from cdcflow_devtools import process_tree
from cdcflow_devtools.checkout import LOCAL, PROJECT

DEFAULT_FEEDS = 20
DEFAULT_PARSE = (1, 20, 100)
DEFAULT_CONCURRENT = 5
ROWS_PER_FEED = 1_000  # each changefeed's window in the spark table: inserts, then updates of half
WARM_REQUESTS = 5

_PARSE_CHILD = r"""
import json, sys, time
import airflow
from airflow.dag_processing.dagbag import DagBag
t0 = time.perf_counter()
bag = DagBag(dag_folder=sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - t0, "dags": len(bag.dags), "import_errors": len(bag.import_errors)}))
"""


def _child_env(airflow_home: Path, cdcflow_home: Path) -> dict[str, str]:
    from cdcflow_devtools.airflow_local import airflow_env

    env = airflow_env(airflow_home)
    env["CDCFLOW_HOME"] = str(cdcflow_home)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT / "include"), str(PROJECT / "plugins")) if p)
    return env


# --- parse ---------------------------------------------------------------------------------------

def _write_specs(home: Path, n: int, broken: int = 0) -> None:
    from cdcflow.config.spec_store import Spec, save_spec

    shutil.rmtree(home, ignore_errors=True)
    os.environ["CDCFLOW_HOME"] = str(home)
    for i in range(n):
        config = "[filter]\nrules = ['feeds_%02d.*']\n" % i if i >= broken else '[cdcflow]\nschedul = "@daily"\n'
        save_spec(Spec(id=f"feed-{i:03d}", source_uri="mysql://root@127.0.0.1:3306/",
                       sink_uri="mysql://root@127.0.0.1:4000/", config_text=config))


def parse_table(sizes: list[int], base: Path) -> list[dict]:
    old_home = os.environ.get("CDCFLOW_HOME")
    out = []
    try:
        for n, broken in [(n, 0) for n in sizes] + [(DEFAULT_FEEDS, 1)]:
            home = base / f"parse-{n}-{broken}"
            _write_specs(home, n, broken)
            env = _child_env(base / "parse-airflow", home)
            runs = []
            for _ in range(3):
                done = subprocess.run([sys.executable, "-c", _PARSE_CHILD, str(PROJECT / "dags" / "changefeeds.py")],
                                      env=env, capture_output=True, text=True, check=True)
                runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            entry = {"specs": n, "broken": broken, "seconds": statistics.median(r["seconds"] for r in runs),
                     "fastest": min(r["seconds"] for r in runs),
                     "dags": runs[0]["dags"], "import_errors": runs[0]["import_errors"]}
            say(f"parse: {n} specs ({broken} broken): {entry['seconds']:.2f} s, {entry['dags']} DAGs, "
                f"{entry['import_errors']} import errors")
            out.append(entry)
    finally:
        if old_home is None:
            os.environ.pop("CDCFLOW_HOME", None)
        else:
            os.environ["CDCFLOW_HOME"] = old_home
    return out


# --- an airflow standalone of its own ------------------------------------------------------------

class Standalone:
    """`airflow standalone` on a free port with its own AIRFLOW_HOME, the DAGs and plugin of this
    checkout, and spark_connect_default pointing at `spark_url`; stopped with everything it started."""

    def __init__(self, airflow_home: Path, cdcflow_home: Path, spark_port: int):
        from cdcflow_devtools.airflow_local import bootstrap
        from cdcflow_devtools.mariadb import free_port

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = _child_env(airflow_home, cdcflow_home)
        bootstrap(self.env)
        self.env.update({
            "AIRFLOW__API__HOST": "127.0.0.1", "AIRFLOW__API__PORT": str(self.port),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{self.url}/execution/",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW_CONN_SPARK_CONNECT_DEFAULT": json.dumps(
                {"conn_type": "spark_connect", "host": "127.0.0.1", "port": spark_port})})
        self.log = open(airflow_home / "standalone.log", "wb")  # noqa: SIM115 - closed by stop()
        self.proc = subprocess.Popen([str(Path(sys.executable).parent / "airflow"), "standalone"], env=self.env,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        t0 = time.monotonic()
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"airflow standalone exited ({self.proc.returncode}); see {self.log.name}")
            try:
                urllib.request.urlopen(self.url + "/api/v2/monitor/health", timeout=5).close()
                break
            except OSError:
                if time.monotonic() - t0 > 300:
                    raise RuntimeError(f"airflow standalone did not answer within 300 s; see {self.log.name}")
                time.sleep(2)
        self.start_seconds = time.monotonic() - t0
        self.token = self._token(airflow_home)

    def _token(self, airflow_home: Path) -> str:
        from cdcflow_devtools.airflow_local import PASSWORDS_FILE

        deadline = time.monotonic() + 60
        while not (airflow_home / PASSWORDS_FILE).exists() and time.monotonic() < deadline:
            time.sleep(1)
        user, password = next(iter(json.loads((airflow_home / PASSWORDS_FILE).read_text()).items()))
        req = urllib.request.Request(self.url + "/auth/token", method="POST",
                                     data=json.dumps({"username": user, "password": password}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())["access_token"]

    def get(self, path: str) -> tuple[float, bytes]:
        """GET `path` with the bearer token: (seconds, body)."""
        req = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.token}"})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=300) as r:
            body = r.read()
        return time.perf_counter() - t0, body

    def processor_runtimes(self) -> list[float]:
        """The DAG processor's own "Last Runtime" of dags/changefeeds.py, from each of its stats tables."""
        text = Path(self.log.name).read_text(errors="replace")
        return [float(m) for m in re.findall(r"changefeeds\.py\s+\d+\s+\d+\s+([\d.]+)s\s+\d{4}-", text)]

    def stop(self) -> None:
        process_tree.stop_group(self.proc, 10.0)
        self.proc.wait(timeout=10)
        self.log.close()


# --- the changefeeds -----------------------------------------------------------------------------

def schema_of(i: int) -> str:
    return f"feeds_{i:02d}"


def create_feeds(up, down, n: int, home: Path) -> list[str]:
    """`n` changefeeds, each replicating a schema of its own with one table, created on both sides."""
    from cdcflow import cli

    os.environ["CDCFLOW_HOME"] = str(home)
    ids = []
    for i in range(n):
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {schema_of(i)}", f"CREATE DATABASE {schema_of(i)}",
                      f"CREATE TABLE {schema_of(i)}.t (id INT PRIMARY KEY, v INT, s VARCHAR(64))")
    for i in range(n):
        cfg = home / f"feed-{i:02d}.toml"
        cfg.write_text(f"[filter]\nrules = ['{schema_of(i)}.*']\n[cdcflow]\nschedule = \"none\"\n")
        with open(os.devnull, "w") as quiet:
            old, sys.stdout = sys.stdout, quiet
            try:
                rc = cli.main(["changefeed", "create", "-c", f"feed-{i:02d}", "--source-uri", up.uri,
                               "--sink-uri", down.uri, "--config", str(cfg)])
            finally:
                sys.stdout = old
        if rc != 0:
            raise RuntimeError(f"cdcflow changefeed create -c feed-{i:02d} failed")
        ids.append(f"feed-{i:02d}")
    return ids


def write_upstream(up, n: int, rows: int, first_id: int) -> None:
    """`rows` inserts (100 a transaction) then updates of every other one, in each changefeed's schema."""
    for i in range(n):
        with up.connect(schema_of(i)) as c, c.cursor() as cur:
            for lo in range(first_id, first_id + rows, 100):
                cur.execute("BEGIN")
                cur.executemany("INSERT INTO t VALUES (%s, %s, %s)",
                                [(k, k, f"row {k}") for k in range(lo, min(lo + 100, first_id + rows))])
                cur.execute("COMMIT")
            cur.execute("UPDATE t SET v = v + 1 WHERE id >= %s AND id %% 2 = 0", (first_id,))


# --- page ----------------------------------------------------------------------------------------

def _timings(airflow: Standalone, path: str) -> dict:
    cold, body = airflow.get(path)
    warm = [airflow.get(path)[0] for _ in range(WARM_REQUESTS)]
    return {"cold": cold, "warm": statistics.median(warm), "bytes": len(body)}


def page_timings(airflow: Standalone, detail_id: str, label: str) -> dict:
    out = {"ui": _timings(airflow, "/cdcflow/ui"), "list": _timings(airflow, "/cdcflow/api/v2/changefeeds"),
           "detail": _timings(airflow, f"/cdcflow/api/v2/changefeeds/{detail_id}")}
    say(f"page ({label}): " + ", ".join(f"{k} cold {v['cold']:.2f} s warm {v['warm']:.2f} s" for k, v in out.items()))
    return out


def lag_timings(ids: list[str], label: str) -> dict:
    """The list's lags in process: one changefeed after another (as the list read them before) and together."""
    from cdcflow.changefeed import live_lag
    from cdcflow.config.spec_store import load_spec
    from cdcflow.store import metastore

    pairs = [(load_spec(i), metastore.get_feed(i)) for i in ids]
    t0 = time.perf_counter()
    serial = [live_lag.live_lag(*p) for p in pairs]
    t1 = time.perf_counter()
    together = live_lag.live_lags(pairs)
    t2 = time.perf_counter()
    same = [(x.status, x.pending_ts) for x in serial] == [(together[i].status, together[i].pending_ts) for i in ids]
    out = {"serial": t1 - t0, "together": t2 - t1, "statuses": sorted({x.status for x in serial}), "same": same}
    say(f"lags of {len(ids)} changefeeds ({label}): one after another {out['serial']:.2f} s, "
        f"together {out['together']:.2f} s ({', '.join(out['statuses'])}; same figures: {same})")
    return out


# --- spark ---------------------------------------------------------------------------------------

def _cycle(changefeed_id: str, spark_url: str, log_dir: Path) -> dict:
    from cdcflow.store import metastore

    env = {**os.environ, "PYTHONPATH": str(PROJECT / "include")}
    t0 = time.perf_counter()
    with open(log_dir / f"cycle-{changefeed_id}.log", "ab") as log:
        rc = subprocess.run([sys.executable, "-m", "cdcflow.cli", "changefeed", "run", "-c", changefeed_id,
                             "--spark-remote", spark_url], stdout=log, stderr=log, env=env).returncode
    wall = time.perf_counter() - t0
    stats = metastore.recent_runs(changefeed_id, limit=1)[0].stats or {}
    return {"id": changefeed_id, "rc": rc, "wall": wall,
            **{s: stage_seconds(stats, s) for s in STAGES}}


def cycles(ids: list[str], spark_url: str, spark_pid: int, at_once: int, log_dir: Path) -> dict:
    sampler = PeakRss(spark_pid, interval=0.5)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        runs = list(pool.map(lambda i: _cycle(i, spark_url, log_dir), ids))
    wall = time.perf_counter() - t0
    spark_sum = sum(r["filter"] + r["barrier"] + r["apply"] for r in runs)
    out = {"at_once": at_once, "wall": wall, "runs": runs, "failed": [r["id"] for r in runs if r["rc"] != 0],
           "cycle_median": statistics.median(r["wall"] for r in runs), "spark_stage_seconds": spark_sum,
           "server_peak_rss": sampler.stop()}
    say(f"spark: {len(ids)} cycles {at_once} at a time: {wall:.1f} s in all, a cycle {out['cycle_median']:.1f} s "
        f"(median), Spark stages {spark_sum:.1f} s summed, server peak {out['server_peak_rss'] / 2**20:.0f} MiB"
        + (f", FAILED: {out['failed']}" if out["failed"] else ""))
    return out


def rss(pid: int) -> int:
    sampler = PeakRss(pid)
    time.sleep(0.3)
    return sampler.stop()


# --- the part --------------------------------------------------------------------------------------

def feeds_table(up, down, base: Path, feeds: int = DEFAULT_FEEDS, parse_sizes=DEFAULT_PARSE,
                at_once: int = DEFAULT_CONCURRENT, run_cycles: bool = True) -> dict:
    from cdcflow_devtools import spark_connect
    from cdcflow_devtools.bench_common import verify
    from cdcflow_devtools.mariadb import free_port

    base.mkdir(parents=True, exist_ok=True)
    out: dict = {"feeds": feeds, "parse": parse_table(list(parse_sizes), base) if parse_sizes else []}
    home = base / "feeds-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    ids = create_feeds(up, down, feeds, home)
    shutil.rmtree(base / "airflow", ignore_errors=True)
    say(f"starting a Spark Connect server and airflow standalone with {feeds} changefeeds")
    server = spark_connect.start(base / "spark-logs", port=free_port())
    airflow = None
    try:
        out["spark_idle_rss"] = rss(server.process.pid)
        airflow = Standalone(base / "airflow", home, server.port)
        out["airflow_start_seconds"] = airflow.start_seconds
        out["page_caught_up"] = page_timings(airflow, ids[0], "caught up")
        out["lag_caught_up"] = lag_timings(ids, "caught up")
        write_upstream(up, feeds, ROWS_PER_FEED, 1)
        out["page_behind"] = page_timings(airflow, ids[0], "behind")
        out["lag_behind"] = lag_timings(ids, "behind")
        if run_cycles:
            out["serial"] = cycles(ids, server.url, server.process.pid, 1, base)
            write_upstream(up, feeds, ROWS_PER_FEED, 1 + ROWS_PER_FEED)
            out["concurrent"] = cycles(ids, server.url, server.process.pid, at_once, base)
            out["spark_after_rss"] = rss(server.process.pid)
        out["consistent"] = not run_cycles or all(not verify(up, down, f"feed {i}", schema_of(i))
                                                  for i in range(feeds))
    finally:
        if airflow is not None:
            out["processor_runtimes"] = airflow.processor_runtimes()
            airflow.stop()
        server.stop()
    return out


def report(table: dict | None) -> None:
    if not table:
        return
    mib = 2**20
    print()
    if table["parse"]:
        print("dags/changefeeds.py parsed as the DAG processor does (median of 3 fresh processes):")
        print(f"{'specs':>8}{'broken':>8}{'DAGs':>6}{'import errors':>15}{'median s':>10}{'fastest s':>11}")
        for e in table["parse"]:
            print(f"{e['specs']:>8}{e['broken']:>8}{e['dags']:>6}{e['import_errors']:>15}{e['seconds']:>10.2f}"
                  f"{e['fastest']:>11.2f}")
    runtimes = table.get("processor_runtimes") or []
    if runtimes:
        print(f"the DAG processor's runtime of the file with {table['feeds']} specs: first {runtimes[0]:.2f} s, "
              f"then {', '.join(f'{r:.2f}' for r in runtimes[1:])} s")
    print(f"\nthe Changefeeds page with {table['feeds']} changefeeds (airflow standalone up in "
          f"{table['airflow_start_seconds']:.0f} s), seconds, first request / median of the next {WARM_REQUESTS}:")
    for label in ("caught_up", "behind"):
        page = table[f"page_{label}"]
        print(f"  {label.replace('_', ' '):10} " + "   ".join(
            f"{k} {v['cold']:.2f} / {v['warm']:.2f}" for k, v in page.items()))
        lag = table[f"lag_{label}"]
        print(f"  {'':10} the list's lags in process: one after another {lag['serial']:.2f} s, together "
              f"{lag['together']:.2f} s")
    if "serial" not in table:
        return
    print(f"\none cycle of each changefeed ({ROWS_PER_FEED:,} inserts and {ROWS_PER_FEED // 2:,} updates) "
          f"on one Spark Connect server (idle {table['spark_idle_rss'] / mib:.0f} MiB, after "
          f"{table['spark_after_rss'] / mib:.0f} MiB):")
    print(f"{'at once':>8}{'all s':>8}{'cycle s':>9}{'Spark stages s':>16}{'server peak':>13}{'failed':>8}")
    for e in (table["serial"], table["concurrent"]):
        print(f"{e['at_once']:>8}{e['wall']:>8.1f}{e['cycle_median']:>9.1f}{e['spark_stage_seconds']:>16.1f}"
              f"{e['server_peak_rss'] / mib:>10.0f} MiB{len(e['failed']):>8}")
    print(f"consistent: {'yes' if table['consistent'] else 'NO'}")


def main(argv: list[str] | None = None) -> int:
    from cdcflow_devtools.mariadb import start_pair

    p = argparse.ArgumentParser(prog="python -m cdcflow_devtools.bench_feeds", description=__doc__.split("\n")[0])
    p.add_argument("--feeds", type=int, default=DEFAULT_FEEDS)
    p.add_argument("--parse", default=",".join(map(str, DEFAULT_PARSE)), help="spec counts, or 'none'")
    p.add_argument("--concurrent", type=int, default=DEFAULT_CONCURRENT)
    p.add_argument("--no-cycles", action="store_true", help="the parse and page tables alone")
    p.add_argument("--dir", default=str(LOCAL / "bench-feeds"))
    a = p.parse_args(argv)
    base = Path(a.dir).resolve()
    sizes = [] if a.parse == "none" else [int(x) for x in a.parse.split(",")]
    up, down = start_pair(base / "mariadb")
    try:
        table = feeds_table(up, down, base, a.feeds, sizes, a.concurrent, not a.no_cycles)
    finally:
        up.stop()
        down.stop()
    report(table)
    (base / "results.json").write_text(json.dumps(table, indent=1, default=str))
    failed = [r for part in ("serial", "concurrent") for r in table.get(part, {}).get("failed", [])]
    return 0 if table["consistent"] and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
