# The value writers of compiled_reader.pyx: each column kind's bytes as the text
# row_decoder writes for it, into a Buf (included there, where they stood: Cython includes are
# textual, so they share its declarations).


cdef inline bint is_full(const uint8_t* bitmap, bytes full, Py_ssize_t nb):
    """row_decoder.is_full: every column's bit set (MySQL 8 sets the bits past the last too)."""
    cdef const uint8_t* f = <const uint8_t*>PyBytes_AS_STRING(full)
    cdef Py_ssize_t i
    for i in range(nb):
        if bitmap[i] & f[i] != f[i]:
            return False
    return True


cdef inline u64 le(const uint8_t* d, int n):
    cdef u64 v = 0
    cdef int i
    for i in range(n - 1, -1, -1):
        v = (v << 8) | d[i]
    return v


cdef inline u64 be(const uint8_t* d, int n):
    cdef u64 v = 0
    cdef int i
    for i in range(n):
        v = (v << 8) | d[i]
    return v


cdef inline bint leap(int y):
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


cdef inline bint valid_date(i64 y, i64 mo, i64 d):
    """What Python's date accepts."""
    cdef int days
    if y < 1 or y > 9999 or mo < 1 or mo > 12 or d < 1:
        return False
    if mo == 2:
        days = 29 if leap(<int>y) else 28
    elif mo in (4, 6, 9, 11):
        days = 30
    else:
        days = 31
    return d <= days


cdef inline int put_digits(char* at, u64 v, int width) noexcept:
    """v's decimal digits, zero-padded to `width`, written at `at` (as printf's %0*llu); their
    count.  Digits are written here rather than by snprintf: glibc's printf parses its format on
    every call, and it took a seventh of pull's time on the bench's window."""
    cdef char rev[24]
    cdef int n = 0, i
    while True:
        rev[n] = <char>(48 + v % 10)
        v //= 10
        n += 1
        if v == 0:
            break
    while n < width:
        rev[n] = 48
        n += 1
    for i in range(n):
        at[i] = rev[n - 1 - i]
    return n


cdef inline int put_signed(char* at, i64 s, bint plus) noexcept:
    """s in decimal (as printf's %lld, or %+lld where `plus`) written at `at`; its count."""
    if s < 0:
        at[0] = 45  # '-'; the magnitude taken unsigned, so INT64_MIN is whole
        return 1 + put_digits(at + 1, <u64>0 - <u64>s, 1)
    if plus:
        at[0] = 43  # '+'
        return 1 + put_digits(at + 1, <u64>s, 1)
    return put_digits(at, <u64>s, 1)


cdef inline int put_after(char* at, char sep, u64 v, int width) noexcept:
    """`sep`, then v's digits zero-padded to `width` (put_digits), written at `at`; their count."""
    at[0] = sep
    return 1 + put_digits(at + 1, v, width)


cdef inline int put_tag(char* at, const char* tag) noexcept:
    """A tagged value's opening, {"<tag>":" (a two-letter tag), written at `at`; its count."""
    memcpy(at, b'{"', 2)
    memcpy(at + 2, tag, 2)
    memcpy(at + 4, b'":"', 3)
    return 7


cdef inline int put_date_text(char* at, i64 y, i64 mo, i64 d) noexcept:
    """YYYY-MM-DD (as printf's %04lld-%02lld-%02lld of fields read from bits: never negative)."""
    cdef int n = put_digits(at, <u64>y, 4)
    n += put_after(at + n, c'-', <u64>mo, 2)
    return n + put_after(at + n, c'-', <u64>d, 2)


cdef int put_datetime(Buf out, i64 y, i64 mo, i64 d, i64 h, i64 mi, i64 s,
                      i64 us) except -1:
    """column_types.datetime_value's text: a datetime's, or MySQL's own text where Python has
    no such datetime."""
    cdef char tmp[128]
    cdef int n
    cdef const char* tag = "tt"
    if valid_date(y, mo, d) and 0 <= h < 24 and 0 <= mi < 60 and 0 <= s < 60 and 0 <= us < 1000000:
        tag = "dt"
    n = put_tag(tmp, tag)
    n += put_date_text(tmp + n, y, mo, d)
    n += put_after(tmp + n, c' ', <u64>h, 2)
    n += put_after(tmp + n, c':', <u64>mi, 2)
    n += put_after(tmp + n, c':', <u64>s, 2)
    n += put_after(tmp + n, c'.', <u64>us, 6)
    memcpy(tmp + n, b'"}', 2)
    return out.put(tmp, n + 2)


