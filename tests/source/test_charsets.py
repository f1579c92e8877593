"""The collation id table against a live server's (the oracle), and each character set's codec."""

from __future__ import annotations

import pytest

from cdcflow.source import charsets
from cdcflow.source.charset_maps import SINGLE_BYTE

ORACLE = ("SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATIONS WHERE ID IS NOT NULL UNION "
          "SELECT ID, CHARACTER_SET_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY")


def test_every_collation_id_of_the_server_names_its_character_set(mariadb_pair):
    up, _ = mariadb_pair
    server = {int(i): cs for i, cs in up.query(ORACLE)}
    assert len(server) > 300
    assert {i: charsets.charset_of(i) for i in server} == server
    mine = {i for spans in charsets.COLLATION_IDS.values() for a, b in spans for i in range(a, b + 1)}
    assert mine == set(server)  # nothing the server lacks; MySQL's own ids are kept apart
    assert not mine & {i for spans in charsets.MYSQL_ONLY_IDS.values() for a, b in spans for i in range(a, b + 1)}


def test_every_character_set_has_a_codec_entry_and_each_codec_exists():
    import codecs

    assert set(charsets.CODECS) == set(charsets.COLLATION_IDS) | set(charsets.MYSQL_ONLY_IDS)
    for charset, codec in charsets.CODECS.items():
        assert (codec is None) == (charset in SINGLE_BYTE), charset
        if codec:
            codecs.lookup(codec)


@pytest.mark.parametrize("collation, codec, text", [
    (28, "gbk", "COMMENT '你好' `名字`"), (87, "gbk", "默认"), (13, "shift_jis", "ソ表 予定"), (95, "cp932", "ソ表"),
    (8, "cp1252", "café naïve über €"), (51, "cp1251", "Привет Ёж"), (14, "cp1251", "мир"), (33, "utf-8", "x é"),
    (45, "utf-8", "x 😀"), (255, "utf-8", "x 😀"), (11, "ascii", "plain"), (None, "utf-8", "é"),
])
def test_statements_decode_in_their_session_character_set(collation, codec, text):
    assert charsets.decode(text.encode(codec), collation) == text


def test_the_single_byte_character_sets_read_as_the_server_converts_them(mariadb_pair):
    up, _ = mariadb_pair
    for charset, table in SINGLE_BYTE.items():
        converted = ", ".join(f"CONVERT(CONVERT(UNHEX('{b:02X}') USING {charset}) USING utf8mb4)" for b in range(256))
        server = up.query(f"SELECT {converted}")[0]
        assert [c if c != "\ufffe" else server[i] if server[i] in "?\ufffd" else "unassigned?"
                for i, c in enumerate(table)] == list(server), charset
    swe7 = charsets.COLLATION_IDS["swe7"][0][0]
    assert charsets.decode(b"CREATE TABLE t (a INT) COMMENT '\x5c'", swe7) == "CREATE TABLE t (a INT) COMMENT 'Ö'"
    with pytest.raises(UnicodeDecodeError):
        charsets.decode(b"\xe9", swe7)  # swe7 is 7-bit: no character for it


@pytest.mark.parametrize("charset, raw, text", [
    ("latin1", b"\x81\x8d\x8f\x90\x9d\xe9", "\x81\x8d\x8f\x90\x9d\xe9"),  # cp1252 has none of the five
    ("greek", b"\xa1\xa2", "ʽʼ"), ("koi8u", b"\x95", "•"), ("cp866", b"\xfc\xfd", "ⁿ²"), ("swe7", b"\x5b\x5c", "ÄÖ"),
    ("big5", b"\xf9\xd6\xa2\xce", "碁\ufffd"), ("euckr", b"\x81\x41", "갂"), ("ujis", b"\xf5\xa1", "\ue000"),
    ("tis620", b"\xff", "\ufffd"), ("gbk", b"\xd6\xd0", "中"),
    # the Unicode sets are big-endian, and a leading U+FEFF is a character, not a byte-order mark
    ("utf16", b"\xfe\xff\x00A", "\ufeffA"), ("utf32", b"\x00\x00\x00A", "A"), ("ucs2", b"\x00\xe9", "é"),
    ("utf16le", b"A\x00", "A"), ("utf8mb4", "😀".encode(), "😀"),
])
def test_a_columns_values_read_with_its_character_sets_codec(charset, raw, text):
    assert raw.decode(charsets.codec(charset)) == text


def test_the_codecs_read_only_and_binary_has_none():
    import codecs

    assert charsets.codec("utf8mb3") == charsets.codec("utf8mb4") == "utf-8"
    with pytest.raises(LookupError):
        codecs.lookup(charsets.codec("binary"))  # its values are bytes
    swe7 = charsets.codec("swe7")
    assert b"a\xe9b".decode(swe7, "ignore") == "ab"
    with pytest.raises(UnicodeDecodeError):
        b"a\xe9b".decode(swe7)
    with pytest.raises(UnicodeError):
        "a".encode(swe7)


MULTI_BYTE = ("gbk", "sjis", "cp932", "big5", "euckr", "gb2312", "ujis", "eucjpms")


@pytest.mark.parametrize("charset", MULTI_BYTE)
def test_the_multi_byte_character_sets_read_every_character_as_the_server_does(mariadb_pair, charset):
    """Every two-byte sequence (and EUC-JP's three-byte ones) the server reads as one character
    reads as that character here."""
    up, _ = mariadb_pair
    spans = [(0x8000, 0xFFFF, 2)] + ([(0x8FA1A1, 0x8FFEFE, 3)] if charset in ("ujis", "eucjpms") else [])
    collation = charsets.COLLATION_IDS[charset][0][0]
    differ = []
    for lo, hi, width in spans:
        rows = up.query(f"SELECT seq, HEX(CONVERT(CONVERT(UNHEX(LPAD(HEX(seq), {2 * width}, '0')) USING {charset}) "
                        f"USING utf8mb4)) FROM seq_{lo}_to_{hi}", database="mysql")
        for seq, text in rows:
            server = bytes.fromhex(text).decode("utf-8")
            if len(server) != 1 or server in "?\ufffd":
                continue  # no character of the set (a statement holding it is refused upstream)
            raw = seq.to_bytes(width, "big")
            try:
                mine = charsets.decode(raw, collation)
            except UnicodeDecodeError:
                mine = None
            if mine != server:
                differ.append((raw.hex(), mine, server))
    assert not differ, differ[:20]
