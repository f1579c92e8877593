"""Every table of the metadata store, declared once so that one migration (store/engine.py)
creates and upgrades them all and removing a changefeed reaches each of them (store/sql.py
says what a column kind is in each database)."""

from __future__ import annotations

from cdcflow.store.sql import Connection, Table, column

changefeeds = Table("cdcflow_changefeeds", owner="id", note=(
    "One row per changefeed: its runtime state (its spec is the JSON file under CDCFLOW_HOME/changefeeds)."),
    columns=(
    column("id", "string", 128, key=True, note="the changefeed's id"),
    column("state", "string", 16, null=False, note="its state (States and transitions)"),
    column("checkpoint_ts", "bigint", null=False, note="the checkpoint: everything at or below it is downstream"),
    column("checkpoint_pos", "text", null=False, default="{}",
           note="the checkpoint's binlog file, offset and GTID position (JSON)"),
    column("resolved_ts", "bigint", null=False, default=0, note="how far the upstream's changes have been read"),
    column("error", "text", note="JSON of CdcflowError.to_dict()"),
    column("error_since", "double", note="when the error began"),
    column("state_since", "double", null=False),
    column("last_progress_at", "double", null=False, note="the checkpoint's last move"),
    column("ddl_in_flight_ts", "bigint", note="a DDL sent downstream but not yet checkpointed"),
    column("skip_ddl", "text", null=False, default="[]", note="commit ts of DDLs an operator skips"),
    column("retry_count", "integer", null=False, default=0, note="failed attempts since the last progress"),
    column("next_retry_at", "double", note="a warning changefeed's next cycle waits until then (backoff)"),
    column("replay_until", "bigint", null=False, default=0, note="checkpoint before a move back"),
    column("lease_owner", "string", 256, note="host:pid:run of the cycle holding the lease"),
    column("lease_until", "double", note="when the lease ends unless renewed"),
    column("created_at", "double", null=False),
    column("updated_at", "double", null=False),
))

runs = Table("cdcflow_runs", note=(
    "One row per cycle (a DAG run, a `changefeed run`); finish drops a changefeed's ended runs beyond its "
    "newest RUNS_KEPT (store/metastore.py)."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("run_id", "string", 256, key=True),
    column("status", "string", 16, null=False, note="running | done | failed | superseded (metastore.SUPERSEDED)"),
    column("start_ts", "bigint", null=False, note="the checkpoint the window starts after"),
    column("start_pos", "text", null=False, note="its binlog position (JSON)"),
    column("target_ts", "bigint", null=False, default=0, note="the cycle's target ts; 0: none"),
    column("dry_run", "boolean", null=False, default=False),
    column("stats", "text", null=False, default="{}", note="each stage's result and seconds (JSON)"),
    column("error", "text", note="why it failed"),
    column("started_at", "double", null=False),
    column("ended_at", "double"),
))

index_jobs = Table("cdcflow_index_jobs", note=(
    "ADD INDEX jobs a TiDB downstream still builds (submitted without waiting); a later DDL on "
    "the same table waits for them. Kept here so any process resumes the wait."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("job_id", "bigint", key=True, note="TiDB's JOB_ID"),
    column("commit_ts", "bigint", note="the upstream DDL's; NULL for a job cdcflow did not submit"),
    column("schema_name", "string", 64, null=False),
    column("table_name", "string", 64, null=False),
    column("index_name", "string", 64),
    column("query", "text"),
    column("status", "string", 16, null=False, note="pending | done | failed"),
    column("tidb_state", "string", 32, note="the job's STATE when last seen"),
    column("error", "text"),
    column("submitted_at", "double", null=False),
    column("checked_at", "double"),
))

schema_versions = Table("cdcflow_schema_versions", note=(
    "The tracked schema: one row per version of an upstream table."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("schema_name", "string", 64, key=True),
    column("table_name", "string", 64, key=True),
    column("version_ts", "bigint", key=True, note="commit ts of the DDL (or the snapshot)"),
    column("info", "text", note="TableInfo JSON; 'null': no such table; 'unknown': not derivable"),
))

shadow_ddls = Table("cdcflow_shadow_ddls", note=(
    "What online schema change tools ran on their shadow tables (ddl/shadow_log.py): the ALTERs a "
    "cut-over replays on the real table, however many cycles lie between them."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("schema_name", "string", 64, key=True),
    column("table_name", "string", 64, key=True, note="the shadow table"),
    column("commit_ts", "bigint", key=True),
    column("kind", "string", 8, null=False, note="alter | reset"),
    column("statement", "text", null=False, default=""),
    column("sql_mode", "text"),
))

