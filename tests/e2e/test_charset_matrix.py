"""Every character set the upstream server offers (SHOW CHARACTER SET), a table of its own
whose CHAR, VARCHAR, TEXT, ENUM and SET columns hold characters of that set beyond ASCII
(tests/charset_matrix.py: the server's own, every one for the sets that are not Unicode),
replicates byte for byte.

A TEXT holds the whole repertoire, the other columns samples of it; ENUM and SET members are
characters of it that the table's collation tells apart, in every position (first, last, the
only member, all members, the empty SET, NULL).  Each table is created, and its rows written,
from a session in its own character set (the statements as that set's bytes), and the rows
again from a utf8mb4 session; the sets no session can be in (ucs2, utf16, utf16le, utf32) from
utf8mb4 sessions only, and ascii, which has no character beyond ASCII, with its letters and
digits.  Two cycles (inserts; then updates, deletes and an insert) are compared value by value
by HEX(), and by the tables' definitions."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from charset_matrix import Charset, charsets, raw, spread, text
from e2e_helpers import PREPARED_BATCHES, assert_consistent, cli_run, create_changefeed, fresh_schema, prepared_executions

pytestmark = pytest.mark.e2e

SCHEMA = "charset_matrix"
CHANGEFEED = "charset-matrix"
COLUMNS = ("c", "v", "t", "e", "s", "e1", "s1")
CHAR_LENGTH, VARCHAR_LENGTH = 10, 120

# --- the tables and their rows ----------------------------------------------------------------

def _set(cs: Charset, *members: tuple) -> tuple:
    """A SET value of `members` (in the order of the definition)."""
    return tuple(char for i, member in enumerate(members) for char in (cs.comma if i else ()) + member)


def _rows(cs: Charset, base: int) -> dict[int, dict]:
    """The rows a session writes (ids from `base`): values as tuples of characters, None for NULL."""
    m, chars = cs.members, cs.chars
    first, last, longest = m[0], m[4], m[5]
    return {
        base + 1: {"c": spread(chars, CHAR_LENGTH), "v": spread(chars, VARCHAR_LENGTH, 1), "t": chars,
                   "e": first, "s": first, "e1": longest, "s1": longest},
        base + 2: {"c": chars[-1:], "v": spread(chars, 7, 2), "t": spread(chars, 300, 3), "e": last, "s": last,
                   "e1": None, "s1": ()},
        base + 3: {"c": (), "v": (), "t": (), "e": m[2], "s": _set(cs, *m[:5]), "e1": longest, "s1": None},
        base + 4: dict.fromkeys(COLUMNS),
        base + 5: {"c": chars[:1], "v": chars[-2:], "t": spread(chars, 50, 4), "e": m[1], "s": (),
                   "e1": longest, "s1": longest},
    }


def _later(cs: Charset, base: int) -> tuple[dict[int, dict], list[int]]:
    """The second cycle's changes to a session's rows: {id: new values} (a new id is inserted), and
    the ids deleted."""
    m, chars = cs.members, cs.chars
    return ({base + 1: {"t": chars[::-1], "e": m[4], "s": _set(cs, m[0], m[4]), "s1": ()},
             base + 2: {"c": spread(chars, CHAR_LENGTH, 5), "e": None, "s": None, "e1": m[5]},
             base + 4: {"v": chars[:3], "e": m[3], "s": _set(cs, m[3], m[4]), "s1": m[5]},
             base + 6: {"c": chars[-3:], "v": spread(chars, 9, 6), "t": chars[:40], "e": m[0], "s": m[1],
                        "e1": m[5], "s1": ()}},
            [base + 3, base + 5])


class Session:
    """A session of the upstream, in the table's own character set (`own`: its statements
    written as the set's bytes, backslashes no escapes, for a byte 0x5C is a character's, swe7's
    Ö or a trail byte) or in utf8mb4 (its values passed as text, binary's as bytes)."""

    def __init__(self, up, cs: Charset, own: bool):
        self.cs, self.own = cs, own
        self.conn = up.connect(SCHEMA)
        if own:
            with self.conn.cursor() as cur:  # no @@variable after SET NAMES: swe7 reads the byte @ as É
                cur.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')")
                cur.execute(f"SET NAMES {cs.name}")
                cur.execute("SHOW SESSION VARIABLES LIKE 'character_set_client'")
                assert cur.fetchone()[1] in (cs.name, cs.name.encode())  # binary's answer is bytes

    def run(self, template: str, values: list = ()) -> None:
        """`template` with each %s a value's literal (None: NULL)."""
        with self.conn.cursor() as cur:
            if not self.own:
                cur.execute(template, [v if v is None else raw(v) if self.cs.textless else text(v) for v in values])
                return
            pieces = template.encode("ascii").split(b"%s")
            literals = [b"NULL" if v is None else b"'" + raw(v) + b"'" for v in values]
            cur.execute(pieces[0] + b"".join(lit + piece for lit, piece in zip(literals, pieces[1:])))


@contextmanager
def sessions(up, cs: Charset):
    """[(the first id it writes, a Session)]: a utf8mb4 one, then one in the table's own set
    where a session can be in it."""
    opened = [(100, Session(up, cs, own=False))] + ([(200, Session(up, cs, own=True))] if cs.client else [])
    try:
        yield opened
    finally:
        for _, session in opened:
            session.conn.close()


def _create(session: Session) -> None:
    cs = session.cs
    # the binary table's members are written in hexadecimal: cdcflow reads a statement as its
    # session's text, and a binary session's non-UTF-8 bytes are none (it stops, naming them)
    member = [f"X'{raw(m).hex()}'" if cs.textless else "%s" for m in cs.members]
    values = [] if cs.textless else cs.members[:5] * 2 + cs.members[5:] * 2
    members, longest = ", ".join(member[:5]), member[5]
    session.run(f"CREATE TABLE t_{cs.name} (id INT PRIMARY KEY, c CHAR({CHAR_LENGTH}), v VARCHAR({VARCHAR_LENGTH}), "
                f"t TEXT, e ENUM({members}), s SET({members}), e1 ENUM({longest}), s1 SET({longest})) "
                f"DEFAULT CHARSET = {cs.name}", values)


def _insert(session: Session, rows: dict[int, dict]) -> None:
    for i, row in rows.items():
        session.run(f"INSERT INTO t_{session.cs.name} (id, {', '.join(COLUMNS)}) VALUES ({i}{', %s' * len(COLUMNS)})",
                    [row[c] for c in COLUMNS])


def _change(session: Session, changes: dict[int, dict], deleted: list[int], existing: set[int]) -> None:
    table = f"t_{session.cs.name}"
    for i, new in changes.items():
        if i in existing:
            session.run(f"UPDATE {table} SET {', '.join(f'{c} = %s' for c in new)} WHERE id = {i}", list(new.values()))
        else:
            _insert(session, {i: {**dict.fromkeys(COLUMNS), **new}})
    for i in deleted:
        session.run(f"DELETE FROM {table} WHERE id = {i}")


# --- the comparison ---------------------------------------------------------------------------

def _hex_rows(server, table: str) -> dict[int, tuple]:
    return {r[0]: r[1:] for r in server.query(
        f"SELECT id, {', '.join(f'HEX({c})' for c in COLUMNS)} FROM {SCHEMA}.{table} ORDER BY id")}


def _first_difference(up: str | None, down: str | None) -> str:
    """Where two values' HEX() part, and their bytes there."""
    if up is None or down is None:
        return f"up {up and up[:40]} down {down and down[:40]}"
    at = next((i for i, (a, b) in enumerate(zip(up, down)) if a != b), min(len(up), len(down))) // 2 * 2
    return f"from byte {at // 2}: up {up[max(0, at - 8):at + 16]}… down {down[max(0, at - 8):at + 16]}… " \
           f"({len(up) // 2} and {len(down) // 2} bytes)"


def assert_same_bytes(up, down, sets: list[Charset]) -> None:
    """Every value of every table, upstream and downstream, by its bytes."""
    diffs = []
    for cs in sets:
        table = f"t_{cs.name}"
        want, got = _hex_rows(up, table), _hex_rows(down, table)
        if set(want) != set(got):
            diffs.append(f"{table}: ids up {sorted(want)} down {sorted(got)}")
        for i in sorted(set(want) & set(got)):
            diffs += [f"{table} id {i} {c}: {_first_difference(w, g)}"
                      for c, w, g in zip(COLUMNS, want[i], got[i]) if w != g]
    assert not diffs, f"{len(diffs)} values differ:\n" + "\n".join(diffs[:60])


def _expected(cs: Charset, rows: dict[int, dict]) -> dict[int, tuple]:
    """The rows as HEX() gives them back: a binary table's CHAR is BINARY, padded with zero bytes."""
    def hexed(column, value):
        if value is None:
            return None
        return (raw(value).ljust(CHAR_LENGTH, b"\0") if column == "c" and cs.textless else raw(value)).hex().upper()
    return {i: tuple(hexed(c, row[c]) for c in COLUMNS) for i, row in rows.items()}


def test_every_charset_replicates_its_characters_byte_for_byte(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    sets = charsets(up)
    fresh_schema(up, down, SCHEMA)
    create_changefeed(capsys, up, down, CHANGEFEED, f"[filter]\nrules = ['{SCHEMA}.*']\n" + PREPARED_BATCHES)
    written: dict[str, dict[int, dict]] = {}
    for cs in sets:
        with sessions(up, cs) as opened:
            _create(opened[-1][1])  # in the table's own set where a session can be
            written[cs.name] = {}
            for base, session in opened:
                rows = _rows(cs, base)
                _insert(session, rows)
                written[cs.name].update(rows)
    # a table for every character set, in that set (not another the server took it for)
    made = up.query("SELECT TABLE_NAME, CHARACTER_SET_NAME FROM information_schema.TABLES JOIN "
                    "information_schema.COLLATION_CHARACTER_SET_APPLICABILITY ON FULL_COLLATION_NAME = "
                    f"TABLE_COLLATION WHERE TABLE_SCHEMA = '{SCHEMA}'")
    assert dict(made) == {f"t_{cs.name}": cs.name for cs in sets}
    # the upstream holds what the test meant: no character lost on its way in, from either session
    for cs in sets:
        assert _hex_rows(up, f"t_{cs.name}") == _expected(cs, written[cs.name]), cs.name
    with prepared_executions(down, at_least=len(sets)):
        rc, err = cli_run(capsys, CHANGEFEED)
    assert rc == 0, err
    assert_same_bytes(up, down, sets)
    assert_consistent(up, down, [SCHEMA])

    for cs in sets:
        with sessions(up, cs) as opened:
            for base, session in opened:
                _change(session, *_later(cs, base), set(written[cs.name]))
    rc, err = cli_run(capsys, CHANGEFEED)
    assert rc == 0, err
    assert_same_bytes(up, down, sets)
    assert_consistent(up, down, [SCHEMA])
