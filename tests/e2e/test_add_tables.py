"""Tables that join a running changefeed with their existing rows (`changefeed add-tables`), and a
table copied again (`resync-tables`), end to end through the CLI on the MariaDB pair: the
changefeed goes on replicating its other table every cycle while the copy runs a few chunks per
cycle, the upstream keeps writing the joining table, a cycle is killed mid-copy, and the tables
end equal to the upstream's, definitions included (snapshot/table_join.py).  A joining table is
copied without its secondary unique index, which is built once its copy is done
(snapshot/deferred_indexes.py)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest
from e2e_helpers import cli_run, create_changefeed, query

from cdcflow import cli
from cdcflow_devtools.compare import compare
from cdcflow.config.spec_store import load_spec
from cdcflow.store import table_copies

pytestmark = pytest.mark.e2e

S = "app"
B_ROWS = 100_000
# chunks small enough that a cycle's second of copying (table-copy-seconds) ends mid-table, and a
# killed cycle's too, on a quiet machine: 2,000-row chunks copied all 100,000 rows within one second,
# and on a fast hour of the machine 250-row chunks did too (401 chunks in the first cycle)
CHUNK = 100
CONFIG = f"[filter]\nrules = ['{S}.a']\n[cdcflow]\nsnapshot-chunk-size = {CHUNK}\ntable-copy-seconds = 1\n"


def _schema(up, down) -> None:
    for db in (up, down):
        db.execute(f"DROP DATABASE IF EXISTS {S}")
    down.execute(f"CREATE DATABASE {S}", f"CREATE TABLE {S}.a (id INT PRIMARY KEY, v VARCHAR(20))")
    up.execute(
        f"CREATE DATABASE {S}",
        f"CREATE TABLE {S}.a (id INT PRIMARY KEY, v VARCHAR(20))",
        # a secondary unique key, JSON, a generated column, MyISAM's neighbour Aria for the keyless one
        f"CREATE TABLE {S}.b (id INT PRIMARY KEY, u VARCHAR(24) NOT NULL, doc JSON, n INT, "
        "twice BIGINT AS (n * 2) VIRTUAL, UNIQUE KEY uk (u)) ENGINE=InnoDB",
        f"CREATE TABLE {S}.nokey (a INT, b VARCHAR(5)) ENGINE=Aria",
        f"CREATE TABLE {S}.c (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=MyISAM",
        f"INSERT INTO {S}.c SELECT seq, CONCAT('c', seq) FROM {S}.seq_1_to_3000",
        f"CREATE TABLE {S}.parent (id INT PRIMARY KEY)",
        f"CREATE TABLE {S}.child (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES {S}.parent (id) "
        "ON DELETE CASCADE)",
    )
    values = [f"({i}, 'u{i}', JSON_OBJECT('i', {i}, 'tag', 't{i % 7}'), {i % 1000})" for i in range(1, B_ROWS + 1)]
    for at in range(0, B_ROWS, 20_000):
        up.execute(f"INSERT INTO {S}.b (id, u, doc, n) VALUES " + ", ".join(values[at:at + 20_000]))


class Writer(threading.Thread):
    """Keeps changing app.b (inserts, key changes, unique-key changes, JSON updates, deletes) and
    app.a until stopped."""

    def __init__(self, up, seed: int, first_id: int):
        super().__init__(daemon=True)
        self.up, self.rnd, self.stop, self.done, self.next_id = up, random.Random(seed), threading.Event(), 0, first_id

    def run(self) -> None:
        conn, self.error = self.up.connect(), None
        try:
            with conn.cursor() as cur:
                while not self.stop.is_set():
                    r, i = self.rnd, self.rnd.randint(1, B_ROWS)
                    self.next_id += 1
                    cur.execute(r.choice([
                        f"INSERT INTO {S}.b (id, u, doc, n) VALUES ({self.next_id}, 'n{self.next_id}', '[1, 2]', 5)",
                        f"UPDATE {S}.b SET id = {self.next_id} WHERE id = {i}",
                        f"UPDATE {S}.b SET u = 'w{self.next_id}', n = n + 1 WHERE id = {i}",
                        f"UPDATE {S}.b SET doc = JSON_SET(doc, '$.seen', {i}) WHERE id = {i}",
                        f"DELETE FROM {S}.b WHERE id = {i}",
                        f"INSERT INTO {S}.a VALUES ({self.next_id}, 'w')",
                    ]))
                    self.done += 1
                    time.sleep(0.002)
        except Exception as e:  # noqa: BLE001 - the test says the writer stopped, and why
            self.error = e
        finally:
            conn.close()


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = cli.main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def _copy(cid: str) -> dict:
    return {c["table"]: c for c in table_copies.progress(cid)}


def _cycle(capsys, cid: str) -> None:
    rc, err = cli_run(capsys, cid)
    assert rc == 0, err


UK = "UNIQUE KEY `uk` (`u`)"


def _indexes(down, table: str) -> list[str]:
    return sorted({r[0] for r in down.query("SELECT INDEX_NAME FROM information_schema.STATISTICS "
                                            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s", (S, table))})


def _copying_without_uk(down, cid: str) -> None:
    """app.b is copied without its unique key uk, recorded to be built after the copy."""
    b = _copy(cid)[f"{S}.b"]
    assert _indexes(down, "b") == ["PRIMARY"], _indexes(down, "b")
    assert (b["indexes"], b["indexes_deferred"]) == ("pending", [UK]), b


def _marker_cycle(capsys, up, down, cid: str, marker: int) -> None:
    """A row of app.a written before the cycle is downstream after it: app.a does not wait for the copy."""
    up.execute(f"INSERT INTO {S}.a VALUES ({marker}, 'marker')")
    _cycle(capsys, cid)
    assert down.query(f"SELECT v FROM {S}.a WHERE id = {marker}") == [("marker",)]


def _cycles_until(capsys, up, down, cid: str, marker: int, statuses: tuple[str, ...], table: str = "b") -> int:
    """Marker cycles until app.`table`'s copy is in one of `statuses`; the next marker."""
    for _ in range(100):
        if _copy(cid)[f"{S}.{table}"]["status"] in statuses:
            return marker
        _marker_cycle(capsys, up, down, cid, marker)
        marker += 1
    raise AssertionError(f"app.{table}'s copy is still {_copy(cid)[f'{S}.{table}']} after 100 cycles")


