"""pandas held back from a `cdcflow` command's process until pyspark is imported.

pyarrow imports pandas, when it is installed, the first time it converts a Python value (a
string in a filter expression, a list into an array), to know pandas' own values when it
meets them. cdcflow hands pyarrow no pandas value, yet that import took 0.25-0.35 s of every
CLI cycle that read a window: about a third of its own start-up, prepare and finish. While the
hold is on, pandas cannot be imported, and pyarrow converts as it does where pandas is not
installed.

Spark needs pandas: pyspark's Spark Connect client imports it, and its Arrow conversions pass
pandas values to pyarrow. The first import of pyspark therefore ends the hold and tells
pyarrow that pandas is there, before pyspark itself loads, so a cycle that runs Spark works
as it did before. Nothing else in cdcflow imports pandas.

Only the `cdcflow` command's own process holds pandas (cli.entry). Airflow's task processes,
Spark's Python workers and the tests import it as before.
"""

from __future__ import annotations

import contextlib
import sys

HELD = "pandas"
RELEASED_BY = "pyspark"


class _Hold:
    """A finder on sys.meta_path (any object with find_spec serves: importlib.abc's base class
    would cost the command 30 ms of imports)."""

    def find_spec(self, name, path=None, target=None):
        if name == RELEASED_BY:
            release()
            return None  # the usual finders load pyspark
        if name == HELD or name.startswith(HELD + "."):
            raise ModuleNotFoundError(f"{HELD} is held back until {RELEASED_BY} is imported (cdcflow.core.pandas_hold)",
                                      name=name)
        return None


_HOLD = _Hold()


def hold() -> bool:
    """Holds pandas back from this process; False where it is imported already (nothing to
    hold) or pyspark is (which needs it)."""
    if HELD in sys.modules or RELEASED_BY in sys.modules:
        return False
    if _HOLD not in sys.meta_path:
        sys.meta_path.insert(0, _HOLD)
    return True


def release() -> None:
    """Ends the hold.  pyarrow remembers a failed import of pandas for its checks of values
    (is this a pandas Series?), so where pyarrow tried while the hold was on, one of its
    accessors that imports pandas again is called now."""
    if _HOLD not in sys.meta_path:
        return
    sys.meta_path.remove(_HOLD)
    lib = sys.modules.get("pyarrow.lib")
    if lib is not None and not lib._pandas_api.have_pandas:
        # where pandas is not installed at all, pyarrow's state is right as it is
        with contextlib.suppress(ImportError):
            lib._pandas_api.pd  # noqa: B018 - the accessor imports pandas and resets pyarrow's state


def held() -> bool:
    return _HOLD in sys.meta_path
