"""The reference pages (docs/reference/) are what `make docs-reference` generates from the code,
as tiflow's errdoc check holds errors.toml to pkg/errors: a CLI flag, a config key, an error
code, a state or transition, a DDL type, an environment variable or a trigger-form param added
to the code without its page regenerated fails here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from cdcflow.core import environment

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "docs" / "reference"


def differences(committed: Path, generated: Path) -> list[str]:
    """The pages that differ between two folders of reference pages, or exist in one only."""
    names = {p.name for p in committed.glob("*.md")} | {p.name for p in generated.glob("*.md")}
    return sorted(n for n in names if not (committed / n).is_file() or not (generated / n).is_file()
                  or (committed / n).read_text() != (generated / n).read_text())


def generate(out: Path) -> None:
    """The generator as `make docs-reference` runs it, in a process of its own: the trigger form's
    page imports Airflow, which must not be imported into the test session before its own home is set."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "include"), os.environ.get("PYTHONPATH", "")])}
    env.pop("AIRFLOW_HOME", None)
    done = subprocess.run([sys.executable, "-m", "cdcflow_devtools.docs_reference", "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_the_committed_reference_is_what_the_code_generates(tmp_path):
    generate(tmp_path)
    stale = differences(REFERENCE, tmp_path)
    assert not stale, f"docs/reference/ differs from the code in {stale}: run `make docs-reference` and commit"
    # the check can fail: a page edited by hand is found
    edited = tmp_path / "config.md"
    edited.write_text(edited.read_text().replace("`worker-count`", "`workers`"))
    assert differences(REFERENCE, tmp_path) == ["config.md"]


# Where the code reads a variable: os.environ.get("X"), os.environ["X"] (not assigned), getenv("X"),
# "X" in os.environ, build_extensions.loaded(module, "X", ...), and a Makefile's X=... .  Variables the tests set for a URI's password-env are
# names the tests invent, set with monkeypatch.setenv, not read here.
_READS = re.compile(r"""environ\.get\(\s*["'](CDCFLOW_\w+)["']"""
                    r"""|environ\[\s*["'](CDCFLOW_\w+)["']\s*\](?!\s*=[^=])"""
                    r"""|getenv\(\s*["'](CDCFLOW_\w+)["']"""
                    r"""|["'](CDCFLOW_\w+)["']\s+in\s+os\.environ"""
                    r"""|loaded\(\s*["'][\w.]+["']\s*,\s*["'](CDCFLOW_\w+)["']"""
                    r"""|^\s*(CDCFLOW_\w+)=""", re.M)


def variables_read(text: str) -> set[str]:
    return {name for match in _READS.findall(text) for name in match if name}


def test_every_cdcflow_variable_the_code_reads_is_in_the_environment_table():
    files = [p for folder in ("include", "plugins", "dags", "jobs", "tests") for p in (REPO / folder).rglob("*.py")
             if p != Path(__file__).resolve()]  # this file's own example of the scan is no read
    read = set().union(*(variables_read(p.read_text()) for p in files), variables_read((REPO / "Makefile").read_text()))
    read.add("CDCFLOW_HOME")  # core/home.py reads it by its name, HOME_VARIABLE
    assert read == set(environment.BY_NAME), \
        f"read but not in core/environment.py: {sorted(read - set(environment.BY_NAME))}; " \
        f"in the table but read nowhere: {sorted(set(environment.BY_NAME) - read)}"


def test_the_scan_finds_reads_and_not_assignments():
    text = 'a = os.environ.get("CDCFLOW_A", "x")\nos.environ["CDCFLOW_B"] = "1"\nif "CDCFLOW_C" in os.environ: pass\n' \
           'b = os.environ["CDCFLOW_D"]\n'
    assert variables_read(text) == {"CDCFLOW_A", "CDCFLOW_C", "CDCFLOW_D"}
