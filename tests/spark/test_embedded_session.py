"""The embedded session's JVM: started with the options of a short-lived JVM (C1 only, the
class archive once built: test_class_archive), which CDCFLOW_DRIVER_JAVA_OPTIONS replaces."""

from __future__ import annotations

import os
import subprocess
import sys

from cdcflow.spark.session import SHORT_LIVED_JVM, driver_java_options


def test_the_session_jvm_runs_with_the_short_lived_options(spark):
    mx = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    assert SHORT_LIVED_JVM == "-XX:TieredStopAtLevel=1"
    assert SHORT_LIVED_JVM in list(mx.getInputArguments())


def test_the_environment_replaces_the_options(monkeypatch):
    assert driver_java_options().startswith(SHORT_LIVED_JVM)  # then the class archive, once built
    monkeypatch.setenv("CDCFLOW_DRIVER_JAVA_OPTIONS", "")
    assert driver_java_options() == ""
    monkeypatch.setenv("CDCFLOW_DRIVER_JAVA_OPTIONS", "-XX:+UseSerialGC")
    assert driver_java_options() == "-XX:+UseSerialGC"


def test_a_local_session_would_start_only_where_none_is_up(spark):
    """would_start_locally: true for a local master in a process with no session up (a fresh
    interpreter), false once one is up (here: the tests' session) and for a cluster's master;
    under spark-submit a master not given is its launcher's, not known to be local."""
    from cdcflow.spark.session import would_start_locally

    assert not would_start_locally("local[4]")  # the tests' session is up
    asked = "from cdcflow.spark.session import would_start_locally as w; print(w('local[4]'), w(None), w('spark://h:7077'))"
    for env, said in (({"CDCFLOW_SPARK_MASTER": "local[2]"}, ["True", "True", "False"]),
                      ({"SPARK_SUBMIT_ARGS_SET_BY_LAUNCHER": "1"}, ["True", "False", "False"])):
        fresh = subprocess.run([sys.executable, "-c", asked], capture_output=True, text=True, check=True,
                               env={**os.environ, **env})
        assert fresh.stdout.split() == said, env
