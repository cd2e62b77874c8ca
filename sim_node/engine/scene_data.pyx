"""SceneData: the mutable part of a scene — state, actuator commands, each stage's output and
scratch (fields documented in scene_data.pxd). Made for one SceneModel; the step writes it."""
import numpy as np

cimport numpy as cnp
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from sim_node.engine.constraint cimport ContactC, PatchC, RowC, UserRowC
from sim_node.engine.geometry cimport RawContact
from sim_node.engine.model cimport Data, Model
from sim_node.engine.scene_model cimport SceneModel
from sim_node.engine.types cimport (ACTUATOR_OFF, ACTUATOR_PID, BodyC, BodyStateC, CacheEntry,
                                    FeedbackC, NSTAGE, PatchCache, RobotC, RobotStateC, ShapeC,
                                    STATUS_NORMAL)

cnp.import_array()


cdef class SceneData:
    """The mutable part of a scene (see scene_data.pxd for every field)."""

    def __cinit__(self):
        self.robots = NULL
        self.bodies = NULL
        self.shapes = NULL
        self.vel = NULL
        self.vel0 = NULL
        self.box = NULL
        self.cand = NULL
        self.pair_raw = NULL
        self.sap_order = NULL
        self.raw = NULL
        self.scratch = NULL
        self.contacts = NULL
        self.patches = NULL
        self.pcache = NULL
        self.rows = NULL
        self.urows = NULL
        self.ucons_lam = NULL
        self.jw = NULL
        self.path_dofs = NULL
        self.iinv_world = NULL
        self.blocks = NULL
        self.cache = NULL
        self.separated = NULL
        self.fb = NULL

    def __dealloc__(self):
        free(self.robots)
        free(self.bodies)
        free(self.shapes)
        free(self.vel)
        free(self.vel0)
        free(self.box)
        free(self.cand)
        free(self.pair_raw)
        free(self.sap_order)
        free(self.raw)
        free(self.scratch)
        free(self.contacts)
        free(self.patches)
        free(self.pcache)
        free(self.rows)
        free(self.urows)
        free(self.ucons_lam)
        free(self.jw)
        free(self.path_dofs)
        free(self.iinv_world)
        free(self.blocks)
        free(self.cache)
        free(self.separated)
        free(self.fb)

    def __init__(self, SceneModel model not None, *, robots, free_bodies):
        """robots: list of dicts with each robot's initial q (nq) and v (nv); free_bodies: list
        of dicts with each free body's initial state (13). The placements are not computed
        here (the Scene runs the kinematics stage)."""
        cdef int i, k, nq, nv
        cdef RobotStateC* r
        cdef const RobotC* rm
        cdef BodyStateC* b
        cdef const BodyC* bm
        cdef ShapeC* s
        cdef Model robot_model
        cdef Data data
        self.model = model
        self._keep = []
        self.time = 0.0
        self.status = STATUS_NORMAL
        if len(robots) != model.nrobot or len(free_bodies) != model.nfree:
            raise ValueError(f"{len(robots)} robot and {len(free_bodies)} free-body states for a "
                             f"model of {model.nrobot} robots and {model.nfree} free bodies")
        # robots
        self.robots = <RobotStateC*> malloc(max(1, model.nrobot) * sizeof(RobotStateC))
        self.robot_data = []
        self.robot_q, self.robot_v, self.robot_tau_ff, self.robot_kp = [], [], [], []
        self.robot_ki, self.robot_kd, self.robot_q_des, self.robot_v_des = [], [], [], []
        self.robot_mode, self.robot_iterm, self.robot_advance = [], [], []
        self.robot_tau, self.robot_tau_ext, self.robot_row_lam = [], [], []
        for i, spec in enumerate(robots):
            robot_model = model.robot_models[i]
            rm = &model.robots[i]
            data = Data(robot_model)
            nq, nv = robot_model.nq, robot_model.nv
            r = &self.robots[i]
            r.data = &data.c
            r.minv_valid = 0
            r.factored = 0
            r.collidable = 0
            r.constrained = 0
            self.robot_data.append(data)
            mode = np.empty(nv, dtype=np.int32)
            for k in range(nv):
                mode[k] = ACTUATOR_PID if rm.dof_q[k] >= 0 else ACTUATOR_OFF
            arrays = {
                "q": np.array(spec["q"], dtype=np.float64), "v": np.array(spec["v"], dtype=np.float64),
                "q_next": np.zeros(nq), "tau_ff": np.zeros(nv), "kp": np.zeros(nv),
                "ki": np.zeros(nv), "kd": np.zeros(nv), "q_des": np.zeros(nv),
                "v_des": np.zeros(nv), "iterm": np.zeros(nv), "advance": np.zeros(nv),
                "perr": np.zeros(nv), "armature": np.zeros(nv),
                "mode": mode,
                "tau": np.zeros(nv), "tau_ext": np.zeros(nv), "tau_net": np.zeros(nv),
                "row_lam": np.zeros(3 * nv),
            }
            for name in ("q", "v"):
                expected = nq if name == "q" else nv
                if arrays[name].shape != (expected,):
                    raise ValueError(f"robot {i}: {name} has shape {arrays[name].shape}, "
                                     f"expected ({expected},)")
            self._keep.append(arrays)
            r.q = _ptr(arrays["q"])
            r.v = _ptr(arrays["v"])
            r.q_next = _ptr(arrays["q_next"])
            r.mode = <int*> cnp.PyArray_DATA(arrays["mode"])
            r.tau_ff = _ptr(arrays["tau_ff"])
            r.kp = _ptr(arrays["kp"])
            r.ki = _ptr(arrays["ki"])
            r.kd = _ptr(arrays["kd"])
            r.q_des = _ptr(arrays["q_des"])
            r.v_des = _ptr(arrays["v_des"])
            r.iterm = _ptr(arrays["iterm"])
            r.advance = _ptr(arrays["advance"])
            r.perr = _ptr(arrays["perr"])
            r.armature = _ptr(arrays["armature"])
            r.tau = _ptr(arrays["tau"])
            r.tau_ext = _ptr(arrays["tau_ext"])
            r.tau_net = _ptr(arrays["tau_net"])
            r.row_lam = _ptr(arrays["row_lam"])
            self.robot_q.append(arrays["q"])
            self.robot_v.append(arrays["v"])
            self.robot_tau_ff.append(arrays["tau_ff"])
            self.robot_kp.append(arrays["kp"])
            self.robot_ki.append(arrays["ki"])
            self.robot_kd.append(arrays["kd"])
            self.robot_q_des.append(arrays["q_des"])
            self.robot_v_des.append(arrays["v_des"])
            self.robot_mode.append(arrays["mode"])
            self.robot_iterm.append(arrays["iterm"])
            self.robot_advance.append(arrays["advance"])
            self.robot_tau.append(arrays["tau"])
            self.robot_tau_ext.append(arrays["tau_ext"])
            self.robot_row_lam.append(arrays["row_lam"])
        # free bodies
        self.free_state = np.zeros((model.nfree, 13))
        self.free_wrench = np.zeros((model.nfree, 6))
        for i, spec in enumerate(free_bodies):
            self.free_state[i] = spec["state"]
        self.fstate = <double*> cnp.PyArray_DATA(self.free_state)
        self.fwrench = <double*> cnp.PyArray_DATA(self.free_wrench)
        # placements: the bodies' build-time poses, the shapes' constant geometry
        self.bodies = <BodyStateC*> malloc(max(1, model.nbody) * sizeof(BodyStateC))
        memset(self.bodies, 0, max(1, model.nbody) * sizeof(BodyStateC))
        for i in range(model.nbody):
            b = &self.bodies[i]
            bm = &model.bodies[i]
            for k in range(9):
                b.R[k] = bm.R0[k]
            for k in range(3):
                b.p[k] = bm.p0[k]
            b.speed = 0.0
        self.shapes = <ShapeC*> malloc(max(1, model.nshape) * sizeof(ShapeC))
        memset(self.shapes, 0, max(1, model.nshape) * sizeof(ShapeC))
        for i in range(model.nshape):
            s = &self.shapes[i]
            s.type = model.shapes[i].type
            s.mesh = model.shapes[i].mesh
            for k in range(3):
                s.size[k] = model.shapes[i].size[k]
        # buffers
        self.vel = <double*> malloc(max(1, model.nvel) * sizeof(double))
        self.vel0 = <double*> malloc(max(1, model.nvel) * sizeof(double))
        self.box = <double*> malloc(max(1, model.nbody) * 6 * sizeof(double))
        self.sap_order = <int*> malloc(max(1, model.nbody) * sizeof(int))
        for i in range(model.nbody):
            self.sap_order[i] = i
        self.cand_cap = 64
        self.cand = <int*> malloc(2 * self.cand_cap * sizeof(int))
        self.pair_raw = <int*> malloc(4 * self.cand_cap * sizeof(int))
        self.raw_cap = 256
        self.raw = <RawContact*> malloc(self.raw_cap * sizeof(RawContact))
        self.scratch = <int*> malloc(self.raw_cap * sizeof(int))
        self.contact_cap = 64
        self.contacts = <ContactC*> malloc(self.contact_cap * sizeof(ContactC))
        self.patch_cap = 32
        self.patches = <PatchC*> malloc(self.patch_cap * sizeof(PatchC))
        self.row_cap = 32
        self.rows = <RowC*> malloc(self.row_cap * sizeof(RowC))
        self.urow_cap = 8
        self.urows = <UserRowC*> malloc(self.urow_cap * sizeof(UserRowC))
        self.nurow = 0
        self.iinv_world = <double*> malloc(max(1, model.nfree) * 9 * sizeof(double))
        # (a body's path has at most ncol columns, a mimic column naming its leader's DOF)
        self.path_dofs = <int*> malloc(max([1] + [robot.ncol for robot in model.robot_models])
                                       * sizeof(int))
        self.jw_cap = 4096
        self.jw = <double*> malloc(self.jw_cap * sizeof(double))
        self.blocks_cap = 1024
        self.blocks = <double*> malloc(self.blocks_cap * sizeof(double))
        self.cache_cap = 64
        self.cache = <CacheEntry*> malloc(self.cache_cap * sizeof(CacheEntry))
        self.ncache = 0
        self.pcache_cap = 32
        self.pcache = <PatchCache*> malloc(self.pcache_cap * sizeof(PatchCache))
        self.npcache = 0
        self.separated_cap = 16
        self.separated = <int*> malloc(2 * self.separated_cap * sizeof(int))
        self.nseparated = 0
        self.feedback_cap = 16
        self.fb = <FeedbackC*> malloc(self.feedback_cap * sizeof(FeedbackC))
        self.nfeedback = 0
        self.feedback_all = False
        self.window_steps = 0
        self.window_time = 0.0
        self.count_shape_pairs = self.count_contacts = self.count_row_updates = 0
        self.ncontact = self.npatch = self.nrow = self.ncand = self.nraw = 0
        self.filters_changed = True
        self.profile = False
        for i in range(NSTAGE):
            self.stage_seconds[i] = 0.0
            self.stage_calls[i] = 0


cdef inline double* _ptr(cnp.ndarray a):
    return <double*> cnp.PyArray_DATA(a)
