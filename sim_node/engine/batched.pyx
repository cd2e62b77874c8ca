"""Batch forms of the dynamics kernels: N states in one call, numpy arrays in and out.

Each function validates its arrays once, then evaluates the rows without the GIL, spread over
the available cores (OpenMP, one scratch Data per thread), calling the same kernels as the
single-state functions, so every row is bit-identical to a single call whatever the thread
count. Shapes: Q (N, nq), V / A / TAU (N, nv); outputs are fresh arrays with a leading N axis.
`gravity` is a 3-vector [m/s^2] (None: zero). `threads`: None = every core this process may
use (or $SIM_NODE_THREADS), 1 = serial.
"""
import os
import weakref

import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.stdlib cimport free, malloc

from sim_node.engine.aba cimport aba as aba_kernel
from sim_node.engine.arguments cimport as_matrix, as_vector, data_ptr
from sim_node.engine.coriolis cimport coriolis_matrix as coriolis_kernel
from sim_node.engine.crba cimport crba as crba_kernel
from sim_node.engine.kinematics cimport (center_of_mass, forward_kinematics, link_placements,
                                         point_jacobian)
from sim_node.engine.ltdl cimport ltdl_factor, ltdl_inverse
from sim_node.engine.model cimport Model, Data, ModelC, DataC
from sim_node.engine.rnea cimport gravity_forces, rnea as rnea_kernel

cnp.import_array()

cdef double _zero3[3]
_zero3[:] = [0.0, 0.0, 0.0]

# below this many states per thread, threads cost more than they save
cdef int MIN_STATES_PER_THREAD = 32


cdef class _Workers:
    """One scratch Data per thread."""
    cdef list datas
    cdef DataC** ptrs
    cdef int n

    def __cinit__(self, Model model, int n):
        self.datas = [Data(model) for _ in range(n)]
        self.n = n
        self.ptrs = <DataC**> malloc(n * sizeof(DataC*))
        if self.ptrs == NULL:
            raise MemoryError()
        for k in range(n):
            self.ptrs[k] = &(<Data> self.datas[k]).c

    def __dealloc__(self):
        free(self.ptrs)


_pools = weakref.WeakKeyDictionary()     # Model -> list of idle _Workers


