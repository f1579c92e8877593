"""The character set matrix: every character set the upstream server offers (SHOW CHARACTER
SET), with characters of it beyond ASCII as the server reads them, ENUM and SET members of
them, and whether a session can be in it.

The characters are the server's: for each character set, every byte sequence of its width
(each byte, each two-byte sequence from 0x80 on, EUC-JP's three-byte ones) that the server
reads as one character beyond ASCII, or for the Unicode sets code points across all planes,
kept where the server converts the character back to the same bytes.  A character is
(its bytes in the set, its text); a value is a sequence of characters."""

from __future__ import annotations

from dataclasses import dataclass

import pymysql

# The character sets a table can have that a session cannot (character_set_client): the server
# refuses them (ER_WRONG_VALUE_FOR_VAR) because their ASCII is not single bytes.  Their tables are
# created and written from utf8mb4 sessions only.  Every character set can be a table's default
# (binary too: its CHAR, VARCHAR and TEXT become BINARY, VARBINARY and BLOB), so no table is left out.
NOT_CLIENT_CHARSETS = {"ucs2", "utf16", "utf16le", "utf32"}
WRONG_VALUE_FOR_VAR = 1231
# The character sets with no character beyond ASCII: their tables hold its letters and digits.
ASCII_ONLY = {"ascii"}


@dataclass(frozen=True)
class Charset:
    name: str
    chars: list[tuple[bytes, str | None]]  # each character's bytes in the set, and its text (None: binary's bytes)
    members: list[tuple]  # ENUM and SET members, each a tuple of characters
    client: bool  # whether a session can be in it
    comma: tuple  # a SET value's separator, as a value of one character

    @property
    def textless(self) -> bool:
        """binary's: its characters are bytes, no text."""
        return self.chars[0][1] is None


# --- the repertoires, as the server reads them ----------------------------------------------

def _byte_candidates(maxlen: int) -> str:
    """Each byte, and each two-byte sequence from 0x8000 where the set has such characters (the
    lead byte of a multi-byte character is never ASCII in these sets); EUC-JP's three-byte
    characters (JIS X 0212) all begin with 0x8F."""
    parts = ["SELECT UNHEX(LPAD(HEX(seq), 2, '0')) AS b FROM seq_0_to_255"]
    if maxlen >= 2:
        parts.append("SELECT UNHEX(HEX(seq)) FROM seq_32768_to_65535")
    if maxlen >= 3:
        parts.append(f"SELECT UNHEX(HEX(seq)) FROM seq_{0x8FA1A1}_to_{0x8FFEFE}")
    return " UNION ALL ".join(parts)


# code points across the BMP and the other planes, and the ones a codec may treat specially
# (a byte-order mark, the replacement character, the last code point); not the surrogates,
# which are no characters (the server's utf8mb4 of one is bytes no UTF-8 reader takes, ED A0 80)
_CODE_POINTS = " UNION ALL ".join(
    [f"SELECT seq AS cp FROM seq_128_to_65535_step_67 WHERE seq NOT BETWEEN {0xD800} AND {0xDFFF}",
     "SELECT seq FROM seq_65536_to_1114111_step_4099"]
    + [f"SELECT seq FROM seq_{cp}_to_{cp}" for cp in (0xFEFF, 0xFFFD, 0x10FFFF)])


def _repertoire(cur, name: str, description: str, collation: str, maxlen: int, wanted: str) -> list:
    """The set's characters `wanted` picks (an SQL condition on one character's text x), in
    order of their bytes (code points for the Unicode sets): [(bytes, text)]."""
    if collation == "binary":  # no characters, bytes: those beyond ASCII
        return [(bytes([b]), None) for b in range(0x80, 0x100)]
    if "Unicode" in description:
        cur.execute(f"SELECT HEX(CONVERT(x USING {name})), HEX(x) FROM (SELECT cp, CONVERT(CHAR(cp USING utf32) "
                    f"USING utf8mb4) AS x FROM ({_CODE_POINTS}) AS c) AS d WHERE CHAR_LENGTH(x) = 1 AND {wanted} "
                    f"AND CAST(CONVERT(CONVERT(x USING {name}) USING utf8mb4) AS BINARY) = CAST(x AS BINARY) "
                    "ORDER BY cp")
    else:
        # kept where the character converts back to the same bytes: a set that reads two byte
        # sequences as one character (cp932's NEC and IBM duplicates, the bytes big5 and tis620
        # read as U+FFFD but one) holds bytes no text carries back
        cur.execute(f"SELECT HEX(b), HEX(x) FROM (SELECT b, CONVERT(CONVERT(b USING {name}) USING utf8mb4) AS x "
                    f"FROM ({_byte_candidates(maxlen)}) AS c) AS d WHERE CHAR_LENGTH(x) = 1 AND {wanted} "
                    f"AND CAST(CONVERT(x USING {name}) AS BINARY) = b ORDER BY b")
    return [(bytes.fromhex(raw), bytes.fromhex(text).decode("utf-8")) for raw, text in cur.fetchall()]


