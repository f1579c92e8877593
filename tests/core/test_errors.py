import re
from pathlib import Path

import pymysql
import pytest

from cdcflow.core import errors
from cdcflow.core.errors import CODES, CdcflowError
from cdcflow.core.failures import SinkError
from cdcflow.source.binlog import check_checkpoint_held


def test_every_code_is_declared_once_in_ticdc_shape():
    declared = re.findall(r'= Code\("(Err\w+)"', Path(errors.__file__).read_text())
    assert len(set(declared)) == len(declared) == len(CODES)
    for code in CODES.values():
        assert re.fullmatch(r"CDCFLOW:Err[A-Za-z]+", code) and code.meaning
        assert code.retryable in (True, False, None)


def test_retryable_comes_from_the_code_unless_the_raiser_decides():
    assert CdcflowError("x", code=errors.LEASE_HELD).retryable is True
    assert CdcflowError("x", code=errors.CHANGEFEED_STATE).retryable is False
    assert CdcflowError("x", code=errors.EXEC_DDL_FAILED).retryable is False  # no class: not retryable
    assert CdcflowError("x", code=errors.EXEC_DDL_FAILED, retryable=True).retryable is True
    assert CdcflowError("x", code=errors.MYSQL_TXN_ERROR).retryable is True  # every sink error, as TiCDC
    err = CdcflowError("x", code=errors.UPSTREAM_UNREACHABLE)
    assert err.to_dict() == {"code": "CDCFLOW:ErrUpstreamUnreachable", "message": "x", "retryable": True,
                             "hint": None}
    assert type(err.code) is str
    assert CdcflowError("x", code="CDCFLOW:ErrLeaseHeld").retryable is True  # a code read back as text


def test_a_purged_checkpoint_binlog_is_snapshot_lost():
    check_checkpoint_held(["bin.000002"], {"file": "bin.000002", "pos": 4}, 1 << 18)
    check_checkpoint_held([], None, 1 << 18)  # no position yet: nothing to check
    with pytest.raises(CdcflowError) as e:
        check_checkpoint_held(["bin.000003"], {"file": "bin.000002", "pos": 4}, 1 << 18)
    assert e.value.code == errors.SNAPSHOT_LOST_BY_GC and not e.value.retryable
    assert "bin.000002" in str(e.value) and "oldest kept: bin.000003" in str(e.value)


ERRORS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "errors.md"


def reference_error_table() -> list[tuple[str, str, str]]:
    """(code, class cell, remedy cell) of each row of the generated error reference."""
    rows = [line.split(" | ") for line in ERRORS_PAGE.read_text().splitlines() if line.startswith("| `CDCFLOW:")]
    return [(code.strip("| `").removeprefix("CDCFLOW:"), cls, remedy.rstrip(" |")) for code, cls, _what, remedy in rows]


def test_the_error_reference_names_every_code_once_in_a_row_of_its_class_with_a_remedy():
    named = []
    for code, cls, remedy in reference_error_table():
        retryable = cls.startswith("retryable")
        assert retryable or cls.startswith("not retryable"), cls
        assert CODES[f"CDCFLOW:{code}"].retryable is retryable, f"{code} filed as {cls!r}"
        assert remedy.strip(), f"{code} has no remedy"
        named.append(code)
    assert sorted(named) == sorted(c.removeprefix("CDCFLOW:") for c in CODES), \
        f"missing {set(c.removeprefix('CDCFLOW:') for c in CODES) - set(named)}; twice or unknown " \
        f"{[c for c in named if named.count(c) > 1 or f'CDCFLOW:{c}' not in CODES]}"
    assert set(errors.REMEDIES) == set(CODES)


# -- classify: any exception a stage meets, as the one error type


def test_a_cdcflow_error_keeps_its_code_and_gains_what_it_lacked():
    err = CdcflowError("x", code=errors.LEASE_HELD)
    assert errors.classify(err, "apply", "cf", rows=(5, 9)) is err
    assert (err.changefeed, err.ts, err.code) == ("cf", 9, errors.LEASE_HELD)


def test_a_row_refused_in_a_spark_worker_is_retryable_and_names_its_row():
    refused = SinkError("REPLACE into db.t", pymysql.err.DataError(1406, "Data too long for column 'v' at row 1"),
                        row="id = 7", ts=11)
    err = errors.classify(RuntimeError("py4j trace... " + str(refused) + " ...more"), "apply", "cf", rows=(5, 20))
    assert err.code == errors.MYSQL_TXN_ERROR and err.retryable and err.ts == 11
    assert err.message == "stage apply: REPLACE into db.t failed on the downstream: (1406) Data too long for " \
                          "column 'v' at row 1 (the row with key id = 7)"
    assert "widen it" in err.hint


def test_a_refused_statement_without_a_row_names_the_segments_range():
    refused = SinkError("DELETE from db.t", pymysql.err.OperationalError(1205, "Lock wait timeout exceeded"))
    err = errors.classify(RuntimeError(str(refused)), "apply", "cf", rows=(5, 20))
    assert err.code == errors.MYSQL_TXN_ERROR and err.ts is None
    assert err.message.endswith("(in the row changes committed in (5, 20])")


@pytest.mark.parametrize("stage, code", [("apply", errors.DOWNSTREAM_UNREACHABLE),
                                         ("wait_index", errors.DOWNSTREAM_UNREACHABLE),
                                         ("pull", errors.UPSTREAM_UNREACHABLE)])
