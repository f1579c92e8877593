# The growing buffers of the compiled modules (core/compiled_columns.pyx, source/compiled_reader.pyx,
# sink/compiled_literals.pyx, sink/compiled_params.pyx): one growth policy and one reallocation,
# compiled into each module that cimports them (inline: pull's per-value appends cross no module).
from cpython.mem cimport PyMem_Realloc


cdef inline Py_ssize_t capacity(Py_ssize_t cap, Py_ssize_t need, Py_ssize_t least) noexcept nogil:
    """What a buffer of `cap` items grows to so that it holds `need`: twice as many, so that
    appending n items one at a time copies O(n) of them; `least` at least, `need` at least."""
    return max(least, cap * 2, need)


cdef inline void* grown(void* p, Py_ssize_t size) except NULL:
    """`p` (NULL: nothing yet) reallocated to `size` bytes; MemoryError where it cannot be."""
    cdef void* q = PyMem_Realloc(p, size if size > 0 else 1)
    if q == NULL:
        raise MemoryError()
    return q


cdef inline int room(void** p, Py_ssize_t* cap, Py_ssize_t need, size_t item, Py_ssize_t least) except -1:
    """Room in `*p`, which has `*cap` items of `item` bytes, for `need` of them: grown (capacity's
    way) where it has fewer; `*cap` is set once the memory is there."""
    cdef Py_ssize_t c
    if need <= cap[0]:
        return 0
    c = capacity(cap[0], need, least)
    p[0] = grown(p[0], c * item)
    cap[0] = c
    return 0
