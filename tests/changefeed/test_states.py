import re
from pathlib import Path

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

SEED = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "001_e80c0a0e34d88ca2.txt"
NUMBERS = "①②③④⑤⑥⑦⑧⑨"

# Each numbered arrow of TiCDC's Changefeed Overview's diagram: words of the seed's description of it, and the
# (from state, event, to state) those words mean.  The states are the seed's own: Stopped is
# "the user manually pauses", Warning "recoverable errors ... keeps trying to resume",
# Failed "does not keep trying", Finished "reached the preset TargetTs".
ARROWS = {
    1: ("Run the changefeed pause command", NORMAL, "pause", STOPPED),
    2: ("Run the changefeed resume command to resume the replication task", STOPPED, "resume", NORMAL),
    3: ("Recoverable errors occur during the changefeed operation, and the operation is retried automatically",
        NORMAL, "retryable_error", WARNING),
    4: ("The changefeed automatic retry succeeds, and checkpoint-ts continues to advance",
        WARNING, "progress", NORMAL),
    5: ("The changefeed automatic retry exceeds 30 minutes and fails. The changefeed enters the failed state",
        WARNING, "stuck_timeout", FAILED),
    6: ("The changefeed encounters an unrecoverable error and directly enters the failed state",
        NORMAL, "fatal_error", FAILED),
    7: ("The replication progress of the changefeed reaches the value set by target-ts", NORMAL, "target_reached",
        FINISHED),
    8: ("The changefeed has been suspended for a duration longer than the value specified by gc-ttl", STOPPED,
        "gc_ttl_exceeded", FAILED),
    9: ("If the cause of the failure has been resolved", FAILED, "resume", NORMAL),
}
EVENTS = sorted({e for (_, e) in states.TRANSITIONS})


def _squeezed(text: str) -> str:
    # the seed was extracted from a web page: words are broken across lines, sometimes glued
    return "".join(text.split()).lower()


@pytest.fixture(scope="module")
def seed_arrows() -> dict[int, str]:
    """The seed's description of each numbered arrow, by number."""
    if not SEED.is_file():
        pytest.skip(f"the Changefeed Overview's text is not at {SEED} (the shared/ folder beside the repository)")
    text = SEED.read_text(encoding="utf-8")
    text = text[text.index("The numbers in the preceding state transfer diagram"):]
    parts = re.split(f"([{NUMBERS}])", text)
    return {NUMBERS.index(mark) + 1: _squeezed(words) for mark, words in zip(parts[1::2], parts[2::2])}


def test_the_seed_numbers_nine_arrows(seed_arrows):
    assert sorted(seed_arrows) == list(range(1, 10))


@pytest.mark.parametrize("number", sorted(ARROWS), ids=[f"({n})" for n in sorted(ARROWS)])
def test_seed_transition(seed_arrows, number):
    words, src, event, dst = ARROWS[number]
    assert _squeezed(words) in seed_arrows[number], f"the Changefeed Overview no longer says this of ({number}): {words}"
    assert next_state(src, event) == (dst, number), words


@pytest.mark.parametrize("number", sorted(ARROWS), ids=[f"({n})" for n in sorted(ARROWS)])
def test_every_row_with_a_seed_number_is_that_arrow(number):
    """The same arrow from another state (a warning changefeed can also fail or finish) keeps
    the seed's event and destination."""
    _, src, event, dst = ARROWS[number]
    rows = {key: to for key, (to, n) in states.TRANSITIONS.items() if n == number}
    assert (src, event) in rows
    assert {(e, to) for (_, e), to in rows.items()} == {(event, dst)}


@pytest.mark.parametrize("src, event", [(s, e) for s in states.STATES for e in EVENTS
                                        if (s, e) not in states.TRANSITIONS])
def test_a_forbidden_event_says_what_is_allowed(src, event):
    with pytest.raises(CdcflowError) as e:
        next_state(src, event, "cf-1")
    err = e.value
    assert err.code == "CDCFLOW:ErrChangefeedState"
    assert err.changefeed == "cf-1"
    text = str(err)
    assert f"a {src} changefeed" in text and event.replace("_", " ") in text
    # the hint names only the commands a person can give, never the events cycles report
    allowed = [ev for (s, ev) in states.TRANSITIONS if s == src and ev in ("pause", "resume")]
    if allowed:
        assert err.hint == f"a {src} changefeed takes " + " or ".join(f"`cdcflow changefeed {ev}`" for ev in allowed)
    else:
        assert err.hint.startswith(f"no command changes a {src} changefeed")
    for internal in ("retryable_error", "progress", "fatal_error", "target_reached", "stuck_timeout",
                     "gc_ttl_exceeded"):
        assert internal not in err.hint


def test_terminal_states_take_no_event():
    for terminal in (FINISHED, REMOVED):
        for event in EVENTS:
            with pytest.raises(CdcflowError, match="no command changes"):
                next_state(terminal, event)


def test_forbidden_examples():
    with pytest.raises(CdcflowError) as e:
        next_state(STOPPED, "pause", "cf-x")
    assert str(e.value) == ("changefeed cf-x: a stopped changefeed cannot take 'pause'"
                            " — a stopped changefeed takes `cdcflow changefeed resume`")
    with pytest.raises(CdcflowError) as e:
        next_state(NORMAL, "resume")
    assert e.value.hint == "a normal changefeed takes `cdcflow changefeed pause`"
    with pytest.raises(CdcflowError, match="a finished changefeed cannot take 'resume'"):
        next_state(FINISHED, "resume")


def test_idle_states_say_why():
    assert set(states.IDLE_REASONS) == {STOPPED, FAILED, FINISHED, REMOVED}
    assert "resume" in states.IDLE_REASONS[STOPPED] and "resume" in states.IDLE_REASONS[FAILED]
