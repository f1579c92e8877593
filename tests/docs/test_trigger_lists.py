"""The prose that lists the trigger form's params or modes lists all of them, as the code declares
them (launch/modes.py: TRIGGER_KEYS, MODES): docs/guides/airflow-pause.md named `mode`, `start_ts`
and `target_ts` as the only keys a run's conf takes long after `tables` joined them.  The
reference page (docs/reference/trigger-params.md) is generated; these are the hand-written pages."""

from __future__ import annotations

import re
from pathlib import Path

from cdcflow.launch.modes import MODES, TRIGGER_KEYS

REPO = Path(__file__).resolve().parents[2]
# a run of backticked names joined by commas and "and"/"or", as prose lists them
_RUN = re.compile(r"`[\w-]+`(?:(?:,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+)`[\w-]+`)+")
# the passages that list every mode, by the words that open them
MODE_LISTS = {"docs/guides/airflow.md": "The modes:", "docs/getting-started.md": "run by hand with a mode"}


def hand_written() -> list[Path]:
    return [REPO / "README.md", *(p for p in sorted((REPO / "docs").rglob("*.md")) if "reference" not in p.parts)]


def listed_runs(text: str) -> list[list[str]]:
    return [re.findall(r"`([\w-]+)`", run.group(0)) for run in _RUN.finditer(text)]


def test_every_list_of_the_trigger_params_names_them_all():
    found = []
    for doc in hand_written():
        for names in listed_runs(doc.read_text()):
            if names[:2] == list(TRIGGER_KEYS[:2]):  # a list of the params opens with mode, start_ts
                found.append(doc.name)
                assert tuple(names) == TRIGGER_KEYS, f"{doc.relative_to(REPO)} lists the trigger params as {names}"
    assert {"airflow-pause.md", "airflow.md"} <= set(found)


def test_every_list_of_the_modes_names_them_all():
    for path, opening in MODE_LISTS.items():
        text = " ".join((REPO / path).read_text().split())
        passage = text[text.index(opening):][:900]  # the modes with what each does, in backticks
        named = set(re.findall(r"`([\w-]+)`", passage))
        assert set(MODES) <= named, f"{path}: the modes after {opening!r} leave out {sorted(set(MODES) - named)}"


def test_a_list_short_of_a_param_is_found():
    assert listed_runs("a key other than `mode`, `start_ts`, `target_ts` (the known ones)") == \
        [["mode", "start_ts", "target_ts"]]
    assert listed_runs("`mode`, `start_ts`, `target_ts` and `tables`") == [list(TRIGGER_KEYS)]
