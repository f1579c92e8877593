"""The class-data archive of the short-lived JVMs: built by a JVM that runs the warm-up job,
renamed into place once that JVM has ended, mapped by a later spark-submit JVM (-Xshare:on
makes a JVM that cannot map it fail), and given to a JVM only once it exists."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cdcflow.spark import class_archive, class_archive_build
from cdcflow.spark.session import SHORT_LIVED_JVM, driver_java_options

APP = """
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
print("SUM", spark.range(1000).selectExpr("sum(id)").first()[0])
"""


def test_the_archive_make_setup_built_is_whole_and_a_spark_submit_jvm_maps_it(tmp_path):
    """make setup (which make test runs first) built it with build(): the warm-up job's JVM wrote
    it under a temporary name, renamed once that JVM had ended.  Building it again here took
    longer than the rest of the test."""
    target = class_archive.archive_path()
    assert target is not None and target.is_file(), f"make setup built no class archive at {target}"
    assert target.stat().st_size > 10 * 2**20 and not list(target.parent.glob(f"{target.stem}.*.part"))
    assert class_archive.java_option() == f"-XX:SharedArchiveFile={target}"

    app = tmp_path / "app.py"
    app.write_text(APP)
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PATH": bin_dir + os.pathsep + os.environ["PATH"]}
    options = f"{SHORT_LIVED_JVM} -XX:SharedArchiveFile={target} -Xshare:on"
    run = subprocess.run(["spark-submit", "--master", "local[1]", "--conf", "spark.log.level=WARN",
                          "--conf", f"spark.driver.defaultJavaOptions={options}", str(app)],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "SUM 499500" in run.stdout, run.stderr[-2000:]

    assert class_archive_build.build() == target  # built once: kept as it is


def test_a_jvm_gets_the_archive_only_once_it_is_built(tmp_path, monkeypatch):
    target = tmp_path / "spark-classes-none.jsa"
    monkeypatch.setattr(class_archive, "archive_path", lambda: target)
    monkeypatch.delenv("CDCFLOW_DRIVER_JAVA_OPTIONS", raising=False)
    assert driver_java_options() == SHORT_LIVED_JVM
    target.write_bytes(b"built")
    assert driver_java_options() == f"{SHORT_LIVED_JVM} -XX:SharedArchiveFile={target}"
    monkeypatch.setenv("CDCFLOW_DRIVER_JAVA_OPTIONS", "-Xmx1g")
    assert driver_java_options() == "-Xmx1g"


def test_the_archive_is_named_by_the_java_and_pyspark_it_was_built_from(monkeypatch, tmp_path):
    first = class_archive.archive_path()
    assert first.parent == Path(sys.prefix) / "share" / "cdcflow" and first.suffix == ".jsa"
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("")
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    assert class_archive.archive_path() != first


def test_jars_installed_again_get_an_archive_of_their_own(monkeypatch, tmp_path):
    """The same pyspark installed again (pip --force-reinstall) has new jar files, which the JVM
    will not map an archive of the old ones with: the name changes with them."""
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "a.jar").write_bytes(b"x")
    monkeypatch.setattr(class_archive, "_jars", lambda: jars)
    first = class_archive.archive_path()
    assert class_archive.archive_path() == first
    os.utime(jars / "a.jar", ns=(1, 1))
    assert class_archive.archive_path() != first


def test_under_spark_submit_the_jars_are_spark_homes(monkeypatch, tmp_path):
    """spark-submit imports pyspark from its pyspark.zip, which holds no jars: SPARK_HOME's
    name the archive, the same one; with neither there is no archive, and no error."""
    import pyspark

    here = class_archive.archive_path()
    monkeypatch.setenv("SPARK_HOME", str(Path(pyspark.__file__).parent))
    monkeypatch.setattr(pyspark, "__file__", str(tmp_path / "lib" / "pyspark.zip" / "pyspark" / "__init__.py"))
    assert class_archive.archive_path() == here
    monkeypatch.delenv("SPARK_HOME")
    assert class_archive.archive_path() is None and class_archive.java_option() == ""


def test_an_environment_that_cannot_be_written_builds_none(monkeypatch, tmp_path, capsys):
    blocker = tmp_path / "share"
    blocker.write_text("a file where the folder would go")
    monkeypatch.setattr(class_archive, "archive_path", lambda: blocker / "cdcflow" / "spark-classes-x.jsa")
    assert class_archive_build.build() is None
    assert "class archive not built (JVMs start without one)" in capsys.readouterr().out
