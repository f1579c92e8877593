"""The collation id table against a live server's (the oracle), and each character set's codec."""

from __future__ import annotations

import pytest

from cdcflow.source import charsets

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
    for codec in filter(None, charsets.CODECS.values()):
        codecs.lookup(codec)


@pytest.mark.parametrize("collation, text", [
    (28, "COMMENT '你好' `名字`"), (87, "默认"), (13, "ソ表 予定"), (95, "ソ表"), (8, "café naïve über"),
    (51, "Привет Ёж"), (14, "мир"), (33, "x 😀"[:3]), (45, "x 😀"), (255, "x 😀"), (11, "plain"), (None, "é"),
])
def test_statements_decode_in_their_session_character_set(collation, text):
    codec = charsets.CODECS[charsets.charset_of(collation)]
    assert charsets.decode(text.encode("cp1252" if codec == "cp1252" else codec), collation) == text


def test_latin1_reads_the_bytes_cp1252_leaves_unassigned_as_mysql_does():
    assert charsets.decode(b"\x81\x8d\x8f\x90\x9d\x80", 8) == "\x81\x8d\x8f\x90\x9d€"


def test_a_character_set_python_has_no_codec_for_reads_ascii_and_refuses_the_rest():
    assert charsets.decode(b"CREATE TABLE t (a INT)", 3) == "CREATE TABLE t (a INT)"  # dec8
    with pytest.raises(UnicodeDecodeError):
        charsets.decode(b"\xe9", 3)
