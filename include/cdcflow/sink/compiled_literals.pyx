# cython: language_level=3, boundscheck=False, wraparound=False
"""The SQL literals of a row image's values, straight from its JSON text, for the apply stage's
writers (sink.row_writer's forms): `scan` reads an image's text once, in C, to its column names
and its VALUES tuple, without the dict of Python values raw_image builds, which cost the writers
more than the literals did (the cyclic collector walks every one); a value it cannot read in
place takes `literal`, row_codec.raw_literal compiled, whose most common types (text,
integers, NULL, DECIMAL and DATETIME texts) take a C path and every other value the
reference's.  tests/sink/test_row_literals.py compares them with the reference (raw_image,
raw_literal) on every kind of value; tests/source/test_binlog_readers.py on real images."""

cimport cython
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport (PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_4BYTE_KIND, PyUnicode_DATA,
                              PyUnicode_FromKindAndData, PyUnicode_KIND, PyUnicode_READ)
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uintptr_t
from libc.string cimport memcpy

from cdcflow.core.growth cimport capacity, grown

cdef extern from "Python.h":
    # float's own reading and repr (what msgspec's decoding and raw_literal's repr() give)
    object PyUnicode_DecodeUTF8(const char *s, Py_ssize_t size, const char *errors)
    double PyOS_string_to_double(const char *s, char **endptr, void *overflow_exception) except? -1.0
    char *PyOS_double_to_string(double val, char format_code, int precision, int flags, int *ptype) except NULL
    int Py_DTSF_ADD_DOT_0

from base64 import b64decode

import msgspec
import pyarrow as pa
from pymysql.converters import escape_string

from cdcflow.core.row_codec import raw_literal

_decode = msgspec.json.Decoder().decode
STRING_ID, INT64_ID = pa.string().id, pa.int64().id


cdef inline bint _plain(str s):
    """No character that escape_string escapes."""
    cdef Py_UCS4 ch
    for ch in s:
        if _sql_escape(ch):
            return False
    return True


cdef inline str _quote(str s):
    return "'" + (s if _plain(s) else escape_string(s)) + "'"


cdef object _tagged_text(str tag, str x):
    """The literal of {tag: x} where the tagged text is it as it is (None: the reference's way)."""
    cdef Text t, v
    cdef int form
    if tag == "b":  # bytes, in base64: read here, not in place (scan sends them to literal)
        return "X'" + b64decode(x).hex() + "'" if x else "''"
    t.kind, t.data, t.n = PyUnicode_KIND(tag), PyUnicode_DATA(tag), len(tag)
    v.kind, v.data, v.n = PyUnicode_KIND(x), PyUnicode_DATA(x), len(x)
    form = _tag_form(&t, 0, t.n, &v, 0, v.n)
    if form == TAG_TEXT:
        return _quote(x)
    if form == TAG_QUOTED:
        return "'" + x + "'"
    if form == TAG_BARE:
        return x
    return None


cdef str _tagged(dict v):
    cdef str tag
    if len(v) != 1:
        return raw_literal(v)
    for tag, x in v.items():
        if type(x) is str:
            out = _tagged_text(tag, x)
            if out is not None:
                return out
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


# --- an image's text read once: its column names and its VALUES tuple ------------------------

@cython.no_gc
cdef class Image:
    """A row image as the apply stage's writers hold it (sink.row_writer's SCANNED form): its
    text, its column names (one tuple object per distinct list of names: a StreamingWriter
    groups rows by it) and its VALUES tuple over all of them, "(l1, l2, …)", with where each
    literal lies in it.  A value without a literal (NaN, an unknown tag) raises its reference's
    error when a literal is asked for, as the reference raises it when the statement is built."""

    # its fields: compiled_literals.pxd

    def __dealloc__(self):
        PyMem_Free(self.cuts)

    cdef str literal(self, str name):
        cdef Py_ssize_t k = self.index[name]
        if self.error is not None:
            raise self.error
        return self.values[self.cuts[2 * k]:self.cuts[2 * k + 1]]

    def __getitem__(self, str name):
        """The literal of column `name`."""
        return self.literal(name)


