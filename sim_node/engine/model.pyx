"""Engine Model (constant description of one articulated robot) and Data (all mutable state).

A Model is built once from plain arrays (see ``sim_node.model.builder``) and is never written by
the kernels; Data owns every buffer the kernels write. Both keep their storage in numpy arrays
(exposed read-only through ``arrays``) and hand raw pointers to the ``noexcept nogil`` kernels.
"""
import math

import numpy as np

cimport numpy as cnp

cnp.import_array()

# name: (dtype, shape as a function of the sizes)
_MODEL_FIELDS = {
    "parent": (np.int32, lambda n: (n["nbody"],)),
    "jtype": (np.int32, lambda n: (n["nbody"],)),
    "iq": (np.int32, lambda n: (n["nbody"],)),
    "icol": (np.int32, lambda n: (n["nbody"],)),
    "ncolb": (np.int32, lambda n: (n["nbody"],)),
    "mimic_mult": (np.float64, lambda n: (n["nbody"],)),
    "mimic_offset": (np.float64, lambda n: (n["nbody"],)),
    "axis": (np.float64, lambda n: (n["nbody"], 3)),
    "axis_kind": (np.int32, lambda n: (n["nbody"],)),
    "R_tree": (np.float64, lambda n: (n["nbody"], 3, 3)),
    "p_tree": (np.float64, lambda n: (n["nbody"], 3)),
    "tree_rot_identity": (np.int32, lambda n: (n["nbody"],)),
    "mass": (np.float64, lambda n: (n["nbody"],)),
    "com": (np.float64, lambda n: (n["nbody"], 3)),
    "inertia": (np.float64, lambda n: (n["nbody"], 3, 3)),
    "col_body": (np.int32, lambda n: (n["ncol"],)),
    "col_dof": (np.int32, lambda n: (n["ncol"],)),
    "dof_parent": (np.int32, lambda n: (n["nv"],)),
    "dof_body": (np.int32, lambda n: (n["nv"],)),
    "link_body": (np.int32, lambda n: (n["nlink"],)),
    "link_R": (np.float64, lambda n: (n["nlink"], 3, 3)),
    "link_p": (np.float64, lambda n: (n["nlink"], 3)),
    "link_mass": (np.float64, lambda n: (n["nlink"],)),
    "link_com_W": (np.float64, lambda n: (n["nlink"], 3)),
}

# Mutable after construction through Model.set_body_inertia / set_link_mass (API setters only).
_INERTIAL_FIELDS = ("mass", "com", "inertia", "link_mass", "link_com_W")


cdef inline const int* _ip(cnp.ndarray a):
    return <const int*> cnp.PyArray_DATA(a)


cdef inline const double* _dp(cnp.ndarray a):
    return <const double*> cnp.PyArray_DATA(a)


