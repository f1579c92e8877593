"""Every table of the metadata store, declared once so that one migration (store/engine.py)
creates and upgrades them all and removing a changefeed reaches each of them."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

changefeeds = sa.Table(
    "cdcflow_changefeeds",
    metadata,
    sa.Column("id", sa.String(128), primary_key=True),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("checkpoint_ts", sa.BigInteger, nullable=False),
    sa.Column("checkpoint_pos", sa.Text, nullable=False, default="{}"),
    sa.Column("resolved_ts", sa.BigInteger, nullable=False, default=0),
    sa.Column("error", sa.Text),  # JSON of CdcflowError.to_dict()
    sa.Column("error_since", sa.Float),
    sa.Column("state_since", sa.Float, nullable=False),
    sa.Column("last_progress_at", sa.Float, nullable=False),
    sa.Column("ddl_in_flight_ts", sa.BigInteger),  # a DDL sent downstream but not yet checkpointed
    sa.Column("skip_ddl", sa.Text, nullable=False, default="[]"),  # commit ts of DDLs an operator skips
    sa.Column("retry_count", sa.Integer, nullable=False, default=0),  # failed attempts since the last progress
    sa.Column("next_retry_at", sa.Float),  # a warning changefeed's next cycle waits until then (backoff)
    sa.Column("replay_until", sa.BigInteger, nullable=False, default=0),  # checkpoint before a move back
    sa.Column("lease_owner", sa.String(256)),
    sa.Column("lease_until", sa.Float),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
)

runs = sa.Table(
    "cdcflow_runs",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("run_id", sa.String(256), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),  # running | done | failed | superseded (metastore.SUPERSEDED)
    sa.Column("start_ts", sa.BigInteger, nullable=False),  # the checkpoint the window starts after
    sa.Column("start_pos", sa.Text, nullable=False),
    sa.Column("target_ts", sa.BigInteger, nullable=False, default=0),
    sa.Column("dry_run", sa.Boolean, nullable=False, default=False),
    sa.Column("stats", sa.Text, nullable=False, default="{}"),
    sa.Column("error", sa.Text),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("ended_at", sa.Float),
)

# ADD INDEX jobs a TiDB downstream still builds (submitted without waiting); a later
# DDL on the same table waits for them.  Kept here so any process resumes the wait.
index_jobs = sa.Table(
    "cdcflow_index_jobs",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("job_id", sa.BigInteger, primary_key=True, autoincrement=False),  # TiDB's JOB_ID
    sa.Column("commit_ts", sa.BigInteger),  # the upstream DDL's; NULL for a job cdcflow did not submit
    sa.Column("schema_name", sa.String(64), nullable=False),
    sa.Column("table_name", sa.String(64), nullable=False),
    sa.Column("index_name", sa.String(64)),
    sa.Column("query", sa.Text),
    sa.Column("status", sa.String(16), nullable=False),  # pending | done | failed
    sa.Column("tidb_state", sa.String(32)),  # the job's STATE when last seen
    sa.Column("error", sa.Text),
    sa.Column("submitted_at", sa.Float, nullable=False),
    sa.Column("checked_at", sa.Float),
)

# The tracked schema: one row per version of an upstream table.
schema_versions = sa.Table(
    "cdcflow_schema_versions",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("schema_name", sa.String(64), primary_key=True),
    sa.Column("table_name", sa.String(64), primary_key=True),
    sa.Column("version_ts", sa.BigInteger, primary_key=True),  # commit ts of the DDL (or the snapshot)
    sa.Column("info", sa.Text),  # TableInfo JSON; 'null': no such table; 'unknown': not derivable
)

# What online schema change tools ran on their shadow tables (ddl/shadow_log.py): the ALTERs a
# cut-over replays on the real table, however many cycles lie between them.
shadow_ddls = sa.Table(
    "cdcflow_shadow_ddls",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("schema_name", sa.String(64), primary_key=True),
    sa.Column("table_name", sa.String(64), primary_key=True),  # the shadow table
    sa.Column("commit_ts", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(8), nullable=False),  # alter | reset
    sa.Column("statement", sa.Text, nullable=False, default=""),
    sa.Column("sql_mode", sa.Text),
)

# Operator replacements of one DDL (`cdcflow changefeed replace-ddl`).
ddl_replacements = sa.Table(
    "cdcflow_ddl_replacements",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("commit_ts", sa.BigInteger, primary_key=True),
    sa.Column("statements", sa.Text, nullable=False),  # JSON list, run in order
)

# The last `cdcflow changefeed verify` of each changefeed (its differences capped).
verify_results = sa.Table(
    "cdcflow_verify_results",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("status", sa.String(32), nullable=False),  # equal | different | not yet applied
    sa.Column("finished_at", sa.Float, nullable=False),
    sa.Column("result", sa.Text, nullable=False),  # JSON, as the CLI printed it
)


# A changefeed's initial copy (`create --snapshot`): one row while it runs and after.
snapshots = sa.Table(
    "cdcflow_snapshots",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),  # copying | indexing | done
    sa.Column("position", sa.Text, nullable=False),  # the consistent point's binlog position (JSON)
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("finished_at", sa.Float),
    sa.Column("copied_to", sa.Text),  # the upstream's binlog head once every chunk was read (JSON)
)

# Its key-range chunks; a chunk done is not copied again when a killed snapshot runs again.
snapshot_chunks = sa.Table(
    "cdcflow_snapshot_chunks",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("table_name", sa.String(130), primary_key=True),  # schema.table
    sa.Column("chunk_index", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("task", sa.Text, nullable=False),  # JSON: schema, table, key, chunk bounds
    sa.Column("done", sa.Boolean, nullable=False, default=False),
    sa.Column("rows", sa.BigInteger, nullable=False, default=0),
    sa.Column("seconds", sa.Float, nullable=False, default=0.0),
)

# The secondary indexes a snapshot created its tables without, per table: built downstream once
# a cycle has replayed the binlog past the copy's last read (snapshot/deferred_indexes.py).
snapshot_indexes = sa.Table(
    "cdcflow_snapshot_indexes",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("table_name", sa.String(130), primary_key=True),  # schema.table
    sa.Column("clauses", sa.Text, nullable=False),  # JSON: the index clauses as SHOW CREATE TABLE gave them
    sa.Column("status", sa.String(16), nullable=False),  # deferred | building | built
    sa.Column("built_at", sa.Float),
)


# Tables added to a running changefeed (`changefeed add-tables`, a filter that grew) or copied
# again (`resync-tables`), one row per table: requested, then joined at a consistent point of
# its own (its events before that are in its copy), copied a few chunks per cycle, and done once
# the checkpoint is past the copy's last read, when its deferred indexes are built
# (snapshot/table_join.py).
table_copies = sa.Table(
    "cdcflow_table_copies",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("table_name", sa.String(130), primary_key=True),  # schema.table
    sa.Column("kind", sa.String(8), nullable=False),  # add | resync
    sa.Column("status", sa.String(16), nullable=False),  # requested | copying | replaying | done
    sa.Column("requested_at", sa.Float, nullable=False),
    sa.Column("position", sa.Text),  # the table's join point: a binlog position (JSON)
    sa.Column("started_at", sa.Float),
    sa.Column("finished_at", sa.Float),  # the last chunk copied
    sa.Column("copied_to", sa.Text),  # the upstream's binlog head after the last chunk's read (JSON)
    sa.Column("done_at", sa.Float),
    # the secondary indexes the table was created without (JSON: the clauses as SHOW CREATE TABLE
    # gave them; NULL: none), built once the copy is done (snapshot/deferred_indexes.py)
    sa.Column("index_clauses", sa.Text),
    sa.Column("index_status", sa.String(16)),  # pending | building | built | failed; NULL: none deferred
    sa.Column("index_error", sa.Text),  # the last build's failure, as it was raised
)

# Their key-range chunks, as a snapshot's (snapshot_chunks).
table_copy_chunks = sa.Table(
    "cdcflow_table_copy_chunks",
    metadata,
    sa.Column("changefeed_id", sa.String(128), primary_key=True),
    sa.Column("table_name", sa.String(130), primary_key=True),
    sa.Column("chunk_index", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("task", sa.Text, nullable=False),
    sa.Column("done", sa.Boolean, nullable=False, default=False),
    sa.Column("rows", sa.BigInteger, nullable=False, default=0),
    sa.Column("seconds", sa.Float, nullable=False, default=0.0),
)


def owned_by(changefeed_id: str) -> list[sa.Delete]:
    """Deletes of every row a changefeed owns, in every table: one declared later is included
    without its callers knowing it."""
    return [sa.delete(t).where((t.c.id if t is changefeeds else t.c.changefeed_id) == changefeed_id)
            for t in reversed(metadata.sorted_tables)]
