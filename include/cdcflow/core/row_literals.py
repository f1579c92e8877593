"""The SQL literals the apply stage's writers send, read straight from row-image text (sink.row_writer's
RAW form): the compiled module (core/compiled_literals.pyx, built by make setup) where it is
built, else its reference, row_codec.raw_literal / raw_values, several times slower.  Both give
the same text for every value (tests/sink/test_row_literals.py); CDCFLOW_ROW_LITERALS=python asks
for the reference."""

from __future__ import annotations

import logging
import os
from functools import cache

from cdcflow.core import row_codec

log = logging.getLogger(__name__)


@cache
def implementation() -> tuple:
    """(literal, values): the compiled module's, or the reference's."""
    if os.environ.get("CDCFLOW_ROW_LITERALS", "compiled").lower() != "python":
        try:
            from cdcflow.core import compiled_literals  # lazy: an extension make setup may not have built
        except ImportError as e:
            log.warning("the compiled row literals are not built (%s): the writers build statements with the "
                        "Python reference, slower; `make setup` builds them", e)
        else:
            return compiled_literals.literal, compiled_literals.values
    return row_codec.raw_literal, row_codec.raw_values
