"""SceneModel: the constant part of a scene, built once from specs (sim_node.model.scene).

Robots (their multibody Models and joint data), free bodies (mass properties), collision
bodies and their shapes, meshes, gravity and solver settings. The step only reads it; the
Scene's setters change surfaces, padding, enabling, collision filters, kinematic flags, gravity
and solver settings between steps.
"""
import numpy as np

cimport numpy as cnp
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from sim_node.engine.geometry cimport MeshC
from sim_node.engine.model cimport Model, JOINT_SPHERICAL
from sim_node.engine.solver cimport MAX_PATCH_CONTACTS
from sim_node.engine.types cimport BodyC, FreeBodyC, RobotC, ShapeDefC

cnp.import_array()

_INT_FIELDS = {"tris", "tri_adjacent", "face_start", "face_verts", "child", "first", "count",
               "item"}


cdef class SceneModel:
    """The constant part of a scene (see the module docstring)."""

    def __cinit__(self):
        self.robots = NULL
        self.free_bodies = NULL
        self.bodies = NULL
        self.shapes = NULL
        self.meshes = NULL
        self.disabled = NULL
        self.ndisabled = 0
        self.enabled = NULL
        self.nenabled = 0
        self.ucons = NULL
        self.nucons = 0

    def __dealloc__(self):
        free(self.robots)
        free(self.free_bodies)
        free(self.bodies)
        free(self.shapes)
        free(self.meshes)
        free(self.disabled)
        free(self.enabled)
        free(self.ucons)

    def __init__(self, *, robots, free_bodies, bodies, shapes, meshes, gravity=(0.0, 0.0, -9.81),
                 max_contacts=20, max_iterations=30, tolerance=1e-5, regularization=0.02):
        """robots: list of dicts (model, q_lower, q_upper, effort, dry_friction, damping, dof_q,
        floating_base, body_adjacent (optional: the model's parents), first_body,
        self_collision; q and v are the SceneData's); free_bodies: list of dicts (mass, com_B,
        I_B, kinematic, body; state is the SceneData's); bodies: list of dicts (kind, index,
        robot_body, id, first_shape, nshape, padding, restitution, friction, stiffness,
        damping, group, mask, extent); shapes: list of dicts (type, body, size, R_BS, p_BS,
        mesh); meshes: list of dicts of arrays (see geometry.pxd MeshC)."""
        cdef int i, k
        cdef RobotC* r
        cdef FreeBodyC* f
        cdef BodyC* b
        cdef ShapeDefC* s
        cdef Model model
        self._keep = []
        if not 1 <= max_contacts <= MAX_PATCH_CONTACTS:
            raise ValueError(f"max_contacts must be in [1, {MAX_PATCH_CONTACTS}], got {max_contacts}")
        self.max_contacts = max_contacts
        self.max_iterations = max_iterations
        self.tolerance = tolerance
        self.regularization = regularization
        g = np.asarray(gravity, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity must be 3 finite numbers, got {gravity!r}")
        self.g[0], self.g[1], self.g[2] = g
        self._build_meshes(meshes)
        # robots
        self.nrobot = len(robots)
        self.robots = <RobotC*> malloc(max(1, self.nrobot) * sizeof(RobotC))
        self.robot_models = []
        self.robot_joint_offset, self.robot_joint_q_offset = [], []
        self.nvel = 0
        for i, spec in enumerate(robots):
            model = spec["model"]
            nq, nv = model.nq, model.nv
            r = &self.robots[i]
            r.model = &model.c
            r.vel_offset = self.nvel
            self.nvel += nv
            r.first_body = spec["first_body"]
            r.self_collision = int(spec.get("self_collision", False))
            r.use_factor = int(model.has_mimic or np.any(np.asarray(spec["dry_friction"]) > 0))
            self.robot_models.append(model)
            arrays = {
                "effort": np.array(spec["effort"], dtype=np.float64),
                "dof_q": np.array(spec["dof_q"], dtype=np.int32),
                "q_lower": np.array(spec["q_lower"], dtype=np.float64),
                "q_upper": np.array(spec["q_upper"], dtype=np.float64),
                "dry_friction": np.array(spec["dry_friction"], dtype=np.float64),
                "damping": np.array(spec["damping"], dtype=np.float64),
                "dof_ball": np.full(nv, -1, dtype=np.int32),
            }
            for name, arr in arrays.items():
                expected = nq if name in ("q_lower", "q_upper") else nv
                if arr.shape != (expected,):
                    raise ValueError(f"robot {i}: {name} has shape {arr.shape}, expected ({expected},)")
            floating_base = bool(spec.get("floating_base", False))
            offset, r.q_offset = (6, 7) if floating_base else (0, 0)
            if np.any(arrays["dof_q"][:offset] >= 0) or np.any(arrays["dof_q"] >= nq):
                raise ValueError(f"robot {i}: dof_q out of range (a floating base is unactuated)")
            jtype, icol = model.arrays["jtype"], model.arrays["icol"]
            for ball_body in np.flatnonzero(jtype == JOINT_SPHERICAL):
                first = model.arrays["col_dof"][icol[ball_body]]
                arrays["dof_ball"][first:first + 3] = np.arange(3)
            r.has_ball = int(np.any(arrays["dof_ball"] >= 0))
            adjacent = np.array(spec.get("body_adjacent", model.arrays["parent"]), dtype=np.int32)
            if adjacent.shape != (model.nbody,):
                raise ValueError(f"robot {i}: body_adjacent needs {model.nbody} entries")
            arrays["body_adjacent"] = adjacent
            self.robot_joint_offset.append(offset)
            self.robot_joint_q_offset.append(r.q_offset)
            self._keep.append(arrays)
            r.effort = _ptr(arrays["effort"])
            r.dof_q = <const int*> cnp.PyArray_DATA(arrays["dof_q"])
            r.q_lower = _ptr(arrays["q_lower"])
            r.q_upper = _ptr(arrays["q_upper"])
            r.dry_friction = _ptr(arrays["dry_friction"])
            r.damping = _ptr(arrays["damping"])
            r.dof_ball = <const int*> cnp.PyArray_DATA(arrays["dof_ball"])
            r.body_adjacent = <const int*> cnp.PyArray_DATA(arrays["body_adjacent"])
        # free bodies
        self.nfree = len(free_bodies)
        self.free_bodies = <FreeBodyC*> malloc(max(1, self.nfree) * sizeof(FreeBodyC))
        for i, spec in enumerate(free_bodies):
            f = &self.free_bodies[i]
            f.kinematic = int(spec.get("kinematic", False))
            f.mass = spec["mass"]
            I_B = np.asarray(spec["I_B"], dtype=np.float64).reshape(3, 3)
            Iinv = np.linalg.inv(I_B) if f.mass > 0 else np.zeros((3, 3))
            for k in range(3):
                f.com_B[k] = spec["com_B"][k]
            for k in range(9):
                f.I_B[k] = I_B.flat[k]
                f.Iinv_B[k] = Iinv.flat[k]
            f.body = spec["body"]
            if f.kinematic:
                f.vel_offset = -1
            else:
                f.vel_offset = self.nvel
                self.nvel += 6
        # collision bodies and shapes
        self.nbody = len(bodies)
        self.bodies = <BodyC*> malloc(max(1, self.nbody) * sizeof(BodyC))
        for i, spec in enumerate(bodies):
            b = &self.bodies[i]
            b.kind = spec["kind"]
            b.index = spec["index"]
            b.robot_body = spec.get("robot_body", -1)
            b.robot = spec.get("robot", -1)
            b.id = spec["id"]
            b.first_shape = spec["first_shape"]
            b.nshape = spec["nshape"]
            b.padding = spec["padding"]
            b.restitution = spec["restitution"]
            b.friction = spec["friction"]
            b.stiffness = spec["stiffness"]
            b.damping = spec["damping"]
            b.group = spec.get("group", 1)
            b.mask = spec.get("mask", 0xFFFFFFFF)
            b.enabled = 1
            b.extent = spec.get("extent", 0.0)
            R = np.asarray(spec.get("R", np.eye(3)), dtype=np.float64).reshape(9)
            p = np.asarray(spec.get("p", np.zeros(3)), dtype=np.float64)
            for k in range(9):
                b.R0[k] = R[k]
            for k in range(3):
                b.p0[k] = p[k]
        self.nshape = len(shapes)
        self.shapes = <ShapeDefC*> malloc(max(1, self.nshape) * sizeof(ShapeDefC))
        for i, spec in enumerate(shapes):
            s = &self.shapes[i]
            s.type = spec["type"]
            s.body = spec["body"]
            size = np.zeros(3)
            size[:len(spec["size"])] = spec["size"]
            R = np.asarray(spec["R_BS"], dtype=np.float64).reshape(9)
            p = np.asarray(spec["p_BS"], dtype=np.float64)
            for k in range(3):
                s.size[k] = size[k]
                s.p_BS[k] = p[k]
            for k in range(9):
                s.R_BS[k] = R[k]
            mesh = spec.get("mesh", -1)
            s.mesh = &self.meshes[mesh] if mesh is not None and mesh >= 0 else NULL

    def _build_meshes(self, meshes):
        cdef int i
        cdef MeshC* m
        self.nmesh = len(meshes)
        self.meshes = <MeshC*> malloc(max(1, self.nmesh) * sizeof(MeshC))
        memset(self.meshes, 0, max(1, self.nmesh) * sizeof(MeshC))
        for i, spec in enumerate(meshes):
            arrays = {k: np.ascontiguousarray(v, dtype=np.int32 if k in _INT_FIELDS else (
                          np.uint8 if k == "tri_flags" else np.float64))
                      for k, v in spec.items() if isinstance(v, (np.ndarray, list))}
            self._keep.append(arrays)
            m = &self.meshes[i]
            m.nvert = len(arrays["verts"]) // 3 if arrays["verts"].ndim == 1 else len(arrays["verts"])
            m.verts = _ptr(arrays["verts"])
            if "tris" in arrays:
                m.ntri = arrays["tris"].size // 3
                m.tris = <const int*> cnp.PyArray_DATA(arrays["tris"])
            if "face_start" in arrays:
                m.nface = arrays["face_start"].size - 1
                m.face_start = <const int*> cnp.PyArray_DATA(arrays["face_start"])
                m.face_verts = <const int*> cnp.PyArray_DATA(arrays["face_verts"])
                m.face_normals = _ptr(arrays["face_normals"])
            m.bvh.nnode = arrays["bounds"].size // 6
            m.bvh.bounds = _ptr(arrays["bounds"])
            m.bvh.child = <const int*> cnp.PyArray_DATA(arrays["child"])
            m.bvh.first = <const int*> cnp.PyArray_DATA(arrays["first"])
            m.bvh.count = <const int*> cnp.PyArray_DATA(arrays["count"])
            m.bvh.nitem = arrays["item"].size
            m.bvh.item = <const int*> cnp.PyArray_DATA(arrays["item"])
            m.bvh.item_bounds = _ptr(arrays["item_bounds"])
            m.tri_flags = (<const unsigned char*> cnp.PyArray_DATA(arrays["tri_flags"])
                           if "tri_flags" in arrays else NULL)
            m.tri_adjacent = (<const int*> cnp.PyArray_DATA(arrays["tri_adjacent"])
                              if "tri_adjacent" in arrays else NULL)
            if "heights" in arrays:
                m.nx, m.ny = spec["nx"], spec["ny"]
                m.x0, m.y0, m.dx, m.dy = spec["x0"], spec["y0"], spec["dx"], spec["dy"]
                m.heights = _ptr(arrays["heights"])


cdef inline double* _ptr(cnp.ndarray a):
    return <double*> cnp.PyArray_DATA(a)
