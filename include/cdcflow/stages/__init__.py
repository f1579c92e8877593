"""The stages of one cycle, one module each, every one a function of the loaded cycle
(stages.cycle.Cycle): prepare, pull, filter, barrier, apply, wait_index, finish; the typed
records they hand each other are in contracts.py.  Who runs them is cdcflow.launch's.

Nothing is imported here beyond the stages' names: a child process reading one of pull's
ranges (range_parts) imports this package, and should not pay for the metadata store."""

from __future__ import annotations

from cdcflow.core.stage_names import SPARK_STAGES, STAGES

__all__ = ["STAGES", "SPARK_STAGES"]
