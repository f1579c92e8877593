"""The SQL literals the apply stage's writers send, read straight from row-image text (sink.row_writer's
forms): the compiled module (sink/compiled_literals.pyx, built by make setup) where it is built,
else its reference, core.row_codec's raw_image and raw_literal, several times slower.  Both give the same
text for every value (tests/sink/test_row_literals.py); CDCFLOW_ROW_LITERALS=python asks for the
reference."""

from __future__ import annotations

from functools import cache

import pyarrow as pa

from cdcflow.core.build_extensions import loaded


@cache
def compiled():
    """The compiled module; None: the reference is asked for, or the module is not built."""
    return loaded("cdcflow.sink.compiled_literals", "CDCFLOW_ROW_LITERALS", "the writers build statements with the Python reference")


@cache
def _params_module():
    """The compiled binary parameters (sink/compiled_params.pyx); None: the literals' reference is
    asked for, or it is not built (the writers send text)."""
    if compiled() is None:
        return None
    return loaded("cdcflow.sink.compiled_params", "CDCFLOW_ROW_LITERALS", "the writers send their statements as text")


def params():
    """The binary protocol's parameters of row images (compiled_params.image_params), or None."""
    module = _params_module()
    return None if module is None else module.image_params


def literal_params():
    """The binary protocol's parameters of SQL literals (compiled_params.literal_params), or None."""
    module = _params_module()
    return None if module is None else module.literal_params


def texts(images: pa.ChunkedArray, sources: pa.Array) -> list[str | None]:
    """The texts of `images` that `sources` (int64) numbers, in its order: compiled_literals.texts,
    where it is built, reads them where `images` holds them; the reference takes them first."""
    module = compiled()
    if module is None:
        return images.take(sources).to_pylist()
    return module.texts(images.chunks, sources)
