# A row image as the apply stage's writers hold it (compiled_literals.pyx): what the writers'
# binary parameters (compiled_params.pyx) read its literals from.

cdef class Image:
    cdef readonly str text
    cdef readonly tuple names
    cdef dict index
    cdef str values  # the VALUES tuple, "(l1, l2, …)"
    cdef Py_ssize_t *cuts  # literal k is values[cuts[2k]:cuts[2k + 1]]
    cdef object error  # a value without a literal: raised when a literal is asked for

    cdef str literal(self, str name)
