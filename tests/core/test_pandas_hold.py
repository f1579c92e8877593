"""core.pandas_hold, each case in a fresh interpreter (the test process has pandas already)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap


def _fresh(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         env=dict(os.environ), timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_cli_and_a_cycles_arrow_work_without_pandas():
    seen = _fresh("""
        import json, sys
        from cdcflow.core import pandas_hold
        held = pandas_hold.hold()
        import cdcflow.cli, pyarrow as pa, pyarrow.compute as pc, pyarrow.dataset
        expr = pc.field("op") == "ddl"  # what first imported pandas in a cycle: a Python value converted
        rows = pa.table({"op": ["ddl", "insert", None]}).filter(expr).to_pylist()
        try:
            import pandas
            refused = False
        except ImportError:
            refused = True
        print(json.dumps({"held": held, "rows": rows, "pandas": "pandas" in sys.modules, "refused": refused}))
    """)
    assert seen == {"held": True, "rows": [{"op": "ddl"}], "pandas": False, "refused": True}


def test_pyspark_ends_the_hold_and_pyarrow_knows_pandas_again():
    seen = _fresh("""
        import json, sys
        from cdcflow.core import pandas_hold
        pandas_hold.hold()
        import pyarrow as pa
        pa.array([1, 2])  # pyarrow tries pandas while it is held, and remembers it missing
        before = pa.lib._pandas_api.have_pandas
        import pyspark.sql.connect.session  # the Connect client needs pandas
        import pandas as pd
        series = pa.array(pd.Series(pd.to_datetime(["2026-11-29 12:00"]).tz_localize("Europe/Berlin")))
        print(json.dumps({"before": before, "after": pa.lib._pandas_api.have_pandas, "held": pandas_hold.held(),
                          "type": str(series.type)}))
    """)
    # a tz-aware Series keeps its zone only where pyarrow knows pandas (it reads the dtype)
    assert seen == {"before": False, "after": True, "held": False, "type": "timestamp[ns, tz=Europe/Berlin]"}


def test_no_hold_where_pandas_or_pyspark_is_loaded_already():
    seen = _fresh("""
        import json, sys
        import pandas
        from cdcflow.core import pandas_hold
        print(json.dumps({"held": pandas_hold.hold(), "finder": pandas_hold.held()}))
    """)
    assert seen == {"held": False, "finder": False}