def _killed_mid_copy(cid: str, home) -> None:
    """A cycle in a process of its own, SIGKILLed once it has copied some chunks and not all."""
    child = subprocess.Popen([sys.executable, "-c", f"from cdcflow import cli; cli.main(['changefeed', 'run', '-c', "
                              f"{cid!r}], stop_spark=True)"], env={**os.environ, "CDCFLOW_HOME": str(home)},
                             start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline, before = time.monotonic() + 300, _copy(cid)[f"{S}.b"]["chunks_done"]
    seen = before
    try:
        while time.monotonic() < deadline and child.poll() is None:
            seen = _copy(cid)[f"{S}.b"]["chunks_done"]
            if seen >= before + 3:
                break
            time.sleep(0.05)
    finally:
        with contextlib.suppress(ProcessLookupError):  # a cycle that ended by itself: the assertion says so
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    left = _copy(cid)[f"{S}.b"]
    assert before + 3 <= seen and left["chunks_done"] < left["chunks_total"], \
        (before, left, child.stderr.read().decode()[-2000:])


def test_a_table_joins_a_running_changefeed_with_its_rows(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    _schema(up, down)
    cid = "join"
    create_changefeed(capsys, up, down, cid, CONFIG)
    up.execute(f"INSERT INTO {S}.a VALUES (1, 'one')")
    _cycle(capsys, cid)

    # refused with a remedy, nothing recorded: replicated already, no valid index, a cascade to a
    # table left out, no such table, a downstream table holding rows
    down.execute(f"CREATE TABLE {S}.parent (id INT PRIMARY KEY)", f"INSERT INTO {S}.parent VALUES (1)")
    for tables, words in ((f"{S}.a", "resync-tables"), (f"{S}.nokey", "force-replicate"),
                          (f"{S}.child", "parent"), (f"{S}.nope", "not a table of the upstream"),
                          (f"{S}.parent", "holds rows")):
        rc, _, err = _cli(capsys, "changefeed", "add-tables", "-c", cid, "--tables", tables)
        assert rc == 1 and f"changefeed {cid}" in err and words in err, err
    assert table_copies.all_of(cid) == [] and "nokey" not in load_spec(cid).config_text

    with_writer = Writer(up, seed=45, first_id=10**6)
    with_writer.start()
    try:
        rc, out, err = _cli(capsys, "changefeed", "add-tables", "-c", cid, "--tables", f"{S}.b")
        assert rc == 0, err
        assert json.loads(out)["copies"][0]["status"] == "requested"
        _marker_cycle(capsys, up, down, cid, 900_001)  # the join, and the first chunks
        b = _copy(cid)[f"{S}.b"]
        assert b["status"] == "copying" and 0 < b["chunks_done"] < b["chunks_total"] >= B_ROWS // CHUNK, b
        _copying_without_uk(down, cid)
        assert query(capsys, cid)["cdcflow"]["table_copies"][0]["table"] == f"{S}.b"
        _killed_mid_copy(cid, cdcflow_home)
        marker = _cycles_until(capsys, up, down, cid, 900_002, ("replaying", "done"))
        assert marker > 900_002  # the copy went on over more than one cycle after the kill
    finally:
        with_writer.stop.set()
        with_writer.join()
    assert with_writer.error is None and with_writer.done > 100, "the upstream was to keep writing during the copy"
    for _ in range(2):
        _cycle(capsys, cid)
    assert (_copy(cid)[f"{S}.b"]["status"], _copy(cid)[f"{S}.b"]["indexes"]) == ("done", "built")
    _equal(up, down, ["a", "b"])  # uk included

    # a table damaged downstream is copied again while the changefeed goes on
    down.execute(f"DELETE FROM {S}.b WHERE id % 10 = 3", f"UPDATE {S}.b SET n = -1 WHERE id % 10 = 4",
                 f"ALTER TABLE {S}.b ADD COLUMN extra INT")
    rc, _, err = _cli(capsys, "changefeed", "resync-tables", "-c", cid, "--tables", f"{S}.b")
    assert rc == 0, err
    with_writer = Writer(up, seed=46, first_id=2 * 10**6)
    with_writer.start()
    try:
        _marker_cycle(capsys, up, down, cid, marker)  # the join: b dropped and created again, without uk
        _copying_without_uk(down, cid)
        # uk dropped upstream while deferred: its DROP runs as a replay (it finds none downstream) and
        # the build skips it; an index added meanwhile is replicated as any DDL
        up.execute(f"ALTER TABLE {S}.b DROP INDEX uk", f"CREATE INDEX k_n ON {S}.b (n)")
        _cycles_until(capsys, up, down, cid, marker + 1, ("replaying", "done"))
    finally:
        with_writer.stop.set()
        with_writer.join()
    assert with_writer.error is None and with_writer.done > 100
    for _ in range(2):
        _cycle(capsys, cid)
    assert _copy(cid)[f"{S}.b"]["status"] == "done" and _copy(cid)[f"{S}.b"]["kind"] == "resync"
    assert _copy(cid)[f"{S}.b"]["indexes"] == "built" and _indexes(down, "b") == ["PRIMARY", "k_n"]
    _equal(up, down, ["a", "b"])

    # a filter `update --config` widens takes its new table in with its rows
    path = cdcflow_home / "wider.toml"
    path.write_text(f"[filter]\nrules = ['{S}.a', '{S}.b', '{S}.c']\n")
    for args in (["pause", "-c", cid], ["update", "-c", cid, "--config", str(path), "--no-confirm"],
                 ["resume", "-c", cid]):
        rc, out, err = _cli(capsys, "changefeed", *args)
        assert rc == 0, err
        if args[0] == "update":
            assert f"table_copies: [] -> [\"{S}.c\"]" in out, out
    up.execute(f"UPDATE {S}.c SET v = 'changed' WHERE id <= 10")
    _cycles_until(capsys, up, down, cid, marker + 1000, ("done",), table="c")
    _equal(up, down, ["a", "b", "c"])


def _equal(up, down, tables: list[str]) -> None:
    """`tables` of app equal the upstream's, whole definitions and rows (app's other tables are
    not replicated, or are there only for the refusals)."""
    with up.connect() as u, down.connect() as d:
        diffs = [x for x in compare(u, d, schemas=[S]) if x.table in tables]
    assert not diffs, "\n".join(str(x) for x in diffs)
