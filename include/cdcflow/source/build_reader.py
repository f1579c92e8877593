"""Build the compiled binlog reader (source/compiled_reader.pyx) in place: `make setup` runs
`python -m cdcflow.source.build_reader` with the Cython constraints.txt pins.  Where it fails
(no compiler, no Python headers) the Python reader runs (source.binlog_events says so once)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("compiled_reader.pyx")
MODULE = "cdcflow.source.compiled_reader"


def build() -> Path:
    """Compile the module next to its source; returns the built file."""
    from Cython.Build import cythonize  # lazy: Cython is only needed here, at set-up
    from setuptools import Distribution, Extension

    include = SOURCE.parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        ext = cythonize([Extension(MODULE, [str(SOURCE)], extra_compile_args=["-O2"])], quiet=True,
                        build_dir=tmp)
        dist = Distribution({"ext_modules": ext, "package_dir": {"": str(include)}})
        cmd = dist.get_command_obj("build_ext")
        cmd.inplace, cmd.build_temp, cmd.build_lib = True, tmp, tmp
        dist.run_command("build_ext")
        return Path(cmd.get_ext_fullpath(MODULE))


if __name__ == "__main__":
    print(f"built {build()}")
    sys.exit(0)
