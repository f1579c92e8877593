# cython: language_level=3, boundscheck=False, wraparound=False
"""The binary protocol's parameters of row images (sink.prepared_statements): each value the
literal compiled_literals gives it, carried in the type that literal has in SQL, so that the
downstream converts it to the column as it converts the literal.

    NULL                         a null parameter
    '…' (escape_string's escapes) VAR_STRING, UTF-8, as the session's character set reads the
                                 statement's text (pymysql encodes it so)
    X'…'                         BLOB: a binary string, as the hexadecimal literal is
    -?digits                     LONGLONG (UNSIGNED past a signed one, as the lexer's ULONGLONG),
                                 NEWDECIMAL past an unsigned one (the lexer's DECIMAL)
    -?digits.digits              NEWDECIMAL, its text: an exact decimal literal
    a number with an exponent    DOUBLE: an approximate literal, read as the server reads it

A literal in any other form (one the reference builds another way) and a character UTF-8 cannot
carry (a lone surrogate, which the text statement's encoding refuses too) give no parameters: the
writer sends that statement as text.  tests/sink/test_prepared_statements.py writes every kind
of value both ways into a real server and compares what each stored."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from cdcflow.core.growth cimport room
from cdcflow.sink.compiled_literals cimport Image, chars, hex_digit

cdef extern from "Python.h":
    double PyOS_string_to_double(const char *s, char **endptr, void *overflow_exception) except? -1.0


cdef enum:  # the protocol's types (MYSQL_TYPE_*) and the flag of an unsigned integer
    P_DOUBLE = 0x05
    P_NULL = 0x06
    P_LONGLONG = 0x08
    P_NEWDECIMAL = 0xf6
    P_BLOB = 0xfc
    P_VAR_STRING = 0xfd
    UNSIGNED = 0x80
    NUMBER_CHARS = 80  # a bare number longer than this goes as text (no literal of a value is)


cdef struct Buf:
    char *p
    Py_ssize_t n, cap


cdef inline int _room(Buf *b, Py_ssize_t more) except -1:
    return room(<void **>&b.p, &b.cap, b.n + more, 1, 4096)


cdef int _lenenc(Buf *b, uint64_t n) except -1:
    """A length-encoded integer."""
    cdef int k, size
    _room(b, 9)
    if n < 251:
        b.p[b.n] = <char>n
        b.n += 1
        return 0
    if n < 0x10000:
        b.p[b.n], size = <char>0xfc, 2
    elif n < 0x1000000:
        b.p[b.n], size = <char>0xfd, 3
    else:
        b.p[b.n], size = <char>0xfe, 8
    b.n += 1
    for k in range(size):
        b.p[b.n] = <char>((n >> (8 * k)) & 0xff)
        b.n += 1
    return 0


cdef int _le64(Buf *b, uint64_t v) except -1:
    cdef int k
    _room(b, 8)
    for k in range(8):
        b.p[b.n] = <char>((v >> (8 * k)) & 0xff)
        b.n += 1
    return 0


cdef struct Lit:
    int kind
    void *data
    Py_ssize_t a, b  # the literal is the text's [a:b]


cdef inline Py_UCS4 at(Lit *t, Py_ssize_t i):
    return PyUnicode_READ(t.kind, t.data, i)


cdef inline int _utf8_size(Py_UCS4 ch) noexcept:
    """Bytes of `ch` in UTF-8; 0: none (a surrogate)."""
    if ch < 0x80:
        return 1
    if ch < 0x800:
        return 2
    if 0xD800 <= ch <= 0xDFFF:
        return 0
    return 3 if ch < 0x10000 else 4


cdef inline int _unescaped(Py_UCS4 ch) noexcept:
    """The character escape_string wrote as a backslash and `ch`; -1: it writes no such escape."""
    if ch == u"0":
        return 0
    if ch == u"n":
        return 10
    if ch == u"r":
        return 13
    if ch == u"Z":
        return 26
    if ch == u"'" or ch == u'"' or ch == u"\\":
        return ch
    return -1


cdef int _string_in(const chars *p, Py_ssize_t a, Py_ssize_t b, Buf *v) except -2:
    cdef Py_ssize_t i, size = 0
    cdef Py_UCS4 ch
    cdef unsigned int c
    cdef int k
    cdef char *out
    # the bytes first, for the length that precedes them
    i = a + 1
    while i < b - 1:
        ch = p[i]
        if ch == u"'":
            return -1  # a quote escape_string would have escaped: not its literal
        if ch == u"\\":
            if i + 1 >= b - 1 or _unescaped(p[i + 1]) < 0:
                return -1
            size += 1
            i += 2
            continue
        k = _utf8_size(ch)
        if k == 0:
            return -1
        size += k
        i += 1
    _lenenc(v, size)
    _room(v, size)
    out = v.p + v.n
    i = a + 1
    while i < b - 1:
        c = <unsigned int>p[i]
        if c == 92:  # the backslash of an escape
            c = <unsigned int>_unescaped(p[i + 1])
            i += 1
        i += 1
        if c < 0x80:
            out[0] = <char>c
            out += 1
        elif c < 0x800:
            out[0], out[1] = <char>(0xC0 | (c >> 6)), <char>(0x80 | (c & 0x3F))
            out += 2
        elif c < 0x10000:
            out[0], out[1] = <char>(0xE0 | (c >> 12)), <char>(0x80 | ((c >> 6) & 0x3F))
            out[2] = <char>(0x80 | (c & 0x3F))
            out += 3
        else:
            out[0], out[1] = <char>(0xF0 | (c >> 18)), <char>(0x80 | ((c >> 12) & 0x3F))
            out[2], out[3] = <char>(0x80 | ((c >> 6) & 0x3F)), <char>(0x80 | (c & 0x3F))
            out += 4
    v.n += size
    return 0


cdef int _string(Lit *t, Buf *v) except -2:
    """The quoted literal t[a:b] as a VAR_STRING's value; -1: not one escape_string wrote, or a
    character UTF-8 cannot carry."""
    if t.kind == PyUnicode_1BYTE_KIND:
        return _string_in(<const uint8_t *>t.data, t.a, t.b, v)
    if t.kind == PyUnicode_2BYTE_KIND:
        return _string_in(<const uint16_t *>t.data, t.a, t.b, v)
    return _string_in(<const uint32_t *>t.data, t.a, t.b, v)


cdef int _hex(Lit *t, Buf *v) except -2:
    """The literal X'…' t[a:b] as a BLOB's value; -1: not one."""
    cdef Py_ssize_t i, size = (t.b - t.a - 3) // 2
    cdef int hi, lo
    if (t.b - t.a - 3) % 2 or at(t, t.a + 1) != u"'" or at(t, t.b - 1) != u"'":
        return -1
    _lenenc(v, size)
    _room(v, size)
    for i in range(size):
        hi, lo = hex_digit(at(t, t.a + 2 + 2 * i)), hex_digit(at(t, t.a + 3 + 2 * i))
        if hi < 0 or lo < 0:
            return -1  # what was written of it is dropped with the whole parameter list
        v.p[v.n] = <char>(hi * 16 + lo)
        v.n += 1
    return 0


