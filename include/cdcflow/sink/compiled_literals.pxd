# A row image as the apply stage's writers hold it (compiled_literals.pyx): what the writers'
# binary parameters (compiled_params.pyx) read its literals from.

from libc.stdint cimport uint8_t, uint16_t, uint32_t

cdef class Image:
    cdef readonly str text
    cdef readonly tuple names
    cdef dict index
    cdef str values  # the VALUES tuple, "(l1, l2, …)"
    cdef Py_ssize_t *cuts  # literal k is values[cuts[2k]:cuts[2k + 1]]
    cdef object error  # a value without a literal: raised when a literal is asked for

    cdef str literal(self, str name)


# The width of a text's characters: the per-character loops of both modules are fused over it and
# run once per kind of text, chosen once per call (PyUnicode_READ tests the kind at every
# character: a third of the scan's time on the bench's images, nearly all one byte a character).
ctypedef fused chars:
    uint8_t
    uint16_t
    uint32_t


cdef inline int hex_digit(Py_UCS4 ch) noexcept:
    """The value of the hex digit `ch` (either case); -1: not one.  JSON's \\u escapes
    (compiled_literals) and X'…' literals (compiled_params) read their digits with it."""
    if u"0" <= ch <= u"9":
        return <int>ch - 48
    if u"a" <= ch <= u"f":
        return <int>ch - 87
    if u"A" <= ch <= u"F":
        return <int>ch - 55
    return -1
