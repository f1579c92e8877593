"""Parse each distinct Table_map event once.

The server writes a Table_map event before the rows of every table in every transaction,
so a workload of small transactions makes mysql-replication parse the same table
definition (column types, metadata, names) again for each one: profiled, that was about
40% of the pull stage.  The parse depends only on the event's bytes, which hold the table
id, the names, the column types and the metadata, so identical bytes give an identical
result and can share it.  A table whose definition changes gets other bytes (new metadata,
and a new table id), so it is parsed afresh.
"""

from __future__ import annotations

from cdcflow.source import column_types

_MAX_ENTRIES = 4096
_cache: dict[tuple[str, bytes], dict] = {}
_installed = False

# What the base event's __init__ sets from the packet at hand; everything else a
# TableMapEvent holds comes from the event's bytes and is what the cache keeps.
_PER_EVENT = frozenset({
    "packet", "table_map", "event_type", "timestamp", "event_size", "_post_header_lengths", "_ctl_connection",
    "mysql_version", "_ignore_decode_errors", "_verify_checksum", "_is_event_valid", "_processed", "complete",
    "dbms",
})
# the packet wrapper has read the OK byte and the 19-byte common header before the event body
_BODY_OFFSET = 20


def install() -> None:
    """Route mysql-replication's TableMapEvent through the cache (idempotent)."""
    global _installed
    if _installed:
        return
    from pymysqlreplication.event import BinLogEvent  # lazy: only binlog readers load mysql-replication
    from pymysqlreplication.row_event import TableMapEvent  # lazy: only binlog readers load mysql-replication

    original = TableMapEvent.__init__

    def init(self, from_packet, event_size, table_map, ctl_connection, **kwargs):
        body = from_packet.packet.get_all_data()[_BODY_OFFSET:_BODY_OFFSET + event_size]
        key = (ctl_connection._get_dbms(), body)
        parsed = _cache.get(key)
        if parsed is None:
            original(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
            if self._processed and hasattr(self, "table_obj"):
                column_types.set_old_temporal_fsp(self)  # what the bytes leave out, asked once per definition
                if len(_cache) >= _MAX_ENTRIES:
                    _cache.clear()
                _cache[key] = {k: v for k, v in self.__dict__.items() if k not in _PER_EVENT}
            return
        BinLogEvent.__init__(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
        self.__dict__.update(parsed)
        table_map[self.table_id] = self.table_obj

    TableMapEvent.__init__ = init
    _installed = True
