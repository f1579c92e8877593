"""The repository checkout the development tools work in (they run from it, not from an
installed package): its root, and the .local/ folder where they keep servers and homes
(`CDCFLOW_LOCAL` moves it: the test of `make demo` runs it in a folder of its own)."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
LOCAL = Path(os.environ.get("CDCFLOW_LOCAL") or PROJECT / ".local")


def child_env(**extra: str) -> dict[str, str]:
    """This process's environment with `extra`, for a child that runs cdcflow from the checkout:
    its include/ first on PYTHONPATH, before any the environment has."""
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT / "include"), env.get("PYTHONPATH")) if p)
    return env
