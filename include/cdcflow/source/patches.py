"""The patches cdcflow puts on mysql-replication, installed in one place.

Each patch replaces a private method of mysql-replication (Table_map parsing, ENUM and SET
members' and text columns' character sets, the column
types it decodes wrongly, row decoding by per-table plans, a statement's character set, the stream
connection's reading of MySQL 8's compressed transactions).  Private methods change without
notice between releases, so the patches are installed only on the release they were written
for: the one constraints.txt pins.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

from cdcflow.core.errors import CdcflowError
from cdcflow.source import (
    column_types,
    enum_members,
    query_text,
    row_decoder,
    table_maps,
    text_columns,
    transaction_payload,
)

WRITTEN_FOR = "1.0.17"  # mysql-replication's version in constraints.txt (a test keeps the two equal)


def version() -> str:
    """The installed mysql-replication's release, from the METADATA of its wheel beside the
    package ("none": no such record).  importlib.metadata would answer the same after 20-40 ms
    of imports and a scan of every installed distribution, in every process that pulls."""
    import pymysqlreplication  # lazy: patched anyway right after; where it is installed says where its record is

    for record in Path(pymysqlreplication.__file__).parent.parent.glob("mysql_replication-*.dist-info"):
        with open(record / "METADATA", encoding="utf-8") as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():  # the headers end; the description follows
                    break
    return "none"


@functools.cache
def check_version() -> None:
    installed = version()
    if installed != WRITTEN_FOR:
        raise CdcflowError(
            f"mysql-replication {installed} is installed, but cdcflow's binlog reader patches private "
            f"methods of mysql-replication {WRITTEN_FOR} and cannot run on another release",
            hint=f"install the pinned release: pip install -c constraints.txt mysql-replication=={WRITTEN_FOR}",
        )


def install() -> None:
    """Check the version, then install every patch (each install is idempotent)."""
    check_version()
    # its control connection passes pymysql's deprecated `db=`: the warning is the library's, and
    # where Airflow's logging is set up it reaches stdout, ahead of a command's JSON
    warnings.filterwarnings("ignore", message="'db' is deprecated", category=DeprecationWarning,
                            module="pymysqlreplication")
    table_maps.install()
    enum_members.install()
    text_columns.install()
    column_types.install()
    row_decoder.install()
    query_text.install()
    transaction_payload.install()
