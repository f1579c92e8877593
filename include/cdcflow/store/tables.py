"""Every table of the metadata store, declared once so that one migration (store/engine.py)
creates and upgrades them all and removing a changefeed reaches each of them (store/sql.py
says what a column kind is in each database)."""

from __future__ import annotations

from cdcflow.store.sql import Connection, Table, column

changefeeds = Table("cdcflow_changefeeds", owner="id", columns=(
    column("id", "string", 128, key=True),
    column("state", "string", 16, null=False),
    column("checkpoint_ts", "bigint", null=False),
    column("checkpoint_pos", "text", null=False, default="{}"),
    column("resolved_ts", "bigint", null=False, default=0),
    column("error", "text"),  # JSON of CdcflowError.to_dict()
    column("error_since", "double"),
    column("state_since", "double", null=False),
    column("last_progress_at", "double", null=False),
    column("ddl_in_flight_ts", "bigint"),  # a DDL sent downstream but not yet checkpointed
    column("skip_ddl", "text", null=False, default="[]"),  # commit ts of DDLs an operator skips
    column("retry_count", "integer", null=False, default=0),  # failed attempts since the last progress
    column("next_retry_at", "double"),  # a warning changefeed's next cycle waits until then (backoff)
    column("replay_until", "bigint", null=False, default=0),  # checkpoint before a move back
    column("lease_owner", "string", 256),
    column("lease_until", "double"),
    column("created_at", "double", null=False),
    column("updated_at", "double", null=False),
))

runs = Table("cdcflow_runs", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("run_id", "string", 256, key=True),
    column("status", "string", 16, null=False),  # running | done | failed | superseded (metastore.SUPERSEDED)
    column("start_ts", "bigint", null=False),  # the checkpoint the window starts after
    column("start_pos", "text", null=False),
    column("target_ts", "bigint", null=False, default=0),
    column("dry_run", "boolean", null=False, default=False),
    column("stats", "text", null=False, default="{}"),
    column("error", "text"),
    column("started_at", "double", null=False),
    column("ended_at", "double"),
))

# ADD INDEX jobs a TiDB downstream still builds (submitted without waiting); a later
# DDL on the same table waits for them.  Kept here so any process resumes the wait.
index_jobs = Table("cdcflow_index_jobs", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("job_id", "bigint", key=True),  # TiDB's JOB_ID
    column("commit_ts", "bigint"),  # the upstream DDL's; NULL for a job cdcflow did not submit
    column("schema_name", "string", 64, null=False),
    column("table_name", "string", 64, null=False),
    column("index_name", "string", 64),
    column("query", "text"),
    column("status", "string", 16, null=False),  # pending | done | failed
    column("tidb_state", "string", 32),  # the job's STATE when last seen
    column("error", "text"),
    column("submitted_at", "double", null=False),
    column("checked_at", "double"),
))

# The tracked schema: one row per version of an upstream table.
schema_versions = Table("cdcflow_schema_versions", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("schema_name", "string", 64, key=True),
    column("table_name", "string", 64, key=True),
    column("version_ts", "bigint", key=True),  # commit ts of the DDL (or the snapshot)
    column("info", "text"),  # TableInfo JSON; 'null': no such table; 'unknown': not derivable
))

# What online schema change tools ran on their shadow tables (ddl/shadow_log.py): the ALTERs a
# cut-over replays on the real table, however many cycles lie between them.
shadow_ddls = Table("cdcflow_shadow_ddls", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("schema_name", "string", 64, key=True),
    column("table_name", "string", 64, key=True),  # the shadow table
    column("commit_ts", "bigint", key=True),
    column("kind", "string", 8, null=False),  # alter | reset
    column("statement", "text", null=False, default=""),
    column("sql_mode", "text"),
))

# Operator replacements of one DDL (`cdcflow changefeed replace-ddl`).
ddl_replacements = Table("cdcflow_ddl_replacements", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("commit_ts", "bigint", key=True),
    column("statements", "text", null=False),  # JSON list, run in order
))