def test_a_timeout_is_the_sides_unreachable(stage, code):
    err = errors.classify(pymysql.err.OperationalError(2013, "Lost connection (timed out)"), stage, "cf")
    assert err.code == code and err.retryable and "did not answer in time" in err.message


@pytest.mark.parametrize("exc, code, retryable", [
    (KeyError("checkpoint"), errors.STAGE_FAILED, True),
    (pymysql.err.OperationalError(2003, "Can't connect"), errors.STAGE_FAILED, True),
    (ValueError("bad"), errors.STAGE_BUG, False),
    (TypeError("bad"), errors.STAGE_BUG, False),
])
def test_anything_else_is_a_stage_failure_retried_unless_a_bug(exc, code, retryable):
    err = errors.classify(exc, "filter", "cf")
    assert (err.code, err.retryable) == (code, retryable)
    assert err.message.startswith(f"stage filter failed: {type(exc).__name__}")


class Entry:
    name, commit_ts, query = "ALTER TABLE", 100, "ALTER TABLE t ADD w INT"


@pytest.mark.parametrize("exc, code, retryable, says", [
    (pymysql.err.OperationalError(1060, "Duplicate column name 'w'"), errors.EXEC_DDL_FAILED, False, "rejected"),
    (pymysql.err.ProgrammingError(1064, "syntax"), errors.EXEC_DDL_FAILED, False, "rejected"),
    (pymysql.err.OperationalError(1205, "Lock wait timeout exceeded"), errors.EXEC_DDL_INTERRUPTED, True,
     "did not complete"),
    (pymysql.err.OperationalError(2013, "Lost connection (timed out)"), errors.DOWNSTREAM_UNREACHABLE, True,
     "within ddl-timeout 10m"),
])
def test_a_ddl_that_failed_downstream_is_classed_by_what_the_downstream_said(exc, code, retryable, says):
    err = errors.classify(exc, "apply", "cf", ddl=Entry(), ddl_timeout="10m")
    assert (err.code, err.retryable, err.ts, err.statement) == (code, retryable, 100, Entry.query)
    assert says in err.message


def test_no_code_leaves_its_class_to_the_raiser():
    assert all(c.retryable in (True, False) for c in CODES.values())


# -- a downstream user without a privilege: ErrDownstreamPrivilege names it and the GRANT -------------

def test_a_row_refused_for_want_of_insert_names_the_privilege_and_the_grant():
    refused = SinkError("REPLACE into shop.t", pymysql.err.OperationalError(
        1142, "INSERT command denied to user 'writer'@'127.0.0.1' for table `shop`.`t`"))
    err = errors.classify(RuntimeError("py4j ... " + str(refused)), "apply", "shop", rows=(5, 20))
    assert err.code == errors.DOWNSTREAM_PRIVILEGE and err.retryable
    assert err.message.startswith("stage apply: REPLACE into shop.t was refused: the downstream user lacks the "
                                  "INSERT privilege on table `shop`.`t`"), err.message
    assert "GRANT INSERT ON shop.* TO 'writer'@'%'" in err.hint


def test_a_new_schema_refused_names_every_privilege_cdcflow_needs_on_it():
    """The issue's case: CREATE DATABASE of a schema the user has no rights on, met outside a DDL
    (it read `ErrStageFailed: OperationalError (1044, ...) — run --debug`)."""
    denied = pymysql.err.OperationalError(1044, "Access denied for user 'writer'@'%' to database 'cdcflow'")
    err = errors.classify(denied, "apply", "shop")
    assert err.code == errors.DOWNSTREAM_PRIVILEGE and "privileges on database `cdcflow`" in err.message
    assert "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, REFERENCES, CREATE VIEW ON " \
           "cdcflow.* TO 'writer'@'%'" in err.hint


def test_a_ddl_refused_for_want_of_a_privilege_is_not_a_ddl_to_skip():
    ddl = type("Ddl", (), {"name": "CREATE DATABASE", "commit_ts": 42, "query": "CREATE DATABASE shop2"})()
    denied = pymysql.err.OperationalError(1044, "Access denied for user 'writer'@'%' to database 'shop2'")
    err = errors.classify(denied, "apply", "shop", ddl=ddl)
    assert err.code == errors.DOWNSTREAM_PRIVILEGE and err.retryable and err.ts == 42
    assert err.statement == "CREATE DATABASE shop2" and "skip-ddl" not in err.hint
    assert "ON shop2.* TO 'writer'@'%'" in err.hint


def test_a_global_privilege_names_the_first_the_server_lists():
    denied = pymysql.err.OperationalError(
        1227, "Access denied; you need (at least one of) the SUPER, BINLOG MONITOR privilege(s) for this operation")
    err = errors.classify(denied, "wait_index", "shop")
    assert err.code == errors.DOWNSTREAM_PRIVILEGE and "the SUPER or BINLOG MONITOR privilege" in err.message
    assert "GRANT SUPER ON *.* TO the sink URI's user" in err.hint


def test_a_table_missing_downstream_names_no_statement_and_gives_the_clis_way():
    refused = SinkError("DELETE from shop.t (clearing the keys of 2 row(s) written right after)",
                        pymysql.err.ProgrammingError(1146, "Table 'shop.t' doesn't exist"))
    err = errors.classify(RuntimeError(str(refused)), "apply", "shop", rows=(5, 20))
    assert err.code == errors.TABLE_NOT_EXISTS and "DELETE" not in str(err), str(err)
    assert "`cdcflow changefeed resync-tables -c shop --tables shop.t`" in err.hint
    assert "mode resync-tables" in err.hint
