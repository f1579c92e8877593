"""Text columns' values read in their character set as the server reads it.

mysql-replication (1.0.17) names a CHAR, VARCHAR or TEXT column's character set from its own
table of collation ids, which lacks MariaDB's UCA 14 collations (a utf16_uca1400_ai_ci column
reads as utf8), and decodes its values with the Python codec of pymysql's name for the set,
which for several sets reads otherwise than the server: latin1 as cp1252, which has no
character for 0x81, 0x8D, 0x8F, 0x90 and 0x9D, euckr without CP949's extension Hangul, big5,
ujis and tis620 without MariaDB's additions: the pull refused the row; greek, hebrew, koi8u,
cp866 and big5 with other characters than the server's for a few: the value changed, silently;
utf16 and utf32 in the machine's byte order (the server's are big-endian): refused, or read as
other characters.  The sets Python has no codec of that name for (ucs2, utf16le, swe7,
armscii8, ...) came as their bytes, not their text.

Here each text column's character set is the server's for its collation id
(charsets.charset_of) and RowsEvent.charset_to_encoding, which mysql-replication's decoding
and the row readers' plans (row_decoder._spec, read by the compiled reader too) ask for a
column's codec, names charsets' reading of it (charsets.codec): the Query events' and the
ENUM members' tables.  binary's values stay bytes.
"""

from __future__ import annotations

from cdcflow.source import charsets

_installed = False


def name_charsets(event) -> None:
    """Each text column of a Table_map event named by the character set of its collation id."""
    collations = list(getattr(event.optional_metadata, "charset_collation_list", None) or [])
    at = 0
    for column in event.columns:
        if not event._is_character_column(column.type, dbms=event.dbms):
            continue
        if at < len(collations):
            column.character_set_name = charsets.charset_of(collations[at])
        at += 1


def install() -> None:
    """Name the columns' character sets after mysql-replication's parse, and read them with
    source.charsets (idempotent)."""
    global _installed
    if _installed:
        return
    from pymysqlreplication.row_event import RowsEvent, TableMapEvent  # lazy: only binlog readers load it

    original_sync, original_encoding = TableMapEvent._sync_column_info, RowsEvent.charset_to_encoding

    def sync_column_info(self):
        original_sync(self)
        if getattr(self, "optional_metadata", None) is not None:
            name_charsets(self)

    def charset_to_encoding(name):
        return charsets.codec(name) if name in charsets.CODECS else original_encoding(name)

    TableMapEvent._sync_column_info = sync_column_info
    RowsEvent.charset_to_encoding = staticmethod(charset_to_encoding)
    _installed = True
