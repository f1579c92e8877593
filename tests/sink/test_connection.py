"""sink.connection: the settings of the sessions that write rows."""

from cdcflow.sink import connection


def test_dml_session_settings():
    assert "SET SESSION time_zone = '+00:00'" in connection.DML_SESSION
    mode = next(s for s in connection.DML_SESSION if "sql_mode" in s)
    assert "NO_BACKSLASH_ESCAPES" not in mode and "ANSI_QUOTES" not in mode  # literals rely on both

