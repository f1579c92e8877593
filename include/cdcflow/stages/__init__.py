"""The stages of one cycle, one module each, every one a function of the loaded cycle
(stages.cycle.Cycle): prepare, pull, filter, barrier, apply, wait_index, finish; the typed
records they hand each other are in contracts.py.  Who runs them is cdcflow.runner's."""

from __future__ import annotations

from cdcflow.core.stage_names import SPARK_STAGES, STAGES
from cdcflow.stages.finish import finish
from cdcflow.stages.prepare import prepare

__all__ = ["STAGES", "SPARK_STAGES", "prepare", "finish"]
