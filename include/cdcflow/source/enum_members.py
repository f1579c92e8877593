"""ENUM and SET members read in their column's character set.

A Table_map event's optional metadata (binlog_row_metadata=FULL) carries each ENUM and SET
column's members as bytes in the column's own character set, and the collation of each such
column beside them.  mysql-replication (1.0.17) decodes every member as UTF-8 and puts an empty
text in place of any member that is not UTF-8: the é of a latin1 ENUM, the 中 of a gbk one,
arrive as '' and the row is written with the wrong value, silently.  A latin1 member whose bytes
happen to be valid UTF-8 (Ã© is C3 A9) would even decode to another character.

Here the members are kept as bytes until the columns' collations are known, then read with
source.charsets, the tables that read a statement in its session's character set.  A member
that is no text of its character set (an ENUM of a `binary` table holding arbitrary bytes)
leaves the column without members: its values are then its member numbers, which the
downstream reads as the same members (column_types.read_enum).
"""

from __future__ import annotations

from cdcflow.source import charsets

_installed = False


def decoded(members: list[bytes], collation_id: int | None) -> list[str] | None:
    """`members` as text in the character set of `collation_id`; None where one is not of it."""
    try:
        return [charsets.decode(m, collation_id) for m in members]
    except (UnicodeDecodeError, LookupError):
        return None


def _read_type_values(self, length):
    """mysql-replication's _read_type_values, the members left as bytes."""
    result = []
    read_until = self.packet.read_bytes + length
    while self.packet.read_bytes < read_until:
        count = self.packet.read_length_coded_binary()
        result.append([self.packet.read_variable_length_string() for _ in range(count)])
    return result


def _decode_members(event) -> None:
    """Each ENUM and SET column's members, which the event's metadata left as bytes, as text."""
    meta = event.optional_metadata
    collations = list(getattr(meta, "enum_and_set_collation_list", None) or [])
    at = 0
    for column in event.columns:
        if not event._is_enum_or_set_column(column.type):
            continue
        collation = collations[at] if at < len(collations) else None
        at += 1
        if column.enum_values:
            members = decoded(column.enum_values[1:], collation)  # [0] is the error value ''
            column.enum_values = None if members is None else [""] + members
        if column.set_values:
            column.set_values = decoded(column.set_values, collation)


def install() -> None:
    """Keep the members as bytes in mysql-replication's parse and decode them after it (idempotent)."""
    global _installed
    if _installed:
        return
    from pymysqlreplication.row_event import TableMapEvent  # lazy: only binlog readers load mysql-replication

    original_sync = TableMapEvent._sync_column_info

    def sync_column_info(self):
        original_sync(self)
        if getattr(self, "optional_metadata", None) is not None:
            _decode_members(self)

    TableMapEvent._read_type_values = _read_type_values
    TableMapEvent._sync_column_info = sync_column_info
    _installed = True