ddl_replacements = Table("cdcflow_ddl_replacements", note=(
    "Operator replacements of one DDL (`cdcflow changefeed replace-ddl`)."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("commit_ts", "bigint", key=True),
    column("statements", "text", null=False, note="JSON list, run in order"),
))

verify_results = Table("cdcflow_verify_results", note=(
    "The last `cdcflow changefeed verify` of each changefeed (its differences capped)."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("status", "string", 32, null=False, note="equal | different | not yet applied"),
    column("finished_at", "double", null=False),
    column("result", "text", null=False, note="JSON, as the CLI printed it"),
))


snapshots = Table("cdcflow_snapshots", note=(
    "A changefeed's initial copy (`create --snapshot`): one row while it runs and after."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("status", "string", 16, null=False, note="copying | indexing | done"),
    column("position", "text", null=False, note="the consistent point's binlog position (JSON)"),
    column("started_at", "double", null=False),
    column("finished_at", "double"),
    column("copied_to", "text", note="the upstream's binlog head once every chunk was read (JSON)"),
))

snapshot_chunks = Table("cdcflow_snapshot_chunks", note=(
    "Its key-range chunks; a chunk done is not copied again when a killed snapshot runs again."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("table_name", "string", 130, key=True, note="schema.table"),
    column("chunk_index", "integer", key=True),
    column("task", "text", null=False, note="JSON: schema, table, key, chunk bounds"),
    column("done", "boolean", null=False, default=False),
    column("rows", "bigint", null=False, default=0),
    column("seconds", "double", null=False, default=0.0),
))

snapshot_indexes = Table("cdcflow_snapshot_indexes", note=(
    "The secondary indexes a snapshot created its tables without, per table: built downstream "
    "once a cycle has replayed the binlog past the copy's last read "
    "(snapshot/deferred_indexes.py)."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("table_name", "string", 130, key=True, note="schema.table"),
    column("clauses", "text", null=False, note="JSON: the index clauses as SHOW CREATE TABLE gave them"),
    column("status", "string", 16, null=False, note="deferred | building | built"),
    column("built_at", "double"),
))


table_copies = Table("cdcflow_table_copies", note=(
    "Tables added to a running changefeed (`changefeed add-tables`, a filter that grew) or copied "
    "again (`resync-tables`), one row per table: requested, then joined at a consistent point of "
    "its own (its events before that are in its copy), copied a few chunks per cycle, and done "
    "once the checkpoint is past the copy's last read, when its deferred indexes are built "
    "(snapshot/table_join.py)."),
    columns=(
    column("changefeed_id", "string", 128, key=True),
    column("table_name", "string", 130, key=True, note="schema.table"),
    column("kind", "string", 8, null=False, note="add | resync"),
    column("status", "string", 16, null=False, note="requested | copying | replaying | done"),
    column("requested_at", "double", null=False),
    column("position", "text", note="the table's join point: a binlog position (JSON)"),
    column("started_at", "double"),
    column("finished_at", "double", note="the last chunk copied"),
    column("copied_to", "text", note="the upstream's binlog head after the last chunk's read (JSON)"),
    column("done_at", "double"),
    column("index_clauses", "text",
           note="the secondary indexes the table was created without (JSON: the clauses as SHOW CREATE TABLE "
                "gave them; NULL: none), built once the copy is done (snapshot/deferred_indexes.py)"),
    column("index_status", "string", 16, note="pending | building | built | failed; NULL: none deferred"),
    column("index_error", "text", note="the last build's failure, as it was raised"),
))

# store/snapshots.py's chunk functions serve both tables: one declaration of their columns
table_copy_chunks = Table("cdcflow_table_copy_chunks", note=(
    "Their key-range chunks, as a snapshot's (cdcflow_snapshot_chunks)."),
    columns=snapshot_chunks.columns)

# the store's own: no changefeed owns its row
store_stamp = Table("cdcflow_store_stamp", owner="", note=(
    "One row: the checksum of the tables and columns this store was last brought to (store/engine.py's "
    "`schema_stamp`). A process that opens a store at the stamp it declares itself skips the migration, "
    "which reads every table's columns back."),
    columns=(
    column("name", "string", 32, key=True, note="`tables`"),
    column("stamp", "bigint", null=False, note="the checksum"),
))


# every table, in the order they are declared
TABLES: tuple[Table, ...] = tuple(t for t in globals().values() if isinstance(t, Table))


def delete_owned(c: Connection, changefeed_id: str) -> None:
    """Delete every row a changefeed owns, in every table: one declared later is included
    without its callers knowing it."""
    for t in reversed(TABLES):
        if t.owner:
            c.delete(t, f"{t.owner} = ?", changefeed_id)