cdef class Model:
    """Constant description of one articulated robot (see model.pxd for every field)."""

    def __init__(self, *, int nq, int nv, **fields):
        parent = np.ascontiguousarray(fields["parent"], dtype=np.int32)
        ncolb = np.ascontiguousarray(fields["ncolb"], dtype=np.int32)
        sizes = {"nbody": parent.shape[0], "ncol": int(ncolb.sum()), "nv": nv,
                 "nlink": np.asarray(fields["link_body"]).shape[0]}
        unknown = set(fields) - set(_MODEL_FIELDS)
        if unknown:
            raise TypeError(f"unknown Model fields {sorted(unknown)}")
        arrays = {}
        for name, (dtype, shape_of) in _MODEL_FIELDS.items():
            if name not in fields:
                raise TypeError(f"Model field {name!r} is required")
            arr = np.array(fields[name], dtype=dtype, order="C", copy=True)
            if arr.shape != shape_of(sizes):
                raise ValueError(f"Model field {name!r}: shape {arr.shape}, expected {shape_of(sizes)}")
            if name not in _INERTIAL_FIELDS:
                arr.setflags(write=False)
            arrays[name] = arr
        _check_topology(arrays, sizes, nq, nv)
        arrays["inertia_B"] = np.zeros((sizes["nbody"], 10))
        self.arrays = arrays
        for body in range(sizes["nbody"]):
            self._update_inertia_B(body)
        self.nbody = sizes["nbody"]
        self.ncol = sizes["ncol"]
        self.nlink = sizes["nlink"]
        self.nq = nq
        self.nv = nv
        # A mimic joint owns a column but no DOF.
        self.has_mimic = sizes["ncol"] != nv
        self._bind()

    cdef void _bind(self):
        a = self.arrays
        self.c.nbody = self.nbody
        self.c.nq = self.nq
        self.c.nv = self.nv
        self.c.ncol = self.ncol
        self.c.has_mimic = self.has_mimic
        self.c.parent = _ip(a["parent"])
        self.c.jtype = _ip(a["jtype"])
        self.c.iq = _ip(a["iq"])
        self.c.icol = _ip(a["icol"])
        self.c.ncolb = _ip(a["ncolb"])
        self.c.mimic_mult = _dp(a["mimic_mult"])
        self.c.mimic_offset = _dp(a["mimic_offset"])
        self.c.axis = _dp(a["axis"])
        self.c.axis_kind = _ip(a["axis_kind"])
        self.c.R_tree = _dp(a["R_tree"])
        self.c.p_tree = _dp(a["p_tree"])
        self.c.tree_rot_identity = _ip(a["tree_rot_identity"])
        self.c.mass = _dp(a["mass"])
        self.c.com = _dp(a["com"])
        self.c.inertia = _dp(a["inertia"])
        self.c.inertia_B = _dp(a["inertia_B"])
        self.c.col_body = _ip(a["col_body"])
        self.c.col_dof = _ip(a["col_dof"])
        self.c.dof_parent = _ip(a["dof_parent"])
        self.c.dof_body = _ip(a["dof_body"])
        self.c.nlink = self.nlink
        self.c.link_body = _ip(a["link_body"])
        self.c.link_R = _dp(a["link_R"])
        self.c.link_p = _dp(a["link_p"])
        self.c.link_mass = _dp(a["link_mass"])
        self.c.link_com_W = _dp(a["link_com_W"])

    def set_body_inertia(self, int body, double mass, com, inertia):
        """Replace the mass properties of one body (mass [kg], com [m] and inertia about the
        com [kg m^2] in body coordinates). Used by the API's setMass; kernels only read them."""
        if not 0 <= body < self.nbody:
            raise IndexError(f"body {body} out of range [0, {self.nbody})")
        self.arrays["mass"][body] = mass
        self.arrays["com"][body] = com
        self.arrays["inertia"][body] = inertia
        self._update_inertia_B(body)

    def _update_inertia_B(self, int body):
        # 10-number inertia about the body origin in body axes: m, m c, I_c + m(|c|^2 E - c c^T)
        a = self.arrays
        m, c, I = a["mass"][body], a["com"][body], a["inertia"][body]
        Io = I + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
        a["inertia_B"][body] = [m, *(m * c), Io[0, 0], Io[1, 1], Io[2, 2], Io[0, 1], Io[0, 2],
                                Io[1, 2]]
    def set_world_link_mass(self, int link, double mass, com_W):
        """Mass [kg] and world com [m] of a link welded to the world (counted by the COM)."""
        self.arrays["link_mass"][link] = mass
        self.arrays["link_com_W"][link] = com_W

    def __reduce__(self):
        fields = {k: v for k, v in self.arrays.items() if k != "inertia_B"}
        return (_rebuild_model, (self.nq, self.nv, fields))


def _rebuild_model(nq, nv, fields):
    return Model(nq=nq, nv=nv, **fields)


def _check_topology(arrays, sizes, nq, nv):
    parent = arrays["parent"]
    nbody = sizes["nbody"]
    for i in range(nbody):
        if not -1 <= parent[i] < i:
            raise ValueError(f"body {i}: parent {parent[i]} must be -1 or a lower index")
    jtype = arrays["jtype"]
    ncolb = arrays["ncolb"]
    iq = arrays["iq"]
    # columns and coordinates of each joint type
    shape = {JOINT_REVOLUTE: (1, 1), JOINT_PRISMATIC: (1, 1), JOINT_FREE: (6, 7),
             JOINT_SPHERICAL: (3, 4)}
    for i in range(nbody):
        if jtype[i] not in shape:
            raise ValueError(f"body {i}: unknown joint type {jtype[i]}")
        ncol, nqj = shape[jtype[i]]
        if ncolb[i] != ncol:
            raise ValueError(f"body {i}: joint type {jtype[i]} needs {ncol} columns")
        if not 0 <= iq[i] <= nq - nqj:
            raise ValueError(f"body {i}: configuration index {iq[i]} out of range for nq={nq}")
    axis = arrays["axis"]
    for i in range(nbody):
        k = arrays["axis_kind"][i]
        if k != 0 and not np.array_equal(axis[i], np.sign(k) * np.eye(3)[abs(k) - 1]):
            raise ValueError(f"body {i}: axis_kind {k} does not match axis {axis[i]}")
    col_dof = arrays["col_dof"]
    if np.any(col_dof < 0) or np.any(col_dof >= nv):
        raise ValueError("column DOF index out of range")
    if sizes["ncol"] < nv or set(col_dof.tolist()) != set(range(nv)):
        raise ValueError("every DOF must be driven by at least one column")
    if np.any(arrays["dof_parent"] >= np.arange(nv)):
        raise ValueError("dof_parent must point to a lower DOF index")
    if np.any(arrays["link_body"] < -1) or np.any(arrays["link_body"] >= nbody):
        raise ValueError("link_body out of range")


