"""Dense Cholesky solve of small symmetric positive definite systems (row-major, in place);
shared by the IK and the motor-saturation kernels."""
from libc.math cimport sqrt


cdef inline void cholesky_resolve(const double* L, int n, double* b) noexcept nogil:
    # (L lower Cholesky factor, b) => (b = (L L^T)^-1 b)
    cdef int i, k
    cdef double s
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i * n + k] * b[k]
        b[i] = s / L[i * n + i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k * n + i] * b[k]
        b[i] = s / L[i * n + i]


cdef inline bint cholesky_solve(double* A, int n, double* b,
                                double min_pivot=0.0) noexcept nogil:
    # (A (n x n) symmetric, b) => (b = A^-1 b); A is overwritten by its Cholesky factor. False
    # (b untouched) when a pivot is not above min_pivot: A is not positive definite enough
    cdef int i, j, k
    cdef double s
    for j in range(n):
        s = A[j * n + j]
        for k in range(j):
            s -= A[j * n + k] * A[j * n + k]
        if not s > min_pivot:
            return False
        A[j * n + j] = sqrt(s)
        for i in range(j + 1, n):
            s = A[i * n + j]
            for k in range(j):
                s -= A[i * n + k] * A[j * n + k]
            A[i * n + j] = s / A[j * n + j]
    cholesky_resolve(A, n, b)
    return True
