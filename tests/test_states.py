import pytest

from cdcflow.changefeed import states
from cdcflow.changefeed.states import (
    FAILED,
    FINISHED,
    NORMAL,
    REMOVED,
    STOPPED,
    WARNING,
    next_state,
)
from cdcflow.core.errors import CdcflowError

# Seed 001, "The numbers in the preceding state transfer diagram":
# (number, from, event, to, what the seed says)
SEED_TRANSITIONS = [
    (1, NORMAL, "pause", STOPPED, "Run the changefeed pause command"),
    (2, STOPPED, "resume", NORMAL, "Run the changefeed resume command"),
    (3, NORMAL, "retryable_error", WARNING, "Recoverable errors occur; the operation is retried automatically"),
    (4, WARNING, "progress", NORMAL, "The automatic retry succeeds and checkpoint-ts continues to advance"),
    (5, WARNING, "stuck_timeout", FAILED, "The automatic retry exceeds 30 minutes and fails"),
    (6, NORMAL, "fatal_error", FAILED, "An unrecoverable error: directly enters the failed state"),
    (7, NORMAL, "target_reached", FINISHED, "The replication progress reaches target-ts"),
    (8, STOPPED, "gc_ttl_exceeded", FAILED, "Suspended longer than gc-ttl: GC advancement error, cannot resume"),
    (9, FAILED, "resume", NORMAL, "The cause is resolved within gc-ttl: changefeed resume"),
]

# The whole table: the nine numbered arrows, the same arrows from the other states the
# seed's text implies (a warning changefeed can also be paused, hit a fatal error or reach
# its target; a failed one stays failed when gc-ttl passes), and the self-loops of a
# cycle that retries again or just makes progress.
EXPECTED = {
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
EVENTS = sorted({e for (_, e) in EXPECTED})


@pytest.mark.parametrize("number, src, event, dst, why", SEED_TRANSITIONS, ids=[f"({n})" for n, *_ in SEED_TRANSITIONS])
def test_seed_transition(number, src, event, dst, why):
    assert next_state(src, event) == (dst, number), why


def test_every_seed_number_appears_in_the_table():
    numbers = sorted({n for (_, n) in states.TRANSITIONS.values() if n is not None})
    assert numbers == list(range(1, 10))


def test_the_table_is_exactly_the_expected_one():
    assert states.TRANSITIONS == EXPECTED


@pytest.mark.parametrize("src", states.STATES)
@pytest.mark.parametrize("event", EVENTS)
def test_every_state_and_event(src, event):
    if (src, event) in EXPECTED:
        assert next_state(src, event, "cf-1") == EXPECTED[(src, event)]
        return
    with pytest.raises(CdcflowError) as e:
        next_state(src, event, "cf-1")
    err = e.value
    assert err.code == "CDCFLOW:ErrChangefeedState"
    assert err.changefeed == "cf-1"
    text = str(err)
    assert f"a {src} changefeed" in text and event.replace("_", " ") in text
    allowed = [ev for (s, ev) in EXPECTED if s == src]
    if allowed:
        assert err.hint == f"allowed from {src}: " + ", ".join(allowed)
        assert all(ev in text for ev in allowed)
    else:
        assert err.hint == f"allowed from {src}: nothing"


def test_terminal_states_take_no_event():
    for terminal in (FINISHED, REMOVED):
        for event in EVENTS:
            with pytest.raises(CdcflowError, match="nothing"):
                next_state(terminal, event)


def test_forbidden_examples():
    with pytest.raises(CdcflowError) as e:
        next_state(STOPPED, "pause", "cf-x")
    assert str(e.value) == ("changefeed cf-x: a stopped changefeed cannot take 'pause'"
                            " — allowed from stopped: resume, gc_ttl_exceeded")
    with pytest.raises(CdcflowError, match="allowed from normal: pause, retryable_error, progress"):
        next_state(NORMAL, "resume")
    with pytest.raises(CdcflowError, match="a finished changefeed cannot take 'resume'"):
        next_state(FINISHED, "resume")


def test_idle_states_say_why():
    assert set(states.IDLE_REASONS) == {STOPPED, FAILED, FINISHED, REMOVED}
    assert "resume" in states.IDLE_REASONS[STOPPED] and "resume" in states.IDLE_REASONS[FAILED]