cdef class Data:
    """All mutable state and scratch of the kernels for one Model."""

    def __reduce__(self):
        # scratch for its Model: a fresh Data is equivalent (pickling a world copies it)
        return (Data, (self.model,))

    def __init__(self, Model model not None):
        cdef int nb = model.nbody, nv = model.nv, nc = model.ncol, nl = model.nlink
        self.model = model
        shapes = {
            "R": (nb, 3, 3), "p": (nb, 3), "R_PB": (nb, 3, 3), "p_PB": (nb, 3), "S": (nc, 6),
            "link_R": (nl, 3, 3), "link_p": (nl, 3),
            "v": (nb, 6), "a": (nb, 6), "f": (nb, 6), "Iw": (nb, 10), "Ic": (nb, 10),
            "IA": (nb, 6, 6), "pA": (nb, 6), "c": (nb, 6), "U": (nc, 6), "Dinv": (nb, 6, 6),
            "u": (nc,), "Sdot": (nc, 6),
            "M": (nv, nv), "Minv": (nv, nv), "L": (nv, nv), "Linv": (nv, nv), "C": (nv, nv),
            "tau": (nv,), "ddq": (nv,), "J": (6, nv), "com": (3,), "tmp": (max(nv, 1),),
        }
        # One zeroed block, sliced per field, keeps the working set contiguous.
        total = sum(math.prod(s) for s in shapes.values())
        block = np.zeros(total, dtype=np.float64)
        arrays = {}
        offset = 0
        for name, shape in shapes.items():
            size = math.prod(shape)
            arrays[name] = block[offset:offset + size].reshape(shape)
            offset += size
        self.arrays = arrays
        a = arrays
        self.c.R = <double*> cnp.PyArray_DATA(a["R"])
        self.c.p = <double*> cnp.PyArray_DATA(a["p"])
        self.c.R_PB = <double*> cnp.PyArray_DATA(a["R_PB"])
        self.c.p_PB = <double*> cnp.PyArray_DATA(a["p_PB"])
        self.c.S = <double*> cnp.PyArray_DATA(a["S"])
        self.c.link_R = <double*> cnp.PyArray_DATA(a["link_R"])
        self.c.link_p = <double*> cnp.PyArray_DATA(a["link_p"])
        self.c.v = <double*> cnp.PyArray_DATA(a["v"])
        self.c.a = <double*> cnp.PyArray_DATA(a["a"])
        self.c.f = <double*> cnp.PyArray_DATA(a["f"])
        self.c.Iw = <double*> cnp.PyArray_DATA(a["Iw"])
        self.c.Ic = <double*> cnp.PyArray_DATA(a["Ic"])
        self.c.IA = <double*> cnp.PyArray_DATA(a["IA"])
        self.c.pA = <double*> cnp.PyArray_DATA(a["pA"])
        self.c.c = <double*> cnp.PyArray_DATA(a["c"])
        self.c.U = <double*> cnp.PyArray_DATA(a["U"])
        self.c.Dinv = <double*> cnp.PyArray_DATA(a["Dinv"])
        self.c.u = <double*> cnp.PyArray_DATA(a["u"])
        self.c.Sdot = <double*> cnp.PyArray_DATA(a["Sdot"])
        self.c.M = <double*> cnp.PyArray_DATA(a["M"])
        self.c.Minv = <double*> cnp.PyArray_DATA(a["Minv"])
        self.c.L = <double*> cnp.PyArray_DATA(a["L"])
        self.c.Linv = <double*> cnp.PyArray_DATA(a["Linv"])
        self.c.C = <double*> cnp.PyArray_DATA(a["C"])
        self.c.tau = <double*> cnp.PyArray_DATA(a["tau"])
        self.c.ddq = <double*> cnp.PyArray_DATA(a["ddq"])
        self.c.J = <double*> cnp.PyArray_DATA(a["J"])
        self.c.com = <double*> cnp.PyArray_DATA(a["com"])
        self.c.tmp = <double*> cnp.PyArray_DATA(a["tmp"])

    def __getattr__(self, name):
        # Read access to the buffers by name: data.M, data.tau, data.R ...
        try:
            return self.arrays[name]
        except KeyError:
            raise AttributeError(name) from None