def default_threads() -> int:
    """The cores this process may use (SIM_NODE_THREADS overrides)."""
    env = os.environ.get("SIM_NODE_THREADS")
    if env:
        return max(1, int(env))
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class _Lease:
    """Take idle workers for `model` (a concurrent caller gets its own) and give them back."""

    def __init__(self, Model model, n_states, threads):
        n = threads or default_threads()
        n = max(1, min(n, n_states // MIN_STATES_PER_THREAD))
        self.model = model
        self.pool = _pools.setdefault(model, [])
        for i, w in enumerate(self.pool):
            if (<_Workers> w).n == n:
                self.workers = self.pool.pop(i)
                break
        else:
            self.workers = _Workers(model, n)

    def __enter__(self):
        return self.workers

    def __exit__(self, *exc):
        self.pool.append(self.workers)


cdef inline const double* _gravity_ptr(object gravity, list keep):
    cdef cnp.ndarray g
    if gravity is None:
        return _zero3
    g = as_vector(gravity, 3, "gravity")
    keep.append(g)
    return data_ptr(g)


def _rows(Model model, Q, others):
    cdef cnp.ndarray qa = as_matrix(Q, -1, model.nq, "Q")
    n = qa.shape[0]
    arrays = [qa]
    for name, value in others:
        arrays.append(as_matrix(value, n, model.nv, name))
    return n, arrays


def rnea(Model model not None, Q, V, A, gravity=None, threads=None):
    """tau (N, nv) = B(q) qdd + C(q, qd) + G(q) for every row."""
    n, (qa, va, aa) = _rows(model, Q, [("V", V), ("A", A)])
    keep = []
    cdef const double* g = _gravity_ptr(gravity, keep)
    cdef cnp.ndarray out = np.empty((n, model.nv))
    cdef Py_ssize_t k, N = n, nq = model.nq, nv = model.nv
    cdef double* q = data_ptr(qa)
    cdef double* v = data_ptr(va)
    cdef double* a = data_ptr(aa)
    cdef double* o = data_ptr(out)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            rnea_kernel(&model.c, ws[threadid()], &q[k * nq], &v[k * nv], &a[k * nv], g,
                        &o[k * nv])
    return out


def aba(Model model not None, Q, V, TAU, gravity=None, threads=None):
    """qdd (N, nv) = B(q)^-1 (tau - C(q, qd) - G(q)) for every row."""
    n, (qa, va, ta) = _rows(model, Q, [("V", V), ("TAU", TAU)])
    keep = []
    cdef const double* g = _gravity_ptr(gravity, keep)
    cdef cnp.ndarray out = np.empty((n, model.nv))
    cdef cnp.ndarray ok = np.empty(n, dtype=np.int32)
    cdef Py_ssize_t k, N = n, nq = model.nq, nv = model.nv
    cdef double* q = data_ptr(qa)
    cdef double* v = data_ptr(va)
    cdef double* t = data_ptr(ta)
    cdef double* o = data_ptr(out)
    cdef int* okp = <int*> cnp.PyArray_DATA(ok)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            okp[k] = aba_kernel(&model.c, ws[threadid()], &q[k * nq], &v[k * nv], &t[k * nv],
                                g, &o[k * nv])
    if n and not ok.all():
        raise ValueError(f"row {int(np.argmin(ok))}: forward dynamics is singular "
                         "(a moving subtree has no mass)")
    return out


def crba(Model model not None, Q, threads=None):
    """B(q) (N, nv, nv) for every row."""
    n, (qa,) = _rows(model, Q, [])
    cdef cnp.ndarray out = np.empty((n, model.nv, model.nv))
    cdef Py_ssize_t k, N = n, nq = model.nq, nv2 = model.nv * model.nv
    cdef double* q = data_ptr(qa)
    cdef double* o = data_ptr(out)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            crba_kernel(&model.c, ws[threadid()], &q[k * nq], &o[k * nv2])
    return out


cdef inline int _minv_row(const ModelC* m, DataC* d, const double* q, double* out) noexcept nogil:
    crba_kernel(m, d, q, d.M)
    if not ltdl_factor(m, d.M, d.L):
        return 0
    ltdl_inverse(m, d.L, d.Linv, out)
    return 1


def minv(Model model not None, Q, threads=None):
    """B(q)^-1 (N, nv, nv) for every row."""
    n, (qa,) = _rows(model, Q, [])
    cdef cnp.ndarray out = np.empty((n, model.nv, model.nv))
    cdef cnp.ndarray ok = np.empty(n, dtype=np.int32)
    cdef Py_ssize_t k, N = n, nq = model.nq, nv2 = model.nv * model.nv
    cdef double* q = data_ptr(qa)
    cdef double* o = data_ptr(out)
    cdef int* okp = <int*> cnp.PyArray_DATA(ok)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            okp[k] = _minv_row(&model.c, ws[threadid()], &q[k * nq], &o[k * nv2])
    if n and not ok.all():
        raise ValueError(f"row {int(np.argmin(ok))}: the mass matrix is singular")
    return out


def gravity(Model model not None, Q, gravity, threads=None):
    """G(q) (N, nv) for the gravity vector `gravity` [m/s^2]."""
    n, (qa,) = _rows(model, Q, [])
    keep = []
    cdef const double* g = _gravity_ptr(gravity, keep)
    cdef cnp.ndarray out = np.empty((n, model.nv))
    cdef Py_ssize_t k, N = n, nq = model.nq, nv = model.nv
    cdef double* q = data_ptr(qa)
    cdef double* o = data_ptr(out)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            gravity_forces(&model.c, ws[threadid()], &q[k * nq], g, &o[k * nv])
    return out


def coriolis_forces(Model model not None, Q, V, threads=None):
    """C(q, qd) (N, nv): Coriolis and centrifugal forces."""
    n, (qa, va) = _rows(model, Q, [("V", V)])
    cdef cnp.ndarray out = np.empty((n, model.nv))
    cdef cnp.ndarray zero = np.zeros(model.nv)
    cdef Py_ssize_t k, N = n, nq = model.nq, nv = model.nv
    cdef double* q = data_ptr(qa)
    cdef double* v = data_ptr(va)
    cdef double* z = data_ptr(zero)
    cdef double* o = data_ptr(out)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            rnea_kernel(&model.c, ws[threadid()], &q[k * nq], &v[k * nv], z, _zero3,
                        &o[k * nv])
    return out


def coriolis_matrix(Model model not None, Q, V, threads=None):
    """C(q, qd) (N, nv, nv), the Coriolis matrix with dB/dt - 2C skew-symmetric."""
    n, (qa, va) = _rows(model, Q, [("V", V)])
    cdef cnp.ndarray out = np.empty((n, model.nv, model.nv))
    cdef Py_ssize_t k, N = n, nq = model.nq, nv = model.nv
    cdef double* q = data_ptr(qa)
    cdef double* v = data_ptr(va)
    cdef double* o = data_ptr(out)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            coriolis_kernel(&model.c, ws[threadid()], &q[k * nq], &v[k * nv],
                            &o[k * nv * nv])
    return out


cdef inline void _com_row(const ModelC* m, DataC* d, const double* q, double* out) noexcept nogil:
    center_of_mass(m, d, q)
    out[0] = d.com[0]
    out[1] = d.com[1]
    out[2] = d.com[2]


def com(Model model not None, Q, threads=None):
    """Centre of mass (N, 3) [m]."""
    n, (qa,) = _rows(model, Q, [])
    cdef cnp.ndarray out = np.empty((n, 3))
    cdef Py_ssize_t k, N = n, nq = model.nq
    cdef double* q = data_ptr(qa)
    cdef double* o = data_ptr(out)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            _com_row(&model.c, ws[threadid()], &q[k * nq], &o[3 * k])
    return out


def jacobian(Model model not None, Q, int link, point=(0.0, 0.0, 0.0), threads=None):
    """Jacobians (N, 6, nv), rows [angular; linear], of `point` [m] fixed in link `link`."""
    n, (qa,) = _rows(model, Q, [])
    cdef cnp.ndarray pa = as_vector(point, 3, "point")
    if not 0 <= link < model.nlink:
        raise IndexError(f"link index {link} out of range [0, {model.nlink})")
    cdef cnp.ndarray out = np.empty((n, 6, model.nv))
    cdef Py_ssize_t k, N = n, nq = model.nq, nv = model.nv
    cdef double* q = data_ptr(qa)
    cdef double* p = data_ptr(pa)
    cdef double* o = data_ptr(out)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            point_jacobian(&model.c, ws[threadid()], &q[k * nq], link, p, &o[k * 6 * nv])
    return out


cdef inline void _frames_row(const ModelC* m, DataC* d, const double* q, double* Ro,
                             double* po) noexcept nogil:
    cdef int r
    forward_kinematics(m, d, q)
    link_placements(m, d)
    for r in range(9 * m.nlink):
        Ro[r] = d.link_R[r]
    for r in range(3 * m.nlink):
        po[r] = d.link_p[r]


def frames(Model model not None, Q, threads=None):
    """Link placements: rotations (N, nlink, 3, 3) and origins (N, nlink, 3) [m]."""
    n, (qa,) = _rows(model, Q, [])
    cdef Py_ssize_t nl = model.nlink
    cdef cnp.ndarray Rout = np.empty((n, nl, 3, 3))
    cdef cnp.ndarray pout = np.empty((n, nl, 3))
    cdef Py_ssize_t k, N = n, nq = model.nq
    cdef double* q = data_ptr(qa)
    cdef double* Ro = data_ptr(Rout)
    cdef double* po = data_ptr(pout)
    cdef _Workers w
    cdef DataC** ws
    cdef int nt
    with _Lease(model, n, threads) as w:
        ws, nt = w.ptrs, w.n
        for k in prange(N, nogil=True, schedule="static", num_threads=nt):
            _frames_row(&model.c, ws[threadid()], &q[k * nq], &Ro[k * 9 * nl],
                        &po[k * 3 * nl])
    return Rout, pout
