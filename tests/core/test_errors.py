import re
from pathlib import Path

import pytest

from cdcflow.core import errors
from cdcflow.core.errors import CODES, CdcflowError
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
