"""Every binlog event type, and what pull does with each: reads it, passes over it (on purpose,
named here with why), or refuses it by name.  An event of a type not in these tables stops
pull: a reader that skipped what it does not know would replicate a table short of the rows
that event holds, and say nothing.

mysql-replication turns a type it has no class for into a NotImplementedEvent and drops it,
as it drops every class BinlogReader does not ask for (only_events); the compiled reader hands
those packets to it.  Both readers ask for NotImplementedEvent (with the stream's
filter_non_implemented_events off, which would drop it whatever was asked) and
PartialUpdateRowsEvent too, so that binlog_events.record_of sees every event mysql-replication would drop and gives a
REFUSED record for each type refused here, which BinlogReader.read raises where it reaches the
event (a window that ends before it is read as before).  The classes BinlogReader does not ask
for are all of types PASSED_OVER or READ (tests/source/test_event_types.py holds the two
lists together).

Types and names: MySQL's binlog_event.h (libbinlogevents), MariaDB's log_event.h.
"""

from __future__ import annotations

from cdcflow.core.errors import UPSTREAM_BINLOG, CdcflowError

NAMES = {
    0: "UNKNOWN_EVENT", 1: "START_EVENT_V3", 2: "QUERY_EVENT", 3: "STOP_EVENT", 4: "ROTATE_EVENT",
    5: "INTVAR_EVENT", 6: "LOAD_EVENT", 7: "SLAVE_EVENT", 8: "CREATE_FILE_EVENT", 9: "APPEND_BLOCK_EVENT",
    10: "EXEC_LOAD_EVENT", 11: "DELETE_FILE_EVENT", 12: "NEW_LOAD_EVENT", 13: "RAND_EVENT", 14: "USER_VAR_EVENT",
    15: "FORMAT_DESCRIPTION_EVENT", 16: "XID_EVENT", 17: "BEGIN_LOAD_QUERY_EVENT", 18: "EXECUTE_LOAD_QUERY_EVENT",
    19: "TABLE_MAP_EVENT", 20: "PRE_GA_WRITE_ROWS_EVENT", 21: "PRE_GA_UPDATE_ROWS_EVENT",
    22: "PRE_GA_DELETE_ROWS_EVENT", 23: "WRITE_ROWS_EVENT_V1", 24: "UPDATE_ROWS_EVENT_V1",
    25: "DELETE_ROWS_EVENT_V1", 26: "INCIDENT_EVENT", 27: "HEARTBEAT_LOG_EVENT", 28: "IGNORABLE_LOG_EVENT",
    29: "ROWS_QUERY_LOG_EVENT", 30: "WRITE_ROWS_EVENT", 31: "UPDATE_ROWS_EVENT", 32: "DELETE_ROWS_EVENT",
    33: "GTID_LOG_EVENT", 34: "ANONYMOUS_GTID_LOG_EVENT", 35: "PREVIOUS_GTIDS_LOG_EVENT",
    36: "TRANSACTION_CONTEXT_EVENT", 37: "VIEW_CHANGE_EVENT", 38: "XA_PREPARE_LOG_EVENT",
    39: "PARTIAL_UPDATE_ROWS_EVENT", 40: "TRANSACTION_PAYLOAD_EVENT", 41: "HEARTBEAT_LOG_EVENT_V2",
    42: "GTID_TAGGED_LOG_EVENT",
    160: "ANNOTATE_ROWS_EVENT", 161: "BINLOG_CHECKPOINT_EVENT", 162: "GTID_EVENT", 163: "GTID_LIST_EVENT",
    164: "START_ENCRYPTION_EVENT", 165: "QUERY_COMPRESSED_EVENT", 166: "WRITE_ROWS_COMPRESSED_EVENT_V1",
    167: "UPDATE_ROWS_COMPRESSED_EVENT_V1", 168: "DELETE_ROWS_COMPRESSED_EVENT_V1",
    169: "WRITE_ROWS_COMPRESSED_EVENT", 170: "UPDATE_ROWS_COMPRESSED_EVENT", 171: "DELETE_ROWS_COMPRESSED_EVENT",
}

