"""What MariaDB itself offers for the same job, measured the same way: the binlog range
[start, stop) replayed by `mariadb-binlog | mariadb`, and a native replica catching up."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass

import pymysql.cursors

from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER


@dataclass(frozen=True)
class BinlogRange:
    start_file: str
    start_pos: int
    stop_file: str
    stop_pos: int

    def files(self, available: list[str]) -> list[str]:
        """The binlog files the range spans, in order."""
        return [f for f in available if self.start_file <= f <= self.stop_file]


def client_args(port: int) -> list[str]:
    return [f"--host={HOST}", f"--port={port}", f"--user={ROOT_USER}", f"--password={ROOT_PASSWORD}"]


def binlog_replay(upstream, downstream, rng: BinlogRange) -> float:
    """`mariadb-binlog --read-from-remote-server … | mariadb`; the wall seconds of the pipe."""
    files = rng.files([r[0] for r in upstream.query("SHOW BINARY LOGS")])
    dump = ["mariadb-binlog", "--read-from-remote-server", *client_args(upstream.port),
            f"--start-position={rng.start_pos}", f"--stop-position={rng.stop_pos}", *files]
    return pipe(dump, ["mariadb", *client_args(downstream.port)], "mariadb-binlog | mariadb")


def pipe(producer_args: list[str], consumer_args: list[str], what: str) -> float:
    """`producer | consumer`; the wall seconds of the pipe."""
    t0 = time.perf_counter()
    producer = subprocess.Popen(producer_args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    consumer = subprocess.run(consumer_args, stdin=producer.stdout, capture_output=True, text=True)
    producer.stdout.close()
    err = producer.stderr.read().decode(errors="replace")
    producer.wait()
    secs = time.perf_counter() - t0
    if producer.returncode or consumer.returncode:
        raise RuntimeError(f"{what} failed (exit {producer.returncode}/{consumer.returncode}): "
                           f"{err.strip()[-500:]} {consumer.stderr.strip()[-500:]}")
    return secs


def reset_replica(replica) -> None:
    replica.execute("STOP SLAVE", "RESET SLAVE ALL")


def replica_catch_up(upstream, replica, rng: BinlogRange, timeout: float = 3600) -> float:
    """CHANGE MASTER TO the start position, START SLAVE, poll until the SQL thread has executed
    up to the stop position; the wall seconds from START SLAVE."""
    reset_replica(replica)
    replica.execute(
        f"CHANGE MASTER TO MASTER_HOST='{HOST}', MASTER_PORT={upstream.port}, MASTER_USER='{ROOT_USER}', "
        f"MASTER_PASSWORD='{ROOT_PASSWORD}', MASTER_LOG_FILE='{rng.start_file}', MASTER_LOG_POS={rng.start_pos}, "
        "MASTER_USE_GTID=no")
    conn = replica.connect(cursorclass=pymysql.cursors.DictCursor)
    try:
        with conn.cursor() as cur:
            t0 = time.perf_counter()
            cur.execute("START SLAVE")
            while True:
                cur.execute("SHOW SLAVE STATUS")
                st = cur.fetchone()
                if st["Slave_SQL_Running"] != "Yes" and st["Last_SQL_Errno"]:
                    raise RuntimeError(f"native replica stopped: ({st['Last_SQL_Errno']}) {st['Last_SQL_Error']}")
                if st["Last_IO_Errno"]:
                    raise RuntimeError(f"native replica cannot read: ({st['Last_IO_Errno']}) {st['Last_IO_Error']}")
                if (st["Relay_Master_Log_File"], int(st["Exec_Master_Log_Pos"])) >= (rng.stop_file, rng.stop_pos):
                    secs = time.perf_counter() - t0
                    break
                if time.perf_counter() - t0 > timeout:
                    raise RuntimeError(f"native replica did not catch up within {timeout:g}s")
                time.sleep(0.02)
            cur.execute("STOP SLAVE")
    finally:
        conn.close()
    return secs