cdef dict _SHAPES = {}  # names tuple -> (the one tuple object, {name: position})
# the shape of the image scanned last (rows of one table come in runs): one object, so that a
# thread switch in the middle of a scan (a Python call) never pairs one shape's names with another's
cdef tuple _last_shape = ((), {})


cdef tuple _shape(tuple names):
    """(the one tuple object of these names, {name: position})."""
    shape = _SHAPES.get(names)
    if shape is None:
        shape = _SHAPES[names] = (names, {c: k for k, c in enumerate(names)})
    return shape


cdef struct Text:
    int kind
    void *data
    Py_ssize_t n


cdef inline Py_UCS4 at(Text *t, Py_ssize_t i):
    return PyUnicode_READ(t.kind, t.data, i)


cdef inline bint _same_in(const chars *p, Py_ssize_t a, Py_ssize_t n, int kind, const void *name) noexcept:
    cdef Py_ssize_t k
    for k in range(n):
        if p[a + k] != PyUnicode_READ(kind, name, k):
            return False
    return True


cdef inline bint _same(Text *t, Py_ssize_t a, Py_ssize_t b, str name):
    """The text's [a:b] == name, without building it."""
    if b - a != len(name):
        return False
    if t.kind == PyUnicode_1BYTE_KIND:
        return _same_in(<const uint8_t *>t.data, a, b - a, PyUnicode_KIND(name), PyUnicode_DATA(name))
    if t.kind == PyUnicode_2BYTE_KIND:
        return _same_in(<const uint16_t *>t.data, a, b - a, PyUnicode_KIND(name), PyUnicode_DATA(name))
    return _same_in(<const uint32_t *>t.data, a, b - a, PyUnicode_KIND(name), PyUnicode_DATA(name))


cdef enum:
    ESCAPED = 1  # a JSON string holds a backslash escape
    SPECIAL = 2  # ... or a character escape_string escapes (a ' or a control character)
    # An image of more columns takes the reference's reading: the spans are on the stack (20 KB
    # with LOCAL_CHARS), which a writer thread may have little of (musl gives a thread 128 KB).
    SCANNED_COLUMNS = 512
    FLOAT_CHARS = 40  # a JSON float token longer than this takes the reference's reading
    LOCAL_CHARS = 1024  # a VALUES tuple this long is built on the stack, a longer one on the heap


cdef inline Py_ssize_t _string_end_in(const chars *p, Py_ssize_t i, Py_ssize_t n, int *flags) noexcept:
    cdef Py_UCS4 ch
    cdef int f = 0
    while i < n:
        ch = p[i]
        if ch == u'"':
            flags[0] = f
            return i
        if ch == u"\\":
            f |= ESCAPED
            i += 2
            continue
        if ch == u"'" or ch < 0x20:
            f |= SPECIAL
        i += 1
    flags[0] = f
    return -1


cdef Py_ssize_t _string_end(Text *t, Py_ssize_t i, int *flags):
    """The index of the quote that closes the JSON string whose first character is at `i`;
    `flags`: ESCAPED, SPECIAL.  -1: unterminated."""
    if t.kind == PyUnicode_1BYTE_KIND:
        return _string_end_in(<const uint8_t *>t.data, i, t.n, flags)
    if t.kind == PyUnicode_2BYTE_KIND:
        return _string_end_in(<const uint16_t *>t.data, i, t.n, flags)
    return _string_end_in(<const uint32_t *>t.data, i, t.n, flags)


cdef Py_ssize_t _value_end(Text *t, Py_ssize_t i):
    """The index just after the JSON object or array that starts at `i`; -1: malformed."""
    cdef Py_ssize_t depth = 0
    cdef Py_UCS4 ch
    cdef int flags
    while i < t.n:
        ch = at(t, i)
        if ch == u'"':
            i = _string_end(t, i + 1, &flags)
            if i < 0:
                return -1
        elif ch == u"{" or ch == u"[":
            depth += 1
        elif ch == u"}" or ch == u"]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


cdef struct Out:
    Py_UCS4 *p
    Py_ssize_t n, cap
    bint heap


