"""ENUM and SET members that are not ASCII, in tables whose charset is not UTF-8, replicate
exactly: the binlog's Table_map carries the members as bytes in the column's charset (a latin1
é, a gbk 中), and a member read as UTF-8 arrived empty downstream.  Written from a UTF-8
session and from one in the table's own charset; compared by each value's bytes and by the
tables' definitions."""

from __future__ import annotations

import pytest
from e2e_helpers import PREPARED_BATCHES, assert_consistent, cli_run, create_changefeed, fresh_schema, prepared_executions

pytestmark = pytest.mark.e2e

CHARSET = {"e": "latin1", "g": "gbk", "m": "latin1"}
DDL = {
    "e": "CREATE TABLE e (id INT PRIMARY KEY, c ENUM('é','ü','a') DEFAULT 'é', s SET('ä','ö','x'), v VARCHAR(10))"
         " DEFAULT CHARSET=latin1",
    "g": "CREATE TABLE g (id INT PRIMARY KEY, c ENUM('中','文','a'), s SET('中','文','x')) DEFAULT CHARSET=gbk",
    # latin1 bytes that are also valid UTF-8 (Ã© is C3 A9): read as UTF-8 they are another member
    "m": "CREATE TABLE m (id INT PRIMARY KEY, c ENUM('Ã©','é'), s SET('Ã©','é')) DEFAULT CHARSET=latin1",
}
ROWS = [
    ("e", "INSERT INTO e (id) VALUES (1)"),
    ("e", "INSERT INTO e VALUES (2, 'ü', 'ä,ö', 'naïve'), (3, 'a', 'x', 'ok'), (4, NULL, '', NULL)"),
    ("g", "INSERT INTO g VALUES (1, '中', '中,文'), (2, 'a', 'x'), (3, '文', NULL)"),
    ("m", "INSERT INTO m VALUES (1, 'Ã©', 'é'), (2, 'é', 'Ã©,é')"),
]
LATER = [
    ("e", "UPDATE e SET c = 'a', s = 'ä' WHERE id = 2"),
    ("g", "UPDATE g SET c = '文', s = '文' WHERE id = 1"),
    ("e", "DELETE FROM e WHERE id = 3"),
    ("e", "INSERT INTO e VALUES (5, 'ü', 'ö', 'é')"),
]
VALUES = {"e": "id, HEX(c), HEX(s), HEX(v)", "g": "id, HEX(c), HEX(s)", "m": "id, HEX(c), HEX(s)"}


def _values(server, schema: str) -> dict:
    return {t: server.query(f"SELECT {cols} FROM {schema}.{t} ORDER BY id") for t, cols in VALUES.items()}


def _run(up, schema: str, session_charset: str, statements) -> None:
    """Each statement from a session in `session_charset` where the table's charset can say it
    (a latin1 session writes the latin1 tables), from a UTF-8 one otherwise."""
    for table, stmt in statements:
        charset = session_charset if session_charset in ("utf8mb4", CHARSET[table]) else "utf8mb4"
        with up.connect(schema, charset=charset) as c, c.cursor() as cur:
            cur.execute(stmt)


@pytest.mark.parametrize("session_charset", ["utf8mb4", "latin1", "gbk"])
def test_non_ascii_members_of_non_utf8_tables(mariadb_pair, spark, cdcflow_home, capsys, session_charset):
    up, down = mariadb_pair
    schema = f"members_{session_charset}"
    fresh_schema(up, down, schema)
    cid = f"members-{session_charset}"
    create_changefeed(capsys, up, down, cid, f"[filter]\nrules = ['{schema}.*']\n" + PREPARED_BATCHES)
    _run(up, schema, session_charset, list(DDL.items()) + ROWS)
    with prepared_executions(down):
        rc, err = cli_run(capsys, cid)
    assert rc == 0, err
    first = _values(up, schema)
    # the upstream holds the members in the tables' charsets (none is the error value '')
    assert first["e"][:2] == [(1, "E9", None, None), (2, "FC", "E42CF6", "6E61EF7665")]
    assert first["g"][0] == (1, "D6D0", "D6D02CCEC4")
    assert first["m"] == [(1, "C3A9", "E9"), (2, "E9", "C3A92CE9")]
    assert _values(down, schema) == first
    assert_consistent(up, down, [schema])

    _run(up, schema, session_charset, LATER)
    rc, err = cli_run(capsys, cid)
    assert rc == 0, err
    assert _values(down, schema) == _values(up, schema)
    assert down.query(f"SELECT HEX(c), HEX(s) FROM {schema}.g WHERE id = 1") == [("CEC4", "CEC4")]
    assert down.query(f"SELECT HEX(c), HEX(s), HEX(v) FROM {schema}.e WHERE id = 5") == [("FC", "F6", "E9")]
    assert_consistent(up, down, [schema])
