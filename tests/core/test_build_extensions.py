"""core.build_extensions.loaded: a compiled module where it is built and not declined, else None
and one line in the log saying what runs instead."""

import logging

from cdcflow.core import build_extensions
from cdcflow.core.build_extensions import EXTENSIONS, loaded


def test_a_built_module_is_given_unless_its_reference_is_asked_for(monkeypatch):
    monkeypatch.delenv("CDCFLOW_COMPACTION", raising=False)
    module = loaded("cdcflow.sink.compiled_compaction", "CDCFLOW_COMPACTION", "the reference")
    assert module is not None and module.__name__ in EXTENSIONS  # make setup built it
    monkeypatch.setenv("CDCFLOW_COMPACTION", "Python")
    assert loaded("cdcflow.sink.compiled_compaction", "CDCFLOW_COMPACTION", "the reference") is None


def test_a_module_not_built_gives_none_and_says_what_runs_instead(caplog):
    with caplog.at_level(logging.WARNING):
        assert loaded("cdcflow.sink.compiled_nothing", "CDCFLOW_COMPACTION", "the Arrow steps") is None
    assert "cdcflow.sink.compiled_nothing is not built" in caplog.text and "the Arrow steps, slower" in caplog.text


def test_compaction_takes_the_compiled_pass_unless_asked_not_to(monkeypatch):
    from cdcflow.sink import compaction

    compaction.compiled.cache_clear()
    try:
        monkeypatch.delenv("CDCFLOW_COMPACTION", raising=False)
        assert compaction.compiled() is not None
        compaction.compiled.cache_clear()
        monkeypatch.setenv("CDCFLOW_COMPACTION", "python")
        assert compaction.compiled() is None
    finally:
        compaction.compiled.cache_clear()
    assert build_extensions.EXTENSIONS["cdcflow.sink.compiled_compaction"].name == "compiled_compaction.pyx"