cdef int _grow(Out *o, Py_ssize_t more) except -1:
    """Room for `more` characters; the first growth leaves the caller's buffer for the heap."""
    cdef Py_ssize_t cap = capacity(o.cap, o.n + more, 0)
    cdef Py_UCS4 *p = <Py_UCS4 *>grown(o.p if o.heap else NULL, cap * sizeof(Py_UCS4))
    if not o.heap:
        memcpy(p, o.p, o.n * sizeof(Py_UCS4))
    o.p, o.cap, o.heap = p, cap, True
    return 0


cdef inline int _put(Out *o, Py_UCS4 ch) except -1:
    if o.n == o.cap:
        _grow(o, 1)
    o.p[o.n] = ch
    o.n += 1
    return 0


cdef inline void _widened(Py_UCS4 *out, const chars *p, Py_ssize_t n) noexcept:
    cdef Py_ssize_t k
    for k in range(n):
        out[k] = p[k]


cdef int _put_range(Out *o, Text *t, Py_ssize_t a, Py_ssize_t b) except -1:
    """The text's [a:b] as it is."""
    if o.n + (b - a) > o.cap:
        _grow(o, b - a)
    if t.kind == PyUnicode_1BYTE_KIND:
        _widened(o.p + o.n, <const uint8_t *>t.data + a, b - a)
    elif t.kind == PyUnicode_2BYTE_KIND:
        _widened(o.p + o.n, <const uint16_t *>t.data + a, b - a)
    else:
        _widened(o.p + o.n, <const uint32_t *>t.data + a, b - a)
    o.n += b - a
    return 0


cdef inline Py_UCS4 _sql_escape(Py_UCS4 ch) noexcept:
    """What follows the backslash escape_string writes for `ch`; 0: it writes `ch` as it is."""
    if ch == 0:
        return 48  # \0
    if ch == 10:
        return 110  # \n
    if ch == 13:
        return 114  # \r
    if ch == 26:
        return 90  # \Z
    if ch == 39 or ch == 34 or ch == 92:  # ' " and the backslash itself
        return ch
    return 0


cdef inline int _hex4(Text *t, Py_ssize_t i) noexcept:
    """The value of the 4 hex digits at i; -1: not 4 hex digits."""
    cdef int v = 0, k, d
    if i + 4 > t.n:
        return -1
    for k in range(4):
        d = hex_digit(at(t, i + k))
        if d < 0:
            return -1
        v = v << 4 | d
    return v


cdef int _put_json_string(Out *o, Text *t, Py_ssize_t a, Py_ssize_t b) except -2:
    """The JSON string whose text (between its quotes) is the text's [a:b], unescaped, quoted as
    a SQL string with escape_string's escapes.  1: an escape read no further here (a lone
    surrogate, a malformed escape): nothing is written, the caller takes the reference's way."""
    cdef Py_ssize_t k = a, start = o.n
    cdef Py_UCS4 ch, esc
    cdef int u, low
    if o.n + 2 * (b - a) + 2 > o.cap:
        _grow(o, 2 * (b - a) + 2)
    o.p[o.n] = u"'"
    o.n += 1
    while k < b:
        ch = at(t, k)
        k += 1
        if ch == u"\\":
            if k >= b:
                o.n = start
                return 1
            ch = at(t, k)
            k += 1
            if ch == u"n":
                ch = u"\n"
            elif ch == u"r":
                ch = u"\r"
            elif ch == u"t":
                ch = u"\t"
            elif ch == u"b":
                ch = 8
            elif ch == u"f":
                ch = 12
            elif ch == u"u":
                u = _hex4(t, k)
                if u < 0:
                    o.n = start
                    return 1
                k += 4
                if 0xD800 <= u <= 0xDBFF:
                    low = _hex4(t, k + 2) if k + 6 <= b and at(t, k) == u"\\" and at(t, k + 1) == u"u" else -1
                    if not 0xDC00 <= low <= 0xDFFF:
                        o.n = start
                        return 1
                    u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00)
                    k += 6
                elif 0xDC00 <= u <= 0xDFFF:
                    o.n = start
                    return 1
                ch = u
            elif ch != u'"' and ch != u"\\" and ch != u"/":
                o.n = start
                return 1
        esc = _sql_escape(ch)
        if esc:
            o.p[o.n] = 92  # a backslash
            o.n += 1
            ch = esc
        o.p[o.n] = ch
        o.n += 1
    o.p[o.n] = u"'"
    o.n += 1
    return 0


