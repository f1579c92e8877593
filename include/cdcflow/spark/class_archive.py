"""A class-data archive (the JVM's AppCDS) for the short-lived JVMs of embedded sessions and
spark-submit stages.

A JVM that maps the classes a Spark run loads from an archive starts in about half the time:
on this 2-core machine an embedded session took 2.2 s instead of 4.2-4.5 s to open, and its
first job 0.9-1.2 s instead of 2.1-2.5 s.  The archive is built once per Java and pyspark
install (`make setup` runs `python -m cdcflow.spark.class_archive_build`): a JVM runs the Spark
warm-up job (cdcflow.spark.warm_up) and writes the classes it loaded as it exits.  It lives
in the environment's `share/cdcflow`, named by the Java binary and the pyspark jars it was
built from, so another Java or pyspark never maps it; where there is none, JVMs start as
before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).exists() else None


def _jars() -> Path | None:
    """The Spark jars: SPARK_HOME's (under spark-submit pyspark itself is imported from a zip),
    else the pyspark package's."""
    import pyspark  # lazy: the DAG parse loads this module (the driver's Java options), without pyspark

    jars = Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent) / "jars"
    return jars if jars.is_dir() else None


def archive_path() -> Path | None:
    """Where the archive of this Java and pyspark is (whether built or not); None without Java
    or Spark's jars."""
    import pyspark  # lazy: the DAG parse loads this module (the driver's Java options), without pyspark

    java, jars = _java(), _jars()
    if java is None or jars is None:
        return None
    # the jars' times too: the JVM refuses an archive whose jars were installed again since, even
    # at the same version (pip install --force-reinstall), so such an install gets an archive of its own
    listed = sorted(os.scandir(jars), key=lambda e: e.name)
    key = hashlib.sha1("\n".join([str(java), str(java.stat().st_mtime_ns), pyspark.__version__,
                                  *(f"{e.name} {e.stat().st_mtime_ns}" for e in listed)]).encode()).hexdigest()[:16]
    return Path(sys.prefix) / "share" / "cdcflow" / f"spark-classes-{key}.jsa"


def java_option() -> str:
    """The JVM option that maps the archive, or "" when it has not been built."""
    path = archive_path()
    usable = path is not None and path.is_file() and not any(c.isspace() for c in str(path))  # options split on spaces
    return f"-XX:SharedArchiveFile={path}" if usable else ""