TRANSACTION_PAYLOAD_EVENT = 40

# read: a record of its own (binlog_events), the readers' state (a format description, a table
# map), or, a TRANSACTION_PAYLOAD, the events it holds (source.transaction_payload)
READ = frozenset({2, 4, 15, 16, 18, 19, 23, 24, 25, 30, 31, 32, 33, 40, 162})

# passed over, and why that loses nothing a replica applies
PASSED_OVER = {
    3: "the server stopped: the next file follows",
    5: "a statement's AUTO_INCREMENT / LAST_INSERT_ID: the row events carry the values",
    13: "a statement's RAND() seeds: the row events carry the values",
    14: "a statement's user variable: the row events carry the values",
    9: "a block of a LOAD DATA logged as a statement: its EXECUTE_LOAD_QUERY is read (filter refuses it)",
    11: "a LOAD DATA logged as a statement that did not run: its file is dropped",
    17: "the first block of a LOAD DATA logged as a statement: its EXECUTE_LOAD_QUERY is read",
    27: "a heartbeat of an idle dump",
    41: "a heartbeat of an idle dump",
    28: "an event the server marks as one a replica may ignore",
    29: "the statement of the row events that follow (binlog_rows_query_log_events)",
    160: "the statement of the row events that follow (binlog_annotate_row_events)",
    34: "a transaction without a GTID begins (gtid_mode=OFF): its BEGIN or statement follows",
    35: "the GTIDs of the files before this one",
    163: "the GTIDs of the files before this one",
    161: "the oldest file crash recovery needs",
    36: "group replication's certification data of the transaction that follows",
    37: "group replication's membership change",
    38: "an XA transaction's PREPARE: its rows were read, it commits or rolls back at its XA COMMIT / ROLLBACK",
    164: "the start of an encrypted file: a dump sends its events decrypted",
}

# refused by name: what the event is, and what to do
REFUSED = {
    39: ("a JSON column's update logged as a diff (binlog_row_value_options=PARTIAL_JSON): cdcflow does not "
         "apply JSON diffs, so the row's new value is not in the binlog",
         "run SET GLOBAL binlog_row_value_options='' on the upstream (and set it in its configuration file; "
         "a session that sets PARTIAL_JSON itself writes such events too), then re-copy the table and start "
         "the changefeed after this event"),
    26: ("an incident: the upstream says its binlog may lack changes from here (a replica stops at it too)",
         "compare the tables downstream with the upstream and re-copy what differs, then start the changefeed "
         "after this event"),
    **{t: ("an event MariaDB compressed (log_bin_compress=ON): cdcflow does not read compressed events",
           "run SET GLOBAL log_bin_compress=OFF on the upstream (and set it in its configuration file), then "
           "start the changefeed after the compressed events, re-copying the tables they changed")
       for t in range(165, 172)},
}


def name(etype: int) -> str:
    """The event type's name, or its number where it has none here."""
    return NAMES.get(etype, f"type {etype}")


def refusal(etype: int, file: str, start: int, end: int, table: str | None = None,
            in_payload: bool = False) -> CdcflowError:
    """The error of a refused or unknown event `etype` at `file`:`start` (`in_payload`: inside the
    TRANSACTION_PAYLOAD event there), ending at `end`; `table`: a rows event's."""
    what_event = (f"a {NAMES[etype]} (binlog event type {etype})" if etype in NAMES
                  else f"an event of type {etype}, which cdcflow does not know,")
    of = f" of {table}" if table else ""
    where = (f"inside the compressed transaction (TRANSACTION_PAYLOAD_EVENT) at {file}:{start}" if in_payload
             else f"at {file}:{start}")
    what, hint = REFUSED.get(etype, (
        "pull does not read it, and passing over it could leave rows behind",
        "report it with the event (mysqlbinlog --hexdump or mariadb-binlog --hexdump at that position); the "
        "changefeed can start after it once the tables it may have changed are re-copied"))
    return CdcflowError(f"pull stops at {what_event}{of} {where} (end_log_pos {end}): {what}",
                        code=UPSTREAM_BINLOG, hint=hint)