# The last `cdcflow changefeed verify` of each changefeed (its differences capped).
verify_results = Table("cdcflow_verify_results", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("status", "string", 32, null=False),  # equal | different | not yet applied
    column("finished_at", "double", null=False),
    column("result", "text", null=False),  # JSON, as the CLI printed it
))


# A changefeed's initial copy (`create --snapshot`): one row while it runs and after.
snapshots = Table("cdcflow_snapshots", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("status", "string", 16, null=False),  # copying | indexing | done
    column("position", "text", null=False),  # the consistent point's binlog position (JSON)
    column("started_at", "double", null=False),
    column("finished_at", "double"),
    column("copied_to", "text"),  # the upstream's binlog head once every chunk was read (JSON)
))

# Its key-range chunks; a chunk done is not copied again when a killed snapshot runs again.
snapshot_chunks = Table("cdcflow_snapshot_chunks", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("table_name", "string", 130, key=True),  # schema.table
    column("chunk_index", "integer", key=True),
    column("task", "text", null=False),  # JSON: schema, table, key, chunk bounds
    column("done", "boolean", null=False, default=False),
    column("rows", "bigint", null=False, default=0),
    column("seconds", "double", null=False, default=0.0),
))

# The secondary indexes a snapshot created its tables without, per table: built downstream once
# a cycle has replayed the binlog past the copy's last read (snapshot/deferred_indexes.py).
snapshot_indexes = Table("cdcflow_snapshot_indexes", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("table_name", "string", 130, key=True),  # schema.table
    column("clauses", "text", null=False),  # JSON: the index clauses as SHOW CREATE TABLE gave them
    column("status", "string", 16, null=False),  # deferred | building | built
    column("built_at", "double"),
))


# Tables added to a running changefeed (`changefeed add-tables`, a filter that grew) or copied
# again (`resync-tables`), one row per table: requested, then joined at a consistent point of
# its own (its events before that are in its copy), copied a few chunks per cycle, and done once
# the checkpoint is past the copy's last read, when its deferred indexes are built
# (snapshot/table_join.py).
table_copies = Table("cdcflow_table_copies", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("table_name", "string", 130, key=True),  # schema.table
    column("kind", "string", 8, null=False),  # add | resync
    column("status", "string", 16, null=False),  # requested | copying | replaying | done
    column("requested_at", "double", null=False),
    column("position", "text"),  # the table's join point: a binlog position (JSON)
    column("started_at", "double"),
    column("finished_at", "double"),  # the last chunk copied
    column("copied_to", "text"),  # the upstream's binlog head after the last chunk's read (JSON)
    column("done_at", "double"),
    # the secondary indexes the table was created without (JSON: the clauses as SHOW CREATE TABLE
    # gave them; NULL: none), built once the copy is done (snapshot/deferred_indexes.py)
    column("index_clauses", "text"),
    column("index_status", "string", 16),  # pending | building | built | failed; NULL: none deferred
    column("index_error", "text"),  # the last build's failure, as it was raised
))

# Their key-range chunks, as a snapshot's (snapshot_chunks).
table_copy_chunks = Table("cdcflow_table_copy_chunks", columns=(
    column("changefeed_id", "string", 128, key=True),
    column("table_name", "string", 130, key=True),
    column("chunk_index", "integer", key=True),
    column("task", "text", null=False),
    column("done", "boolean", null=False, default=False),
    column("rows", "bigint", null=False, default=0),
    column("seconds", "double", null=False, default=0.0),
))


# every table, in the order they are declared
TABLES: tuple[Table, ...] = tuple(t for t in globals().values() if isinstance(t, Table))


def delete_owned(c: Connection, changefeed_id: str) -> None:
    """Delete every row a changefeed owns, in every table: one declared later is included
    without its callers knowing it."""
    for t in reversed(TABLES):
        c.delete(t, f"{t.owner} = ?", changefeed_id)
