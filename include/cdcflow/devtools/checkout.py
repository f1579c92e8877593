"""The repository checkout the development tools work in (they run from it, not from an
installed package): its root, and the .local/ folder where they keep servers and homes."""

from __future__ import annotations

from pathlib import Path

PROJECT = Path(__file__).resolve().parents[3]
LOCAL = PROJECT / ".local"
