"""The stages of one cycle, one module each, every one a function of the loaded cycle
(stages.cycle.Cycle): prepare, pull, filter, barrier, apply, wait_index, finish; the typed
records they hand each other are in contracts.py.  Who runs them is cdcflow.runner's.

prepare and finish are imported when first asked for: a child process reading one of pull's
ranges (range_parts) imports this package, and should not pay for the metadata store."""

from __future__ import annotations

from cdcflow.core.stage_names import SPARK_STAGES, STAGES

__all__ = ["STAGES", "SPARK_STAGES", "prepare", "finish"]


def __getattr__(name: str):
    if name in ("prepare", "finish"):
        from importlib import import_module

        return getattr(import_module(f"cdcflow.stages.{name}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
