"""Changefeed states and their transitions (TiCDC's Changefeed Overview), as one table.

Each row: (from state, event) -> (to state, the Changefeed Overview's transition number or None
for the ones the diagram leaves implicit).
"""

from __future__ import annotations

from cdcflow.core.errors import CHANGEFEED_STATE, CdcflowError
from cdcflow.core.wording import CLI, Words

NORMAL, STOPPED, WARNING, FINISHED, FAILED, REMOVED = "normal", "stopped", "warning", "finished", "failed", "removed"
STATES = (NORMAL, STOPPED, WARNING, FINISHED, FAILED, REMOVED)

TRANSITIONS: dict[tuple[str, str], tuple[str, int | None]] = {
    (NORMAL, "pause"): (STOPPED, 1),
    (WARNING, "pause"): (STOPPED, None),
    (FAILED, "pause"): (STOPPED, None),
    (STOPPED, "resume"): (NORMAL, 2),
    (NORMAL, "retryable_error"): (WARNING, 3),
    (WARNING, "retryable_error"): (WARNING, None),
    (WARNING, "progress"): (NORMAL, 4),
    (NORMAL, "progress"): (NORMAL, None),
    (WARNING, "stuck_timeout"): (FAILED, 5),
    (NORMAL, "fatal_error"): (FAILED, 6),
    (WARNING, "fatal_error"): (FAILED, 6),
    (NORMAL, "target_reached"): (FINISHED, 7),
    (WARNING, "target_reached"): (FINISHED, 7),
    (STOPPED, "gc_ttl_exceeded"): (FAILED, 8),
    (FAILED, "gc_ttl_exceeded"): (FAILED, 8),
    (FAILED, "resume"): (NORMAL, 9),
}

# States in which a scheduled cycle does nothing, and why it says so.
IDLE_REASONS = {
    STOPPED: "it is paused (stopped); resume it with `cdcflow changefeed resume`",
    FAILED: "it has failed; fix the cause, then `cdcflow changefeed resume`",
    FINISHED: "it has reached its target-ts (finished)",
    REMOVED: "it was removed",
}
# the states whose cycles replicate: every other one's cycle does nothing (IDLE_REASONS)
RUNNING_STATES = tuple(s for s in STATES if s not in IDLE_REASONS)


# The events an operator causes: the commands `cdcflow changefeed pause` / `resume`.  The
# others are what cycles report, never named to a person.
COMMANDS = ("pause", "resume")


def commands_allowed(current: str) -> list[str]:
    """The operator's commands the table lets a changefeed in `current` take."""
    return [e for (s, e) in TRANSITIONS if s == current and e in COMMANDS]


def next_state(current: str, event: str, changefeed: str | None = None,
               words: Words = CLI) -> tuple[str, int | None]:
    """The transition, or a refusal that says what the state takes, in `words`' phrasing."""
    try:
        return TRANSITIONS[(current, event)]
    except KeyError:
        allowed = commands_allowed(current)
        hint = (words.only.format(state=current, commands=" or ".join(words.command(e) for e in allowed))
                if allowed else words.none.format(state=current))
        raise CdcflowError(
            words.refused.format(state=current, command=event.replace("_", " ")),
            changefeed=changefeed, code=CHANGEFEED_STATE, hint=hint,
        ) from None