cdef int _put_str(Out *o, str s) except -1:
    cdef Text t
    t.kind, t.data, t.n = PyUnicode_KIND(s), PyUnicode_DATA(s), len(s)
    return _put_range(o, &t, 0, t.n)


cdef bint _int_token(Text *t, Py_ssize_t a, Py_ssize_t b):
    """A JSON integer whose text is its literal: digits, a sign, no -0, within int64's sure digits."""
    cdef Py_ssize_t k
    cdef Py_UCS4 ch
    if b - a > 18 or b == a:
        return False
    if at(t, a) == u"-":
        if b - a == 1 or at(t, a + 1) == u"0":
            return False
        a += 1
    for k in range(a, b):
        ch = at(t, k)
        if not u"0" <= ch <= u"9":
            return False
    return True


cdef bint _float_token(Text *t, Py_ssize_t a, Py_ssize_t b, char *out):
    """A JSON number with a fraction or an exponent (msgspec reads it as a float), as ASCII in
    `out` (FLOAT_CHARS + 1 bytes); False for any other text, or a longer one."""
    cdef Py_ssize_t k = a, digits
    cdef bint floating = False
    cdef Py_UCS4 ch
    if b - a > FLOAT_CHARS or b == a:
        return False
    if at(t, k) == u"-":
        k += 1
    # -?(0|[1-9][0-9]*)
    if k >= b or not u"0" <= at(t, k) <= u"9":
        return False
    if at(t, k) == u"0":
        k += 1
    else:
        while k < b and u"0" <= at(t, k) <= u"9":
            k += 1
    # (\.[0-9]+)?
    if k < b and at(t, k) == u".":
        k, digits, floating = k + 1, 0, True
        while k < b and u"0" <= at(t, k) <= u"9":
            k, digits = k + 1, digits + 1
        if not digits:
            return False
    # ([eE][+-]?[0-9]+)?
    if k < b and (at(t, k) == u"e" or at(t, k) == u"E"):
        k, digits, floating = k + 1, 0, True
        if k < b and (at(t, k) == u"+" or at(t, k) == u"-"):
            k += 1
        while k < b and u"0" <= at(t, k) <= u"9":
            k, digits = k + 1, digits + 1
        if not digits:
            return False
    if k != b or not floating:
        return False
    for k in range(a, b):
        ch = at(t, k)
        out[k - a] = <char>ch
    out[b - a] = 0
    return True


cdef bint _put_float(Out *o, Text *t, Py_ssize_t a, Py_ssize_t b) except -1:
    """The literal of the JSON float at the text's [a:b] (repr of the float it reads, as
    raw_literal gives it), put in `o`; False where it is not one to read here (not a float
    token, too long, or past a double's range: the reference's reading, and its refusal)."""
    cdef char token[FLOAT_CHARS + 1]
    cdef char *end
    cdef char *text
    cdef double x
    cdef Py_ssize_t k
    if not _float_token(t, a, b, token):
        return False
    x = PyOS_string_to_double(token, &end, NULL)
    if end != token + (b - a) or not isfinite(x):
        return False
    text = PyOS_double_to_string(x, b"r", 0, Py_DTSF_ADD_DOT_0, NULL)
    try:
        k = 0
        while text[k]:
            _put(o, <Py_UCS4>text[k])
            k += 1
    finally:
        PyMem_Free(text)
    return True


cdef bint _decimal_span(Text *t, Py_ssize_t a, Py_ssize_t b):
    """A DECIMAL's text, the text's [a:b], that is its literal: no exponent, ends in a digit."""
    cdef Py_ssize_t k
    cdef Py_UCS4 ch
    if b == a:
        return False
    for k in range(a, b):
        ch = at(t, k)
        if ch == u"E" or ch == u"e":
            return False
    ch = at(t, b - 1)
    return u"0" <= ch <= u"9"


