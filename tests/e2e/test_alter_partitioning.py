"""`ALTER TABLE … PARTITION BY` and `REMOVE PARTITIONING` (issue 42, item 6): TiCDC's documented
allow list predates them, its current whitelist (pkg/filter ddlWhiteListMap:
ActionAlterTablePartitioning, ActionRemovePartitioning) replicates them, and so does cdcflow: the
downstream takes each new partitioning, compared by the whole definition (SHOW CREATE TABLE),
with the rows written between them."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, replicate_workload

pytestmark = pytest.mark.e2e

DB = "repart"
WORKLOAD = (
    "CREATE TABLE t (id INT PRIMARY KEY, x INT)",
    "CREATE TABLE u (id INT NOT NULL, k VARCHAR(10) NOT NULL, UNIQUE KEY (id, k))",
    "INSERT INTO t VALUES (1, 1), (15, 15), (25, 25)",
    "INSERT INTO u VALUES (1, 'a'), (2, 'b')",
    "ALTER TABLE t PARTITION BY HASH (id) PARTITIONS 3",
    "UPDATE t SET x = 150 WHERE id = 15",
    "ALTER TABLE t PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20), "
    "PARTITION pmax VALUES LESS THAN MAXVALUE)",
    "ALTER TABLE u PARTITION BY KEY (id) PARTITIONS 2",
    "INSERT INTO t VALUES (5, 5)",
    "DELETE FROM u WHERE id = 1",
    "ALTER TABLE u REMOVE PARTITIONING",
    "INSERT INTO u VALUES (3, 'c')",
)


def test_partition_by_and_remove_partitioning_are_replicated(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    replicate_workload(capsys, up, down, "e2e-repartition", DB, WORKLOAD)
    for table in ("t", "u"):
        assert down.query(f"SHOW CREATE TABLE {DB}.{table}") == up.query(f"SHOW CREATE TABLE {DB}.{table}")
    assert "PARTITION BY RANGE" in down.query(f"SHOW CREATE TABLE {DB}.t")[0][1]
    assert down.query(f"SELECT PARTITION_NAME, TABLE_ROWS FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = "
                      f"'{DB}' AND TABLE_NAME = 't' ORDER BY PARTITION_ORDINAL_POSITION")[0][0] == "p0"
    assert_consistent(up, down, [DB])