cdef inline i64 frac_us(const uint8_t* d, int fsp):
    """column_types.frac_us of the fraction's stored bytes."""
    cdef int n = (fsp + 1) // 2
    if n == 0:
        return 0
    cdef i64 v = <i64>be(d, n)
    if n == 1:
        return v * 10000
    if n == 2:
        return v * 100
    return v


cdef int put_timestamp(Buf out, u64 secs, i64 us) except -1:
    """column_types.timestamp2_value's text."""
    cdef i64 total, days, rem, z, era, doe, yoe, y, doy, mp, d, m
    if secs == 0 and us == 0:
        return out.put(b'{"tt":"0000-00-00 00:00:00"}', 28)
    total = <i64>secs * 1000000 + us
    days = total // 86400000000
    rem = total % 86400000000
    # the civil date of a day count since 1970-01-01 (H. Hinnant's days_from_civil, inverted)
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    if m <= 2:
        y += 1
    return put_datetime(out, y, m, d, rem // 3600000000, rem // 60000000 % 60, rem // 1000000 % 60,
                        rem % 1000000)


cdef int put_decimal(Buf out, const uint8_t* src, int precision, int scale, Py_ssize_t size) except -1:
    """row_decoder._decimal's text: the groups' digits, read as decimal.Decimal reads them and
    written as str(Decimal) writes them."""
    cdef uint8_t stored[80]
    cdef char digits[400]
    cdef char text[500]
    cdef int intg = precision - scale
    cdef int whole = intg // 9, lead = intg % 9, full = scale // 9, tail = scale % 9
    cdef int i, k, at = 0, nd = 0, int_len, frac_len, first, ncoef, exp, left, dot, t = 0
    cdef bint negative
    if size > 80:
        raise Fallback()
    memcpy(stored, src, size)
    negative = not (stored[0] & 0x80)
    stored[0] ^= 0x80
    if negative:
        for i in range(size):
            stored[i] ^= 0xFF
    if lead:
        k = DECIMAL_BYTES[lead]
        nd += put_digits(digits + nd, be(stored + at, k), 1)
        at += k
    for i in range(whole):
        nd += put_digits(digits + nd, be(stored + at, 4), 9)
        at += 4
    int_len = nd
    for i in range(full):
        nd += put_digits(digits + nd, be(stored + at, 4), 9)
        at += 4
    if tail:
        k = DECIMAL_BYTES[tail]
        nd += put_digits(digits + nd, be(stored + at, k), tail)
        at += k
    frac_len = nd - int_len
    if nd == 0:
        raise Fallback()
    first = 0
    while first < nd - 1 and digits[first] == b'0':
        first += 1
    ncoef = nd - first  # the coefficient: the digits without leading zeros ("0" for zero)
    exp = -frac_len
    left = exp + ncoef
    dot = left if left > -6 else 1
    if negative:
        text[t] = b'-'
        t += 1
    if dot <= 0:
        text[t] = b'0'
        text[t + 1] = b'.'
        t += 2
        for i in range(-dot):
            text[t] = b'0'
            t += 1
        memcpy(text + t, digits + first, ncoef)
        t += ncoef
    elif dot >= ncoef:
        memcpy(text + t, digits + first, ncoef)
        t += ncoef
        for i in range(dot - ncoef):
            text[t] = b'0'
            t += 1
    else:
        memcpy(text + t, digits + first, dot)
        t += dot
        text[t] = b'.'
        t += 1
        memcpy(text + t, digits + first + dot, ncoef - dot)
        t += ncoef - dot
    if left != dot:
        text[t] = 69  # 'E'
        t += 1 + put_signed(text + t + 1, left - dot, True)
    out.put(b'{"d":"', 6)
    out.put(text, t)
    return out.put(b'"}', 2)