cdef int _number(Lit *t, Buf *v, unsigned char *flag) except -2:
    """A bare number t[a:b]: its type (its value in v), as the lexer reads its spelling; -1: not
    a number spelled as the reference spells one."""
    cdef Py_ssize_t i = t.a, digits = 0, dots = 0, n = t.b - t.a
    cdef bint negative = at(t, t.a) == u"-", exponent = False
    cdef uint64_t u = 0
    cdef bint wide = False
    cdef int d
    cdef Py_UCS4 ch
    cdef char text[NUMBER_CHARS + 1]
    cdef char *end
    cdef double x
    cdef uint64_t bits
    if n > NUMBER_CHARS:
        return -1
    for i in range(t.a, t.b):
        ch = at(t, i)
        text[i - t.a] = <char>ch if ch < 0x80 else 0
        if u"0" <= ch <= u"9":
            digits += 1
            if not exponent and not dots:
                d = <int>ch - 48
                if u > (<uint64_t>0xFFFFFFFFFFFFFFFF - d) // 10:
                    wide = True
                u = u * 10 + d
        elif ch == u"." and not exponent:
            dots += 1
        elif (ch == u"e" or ch == u"E") and digits and not exponent:
            exponent = True
        elif not (ch == u"-" and i == t.a  # the number's own sign, or its exponent's
                  or (ch == u"-" or ch == u"+") and i > t.a and (at(t, i - 1) == u"e" or at(t, i - 1) == u"E")):
            return -1
    text[n] = 0
    if not digits or dots > 1 or not (u"0" <= at(t, t.b - 1) <= u"9"):
        return -1
    if exponent:
        x = PyOS_string_to_double(text, &end, NULL)
        if end != text + n:
            return -1
        memcpy(&bits, &x, 8)
        _le64(v, bits)
        return P_DOUBLE
    if dots or wide or (negative and u > <uint64_t>0x8000000000000000):
        if dots and (at(t, t.a + negative) == u"." or at(t, t.b - 1) == u"."):
            return -1
        _lenenc(v, n)
        _room(v, n)
        memcpy(v.p + v.n, text, n)
        v.n += n
        return P_NEWDECIMAL
    if negative:
        _le64(v, <uint64_t>(-(<int64_t>(u - 1)) - 1))  # -u, u up to 2**63
        return P_LONGLONG
    if u > <uint64_t>0x7FFFFFFFFFFFFFFF:
        flag[0] = UNSIGNED
    _le64(v, u)
    return P_LONGLONG


