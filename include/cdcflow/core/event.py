"""The change event record, written down once: the binlog reader emits it, the event store
derives its Arrow and Spark schemas from its fields (store.events)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(kw_only=True)
class Event:
    """One row change or one DDL (docs/design/index.md, Events)."""

    commit_ts: int
    start_ts: int | None = None  # binlog sources carry no start ts
    seq: int
    schema: str
    table: str
    op: str  # insert, update, delete, ddl
    before: str | None = None  # row images, encoded by core.row_codec
    after: str | None = None
    pk: str | None = None  # the binlog's key columns, a JSON list
    # the text of the change's key in each image as apply compares keys (stages.pull_keys); None
    # where pull could not tell the key (contracts.KeySpan says which events it keyed, and by what)
    before_key: str | None = None
    after_key: str | None = None
    # 1: the upstream session ran the row change with foreign_key_checks = 0 (its rows event's
    # NO_FOREIGN_KEY_CHECKS flag), so no key's action ran for it there
    fk_checks_off: int | None = None
    ddl_query: str | None = None
    ddl_schema: str | None = None
    sql_mode: str | None = None
    gtid: str | None = None
    # a DDL's: the GTID position before its transaction (None where the reader does not know it)
    gtid_position: str | None = None
    start_file: str | None = None  # where the transaction starts in the binlog
    start_pos: int | None = None
    end_file: str | None = None  # where a DDL ends
    end_pos: int | None = None
    event_time: int | None = None
    # the upstream session a DDL ran in (core.ddl_session)
    ddl_time_us: int | None = None
    ddl_time_zone: str | None = None
    ddl_collation_connection: str | None = None
    ddl_collation_server: str | None = None