cdef int put_base64(Buf out, const uint8_t* s, Py_ssize_t n, Py_ssize_t padded) except -1:
    """row_decoder._bytes' text: the bytes padded with zero bytes to `padded`, in base64."""
    cdef Py_ssize_t total = n if n >= padded else padded, i, o
    cdef uint32_t v
    cdef uint8_t c0, c1, c2
    if total == 0:
        return out.put(b'""', 2)
    out.put(b'{"b":"', 6)
    out.reserve((total + 2) // 3 * 4 + 2)
    o = out.size
    i = 0
    while i < total:
        c0 = s[i] if i < n else 0
        c1 = (s[i + 1] if i + 1 < n else 0) if i + 1 < total else 0
        c2 = (s[i + 2] if i + 2 < n else 0) if i + 2 < total else 0
        v = (c0 << 16) | (c1 << 8) | c2
        out.data[o] = B64[(v >> 18) & 63]
        out.data[o + 1] = B64[(v >> 12) & 63]
        out.data[o + 2] = B64[(v >> 6) & 63] if i + 1 < total else b'='
        out.data[o + 3] = B64[v & 63] if i + 2 < total else b'='
        o += 4
        i += 3
    out.size = o
    return out.put(b'"}', 2)


cdef inline bint needs_escape(const uint8_t* s, Py_ssize_t n):
    """Whether msgspec escapes anything of this UTF-8 text (row_decoder._ESCAPED)."""
    cdef Py_ssize_t i
    for i in range(n):
        if s[i] < 0x20 or s[i] == 0x22 or s[i] == 0x5C:
            return True
    return False


cdef const char* HEX = b"0123456789abcdef"


cdef int put_float(Buf out, double f) except -1:
    """A finite float's text as msgspec writes it (row_decoder.float_text): repr's shortest digits;
    repr's fixed forms as they are, and its exponent forms without '+' or leading zeros, those
    of 1e-5 to 1e-1 written fixed (0.0000ddd)."""
    cdef char* r = PyOS_double_to_string(f, b'r', 0, Py_DTSF_ADD_DOT_0, NULL)  # repr's: 0.0, not 0
    cdef char* e
    cdef char* mant
    cdef char digits[32]
    cdef char tmp[16]
    cdef int k, nd = 0, i
    try:
        e = strchr(r, b'e')
        if e == NULL:
            return out.put(r, strlen(r))
        k = atoi(e + 1)
        mant = r
        if mant[0] == b'-':
            out.put(b"-", 1)
            mant += 1
        while mant < e:
            if mant[0] != b'.' and nd < 32:
                digits[nd] = mant[0]
                nd += 1
            mant += 1
        if -6 < k < 0:
            out.put(b"0.", 2)
            for i in range(-k - 1):
                out.put(b"0", 1)
            while nd > 1 and digits[nd - 1] == b'0':
                nd -= 1
            return out.put(digits, nd)
        out.put(digits, 1)
        if nd > 1:
            out.put(b".", 1)
            out.put(digits + 1, nd - 1)
        out.put(b"e", 1)
        return out.put(tmp, put_signed(tmp, k, False))
    finally:
        PyMem_Free(r)


cdef int put_escaped(Buf out, const uint8_t* s, Py_ssize_t n) except -1:
    """A string's text in an image as msgspec writes it (row_decoder.json_string): quoted, `"` and
    `\\` escaped, \\b \\t \\n \\f \\r, every other byte below 0x20 as \\u00xx."""
    cdef Py_ssize_t i
    cdef uint8_t c
    out.reserve(n * 6 + 2)
    out.data[out.size] = b'"'
    out.size += 1
    for i in range(n):
        c = s[i]
        if c >= 0x20 and c != 0x22 and c != 0x5C:
            out.data[out.size] = c
            out.size += 1
            continue
        out.data[out.size] = b'\\'
        if c == 0x22 or c == 0x5C:
            out.data[out.size + 1] = c
        elif c == 0x08:
            out.data[out.size + 1] = b'b'
        elif c == 0x09:
            out.data[out.size + 1] = b't'
        elif c == 0x0A:
            out.data[out.size + 1] = b'n'
        elif c == 0x0C:
            out.data[out.size + 1] = b'f'
        elif c == 0x0D:
            out.data[out.size + 1] = b'r'
        else:
            memcpy(out.data + out.size + 1, b"u00", 3)
            out.data[out.size + 4] = HEX[c >> 4]
            out.data[out.size + 5] = HEX[c & 15]
            out.size += 4
        out.size += 2
    out.data[out.size] = b'"'
    out.size += 1
    return 0