cdef int _param(Lit *t, Buf *v, unsigned char *flag) except -2:
    """The literal t[a:b]'s parameter: its type (its value appended to v), P_NULL for NULL; -1:
    no parameter carries it as the literal is read."""
    cdef Py_UCS4 first = at(t, t.a)
    cdef Py_ssize_t n = t.b - t.a
    if first == u"'":
        if n < 2 or at(t, t.b - 1) != u"'":
            return -1
        return -1 if _string(t, v) < 0 else P_VAR_STRING
    if first == u"X" and n >= 3:
        return -1 if _hex(t, v) < 0 else P_BLOB
    if first == u"N" and n == 4 and at(t, t.a + 1) == u"U" and at(t, t.a + 2) == u"L" and at(t, t.a + 3) == u"L":
        return P_NULL
    return _number(t, v, flag)


cdef struct Params:
    unsigned char *head  # the null bitmap, 1, then a type and its flag per parameter
    Py_ssize_t at_, k  # bytes of head written, parameters added
    Buf v  # their values


cdef int _open(Params *ps, Py_ssize_t count) except -1:
    cdef Py_ssize_t nulls = (count + 7) // 8
    ps.v.p, ps.v.n, ps.v.cap = NULL, 0, 0
    ps.head = <unsigned char *>PyMem_Malloc(nulls + 1 + 2 * count + 1)
    if ps.head == NULL:
        raise MemoryError()
    memset(ps.head, 0, nulls)
    ps.head[nulls] = 1
    ps.at_, ps.k = nulls + 1, 0
    return 0


cdef int _add(Params *ps, Lit *lit) except -2:
    """The next parameter, the literal lit; -1: no parameter carries it."""
    cdef unsigned char flag = 0
    cdef int kind
    if lit.b <= lit.a:
        return -1
    kind = _param(lit, &ps.v, &flag)
    if kind < 0:
        return -1
    if kind == P_NULL:
        ps.head[ps.k >> 3] |= 1 << (ps.k & 7)
    ps.head[ps.at_], ps.head[ps.at_ + 1] = <unsigned char>kind, flag
    ps.at_ += 2
    ps.k += 1
    return 0


cdef bytes _bytes(Params *ps):
    out = PyBytes_FromStringAndSize(NULL, ps.at_ + ps.v.n)
    memcpy(PyBytes_AS_STRING(out), ps.head, ps.at_)
    if ps.v.n:
        memcpy(PyBytes_AS_STRING(out) + ps.at_, ps.v.p, ps.v.n)
    return out


cdef void _close(Params *ps) noexcept:
    PyMem_Free(ps.head)
    PyMem_Free(ps.v.p)


def image_params(list images, tuple columns):
    """COM_STMT_EXECUTE's parameters of the images' values over `columns`, row after row: its
    null bitmap, 1 (the types follow), the types and the values; None where one of them has no
    parameter (module docstring) or an image has no literal of a column (the text statement
    raises the reference's error)."""
    cdef Py_ssize_t rows = len(images), ncols = len(columns), r, c, k
    cdef Image img
    cdef Lit lit
    cdef Params ps
    cdef bint same
    cdef dict index
    cdef str values
    _open(&ps, rows * ncols)
    try:
        for r in range(rows):
            img = <Image>images[r]
            if img.error is not None:
                return None
            same, index, values = img.names is columns, img.index, img.values
            lit.kind, lit.data = PyUnicode_KIND(values), PyUnicode_DATA(values)
            for c in range(ncols):
                if same:
                    k = c
                else:
                    position = index.get(columns[c])
                    if position is None:
                        return None
                    k = position
                lit.a, lit.b = img.cuts[2 * k], img.cuts[2 * k + 1]
                if _add(&ps, &lit) < 0:
                    return None
        return _bytes(&ps)
    finally:
        _close(&ps)


def literal_params(list literals):
    """image_params of SQL literals given as texts, one parameter each (what the bench's floor
    replays a logged execution with); None: one has no parameter."""
    cdef Lit lit
    cdef Params ps
    cdef str text
    _open(&ps, len(literals))
    try:
        for text in literals:
            lit.kind, lit.data, lit.a, lit.b = PyUnicode_KIND(text), PyUnicode_DATA(text), 0, len(text)
            if _add(&ps, &lit) < 0:
                return None
        return _bytes(&ps)
    finally:
        _close(&ps)
