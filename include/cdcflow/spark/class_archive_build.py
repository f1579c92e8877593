"""Builds the class archive (spark.class_archive) once per Java and pyspark install:
`make setup` runs `python -m cdcflow.spark.class_archive_build`.  Apart from the archive's
naming because building it needs a Spark session, while the session needs the archive's
name: one module each keeps the imports one way."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from cdcflow.spark import class_archive
from cdcflow.spark.session import SHORT_LIVED_JVM, get_session
from cdcflow.spark.warm_up import warm_up


def build() -> Path | None:
    """Build the archive unless it exists: a child process runs the warm-up job in an embedded
    session whose JVM writes the archive as it exits; written under a temporary name and
    renamed once the JVM has ended, so a JVM never maps a partial archive."""
    path = class_archive.archive_path()
    if path is None:
        print("no Java found: no class archive built")
        return None
    if path.is_file():
        print(f"class archive: {path} (already built)")
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # an environment this user cannot write to
        print(f"class archive not built (JVMs start without one): {e}")
        return None
    part = path.with_name(f"{path.stem}.{os.getpid()}.part")
    env = {**os.environ, "CDCFLOW_DRIVER_JAVA_OPTIONS": f"{SHORT_LIVED_JVM} -XX:ArchiveClassesAtExit={part}",
           "CDCFLOW_SPARK_LOG_LEVEL": "ERROR"}
    done = subprocess.run([sys.executable, "-m", "cdcflow.spark.class_archive_build", "--dump"], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0 or not part.is_file() or part.stat().st_size == 0:
        part.unlink(missing_ok=True)
        print(f"class archive not built (JVMs start without one): {done.stderr.strip()[-1500:]}")
        return None
    os.replace(part, path)
    print(f"class archive: {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    return path


def _dump() -> None:
    """The child of build(): the warm-up job, then the JVM ended and waited for, its archive
    written."""
    spark = get_session("cdcflow-class-archive", "local[2]", 2)
    with tempfile.TemporaryDirectory() as folder:
        warm_up(spark, folder)
    jvm = spark.sparkContext._gateway.proc
    spark.stop()
    jvm.stdin.close()  # the gateway JVM exits when its Python driver's pipe closes
    jvm.wait(timeout=300)


if __name__ == "__main__":
    if sys.argv[1:] == ["--dump"]:
        _dump()
    else:
        sys.exit(0 if build() else 1)