cdef enum:  # how a tagged value's text is its literal (_tag_form)
    TAG_OTHER = 0  # not as it is: the reference's way
    TAG_TEXT = 1  # a string (TEXT, JSON, TIME): quoted, with escape_string's escapes
    TAG_QUOTED = 2  # as it is, in quotes (a DATETIME of 26 characters, a DATE of 10)
    TAG_BARE = 3  # as it is (a DECIMAL without an exponent)


cdef int _tag_form(Text *t, Py_ssize_t ta, Py_ssize_t tb, Text *v, Py_ssize_t va, Py_ssize_t vb):
    """The form of the literal of the tag t[ta:tb] with the (unescaped) text v[va:vb]: the one
    rule of _tagged_text (a decoded image's value) and _put_tagged (one read in place)."""
    cdef Py_ssize_t n = tb - ta
    cdef Py_UCS4 tag = at(t, ta) if n >= 1 else 0
    cdef Py_UCS4 second = at(t, ta + 1) if n == 2 else 0
    if (n == 1 and (tag == u"t" or tag == u"j")) or (n == 2 and tag == u"t" and second == u"t"):
        return TAG_TEXT
    if n == 2 and tag == u"d" and second == u"t":
        return TAG_QUOTED if vb - va == 26 and at(v, va + 10) == u" " else TAG_OTHER
    if n == 1 and tag == u"d":
        return TAG_BARE if _decimal_span(v, va, vb) else TAG_OTHER
    if n == 2 and tag == u"d" and second == u"a":
        return TAG_QUOTED if vb - va == 10 else TAG_OTHER
    return TAG_OTHER


cdef int _put_tagged(Out *o, Text *t, str text, Py_ssize_t a, Py_ssize_t b) except -1:
    """The literal of the tagged value text[a:b]: {"tag":"text"} read in place where it can be,
    else the reference's."""
    cdef Py_ssize_t i, j
    cdef int flags, form
    if at(t, a + 1) == u'"':
        i = _string_end(t, a + 2, &flags)
        if i > 0 and not flags and i + 2 < b and at(t, i + 1) == u":" and at(t, i + 2) == u'"':
            j = _string_end(t, i + 3, &flags)
            if j > 0 and j + 2 == b and at(t, j + 1) == u"}":
                form = _tag_form(t, a + 2, i, t, i + 3, j)
                i += 3  # where the tag's text starts
                if form == TAG_TEXT:
                    if not _put_json_string(o, t, i, j):
                        return 0
                elif form != TAG_OTHER and not flags:  # a text with an escape: the reference reads it
                    if form == TAG_QUOTED:
                        _put(o, u"'")
                    _put_range(o, t, i, j)
                    if form == TAG_QUOTED:
                        _put(o, u"'")
                    return 0
    return _put_str(o, literal(_decode(text[a:b])))


