# Validation of numpy arguments at the Python boundary of the kernels: done once per call,
# never inside a kernel. The fast path (a float64, C-contiguous array of the right shape)
# costs a few type checks and a finiteness scan.
cimport numpy as cnp
from libc.math cimport isfinite


cdef inline bint _all_finite(const double* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(n):
        if not isfinite(x[k]):
            return False
    return True


cdef inline cnp.ndarray as_vector(object x, Py_ssize_t n, str name):
    """x as a float64 C-contiguous 1-D array of length n with finite entries."""
    cdef cnp.ndarray a
    if (cnp.PyArray_CheckExact(x) and cnp.PyArray_TYPE(<cnp.ndarray> x) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray> x) == 1
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray> x)):
        a = <cnp.ndarray> x
    else:
        try:
            a = <cnp.ndarray> cnp.PyArray_FROMANY(x, cnp.NPY_DOUBLE, 0, 0, cnp.NPY_ARRAY_C_CONTIGUOUS)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name}: expected a sequence of {n} floats ({exc})") from None
        if cnp.PyArray_NDIM(a) != 1:
            raise ValueError(f"{name}: expected a vector of length {n}, got shape {(<object> a).shape}")
    if cnp.PyArray_DIM(a, 0) != n:
        raise ValueError(f"{name}: expected length {n}, got {cnp.PyArray_DIM(a, 0)}")
    if not _all_finite(<const double*> cnp.PyArray_DATA(a), n):
        raise ValueError(f"{name}: contains NaN or infinity")
    return a


cdef inline cnp.ndarray as_matrix(object x, Py_ssize_t rows, Py_ssize_t cols, str name):
    """x as a float64 C-contiguous (rows, cols) array with finite entries (rows < 0: any)."""
    cdef cnp.ndarray a
    try:
        a = <cnp.ndarray> cnp.PyArray_FROMANY(x, cnp.NPY_DOUBLE, 0, 0, cnp.NPY_ARRAY_C_CONTIGUOUS)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected a float array of shape (N, {cols}) ({exc})") from None
    if cnp.PyArray_NDIM(a) == 1 and rows < 0 and cnp.PyArray_DIM(a, 0) == cols:
        a = <cnp.ndarray> a.reshape(1, cols)
    if (cnp.PyArray_NDIM(a) != 2 or cnp.PyArray_DIM(a, 1) != cols
            or (rows >= 0 and cnp.PyArray_DIM(a, 0) != rows)):
        raise ValueError(f"{name}: expected shape ({'N' if rows < 0 else rows}, {cols}), got {(<object> a).shape}")
    if not _all_finite(<const double*> cnp.PyArray_DATA(a), cnp.PyArray_SIZE(a)):
        raise ValueError(f"{name}: contains NaN or infinity")
    return a


cdef inline double* data_ptr(cnp.ndarray a) noexcept:
    return <double*> cnp.PyArray_DATA(a)
