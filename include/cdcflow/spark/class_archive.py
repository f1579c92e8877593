"""A class-data archive (the JVM's AppCDS) for the short-lived JVMs of embedded sessions and
spark-submit stages.

A JVM that maps the classes a Spark run loads from an archive starts in about half the time:
on this 2-core machine an embedded session took 2.2 s instead of 4.2-4.5 s to open, and its
first job 0.9-1.2 s instead of 2.1-2.5 s.  The archive is built once per Java and pyspark
install (`make setup` runs `python -m cdcflow.spark.class_archive`): a JVM runs the Spark
warm-up job (cdcflow.spark.warm_up) and writes the classes it loaded as it exits.  It lives
in the environment's `share/cdcflow`, named by the Java binary and the pyspark jars it was
built from, so another Java or pyspark never maps it; where there is none, JVMs start as
before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).exists() else None


def _jars() -> Path | None:
    """The Spark jars: SPARK_HOME's (under spark-submit pyspark itself is imported from a zip),
    else the pyspark package's."""
    import pyspark

    jars = Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent) / "jars"
    return jars if jars.is_dir() else None


def archive_path() -> Path | None:
    """Where the archive of this Java and pyspark is (whether built or not); None without Java
    or Spark's jars."""
    import pyspark

    java, jars = _java(), _jars()
    if java is None or jars is None:
        return None
    key = hashlib.sha1("\n".join([str(java), str(java.stat().st_mtime_ns), pyspark.__version__,
                                  *sorted(os.listdir(jars))]).encode()).hexdigest()[:16]
    return Path(sys.prefix) / "share" / "cdcflow" / f"spark-classes-{key}.jsa"


def java_option() -> str:
    """The JVM option that maps the archive, or "" when it has not been built."""
    path = archive_path()
    usable = path is not None and path.is_file() and not any(c.isspace() for c in str(path))  # options split on spaces
    return f"-XX:SharedArchiveFile={path}" if usable else ""


def build() -> Path | None:
    """Build the archive unless it exists: a child process runs the warm-up job in an embedded
    session whose JVM writes the archive as it exits; written under a temporary name and
    renamed once the JVM has ended, so a JVM never maps a partial archive."""
    path = archive_path()
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
    from cdcflow.spark.session import SHORT_LIVED_JVM

    env = {**os.environ, "CDCFLOW_DRIVER_JAVA_OPTIONS": f"{SHORT_LIVED_JVM} -XX:ArchiveClassesAtExit={part}",
           "CDCFLOW_SPARK_LOG_LEVEL": "ERROR"}
    done = subprocess.run([sys.executable, "-m", "cdcflow.spark.class_archive", "--dump"], env=env,
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
    from cdcflow.spark.session import get_session
    from cdcflow.spark.warm_up import warm_up

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
