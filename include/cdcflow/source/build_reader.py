"""Build the compiled binlog reader (source/compiled_reader.pyx) next to its source: `make setup`
runs `python -m cdcflow.source.build_reader` with the Cython constraints.txt pins.  Where it
fails (no compiler, no Python headers) the Python reader runs (source.binlog_events says so once)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("compiled_reader.pyx")
MODULE = "cdcflow.source.compiled_reader"


def build() -> Path:
    """Compile the module; returns the file it is in."""
    from Cython.Build import cythonize  # lazy: Cython is only needed here, at set-up
    from setuptools import Distribution, Extension  # lazy: as Cython

    with tempfile.TemporaryDirectory() as tmp:
        ext = cythonize([Extension(MODULE, [str(SOURCE)], extra_compile_args=["-O2"])], quiet=True,
                        build_dir=tmp)
        dist = Distribution({"ext_modules": ext})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_temp, cmd.build_lib = tmp + "/temp", tmp + "/lib"
        dist.run_command("build_ext")
        built = Path(cmd.get_ext_fullpath(MODULE))
        target = SOURCE.with_name(built.name)
        # a new file renamed over the old one: a process that has the old one loaded keeps it
        staged = target.with_name(target.name + ".new")
        shutil.copyfile(built, staged)
        os.replace(staged, target)
        return target


if __name__ == "__main__":
    print(f"built {build()}")