def scan(str text):
    """An Image of a row image's text (row_codec's JSON): the literals raw_literal gives each value
    of raw_image(text), in its column order."""
    global _last_shape
    cdef tuple shape = _last_shape
    cdef tuple last = shape[0]
    cdef Py_ssize_t i = 1, j, a, count = 0, last_n = len(last)
    cdef Py_ssize_t starts[SCANNED_COLUMNS]
    cdef Py_ssize_t ends[SCANNED_COLUMNS]
    cdef Py_ssize_t cuts[2 * SCANNED_COLUMNS]
    cdef Py_UCS4 local[LOCAL_CHARS]
    cdef Py_UCS4 ch
    cdef int flags
    cdef bint reused = True
    cdef Image img = Image.__new__(Image)
    cdef Text t
    cdef Out o
    img.text = text
    t.kind, t.data, t.n = PyUnicode_KIND(text), PyUnicode_DATA(text), len(text)
    if t.n < 3 or at(&t, 0) != u"{" or at(&t, 1) != u'"':
        return _slow(img)
    o.p, o.n, o.cap, o.heap = local, 0, LOCAL_CHARS, False
    try:
        _put(&o, u"(")
        while True:
            # the column's name
            if i >= t.n or at(&t, i) != u'"' or count == SCANNED_COLUMNS:
                return _slow(img)
            j = _string_end(&t, i + 1, &flags)
            if j < 0 or flags & ESCAPED:
                return _slow(img)
            if reused and not (count < last_n and _same(&t, i + 1, j, last[count])):
                reused = False
            starts[count], ends[count] = i + 1, j
            i = j + 1
            if i + 1 >= t.n or at(&t, i) != u":":
                return _slow(img)
            i += 1
            # its value's literal
            if count:
                _put(&o, u",")
                _put(&o, u" ")
            cuts[2 * count] = o.n
            ch = at(&t, i)
            if ch == u'"':
                j = _string_end(&t, i + 1, &flags)
                if j < 0:
                    return _slow(img)
                if flags & ESCAPED:
                    if _put_json_string(&o, &t, i + 1, j):
                        _put_str(&o, _quote(_decode(text[i:j + 1])))
                elif flags & SPECIAL:
                    _put_json_string(&o, &t, i + 1, j)  # no escape to read: escape_string's escapes
                else:
                    _put(&o, u"'")
                    _put_range(&o, &t, i + 1, j)
                    _put(&o, u"'")
                i = j + 1
            elif ch == u"n" and _same(&t, i, min(i + 4, t.n), "null"):
                _put_str(&o, "NULL")
                i += 4
            elif ch == u"t" and _same(&t, i, min(i + 4, t.n), "true"):
                _put(&o, u"1")
                i += 4
            elif ch == u"f" and _same(&t, i, min(i + 5, t.n), "false"):
                _put(&o, u"0")
                i += 5
            elif ch == u"-" or u"0" <= ch <= u"9":
                a = i
                while i < t.n and at(&t, i) != u"," and at(&t, i) != u"}":
                    i += 1
                if _int_token(&t, a, i):
                    _put_range(&o, &t, a, i)
                elif not _put_float(&o, &t, a, i):  # a spelling msgspec reads otherwise, or refuses
                    _put_str(&o, literal(_decode(text[a:i])))
            elif ch == u"{":
                j = _value_end(&t, i)
                if j < 0:
                    return _slow(img)
                _put_tagged(&o, &t, text, i, j)
                i = j
            else:
                return _slow(img)
            cuts[2 * count + 1] = o.n
            count += 1
            if i >= t.n:
                return _slow(img)
            ch = at(&t, i)
            i += 1
            if ch == u"}":
                break
            if ch != u",":
                return _slow(img)
        if i != t.n:
            return _slow(img)
        _put(&o, u")")
        img.values = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, o.p, o.n)
    except (ValueError, TypeError):
        return _slow(img)  # a value without a literal: the refusal kept for when a literal is asked
    finally:
        if o.heap:
            PyMem_Free(o.p)
    img.cuts = <Py_ssize_t *>PyMem_Malloc(2 * count * sizeof(Py_ssize_t))
    if img.cuts == NULL:
        raise MemoryError()
    memcpy(img.cuts, cuts, 2 * count * sizeof(Py_ssize_t))
    if not (reused and count == last_n):
        shape = _shape(tuple([text[starts[k]:ends[k]] for k in range(count)]))
        _last_shape = shape
    img.names, img.index = shape
    return img


cdef Image _slow(Image img):
    """The reference's reading: raw_image's values, each's literal (a refusal kept for later)."""
    cdef list lits = []
    cdef Py_ssize_t k, at_ = 1
    raw = _decode(img.text)
    img.names, img.index = _shape(tuple(raw))
    for v in raw.values():
        try:
            lits.append(literal(v))
        except (ValueError, TypeError) as e:
            img.error = e.with_traceback(None)
            lits.append("")
    img.cuts = <Py_ssize_t *>PyMem_Malloc(max(1, 2 * len(lits)) * sizeof(Py_ssize_t))
    if img.cuts == NULL:
        raise MemoryError()
    for k in range(len(lits)):
        img.cuts[2 * k] = at_
        at_ += len(<str>lits[k])
        img.cuts[2 * k + 1] = at_
        at_ += 2
    img.values = "(" + ", ".join(lits) + ")"
    return img


