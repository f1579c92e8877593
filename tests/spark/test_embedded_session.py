"""The embedded session's JVM: started with the options of a short-lived JVM (C1 only, the
class archive once built: test_class_archive), which CDCFLOW_DRIVER_JAVA_OPTIONS replaces."""

from __future__ import annotations

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
