# cython: language_level=3, boundscheck=False, wraparound=False
"""row_codec.raw_literal and raw_values compiled: the SQL literals of a row image's values,
straight from its JSON, for the apply stage's writers (sink.row_writer's RAW form).  The
writers spend most of their Python time here (one call per value); the types the images hold
most (text, integers, NULL, DECIMAL and DATETIME texts) take a C path, every other value the
reference's.  tests/sink/test_row_literals.py compares both on every kind of value."""

from base64 import b64decode

from pymysql.converters import escape_string

from cdcflow.core.row_codec import raw_literal


cdef inline bint _plain(str s):
    """No character that escape_string escapes."""
    cdef Py_UCS4 ch
    for ch in s:
        if ch == u"'" or ch == u"\\" or ch == u'"' or ch == u"\n" or ch == u"\r" or ch == u"\0" or ch == u"\x1a":
            return False
    return True


cdef inline str _quote(str s):
    return "'" + (s if _plain(s) else escape_string(s)) + "'"


cdef inline bint _decimal_text(str x):
    """A DECIMAL's text that is its literal: no exponent, ends in a digit."""
    cdef Py_UCS4 ch
    if not x:
        return False
    for ch in x:
        if ch == u"E" or ch == u"e":
            return False
    ch = x[len(x) - 1]
    return u"0" <= ch <= u"9"


cdef str _tagged(dict v):
    cdef str tag
    if len(v) != 1:
        return raw_literal(v)
    for tag, x in v.items():
        if type(x) is str:
            if tag == "dt":
                if len(<str>x) == 26 and (<str>x)[10] == u" ":
                    return "'" + <str>x + "'"
            elif tag == "d":
                if _decimal_text(x):
                    return x
            elif tag == "da":
                if len(<str>x) == 10:
                    return "'" + <str>x + "'"
            elif tag == "b":
                return "X'" + b64decode(x).hex() + "'" if x else "''"
            elif tag == "t" or tag == "j" or tag == "tt":
                return _quote(x)
    return raw_literal(v)


cpdef str literal(object v):
    """row_codec.raw_literal."""
    t = type(v)
    if t is str:
        return _quote(v)
    if t is int:
        return str(v)
    if v is None:
        return "NULL"
    if t is dict:
        return _tagged(v)
    return raw_literal(v)


def values(dict raw, tuple columns):
    """row_codec.raw_values."""
    cdef list out = []
    for c in columns:
        out.append(literal(raw[c]))
    return "(" + ", ".join(out) + ")"