def image_values(list images, tuple columns):
    """Each image's VALUES tuple over `columns`, "(l1, l2, …)"."""
    cdef Image img
    cdef list out = []
    for img in images:
        if img.error is not None:
            raise img.error
        if img.names is columns:
            out.append(img.values)
        else:
            out.append("(" + ", ".join([img.literal(c) for c in columns]) + ")")
    return out


def image_literals(list images, str column):
    """Each image's literal of `column`."""
    cdef Image img
    return [img.literal(column) for img in images]


# --- the images of a writer's rows, read where the part holds them -----------------------------

def texts(list chunks, sources):
    """The texts of `chunks` (a part's images: Arrow string arrays, numbered one after the other)
    that `sources` (an Arrow int64 array) numbers, in its order, as Python strings (None where
    one is null): what `images.take(sources).to_pylist()` gives, without the copy of every image
    into arrays of its own that the take makes first (row_literals.texts)."""
    cdef Py_ssize_t n = len(sources), nchunks = len(chunks), k = 0, j, i, lo, hi, mid
    cdef int64_t s, total = 0
    cdef uintptr_t address
    cdef const int64_t *src
    cdef list out = [None] * n
    cdef int64_t *first
    cdef int64_t *base
    cdef const int32_t **offs
    cdef const char **data
    cdef const uint8_t **valid
    if sources.type.id != INT64_ID:
        raise TypeError(f"image numbers of type {sources.type}, not int64")
    if n == 0:
        return out
    if sources.null_count:
        raise ValueError("a row without its image's number")
    address = sources.buffers()[1].address
    src = (<const int64_t *>address) + <Py_ssize_t>sources.offset
    first = <int64_t *>PyMem_Malloc((nchunks + 1) * sizeof(int64_t))
    base = <int64_t *>PyMem_Malloc((nchunks + 1) * sizeof(int64_t))
    offs = <const int32_t **>PyMem_Malloc((nchunks + 1) * sizeof(void *))
    data = <const char **>PyMem_Malloc((nchunks + 1) * sizeof(void *))
    valid = <const uint8_t **>PyMem_Malloc((nchunks + 1) * sizeof(void *))
    try:
        if first == NULL or base == NULL or offs == NULL or data == NULL or valid == NULL:
            raise MemoryError()
        for j in range(nchunks):
            chunk = chunks[j]
            if chunk.type.id != STRING_ID:
                raise TypeError(f"images of type {chunk.type}, not string")
            bufs = chunk.buffers()
            first[j], base[j] = total, chunk.offset
            total += len(chunk)
            valid[j] = NULL
            if bufs[0] is not None and chunk.null_count:
                address = bufs[0].address
                valid[j] = <const uint8_t *>address
            address = bufs[1].address
            offs[j] = <const int32_t *>address
            data[j] = NULL
            if bufs[2] is not None:
                address = bufs[2].address
                data[j] = <const char *>address
        first[nchunks] = total
        for i in range(n):
            s = src[i]
            if s < 0 or s >= total:
                raise IndexError(f"image number {s} of {total}")
            # the chunk holding it: the last one's first (a table's rows come in runs from the same
            # chunks), else a bisection over the chunks' first numbers (a part may have dozens)
            if not (first[k] <= s < first[k + 1]):
                lo, hi = 0, nchunks - 1  # the chunk k with first[k] <= s < first[k + 1]
                while lo < hi:
                    mid = (lo + hi + 1) >> 1
                    if first[mid] <= s:
                        lo = mid
                    else:
                        hi = mid - 1
                k = lo
            s = s - first[k] + base[k]
            if valid[k] != NULL and not (valid[k][s >> 3] >> (s & 7)) & 1:
                continue
            out[i] = PyUnicode_DecodeUTF8(data[k] + offs[k][s], offs[k][s + 1] - offs[k][s], NULL)
    finally:
        PyMem_Free(first)
        PyMem_Free(base)
        PyMem_Free(offs)
        PyMem_Free(data)
        PyMem_Free(valid)
    return out
