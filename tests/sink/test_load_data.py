"""LOAD DATA LOCAL from memory (sink/load_data.py): the client sends the rows its own statement
staged, in packets, and nothing else the server may ask for."""

from __future__ import annotations

import pytest
from pymysql import err

from cdcflow.sink import load_data


class _Session:
    def __init__(self, staged: bytes | None):
        self._cdcflow_rows, self.packets = staged, []

    def write_packet(self, data: bytes) -> None:
        self.packets.append(data)


def test_the_staged_rows_go_in_packets_under_the_statements_name():
    rows = b"1\tx\n" * 40_000  # 160,000 bytes: three packets
    session = _Session(rows)
    load_data._send(load_data.NAME.encode(), session)
    assert b"".join(session.packets) == rows and [len(p) for p in session.packets] == [65536, 65536, 28928]


@pytest.mark.parametrize("asked, staged", [(b"/etc/passwd", b"1\n"), (load_data.NAME.encode(), None)])
def test_any_other_request_is_refused_and_no_file_is_read(asked, staged):
    session = _Session(staged)
    with pytest.raises(err.OperationalError, match="sends only the rows of its own LOAD DATA"):
        load_data._send(asked, session)
    assert session.packets == []


def test_the_statement_reads_converted_columns_through_variables():
    sql = load_data.statement("s", "t`x", ["id", "b", "bits"], {"b": "UNHEX({v})", "bits": "CAST({v} AS UNSIGNED)"})
    assert sql.startswith("LOAD DATA LOCAL INFILE 'cdcflow-rows' REPLACE INTO TABLE `s`.`t``x` CHARACTER SET utf8mb4 ")
    assert sql.endswith("(`id`, @v1, @v2) SET `b` = UNHEX(@v1), `bits` = CAST(@v2 AS UNSIGNED)")