def spread(chars: list, n: int, offset: int = 0) -> list:
    """`n` characters spread over `chars` (all of them if it has fewer), from `offset` on."""
    if len(chars) <= n:
        return chars[offset:] + chars[:offset]
    return [chars[(offset + i * len(chars) // n) % len(chars)] for i in range(n)]


def _members(cur, name: str, chars: list) -> list[tuple]:
    """Five members the set's default collation tells apart (an ENUM or SET whose members compare
    equal is refused), spread over its repertoire, and a member of three characters."""
    pool = spread(chars, 65)
    candidates = [pool[i] for i in sorted(range(len(pool)), key=lambda i: (i % 13, i))]  # 0, 13, 26, ... first
    cur.execute("SELECT " + ", ".join(f"HEX(WEIGHT_STRING(CONVERT(X'{raw.hex()}' USING {name})))"
                                      for raw, _ in candidates))
    weights, picked = set(), []
    for char, weight in zip(candidates, cur.fetchone()):
        if weight and weight not in weights and len(picked) < 5:
            weights.add(weight)
            picked.append((char,))
    assert len(picked) == 5, f"{name}: five members its collation tells apart"
    return picked + [tuple(spread(chars, 3, 1))]


def charsets(up) -> list[Charset]:
    """Every character set of the upstream, with its characters and members, and whether a
    session can be in it (the server says: SET NAMES)."""
    found = []
    with up.connect("mysql") as conn, conn.cursor() as cur:  # the seq_ tables are any database's
        cur.execute("SHOW CHARACTER SET")
        for name, description, collation, maxlen in sorted(cur.fetchall()):
            chars = _repertoire(cur, name, description, collation, maxlen, "ASCII(x) > 127")
            if not chars:
                assert name in ASCII_ONLY, f"{name} has no character beyond ASCII"
                chars = _repertoire(cur, name, description, collation, maxlen, "x RLIKE '^[[:alnum:]]$'")
            assert len(chars) >= 6, name
            try:
                cur.execute(f"SET NAMES {name}")
                client = True
            except pymysql.err.OperationalError as e:
                assert e.args[0] == WRONG_VALUE_FOR_VAR, e
                client = False
            cur.execute("SET NAMES utf8mb4")
            # a session in the set quotes its characters' bytes without escaping any
            assert not client or all(b"'" not in raw for raw, _ in chars), name
            cur.execute(f"SELECT HEX(CONVERT(',' USING {name}))")
            comma = ((bytes.fromhex(cur.fetchone()[0]), ","),)
            found.append(Charset(name, chars, _members(cur, name, chars), client, comma))
    assert {c.name for c in found if not c.client} == NOT_CLIENT_CHARSETS
    return found


def charset_tables(up, sets: list[Charset]) -> dict[str, tuple[Charset, str]]:
    """A table name per set and collation, with its set and the COLLATE clause to create it with:
    t_<set> in the set's default collation, u_<set> in its collation of the highest id (for the
    Unicode sets a UCA 14 one, which mysql-replication's table of ids does not know)."""
    last = dict(up.query("SELECT CHARACTER_SET_NAME, FULL_COLLATION_NAME FROM "
                         "information_schema.COLLATION_CHARACTER_SET_APPLICABILITY a WHERE ID = (SELECT MAX(ID) FROM "
                         "information_schema.COLLATION_CHARACTER_SET_APPLICABILITY b "
                         "WHERE b.CHARACTER_SET_NAME = a.CHARACTER_SET_NAME)"))
    return {f"{kind}_{cs.name}": (cs, collation) for cs in sets
            for kind, collation in (("t", ""), ("u", f" COLLATE {last[cs.name]}"))}


def raw(value) -> bytes:
    """A value's bytes in its set."""
    return b"".join(r for r, _ in value)


def text(value) -> str:
    """A value's text."""
    return "".join(t for _, t in value)
