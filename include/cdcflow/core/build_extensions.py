"""Build the compiled modules next to their sources: `make setup` runs `python -m
cdcflow.core.build_extensions` with the Cython constraints.txt pins.  Each is optional: where
one is not built (no compiler, no Python headers) its Python reference runs, and the process
says so once (source.binlog_events for the reader; `loaded` for the writers' literals and
parameters, sink.row_literals, and compaction's passes, sink.compaction)."""

from __future__ import annotations

import importlib
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
# module -> its source: the event store's columns (their reference: core.arrow_rows.rows_batch),
# pull's binlog reader, which writes rows into them (its reference: source/binlog_events' Python
# reader; built after the columns, whose compiled_columns.pxd it reads), and the writers' SQL
# literals (its reference: core/row_codec.raw_literal), and their binary parameters (built after
# the literals, whose compiled_literals.pxd it reads; without it the writers send text), and
# compaction's passes over a writer share (its reference: sink/compaction's Arrow steps)
# Each grows its buffers by core/growth.pxd, compiled into it (a header of inline functions, no
# module of its own).
EXTENSIONS = {"cdcflow.core.compiled_columns": PACKAGE / "core" / "compiled_columns.pyx",
              "cdcflow.source.compiled_reader": PACKAGE / "source" / "compiled_reader.pyx",
              "cdcflow.sink.compiled_literals": PACKAGE / "sink" / "compiled_literals.pyx",
              "cdcflow.sink.compiled_params": PACKAGE / "sink" / "compiled_params.pyx",
              "cdcflow.sink.compiled_compaction": PACKAGE / "sink" / "compiled_compaction.pyx"}


def build(module: str) -> Path:
    """Compile one module of EXTENSIONS; returns the file it is in."""
    from Cython.Build import cythonize  # lazy: Cython is only needed here, at set-up
    from setuptools import Distribution, Extension  # lazy: as Cython

    source = EXTENSIONS[module]
    with tempfile.TemporaryDirectory() as tmp:
        # include_path: a module's cimports of another's .pxd, by its package name
        ext = cythonize([Extension(module, [str(source)], extra_compile_args=["-O2"])], quiet=True,
                        build_dir=tmp, include_path=[str(PACKAGE.parent)])
        dist = Distribution({"ext_modules": ext})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_temp, cmd.build_lib = tmp + "/temp", tmp + "/lib"
        dist.run_command("build_ext")
        built = Path(cmd.get_ext_fullpath(module))
        target = source.with_name(built.name)
        # a new file renamed over the old one: a process that has the old one loaded keeps it
        staged = target.with_name(target.name + ".new")
        shutil.copyfile(built, staged)
        os.replace(staged, target)
        return target


def loaded(module: str, env: str, instead: str):
    """The compiled `module` (one of EXTENSIONS), or None where `env` is `python` (its reference
    asked for) or the module is not built: then the process says once, in the log, what it does
    instead, `instead` (each caller caches its answer)."""
    if os.environ.get(env, "compiled").lower() == "python":
        return None
    try:
        return importlib.import_module(module)
    except ImportError as e:
        logging.getLogger(module).warning("%s is not built (%s): %s, slower; `make setup` builds it",
                                          module, e, instead)
        return None


def main() -> int:
    failed = 0
    for module in EXTENSIONS:
        try:
            print(f"built {build(module)}")
        except Exception as e:  # noqa: BLE001 - one module's failure leaves the others and its reference
            print(f"{module} not built: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
