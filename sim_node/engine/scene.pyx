"""The simulated scene and its time step.

One step of length dt, each stage a function of the Scene (dataflow in its first comment):
    _kinematics      (q, free-body states)        => body / shape placements, AABBs, speeds
    _broadphase      (AABBs)                       => candidate body pairs (filtered)
    _narrowphase     (shapes, margins)             => contacts, clustered per body pair
    _actuators       (q, v, PD targets)            => robot tau
    _free_velocity   (q, v, tau, wrenches, g)      => vel: velocities without constraints
    _setup           (contacts, limits, frictions) => Jacobians, M^-1 J^T, targets, warm start
    pgs_solve        (constraints, vel)            => vel, impulses
    _integrate       (vel)                         => q, v, free-body states
    _record          (impulses)                    => warm-start cache, contact feedback

Boundary layer (seed 002): contacts are generated between the real geometries while they are
closer than padding_a + padding_b (plus the distance they can close during the step, so fast
bodies cannot tunnel through thin geometry). A rigid contact lets the bodies approach until
their real surfaces are REST_GAP_FRACTION x (padding_a + padding_b) apart — inside the layer,
never touching, which keeps normals of zero-thickness shells consistent — and a restitution
target applies on the step the gap closes. An impact (approaching faster than
IMPACT_SPEED when the step starts, closing the gap within it) stops exactly at the rest
gap: its row is solved without the solver's regularisation, whose yield under an impact's
impulse would sink the body tens of micrometres and push it back out, with energy, over the
next steps. A compliant layer (finite kStiffness, kDamping)
pushes with the implicit spring-damper k depth + c d(depth)/dt, depth measured into the layer.
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport atan2, cos, fabs, isfinite, sin, sqrt, INFINITY
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memmove, memset

from sim_node.engine.aba cimport aba_armature, aba_factored
from sim_node.engine.broadphase cimport sweep_and_prune
from sim_node.engine.cluster cimport MAX_GROUPED, cluster_contacts, group_by_normal
from sim_node.engine.constraint cimport ContactC, PatchC, RowC
from sim_node.engine.crba cimport crba
from sim_node.engine.geometry cimport (MeshC, SHAPE_SPHERE, SHAPE_BOX, SHAPE_CAPSULE,
                                       SHAPE_CYLINDER, SHAPE_PLANE, SHAPE_CONVEX, SHAPE_MESH,
                                       SHAPE_HEIGHTFIELD)
from sim_node.engine.integrate cimport integrate_config
from sim_node.engine.kinematics cimport body_columns, body_placement, body_velocity
from sim_node.engine.ltdl cimport ltdl_factor, ltdl_inverse
from sim_node.engine.model cimport Data, DataC, Model, ModelC, JOINT_SPHERICAL
from sim_node.engine.narrowphase cimport RawContact, collide
from sim_node.engine.scene cimport (ACTUATOR_OFF, ACTUATOR_PID, ACTUATOR_TORQUE, BodyC,
                                   FreeBodyC, RobotC, ShapeC, BODY_STATIC, BODY_KINEMATIC,
                                   BODY_FREE, BODY_ROBOT)
from sim_node.engine.solver cimport MAX_PATCH_CONTACTS, patch_block, pgs_solve
from sim_node.engine.spatial cimport (cross3, dot3, mat3_mul, mat3_vec, mat3T_vec, quat_exp,
                                      quat_log, quat_mul, quat_to_R, tangent_basis)

cnp.import_array()

cdef double REST_GAP_FRACTION = 0.1     # rigid contacts rest this far into the layer's outside
cdef double RESTITUTION_THRESHOLD = 0.05  # [m/s] slower impacts do not bounce
cdef double IMPACT_SPEED = 0.05         # [m/s] faster approaches are impacts, solved exactly
cdef double PUSH_OUT_RATE = 0.2         # fraction of an overlap beyond the rest gap fixed per step
cdef double MAX_PUSH_OUT_SPEED = 0.2    # [m/s] cap of that correction (it adds energy)
cdef double MERGE_RADIUS = 0.001        # [m] contacts of a pair closer than this are merged
cdef double WARM_START_RADIUS = 0.01    # [m] a cached impulse follows a contact this close
cdef int RAW_PER_SHAPE_PAIR = 256

cdef double MAX_STEP_MOTION = 0.5       # [m or rad] a step moving any coordinate further fails
# Bounds of joint commands, checked by set_commands / set_joint_commands (sim_node.sim.bounds
# documents them as MAX_JOINT_POSITION, MAX_ANGULAR_SPEED, MAX_TORQUE)
MAX_POSITION_TARGET = 1e4               # [rad or m]
MAX_VELOCITY_TARGET = 1e4               # [rad/s or m/s]
MAX_FEEDFORWARD = 1e9                   # [N m or N]
cdef int MAX_HALVINGS = 5               # a failed step is retried as two halves, this deep

# status codes (Simulator.getStatus; the same numbers as sim_node/msg/SimStatus.msg)
cdef enum:
    STATUS_NORMAL = 0
    STATUS_ADAPTIVE_TIME_STEPPING = 1
    STATUS_UNSTABLE = 3


cdef struct CacheEntry:
    # a contact's normal impulse, found again next step by its position in body a's frame
    int body_a
    int body_b
    double point_A[3]     # contact point in body a's frame
    double lam            # normal impulse [N s]


cdef struct FeedbackC:
    # contact feedback of one body pair (a < b) over the feedback window (Simulator.simulate)
    int body_a
    int body_b
    int touching          # a contact inside the boundary layers at the last step
    int steps_touching    # steps of the window with such a contact
    int penetrated        # the real geometries overlapped at some step of the window
    double impulse[3]     # on a, summed over the window [N s]
    double moment[3]      # on a about the world origin, summed over the window [N m s]
    double force[3]       # on a at the last step [N]
    double torque[3]      # on a about the world origin at the last step [N m]


cdef struct PatchCache:
    # a body pair's friction impulse, world frame, and where its contacts sit in the cache
    int body_a
    int body_b
    double friction[3]    # [N s]
    double torsion        # [N m s]
    int first             # its contacts in the contact cache
    int count
    int touched           # some contact was inside the boundary layers (depth >= 0)


cdef inline void _quat_mul_exp(double* q, const double* w, double dt) noexcept nogil:
    # q <- exp(w dt / 2) * q for a world angular velocity w (x, y, z, w quaternions)
    cdef double ang = sqrt(dot3(w, w)) * dt
    cdef double s, c, hx, hy, hz, hw, qx, qy, qz, qw, n
    if ang < 1e-12:
        return
    s = sin(0.5 * ang) / (ang / dt)
    c = cos(0.5 * ang)
    hx = w[0] * s
    hy = w[1] * s
    hz = w[2] * s
    hw = c
    qx, qy, qz, qw = q[0], q[1], q[2], q[3]
    q[0] = hw * qx + hx * qw + hy * qz - hz * qy
    q[1] = hw * qy - hx * qz + hy * qw + hz * qx
    q[2] = hw * qz + hx * qy - hy * qx + hz * qw
    q[3] = hw * qw - hx * qx - hy * qy - hz * qz
    n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    q[0] /= n
    q[1] /= n
    q[2] /= n
    q[3] /= n


cdef inline double _harmonic(double a, double b) noexcept nogil:
    # 2 / (1/a + 1/b) with 1/inf = 0 (the seed's blending rule)
    if a == 0.0 or b == 0.0:
        return 0.0
    if a == INFINITY and b == INFINITY:
        return INFINITY
    return 2.0 / (1.0 / a + 1.0 / b)


cdef inline void _shape_aabb(ShapeC* s) noexcept nogil:
    # world AABB of a placed shape
    cdef double half[3]
    cdef double c[3]
    cdef double a
    cdef int k, j
    for k in range(3):
        c[k] = s.p[k]
    if s.type == SHAPE_SPHERE:
        for k in range(3):
            half[k] = s.size[0]
    elif s.type == SHAPE_BOX:
        for k in range(3):
            half[k] = (fabs(s.R[3 * k]) * s.size[0] + fabs(s.R[3 * k + 1]) * s.size[1]
                       + fabs(s.R[3 * k + 2]) * s.size[2])
    elif s.type == SHAPE_CAPSULE:
        for k in range(3):
            half[k] = fabs(s.R[3 * k + 2]) * s.size[1] + s.size[0]
    elif s.type == SHAPE_CYLINDER:
        for k in range(3):
            a = s.R[3 * k + 2]
            half[k] = fabs(a) * s.size[1] + s.size[0] * sqrt(max(0.0, 1.0 - a * a))
    elif s.type == SHAPE_PLANE:
        for k in range(3):
            s.lo[k] = -INFINITY
            s.hi[k] = INFINITY
        # a plane with an axis-aligned normal is bounded along that axis
        for k in range(3):
            if fabs(s.R[3 * k + 2]) == 1.0:
                if s.R[3 * k + 2] > 0:
                    s.hi[k] = s.p[k]
                else:
                    s.lo[k] = s.p[k]
        return
    else:
        # mesh-like: the shape-frame AABB of its vertices, centre and half extents, rotated
        # (vertex bounds are stored by the builder in size[] as half extents around p_BS
        # offset... see Scene: lo/hi of the local box are in the mesh's first BVH node)
        _local_box_aabb(s, half, c)
    for k in range(3):
        s.lo[k] = c[k] - half[k]
        s.hi[k] = c[k] + half[k]
    if s.type == SHAPE_HEIGHTFIELD:
        # solid below the surface: unbounded along the frame's -z
        for k in range(3):
            if s.R[3 * k + 2] > 0.0:
                s.lo[k] = -INFINITY
            elif s.R[3 * k + 2] < 0.0:
                s.hi[k] = INFINITY


cdef inline void _local_box_aabb(const ShapeC* s, double* half, double* c) noexcept nogil:
    # world AABB (centre c, half extents) of the shape-frame box [lo, hi] of a mesh's vertices
    cdef double lc[3]
    cdef double lh[3]
    cdef double wc[3]
    cdef int k
    cdef const double* b = s.mesh.bvh.bounds
    for k in range(3):
        lc[k] = 0.5 * (b[k] + b[3 + k])
        lh[k] = 0.5 * (b[3 + k] - b[k])
    mat3_vec(s.R, lc, wc)
    for k in range(3):
        c[k] = s.p[k] + wc[k]
        half[k] = (fabs(s.R[3 * k]) * lh[0] + fabs(s.R[3 * k + 1]) * lh[1]
                   + fabs(s.R[3 * k + 2]) * lh[2])


cdef class Scene:
    """Robots, free bodies and terrains with their collision shapes, stepped in time.

    Built by sim_node.sim.build from a WorldModel. The state lives in numpy arrays exposed as
    attributes: robot_q[r], robot_v[r], free_state (n, 13) (com position, quaternion xyzw, com
    velocity, angular velocity, all world), and the per-step inputs robot_tau_ff[r],
    robot_kp[r], robot_kd[r], robot_q_des[r], robot_v_des[r], robot_tau_ext[r],
    free_wrench (n, 6).
    """
    cdef RobotC* robots
    cdef FreeBodyC* free_bodies
    cdef BodyC* bodies
    cdef ShapeC* shapes
    cdef MeshC* meshes
    cdef readonly int nrobot, nfree, nbody, nshape, nmesh, nvel
    cdef double g[3]
    cdef readonly int max_contacts
    cdef public int max_iterations
    cdef public double tolerance
    cdef public double regularization
    cdef readonly double time
    cdef readonly int status
    cdef readonly int last_iterations
    cdef readonly double last_dt          # length of the last completed step [s]
    cdef readonly list robot_joint_offset  # first DOF of the joints (6 after a floating base, else 0)
    cdef readonly list robot_joint_q_offset  # first q entry of the joints (7 or 0)
    cdef readonly list robot_models, robot_data
    cdef readonly list robot_q, robot_v, robot_tau_ff, robot_kp, robot_ki, robot_kd
    cdef readonly list robot_q_des, robot_v_des, robot_mode, robot_iterm, robot_advance
    cdef readonly list robot_tau, robot_tau_ext, robot_row_lam
    cdef readonly object free_state, free_wrench
    cdef list _keep            # arrays whose memory the C structs point into
    # per-step buffers
    cdef double* vel
    cdef double* vel0         # velocities at the start of the step (impact speeds)
    cdef double* box          # [nbody*6] body AABBs
    cdef int* cand            # candidate body pairs
    cdef int* sap_order       # bodies sorted along x (kept between steps: near-sorted)
    cdef int ncand, cand_cap
    cdef RawContact* raw
    cdef int raw_cap
    cdef int* scratch
    cdef ContactC* contacts
    cdef readonly int ncontact
    cdef readonly int ncollidable     # bodies some other body may collide with
    cdef bint filters_changed         # recount the collidable bodies before the next step
    cdef int contact_cap
    cdef PatchC* patches
    cdef readonly int npatch
    cdef int patch_cap
    cdef RowC* rows
    cdef readonly int nrow
    cdef int row_cap
    cdef double* jw
    cdef int jw_size, jw_cap
    cdef double* blocks       # patch Delassus blocks
    cdef int blocks_size, blocks_cap
    cdef CacheEntry* cache
    cdef int ncache, cache_cap
    cdef PatchCache* pcache
    cdef int npcache, pcache_cap
    cdef unsigned long long* disabled   # sorted (min id << 32 | max id) of disabled pairs
    cdef int ndisabled
    cdef int* separated       # body pairs that touched the step before and no longer do
    cdef int nseparated, separated_cap
    cdef FeedbackC* fb        # sorted by (body_a, body_b)
    cdef int nfeedback, feedback_cap
    cdef readonly bint feedback_all     # every touching pair gets an entry
    cdef readonly int window_steps      # steps and time since begin_feedback_window()
    cdef readonly double window_time
    # work done, summed over steps (a cost measure independent of the machine)
    cdef readonly long count_shape_pairs    # narrowphase shape-pair tests
    cdef readonly long count_contacts       # contacts produced
    cdef readonly long count_row_updates    # constraint rows visited by the solver

    def __cinit__(self):
        self.robots = NULL
        self.free_bodies = NULL
        self.bodies = NULL
        self.shapes = NULL
        self.meshes = NULL
        self.vel = NULL
        self.vel0 = NULL
        self.box = NULL
        self.cand = NULL
        self.sap_order = NULL
        self.raw = NULL
        self.scratch = NULL
        self.contacts = NULL
        self.patches = NULL
        self.pcache = NULL
        self.rows = NULL
        self.jw = NULL
        self.blocks = NULL
        self.cache = NULL
        self.disabled = NULL
        self.separated = NULL
        self.fb = NULL

    def __dealloc__(self):
        free(self.robots)
        free(self.free_bodies)
        free(self.bodies)
        free(self.shapes)
        free(self.meshes)
        free(self.vel)
        free(self.vel0)
        free(self.box)
        free(self.cand)
        free(self.sap_order)
        free(self.raw)
        free(self.scratch)
        free(self.contacts)
        free(self.patches)
        free(self.pcache)
        free(self.rows)
        free(self.jw)
        free(self.blocks)
        free(self.cache)
        free(self.disabled)
        free(self.separated)
        free(self.fb)

    def __init__(self, *, robots, free_bodies, bodies, shapes, meshes, gravity=(0.0, 0.0, -9.81),
                 max_contacts=20, max_iterations=30, tolerance=1e-5, regularization=0.02):
        """robots: list of dicts (model, q, v, q_lower, q_upper, effort, dry_friction, damping,
        dof_q, floating_base, body_adjacent (optional: the model's parents), first_body,
        self_collision); free_bodies: list of dicts (mass, com_B, I_B,
        state (13), kinematic, body); bodies: list of dicts (kind, index, robot_body, id,
        first_shape, nshape, padding, restitution, friction, stiffness, damping, group, mask,
        extent); shapes: list of dicts (type, body, size, R_BS, p_BS, mesh); meshes: list of
        dicts of arrays (see geometry.pxd MeshC)."""
        cdef int i, k
        cdef RobotC* r
        cdef FreeBodyC* f
        cdef BodyC* b
        cdef ShapeC* s
        cdef Model model
        cdef Data data
        self._keep = []
        if not 1 <= max_contacts <= MAX_PATCH_CONTACTS:
            raise ValueError(f"max_contacts must be in [1, {MAX_PATCH_CONTACTS}], got {max_contacts}")
        self.max_contacts = max_contacts
        self.max_iterations = max_iterations
        self.tolerance = tolerance
        self.regularization = regularization
        self.set_gravity(gravity)
        self.time = 0.0
        self.status = STATUS_NORMAL
        self._build_meshes(meshes)
        # robots
        self.nrobot = len(robots)
        self.robots = <RobotC*> malloc(max(1, self.nrobot) * sizeof(RobotC))
        self.robot_models, self.robot_data = [], []
        self.robot_q, self.robot_v, self.robot_tau_ff, self.robot_kp = [], [], [], []
        self.robot_ki, self.robot_kd, self.robot_q_des, self.robot_v_des = [], [], [], []
        self.robot_mode, self.robot_iterm, self.robot_advance = [], [], []
        self.robot_tau, self.robot_tau_ext, self.robot_row_lam = [], [], []
        self.robot_joint_offset, self.robot_joint_q_offset = [], []
        self.nvel = 0
        for i, spec in enumerate(robots):
            model = spec["model"]
            data = Data(model)
            nq, nv = model.nq, model.nv
            r = &self.robots[i]
            r.model = &model.c
            r.data = &data.c
            r.vel_offset = self.nvel
            self.nvel += nv
            r.first_body = spec["first_body"]
            r.self_collision = int(spec.get("self_collision", False))
            r.minv_valid = 0
            r.factored = 0
            r.use_factor = int(model.has_mimic or np.any(np.asarray(spec["dry_friction"]) > 0))
            self.robot_models.append(model)
            self.robot_data.append(data)
            arrays = {
                "q": np.array(spec["q"], dtype=np.float64), "v": np.array(spec["v"], dtype=np.float64),
                "q_next": np.zeros(nq), "tau_ff": np.zeros(nv), "kp": np.zeros(nv),
                "ki": np.zeros(nv), "kd": np.zeros(nv), "q_des": np.zeros(nv),
                "v_des": np.zeros(nv), "iterm": np.zeros(nv), "advance": np.zeros(nv),
                "perr": np.zeros(nv), "armature": np.zeros(nv),
                "mode": np.where(np.asarray(spec["dof_q"]) >= 0, ACTUATOR_PID,
                                 ACTUATOR_OFF).astype(np.int32),
                "tau": np.zeros(nv), "tau_ext": np.zeros(nv), "tau_net": np.zeros(nv),
                "effort": np.array(spec["effort"], dtype=np.float64),
                "dof_q": np.array(spec["dof_q"], dtype=np.int32),
                "q_lower": np.array(spec["q_lower"], dtype=np.float64),
                "q_upper": np.array(spec["q_upper"], dtype=np.float64),
                "dry_friction": np.array(spec["dry_friction"], dtype=np.float64),
                "damping": np.array(spec["damping"], dtype=np.float64),
                "row_lam": np.zeros(3 * nv),
                "dof_ball": np.full(nv, -1, dtype=np.int32),
            }
            for name, arr in arrays.items():
                expected = nq if name in ("q", "q_next", "q_lower", "q_upper") else (
                    3 * nv if name == "row_lam" else nv)
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
            r.effort = _ptr(arrays["effort"])
            r.dof_q = <const int*> cnp.PyArray_DATA(arrays["dof_q"])
            r.q_lower = _ptr(arrays["q_lower"])
            r.q_upper = _ptr(arrays["q_upper"])
            r.dry_friction = _ptr(arrays["dry_friction"])
            r.damping = _ptr(arrays["damping"])
            r.row_lam = _ptr(arrays["row_lam"])
            r.dof_ball = <const int*> cnp.PyArray_DATA(arrays["dof_ball"])
            r.body_adjacent = <const int*> cnp.PyArray_DATA(arrays["body_adjacent"])
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
        self.nfree = len(free_bodies)
        self.free_state = np.zeros((self.nfree, 13))
        self.free_wrench = np.zeros((self.nfree, 6))
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
            self.free_state[i] = spec["state"]
            f.state = &(<double*> cnp.PyArray_DATA(self.free_state))[13 * i]
            f.wrench = &(<double*> cnp.PyArray_DATA(self.free_wrench))[6 * i]
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
            b.speed = 0.0
            R = np.asarray(spec.get("R", np.eye(3)), dtype=np.float64).reshape(9)
            p = np.asarray(spec.get("p", np.zeros(3)), dtype=np.float64)
            for k in range(9):
                b.R[k] = R[k]
            for k in range(3):
                b.p[k] = p[k]
        self.nshape = len(shapes)
        self.shapes = <ShapeC*> malloc(max(1, self.nshape) * sizeof(ShapeC))
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
        # buffers
        self.vel = <double*> malloc(max(1, self.nvel) * sizeof(double))
        self.vel0 = <double*> malloc(max(1, self.nvel) * sizeof(double))
        self.box = <double*> malloc(max(1, self.nbody) * 6 * sizeof(double))
        self.sap_order = <int*> malloc(max(1, self.nbody) * sizeof(int))
        for i in range(self.nbody):
            self.sap_order[i] = i
        self.cand_cap = 64
        self.cand = <int*> malloc(2 * self.cand_cap * sizeof(int))
        self.raw_cap = 256
        self.raw = <RawContact*> malloc(self.raw_cap * sizeof(RawContact))
        self.scratch = <int*> malloc(self.raw_cap * sizeof(int))
        self.contact_cap = 64
        self.contacts = <ContactC*> malloc(self.contact_cap * sizeof(ContactC))
        self.patch_cap = 32
        self.patches = <PatchC*> malloc(self.patch_cap * sizeof(PatchC))
        self.row_cap = 32
        self.rows = <RowC*> malloc(self.row_cap * sizeof(RowC))
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
        self.ncontact = self.npatch = self.nrow = 0
        self.ndisabled = 0
        self.filters_changed = True
        with nogil:
            self._kinematics(0.0)

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

    # -- configuration -----------------------------------------------------------------
    def set_gravity(self, gravity):
        g = np.asarray(gravity, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity must be 3 finite numbers, got {gravity!r}")
        self.g[0], self.g[1], self.g[2] = g

    def get_gravity(self):
        return np.array([self.g[0], self.g[1], self.g[2]])

    def set_body_surface(self, int body, double restitution, double friction, double stiffness,
                         double damping):
        self._check_body(body)
        self.bodies[body].restitution = restitution
        self.bodies[body].friction = friction
        self.bodies[body].stiffness = stiffness
        self.bodies[body].damping = damping

    def get_body_surface(self, int body):
        self._check_body(body)
        b = &self.bodies[body]
        return b.restitution, b.friction, b.stiffness, b.damping

    def set_body_padding(self, int body, double padding):
        self._check_body(body)
        if not padding >= 0.0:
            raise ValueError(f"padding must be non-negative, got {padding}")
        self.bodies[body].padding = padding

    def get_body_padding(self, int body):
        self._check_body(body)
        return self.bodies[body].padding

    def set_body_enabled(self, int body, bint enabled):
        self._check_body(body)
        self.bodies[body].enabled = enabled
        self.filters_changed = True

    def body_enabled(self, int body):
        self._check_body(body)
        return bool(self.bodies[body].enabled)

    def set_time(self, double t):
        """Set the simulation time [s] (fake stepping; a state restore sets it too)."""
        if not isfinite(t):
            raise ValueError(f"time must be finite, got {t}")
        self.time = t

    def set_collision_filter(self, int body, unsigned int group, unsigned int mask):
        self._check_body(body)
        self.bodies[body].group = group
        self.bodies[body].mask = mask
        self.filters_changed = True

    def set_pair_enabled(self, int id_a, int id_b, bint enabled):
        """Enable or disable collision between the bodies with world IDs id_a and id_b."""
        keys = set(self.disabled_pairs())
        key = (min(id_a, id_b), max(id_a, id_b))
        if enabled:
            keys.discard(key)
        else:
            keys.add(key)
        ordered = sorted(keys)
        free(self.disabled)
        self.ndisabled = len(ordered)
        self.disabled = <unsigned long long*> malloc(max(1, self.ndisabled) * sizeof(unsigned long long))
        for i, (a, b) in enumerate(ordered):
            self.disabled[i] = ((<unsigned long long> a) << 32) | (<unsigned long long> b)
        self.filters_changed = True

    def disabled_pairs(self):
        return [(int(self.disabled[i] >> 32), int(self.disabled[i] & 0xFFFFFFFF))
                for i in range(self.ndisabled)]

    def set_free_body_kinematic(self, int i, bint kinematic):
        """Kinematic free bodies follow their set velocity; their velocity entries in vel stay
        (so switching back keeps the layout) but nothing acts on them."""
        if not 0 <= i < self.nfree:
            raise IndexError(f"free body {i} out of range")
        self.free_bodies[i].kinematic = kinematic
        self.filters_changed = True

    def _check_body(self, int body):
        if not 0 <= body < self.nbody:
            raise IndexError(f"collision body {body} out of range [0, {self.nbody})")

    def body_pose(self, int body):
        """(R, p) of a collision body's frame in the world, as of the last kinematics pass."""
        self._check_body(body)
        b = &self.bodies[body]
        return (np.array([b.R[k] for k in range(9)]).reshape(3, 3),
                np.array([b.p[0], b.p[1], b.p[2]]))

    def body_info(self, int body):
        self._check_body(body)
        b = &self.bodies[body]
        return dict(kind=b.kind, index=b.index, robot_body=b.robot_body, id=b.id)

    # -- stepping ------------------------------------------------------------------------
    def step(self, double dt, int steps=1):
        """Advance by `steps` steps of dt [s]. Returns the status: the worst since the last
        `clear_status()`. A step that fails (NaN, or a coordinate moving more than
        MAX_STEP_MOTION in it) is undone and retried as two half steps, down to dt / 2^5
        (STATUS_ADAPTIVE_TIME_STEPPING); if even that fails the state stays at the last good
        step, time stops there and the status is STATUS_UNSTABLE."""
        if not dt > 0.0:
            raise ValueError(f"dt must be positive, got {dt}")
        cdef int k
        with nogil:
            for k in range(steps):
                self._step_adaptive(dt, 0)
                if self.status == STATUS_UNSTABLE:
                    break
        return self.status

    def set_commands(self, int robot, int mode, q_des=None, v_des=None, tau_ff=None,
                     double advance=0.0):
        """Command every actuated joint of a robot at once: the actuator mode (ACTUATOR_OFF /
        TORQUE / PID = 0 / 1 / 2), position targets (None: keep them), velocity targets and
        feed-forward torques (None: zero), and the time the targets move on with v_des (0:
        they hold). q_des holds the joints' coordinates (q after a floating base's 7 entries: a
        spherical joint's quaternion, normalised here) or the whole q; v_des and tau_ff the
        joints' DOFs (v after a floating base's 6) or the whole v. Free joints stay unactuated.
        Everything is validated before anything is applied."""
        if not 0 <= robot < self.nrobot:
            raise IndexError(f"robot {robot} out of range [0, {self.nrobot})")
        if mode not in (ACTUATOR_OFF, ACTUATOR_TORQUE, ACTUATOR_PID):
            raise ValueError(f"unknown actuator mode {mode}")
        if not (isfinite(advance) and advance >= 0.0):
            raise ValueError(f"advance must be a finite time >= 0, got {advance}")
        cdef RobotC* rob = &self.robots[robot]
        cdef int offset = self.robot_joint_offset[robot], k
        cdef int nv = rob.model.nv, nq = rob.model.nq
        cdef const double[::1] qd = _joint_vector(q_des, "position targets", nq - rob.q_offset, nq,
                                                    MAX_POSITION_TARGET, "rad or m")
        cdef const double[::1] vd = _joint_vector(v_des, "velocity targets", nv - offset, nv,
                                                    MAX_VELOCITY_TARGET, "rad/s or m/s")
        cdef const double[::1] tf = _joint_vector(tau_ff, "feed-forward torques", nv - offset, nv,
                                                    MAX_FEEDFORWARD, "N m or N")
        cdef int qshift = 0 if qd is None or qd.shape[0] == nq else rob.q_offset
        cdef int vshift = 0 if vd is None or vd.shape[0] == nv else offset
        cdef int tshift = 0 if tf is None or tf.shape[0] == nv else offset
        cdef double[:, ::1] ball = None     # spherical joints' target rotation vectors
        if qd is not None and rob.has_ball:
            ball = np.zeros((nv, 3))
            for k in range(offset, nv):
                if rob.dof_ball[k] == 0 and rob.dof_q[k] >= 0:
                    _ball_target(&qd[rob.dof_q[k] - qshift], &ball[k, 0],
                                 rob.dof_q[k] - qshift)
        for k in range(offset, nv):
            if rob.dof_q[k] < 0:
                continue
            rob.mode[k] = mode
            if qd is not None:
                rob.q_des[k] = (qd[rob.dof_q[k] - qshift] if rob.dof_ball[k] < 0
                                else ball[k - rob.dof_ball[k], rob.dof_ball[k]])
            rob.v_des[k] = 0.0 if vd is None else vd[k - vshift]
            rob.tau_ff[k] = 0.0 if tf is None else tf[k - tshift]
            rob.advance[k] = advance

    def set_joint_commands(self, int robot, dofs, int mode, q_des=None, v_des=None,
                           tau_ff=None, double advance=0.0):
        """As set_commands for some scalar joints only: `dofs` are joint DOF indices (0 ..
        nv - robot_joint_offset - 1: v after a floating base), each the DOF of a revolute,
        prismatic or planar coordinate (spherical joints and free joints are commanded with
        set_commands); q_des (None: keep), v_des, tau_ff (None: zero) hold one value per listed
        DOF; advance may be inf (the target moves until the next command). The other DOFs keep
        their commands. Validated whole before anything is applied."""
        if not 0 <= robot < self.nrobot:
            raise IndexError(f"robot {robot} out of range [0, {self.nrobot})")
        if mode not in (ACTUATOR_OFF, ACTUATOR_TORQUE, ACTUATOR_PID):
            raise ValueError(f"unknown actuator mode {mode}")
        if not advance >= 0.0:
            raise ValueError(f"advance must be a time >= 0 (inf allowed), got {advance}")
        cdef RobotC* rob = &self.robots[robot]
        cdef int offset = self.robot_joint_offset[robot], njoint = rob.model.nv - offset
        index = np.asarray(dofs, dtype=np.int64).reshape(-1)
        if index.size and (index.min() < 0 or index.max() >= njoint):
            raise IndexError(f"joint DOF index out of range [0, {njoint})")
        if np.unique(index).size != index.size:
            raise ValueError("a joint DOF is listed twice")
        cdef int n = index.size, i, k
        for i in range(n):
            k = offset + index[i]
            if rob.dof_q[k] < 0 or rob.dof_ball[k] >= 0:
                raise ValueError(f"joint DOF {index[i]} belongs to a "
                                 f"{'spherical' if rob.dof_ball[k] >= 0 else 'free'} joint: "
                                 "only scalar joint DOFs can be commanded one by one")
        cdef const double[::1] qd = _joint_vector(q_des, "position targets", n, n,
                                                    MAX_POSITION_TARGET, "rad or m")
        cdef const double[::1] vd = _joint_vector(v_des, "velocity targets", n, n,
                                                    MAX_VELOCITY_TARGET, "rad/s or m/s")
        cdef const double[::1] tf = _joint_vector(tau_ff, "feed-forward torques", n, n,
                                                    MAX_FEEDFORWARD, "N m or N")
        for i in range(n):
            k = offset + index[i]
            rob.mode[k] = mode
            if qd is not None:
                rob.q_des[k] = qd[i]
            rob.v_des[k] = 0.0 if vd is None else vd[i]
            rob.tau_ff[k] = 0.0 if tf is None else tf[i]
            rob.advance[k] = advance

    def commanded_config(self, int robot):
        """q (nq, a new array) with every DOF under PID at its target (a spherical joint's
        quaternion exp(q_des), w >= 0) and every other coordinate as it is."""
        if not 0 <= robot < self.nrobot:
            raise IndexError(f"robot {robot} out of range [0, {self.nrobot})")
        cdef RobotC* rob = &self.robots[robot]
        cdef cnp.ndarray out = self.robot_q[robot].copy()
        cdef double* q = _ptr(out)
        cdef int k
        for k in range(rob.model.nv):
            if rob.mode[k] != ACTUATOR_PID or rob.dof_q[k] < 0:
                continue
            if rob.dof_ball[k] < 0:
                q[rob.dof_q[k]] = rob.q_des[k]
            elif rob.dof_ball[k] == 0:
                quat_exp(&rob.q_des[k], &q[rob.dof_q[k]])
        return out

    def advance_targets(self, int robot, double dt):
        """Move the PID targets of a robot on by dt [s] as a step does (without the physics:
        fakeSimulate)."""
        if not 0 <= robot < self.nrobot:
            raise IndexError(f"robot {robot} out of range [0, {self.nrobot})")
        cdef RobotC* rob = &self.robots[robot]
        cdef int k
        for k in range(rob.model.nv):
            if rob.mode[k] == ACTUATOR_PID and rob.advance[k] > 0.0:
                _advance_target(rob, k, dt)

    def clear_status(self):
        self.status = STATUS_NORMAL

    def refresh(self):
        """Recompute placements after the state arrays were changed from Python."""
        with nogil:
            self._kinematics(0.0)

    cdef void _step_adaptive(self, double dt, int depth) noexcept nogil:
        if self._step(dt):
            return
        if depth == MAX_HALVINGS:
            self.status = STATUS_UNSTABLE
            return
        if self.status < STATUS_ADAPTIVE_TIME_STEPPING:
            self.status = STATUS_ADAPTIVE_TIME_STEPPING
        self._step_adaptive(0.5 * dt, depth + 1)
        if self.status != STATUS_UNSTABLE:
            self._step_adaptive(0.5 * dt, depth + 1)

    cdef void _count_collidable(self) noexcept nogil:
        # (filters) => which bodies can collide with anything, and how many
        cdef int i, j, r
        for i in range(self.nbody):
            self.bodies[i].collidable = 0
        for i in range(self.nbody):
            for j in range(i + 1, self.nbody):
                if not self._filtered(i, j):
                    self.bodies[i].collidable = 1
                    self.bodies[j].collidable = 1
        self.ncollidable = 0
        for r in range(self.nrobot):
            self.robots[r].collidable = 0
        for i in range(self.nbody):
            if self.bodies[i].collidable:
                self.ncollidable += 1
                if self.bodies[i].kind == BODY_ROBOT:
                    self.robots[self.bodies[i].index].collidable = 1
        self.filters_changed = False

    cdef bint _step(self, double dt) noexcept nogil:
        # one step; False (state untouched) when it fails
        cdef int i
        if self.filters_changed:
            self._count_collidable()
        self._kinematics(dt)
        self._broadphase()
        self._narrowphase(dt)
        self._actuators(dt)
        if not self._free_velocity(dt):
            return False
        self._setup(dt)
        self.last_iterations = pgs_solve(self.contacts, self.patches, self.npatch, self.rows,
                                         self.nrow, self.jw, self.blocks, self.vel,
                                         self.max_iterations, self.tolerance,
                                         self.regularization)
        self.count_contacts += self.ncontact
        self.count_row_updates += self.last_iterations * (self.ncontact + 3 * self.npatch + self.nrow)
        for i in range(self.nvel):
            if not isfinite(self.vel[i]) or fabs(self.vel[i]) * dt > MAX_STEP_MOTION:
                return False
        self._integrate(dt)
        self._advance_actuators(dt)
        self._record(dt)
        self.last_dt = dt
        if self.nfeedback or self.feedback_all:
            self._feedback(dt)
        self.window_steps += 1
        self.window_time += dt
        self.time += dt
        return True

    cdef void _kinematics(self, double dt) noexcept nogil:
        # (q, v, free states) => placements, AABBs and speed bounds of bodies and shapes
        cdef int r, i, k, j
        cdef RobotC* rob
        cdef BodyC* b
        cdef ShapeC* s
        cdef FreeBodyC* f
        cdef double vJ[6]
        cdef double vo[3]
        cdef double t[3]
        cdef double w2, sp
        for r in range(self.nrobot):
            rob = &self.robots[r]
            rob.minv_valid = 0
            rob.factored = 0
            if dt > 0.0 and not rob.collidable:
                continue            # nothing to collide with: placements only on refresh()
            for i in range(rob.model.nbody):
                body_placement(rob.model, rob.data, i, rob.q)
                body_columns(rob.model, rob.data, i)
                body_velocity(rob.model, rob.data, i, rob.v, vJ)
                b = &self.bodies[rob.first_body + i]
                memcpy(b.R, &rob.data.R[9 * i], 9 * sizeof(double))
                memcpy(b.p, &rob.data.p[3 * i], 3 * sizeof(double))
                # speed of the body origin: v_O + w x p
                cross3(&rob.data.v[6 * i + 3], b.p, vo)
                for k in range(3):
                    vo[k] += rob.data.v[6 * i + k]
                w2 = dot3(&rob.data.v[6 * i + 3], &rob.data.v[6 * i + 3])
                b.speed = sqrt(dot3(vo, vo)) + sqrt(w2) * b.extent
        for i in range(self.nfree):
            f = &self.free_bodies[i]
            b = &self.bodies[f.body]
            quat_to_R(&f.state[3], b.R)
            mat3_vec(b.R, f.com_B, t)
            for k in range(3):
                b.p[k] = f.state[k] - t[k]
            b.speed = (sqrt(dot3(&f.state[7], &f.state[7]))
                       + sqrt(dot3(&f.state[10], &f.state[10])) * (b.extent + sqrt(dot3(f.com_B, f.com_B))))
        for i in range(self.nbody):
            b = &self.bodies[i]
            if dt > 0.0 and not b.collidable:
                continue
            for k in range(3):
                b.lo[k] = INFINITY
                b.hi[k] = -INFINITY
            for j in range(b.first_shape, b.first_shape + b.nshape):
                s = &self.shapes[j]
                mat3_mul(b.R, s.R_BS, s.R)
                mat3_vec(b.R, s.p_BS, t)
                for k in range(3):
                    s.p[k] = b.p[k] + t[k]
                _shape_aabb(s)
                for k in range(3):
                    b.lo[k] = min(b.lo[k], s.lo[k])
                    b.hi[k] = max(b.hi[k], s.hi[k])
            sp = b.padding + b.speed * dt
            for k in range(3):
                self.box[6 * i + k] = b.lo[k] - sp
                self.box[6 * i + 3 + k] = b.hi[k] + sp

    cdef bint _filtered(self, int i, int j) noexcept nogil:
        # True when bodies i and j must not collide
        cdef BodyC* a = &self.bodies[i]
        cdef BodyC* b = &self.bodies[j]
        cdef int ka, kb, parent
        cdef unsigned long long key
        cdef int lo, hi, mid
        if not a.enabled or not b.enabled or a.nshape == 0 or b.nshape == 0:
            return True
        if not _dynamic(self, a) and not _dynamic(self, b):
            return True
        if (a.group & b.mask) == 0 or (b.group & a.mask) == 0:
            return True
        if a.robot >= 0 and a.robot == b.robot:
            if not self.robots[a.robot].self_collision:
                return True
            # adjacent bodies never collide (robot_body -1: the links welded to the world)
            if a.robot_body >= 0 and self.robots[a.robot].body_adjacent[a.robot_body] == b.robot_body:
                return True
            if b.robot_body >= 0 and self.robots[a.robot].body_adjacent[b.robot_body] == a.robot_body:
                return True
        if self.ndisabled > 0:
            key = ((<unsigned long long> min(a.id, b.id)) << 32) | (<unsigned long long> max(a.id, b.id))
            lo, hi = 0, self.ndisabled - 1
            while lo <= hi:
                mid = (lo + hi) // 2
                if self.disabled[mid] == key:
                    return True
                if self.disabled[mid] < key:
                    lo = mid + 1
                else:
                    hi = mid - 1
        return False

    cdef void _broadphase(self) noexcept nogil:
        # (body AABBs) => candidate pairs (i < j) whose boxes overlap and that may collide
        cdef int n, i, k = 0
        if self.ncollidable < 2:
            self.ncand = 0
            return
        n = sweep_and_prune(self.nbody, self.box, self.sap_order, self.cand, self.cand_cap)
        if n > self.cand_cap:
            self.cand_cap = 2 * n
            self.cand = <int*> realloc(self.cand, 2 * self.cand_cap * sizeof(int))
            n = sweep_and_prune(self.nbody, self.box, self.sap_order, self.cand, self.cand_cap)
        for i in range(n):
            if not self._filtered(self.cand[2 * i], self.cand[2 * i + 1]):
                self.cand[2 * k] = self.cand[2 * i]
                self.cand[2 * k + 1] = self.cand[2 * i + 1]
                k += 1
        self.ncand = k

    cdef void _narrowphase(self, double dt) noexcept nogil:
        # (candidate pairs, shapes) => contacts clustered per pair (normal from b to a)
        cdef int p, i, j, sa, sb, n, k, c, m, g, ngroup
        cdef int sizes[MAX_GROUPED]
        cdef BodyC* A
        cdef BodyC* B
        cdef double margin, norm, along
        cdef double rel[3]
        cdef RawContact* rc
        cdef ContactC* out
        cdef PatchC* patch
        cdef bint flip
        self.ncontact = 0
        self.npatch = 0
        for p in range(self.ncand):
            i = self.cand[2 * p]
            j = self.cand[2 * p + 1]
            # orient the pair so that b is the static / plane side when there is one
            if self.bodies[i].kind == BODY_STATIC:
                i, j = j, i
            A = &self.bodies[i]
            B = &self.bodies[j]
            margin = A.padding + B.padding + (A.speed + B.speed) * dt
            n = 0
            for sa in range(A.first_shape, A.first_shape + A.nshape):
                for sb in range(B.first_shape, B.first_shape + B.nshape):
                    if self.raw_cap - n < RAW_PER_SHAPE_PAIR:
                        self.raw_cap = 2 * self.raw_cap + RAW_PER_SHAPE_PAIR
                        self.raw = <RawContact*> realloc(self.raw, self.raw_cap * sizeof(RawContact))
                        self.scratch = <int*> realloc(self.scratch, self.raw_cap * sizeof(int))
                    flip = _flip_shapes(&self.shapes[sa], &self.shapes[sb])
                    self.count_shape_pairs += 1
                    if flip:
                        m = collide(&self.shapes[sb], &self.shapes[sa], margin, &self.raw[n],
                                    RAW_PER_SHAPE_PAIR)
                        for c in range(n, n + m):
                            _flip_raw(&self.raw[c])
                    else:
                        m = collide(&self.shapes[sa], &self.shapes[sb], margin, &self.raw[n],
                                    RAW_PER_SHAPE_PAIR)
                    n += m
            if n == 0:
                continue
            # supporting points: within the rest gap plus the step's approach of the deepest
            n = cluster_contacts(self.raw, n, self.max_contacts, MERGE_RADIUS,
                                 REST_GAP_FRACTION * (A.padding + B.padding) + (A.speed + B.speed) * dt,
                                 self.scratch)
            # a friction patch per group of near normals (a face, or a curved surface)
            ngroup = group_by_normal(self.raw, n, sizes)
            if self.npatch + ngroup > self.patch_cap:
                self.patch_cap = 2 * (self.npatch + ngroup)
                self.patches = <PatchC*> realloc(self.patches, self.patch_cap * sizeof(PatchC))
            if self.ncontact + n > self.contact_cap:
                self.contact_cap = 2 * (self.ncontact + n)
                self.contacts = <ContactC*> realloc(self.contacts, self.contact_cap * sizeof(ContactC))
            m = 0
            for g in range(ngroup):
                patch = &self.patches[self.npatch]
                memset(patch, 0, sizeof(PatchC))
                patch.body_a = i
                patch.body_b = j
                patch.first = self.ncontact
                patch.count = sizes[g]
                patch.mu = _harmonic(A.friction, B.friction)
                for c in range(m, m + sizes[g]):
                    rc = &self.raw[c]
                    out = &self.contacts[self.ncontact]
                    memset(out, 0, sizeof(ContactC))
                    out.body_a = i
                    out.body_b = j
                    out.patch = self.npatch
                    for k in range(3):
                        out.point[k] = 0.5 * (rc.pa[k] + rc.pb[k])
                        out.normal[k] = rc.normal[k]
                        patch.point[k] += out.point[k] / sizes[g]
                        patch.normal[k] += out.normal[k]
                    out.distance = rc.distance
                    out.depth = A.padding + B.padding - rc.distance
                    out.restitution = 0.5 * (A.restitution + B.restitution)
                    out.stiffness = _harmonic(A.stiffness, B.stiffness)
                    out.damping = _harmonic(A.damping, B.damping)
                    self.ncontact += 1
                m += sizes[g]
                norm = sqrt(dot3(patch.normal, patch.normal))
                for k in range(3):
                    patch.normal[k] /= norm
                tangent_basis(patch.normal, patch.t1, patch.t2)
                for c in range(patch.first, patch.first + patch.count):
                    out = &self.contacts[c]
                    for k in range(3):
                        rel[k] = out.point[k] - patch.point[k]
                    along = dot3(rel, patch.normal)
                    out.rho = sqrt(max(0.0, dot3(rel, rel) - along * along))
                self.npatch += 1

    cdef void _actuators(self, double dt) noexcept nogil:
        # (q, v, commands, integral terms) => tau, clipped to the torque limits; position
        # errors; the implicit damping (joint damping, unsaturated kd) as armature dt c
        cdef int r, k, qi
        cdef RobotC* rob
        cdef double t
        for r in range(self.nrobot):
            rob = &self.robots[r]
            for k in range(rob.model.nv):
                qi = rob.dof_q[k]
                rob.armature[k] = dt * rob.damping[k]
                if rob.mode[k] == ACTUATOR_PID and qi >= 0:
                    if rob.dof_ball[k] < 0:
                        rob.perr[k] = rob.q_des[k] - rob.q[qi]
                    elif rob.dof_ball[k] == 0:      # (the joint's three errors at once)
                        _ball_error(&rob.q[qi], &rob.q_des[k], &rob.perr[k])
                    t = (rob.tau_ff[k] + rob.kp[k] * rob.perr[k]
                         + rob.kd[k] * (rob.v_des[k] - rob.v[k]) + rob.ki[k] * rob.iterm[k])
                    if -rob.effort[k] < t < rob.effort[k]:
                        rob.armature[k] += dt * rob.kd[k]
                elif rob.mode[k] == ACTUATOR_TORQUE:
                    rob.perr[k] = 0.0
                    t = rob.tau_ff[k]
                else:
                    rob.perr[k] = 0.0
                    t = 0.0
                if t > rob.effort[k]:
                    t = rob.effort[k]
                elif t < -rob.effort[k]:
                    t = -rob.effort[k]
                rob.tau[k] = t

    cdef void _advance_actuators(self, double dt) noexcept nogil:
        # (position errors, velocity targets) => integral terms and moving targets after a step
        cdef int r, k
        cdef RobotC* rob
        cdef double bound
        for r in range(self.nrobot):
            rob = &self.robots[r]
            for k in range(rob.model.nv):
                if rob.mode[k] != ACTUATOR_PID:
                    continue
                if rob.ki[k] > 0.0:
                    # anti-windup as in Klamp't: ki iterm stays within the torque limits
                    rob.iterm[k] += rob.perr[k] * dt
                    bound = rob.effort[k] / rob.ki[k]
                    if rob.iterm[k] > bound:
                        rob.iterm[k] = bound
                    elif rob.iterm[k] < -bound:
                        rob.iterm[k] = -bound
                if rob.advance[k] > 0.0:
                    _advance_target(rob, k, dt)

    cdef bint _free_velocity(self, double dt) noexcept nogil:
        # (q, v, tau, wrenches, g) => vel without constraints (semi-implicit Euler)
        cdef int r, i, k
        cdef RobotC* rob
        cdef FreeBodyC* f
        cdef double* ddq
        cdef double R[9]
        cdef double Iw[9]
        cdef double Iinv[9]
        cdef double tmp[9]
        cdef double L[3]
        cdef double gyro[3]
        cdef double rhs[3]
        cdef double dw[3]
        cdef double wb[3]
        for r in range(self.nrobot):
            rob = &self.robots[r]
            ddq = rob.data.ddq
            # (not data.tmp: ABA's fallback for mimic joints uses it)
            for k in range(rob.model.nv):
                rob.tau_net[k] = rob.tau[k] + rob.tau_ext[k] - rob.damping[k] * rob.v[k]
            if rob.use_factor:
                if not aba_factored(rob.model, rob.data, rob.q, rob.v, rob.tau_net, self.g,
                                    rob.armature, ddq):
                    return False
                rob.factored = 1
            elif not aba_armature(rob.model, rob.data, rob.q, rob.v, rob.tau_net, self.g,
                                  rob.armature, ddq):
                return False
            for k in range(rob.model.nv):
                self.vel0[rob.vel_offset + k] = rob.v[k]
                self.vel[rob.vel_offset + k] = rob.v[k] + dt * ddq[k]
        for i in range(self.nfree):
            f = &self.free_bodies[i]
            if f.vel_offset < 0:
                continue
            if f.kinematic:             # (its entries stay in vel, untouched by the solve)
                for k in range(6):
                    self.vel[f.vel_offset + k] = 0.0
                    self.vel0[f.vel_offset + k] = 0.0
                continue
            quat_to_R(&f.state[3], R)
            # rotation in body axes, gyroscopic term implicit (one Newton step of
            # I (w' - w) + dt w' x I w' = 0, Catto 2015): explicit Euler would add energy to
            # every tumbling body, the implicit step never does
            mat3T_vec(R, &f.state[10], wb)
            mat3_vec(f.I_B, wb, L)
            cross3(wb, L, gyro)
            _skew_mul(wb, f.I_B, tmp)           # [w]x I
            for k in range(9):
                Iw[k] = f.I_B[k] + dt * tmp[k]
            Iw[1] += dt * L[2]                  # - dt [I w]x
            Iw[2] -= dt * L[1]
            Iw[3] -= dt * L[2]
            Iw[5] += dt * L[0]
            Iw[6] += dt * L[1]
            Iw[7] -= dt * L[0]
            _inverse3(Iw, Iinv)
            mat3_vec(Iinv, gyro, dw)
            # external torque (world) into body axes
            mat3T_vec(R, &f.wrench[3], rhs)
            mat3_vec(f.Iinv_B, rhs, L)
            for k in range(3):
                wb[k] += -dt * dw[k] + dt * L[k]
            mat3_vec(R, wb, dw)
            for k in range(3):
                self.vel0[f.vel_offset + k] = f.state[7 + k]
                self.vel0[f.vel_offset + 3 + k] = f.state[10 + k]
                self.vel[f.vel_offset + k] = f.state[7 + k] + dt * (self.g[k] + f.wrench[k] / f.mass)
                self.vel[f.vel_offset + 3 + k] = dw[k]
        return True

    cdef void _robot_minv(self, int r) noexcept nogil:
        cdef RobotC* rob = &self.robots[r]
        cdef int k
        if rob.minv_valid:
            return
        if not rob.factored:
            crba(rob.model, rob.data, rob.q, rob.data.M)
            for k in range(rob.model.nv):
                rob.data.M[k * rob.model.nv + k] += rob.armature[k]
            ltdl_factor(rob.model, rob.data.M, rob.data.L)
            rob.factored = 1
        ltdl_inverse(rob.model, rob.data.L, rob.data.Linv, rob.data.Minv)
        rob.minv_valid = 1

    cdef int _reserve_jw(self, int n) noexcept nogil:
        # room for n more doubles in jw; returns the offset of the block
        cdef int off = self.jw_size
        if self.jw_size + n > self.jw_cap:
            self.jw_cap = 2 * (self.jw_size + n)
            self.jw = <double*> realloc(self.jw, self.jw_cap * sizeof(double))
        self.jw_size += n
        return off

    cdef void _jacobian_rows(self, int body, const double* point, int nrow, const double* lin,
                             const double* ang, double sign, int* jw_off, int* nv,
                             int* vel) noexcept nogil:
        # Rows r < nrow of `body`'s velocity: lin[r] . (velocity of the body point at `point`)
        # + ang[r] . (its angular velocity), times sign; then W = M^-1 J^T. Stored in jw as
        # nrow x nv rows and nv x nrow columns; jw_off = -1 when the body has no DOFs.
        cdef BodyC* b = &self.bodies[body]
        cdef RobotC* rob
        cdef FreeBodyC* f
        cdef int n, off, k, j, i, col, dof
        cdef double r[3]
        cdef double rd[3]
        cdef double lv[3]
        cdef double x[3]
        cdef double R[9]
        cdef double tmp[9]
        cdef double Iinv[9]
        cdef double s
        cdef double* J
        cdef double* W
        cdef const double* S
        jw_off[0] = -1
        nv[0] = 0
        vel[0] = 0
        if b.kind == BODY_FREE:
            f = &self.free_bodies[b.index]
            if f.kinematic:
                return
            n = 6
            off = self._reserve_jw(2 * nrow * n)
            J = &self.jw[off]
            W = &self.jw[off + nrow * n]
            for k in range(3):
                r[k] = point[k] - f.state[k]
            quat_to_R(&f.state[3], R)
            mat3_mul(R, f.Iinv_B, tmp)
            _mul_transpose(tmp, R, Iinv)
            for k in range(nrow):
                # [v_com, w] -> lin . (v_com + w x r) + ang . w = lin . v_com + (r x lin + ang) . w
                cross3(r, &lin[3 * k], rd)
                for j in range(3):
                    rd[j] += ang[3 * k + j]
                    J[k * n + j] = sign * lin[3 * k + j]
                    J[k * n + 3 + j] = sign * rd[j]
                mat3_vec(Iinv, rd, x)
                for j in range(3):
                    W[k * n + j] = sign * lin[3 * k + j] / f.mass
                    W[k * n + 3 + j] = sign * x[j]
            jw_off[0] = off
            nv[0] = n
            vel[0] = f.vel_offset
        elif b.kind == BODY_ROBOT:
            rob = &self.robots[b.index]
            self._robot_minv(b.index)
            n = rob.model.nv
            off = self._reserve_jw(2 * nrow * n)
            J = &self.jw[off]
            W = &self.jw[off + nrow * n]
            memset(J, 0, nrow * n * sizeof(double))
            i = b.robot_body
            while i >= 0:
                for col in range(rob.model.icol[i], rob.model.icol[i] + rob.model.ncolb[i]):
                    S = &rob.data.S[6 * col]
                    dof = rob.model.col_dof[col]
                    # velocity of the point for a unit rate: S_v + S_w x point; rotation: S_w
                    cross3(&S[3], point, lv)
                    for j in range(3):
                        lv[j] += S[j]
                    for k in range(nrow):
                        J[k * n + dof] += sign * (dot3(&lin[3 * k], lv) + dot3(&ang[3 * k], &S[3]))
                i = rob.model.parent[i]
            for k in range(nrow):
                for j in range(n):
                    s = 0.0
                    for i in range(n):
                        s += rob.data.Minv[j * n + i] * J[k * n + i]
                    W[k * n + j] = s
            jw_off[0] = off
            nv[0] = n
            vel[0] = rob.vel_offset

    cdef void _kinematic_velocity(self, int body, const double* point, double* out) noexcept nogil:
        # velocity of the point of a kinematic body (it has no DOFs in vel); zero otherwise
        cdef BodyC* b = &self.bodies[body]
        cdef FreeBodyC* f
        cdef double r[3]
        cdef int k
        out[0] = out[1] = out[2] = 0.0
        if b.kind != BODY_FREE:
            return
        f = &self.free_bodies[b.index]
        if not f.kinematic:
            return
        for k in range(3):
            r[k] = point[k] - f.state[k]
        cross3(&f.state[10], r, out)
        for k in range(3):
            out[k] += f.state[7 + k]

    cdef void _setup(self, double dt) noexcept nogil:
        # (contacts, patches, limits, frictions) => Jacobians, Delassus blocks, targets, warm start
        cdef int i, k, j
        cdef ContactC* c
        cdef PatchC* p
        cdef double zero[9]
        cdef double lin[9]
        cdef double ang[9]
        cdef double gap, rest, u_n, u_start, kdt, v_imp, acc
        cdef double va[3]
        cdef double vb[3]
        cdef double D1[1]
        cdef int cached = -1, hit
        for k in range(9):
            zero[k] = 0.0
        self.jw_size = 0
        for i in range(self.ncontact):
            c = &self.contacts[i]
            self._jacobian_rows(c.body_a, c.point, 1, c.normal, zero, 1.0, &c.jw_a, &c.nv_a, &c.vel_a)
            self._jacobian_rows(c.body_b, c.point, 1, c.normal, zero, -1.0, &c.jw_b, &c.nv_b, &c.vel_b)
            D1[0] = 0.0
            _add_jw(D1, 1, self.jw, c.jw_a, c.nv_a, c.jw_a, c.nv_a)
            _add_jw(D1, 1, self.jw, c.jw_b, c.nv_b, c.jw_b, c.nv_b)
            if c.jw_a >= 0 and c.jw_b >= 0 and c.vel_a == c.vel_b:
                _add_jw(D1, 1, self.jw, c.jw_a, c.nv_a, c.jw_b, c.nv_b)
                _add_jw(D1, 1, self.jw, c.jw_b, c.nv_b, c.jw_a, c.nv_a)
            c.D = D1[0]
            # kinematic sides move with their set velocity: its part of the relative velocity
            self._kinematic_velocity(c.body_a, c.point, va)
            self._kinematic_velocity(c.body_b, c.point, vb)
            for k in range(3):
                va[k] -= vb[k]
            c.bias = dot3(va, c.normal)
            # normal velocity before the solve, and at the start of the step
            u_n = c.bias
            u_start = c.bias
            if c.jw_a >= 0:
                for j in range(c.nv_a):
                    u_n += self.jw[c.jw_a + j] * self.vel[c.vel_a + j]
                    u_start += self.jw[c.jw_a + j] * self.vel0[c.vel_a + j]
            if c.jw_b >= 0:
                for j in range(c.nv_b):
                    u_n += self.jw[c.jw_b + j] * self.vel[c.vel_b + j]
                    u_start += self.jw[c.jw_b + j] * self.vel0[c.vel_b + j]
            rest = REST_GAP_FRACTION * (self.bodies[c.body_a].padding + self.bodies[c.body_b].padding)
            gap = c.distance - rest
            c.gamma = 0.0
            c.bounce = 0.0
            c.exact = 0.0
            if c.stiffness < INFINITY and c.damping < INFINITY:
                if c.depth > 0.0:
                    # compliant layer: u_n + gamma lambda = k depth / (k dt + c)
                    kdt = c.stiffness * dt + c.damping
                    c.gamma = 1.0 / (dt * kdt)
                    c.target = c.stiffness * c.depth / kdt
                else:
                    c.target = -INFINITY            # outside the layer: no force
            elif gap >= 0.0:
                # rigid: the gap may close, not more. An impact that would close it this step
                # bounces now, from the gap it is at: the approach speed is taken when the gap
                # closes (a fraction gap / (-u_n dt) into the step, over which the velocity went
                # from u_start to u_n), reversed and scaled by the restitution, and slowed by the
                # normal acceleration a over the gap it no longer travels, v^2 = (e v)^2 + 2 a gap.
                # The bounce then carries exactly the energy it would have at that height, so
                # neither the apex nor the energy depends on where in the step the impact falls.
                c.target = -gap / dt
                if c.restitution > 0.0 and u_n < -RESTITUTION_THRESHOLD and gap + u_n * dt <= 0.0:
                    v_imp = -(u_start + (u_n - u_start) * gap / (-u_n * dt))
                    acc = (u_n - u_start) / dt
                    v_imp = (c.restitution * v_imp) ** 2 + 2.0 * acc * gap
                    if v_imp > 0.0:
                        c.target = sqrt(v_imp)
                        c.bounce = 1.0
                        c.exact = 1.0
            else:
                c.target = min(-PUSH_OUT_RATE * gap / dt, MAX_PUSH_OUT_SPEED)
            if (c.stiffness == INFINITY or c.damping == INFINITY) and u_start < -IMPACT_SPEED \
                    and gap + u_n * dt <= 0.0:
                # an impact (module docstring): it stops at the rest gap, not inside it
                c.exact = 1.0
            if i == self.patches[c.patch].first:
                cached = self._cached_patch(c.body_a, c.body_b)
                self.patches[c.patch].cached = -1
            # the patch's friction follows the old patch that its first cached contact was in
            hit = self._warm_start_contact(c, cached)
            if self.patches[c.patch].cached < 0:
                self.patches[c.patch].cached = hit
        for i in range(self.npatch):
            p = &self.patches[i]
            for k in range(3):
                lin[k] = p.t1[k]
                lin[3 + k] = p.t2[k]
                lin[6 + k] = 0.0
                ang[k] = 0.0
                ang[3 + k] = 0.0
                ang[6 + k] = p.normal[k]
            self._kinematic_velocity(p.body_a, p.point, va)
            self._kinematic_velocity(p.body_b, p.point, vb)
            for k in range(3):
                va[k] -= vb[k]
            p.bias[0] = dot3(va, p.t1)
            p.bias[1] = dot3(va, p.t2)
            p.bias[2] = 0.0
            if self.bodies[p.body_a].kind == BODY_FREE and self.free_bodies[self.bodies[p.body_a].index].kinematic:
                p.bias[2] += dot3(&self.free_bodies[self.bodies[p.body_a].index].state[10], p.normal)
            if self.bodies[p.body_b].kind == BODY_FREE and self.free_bodies[self.bodies[p.body_b].index].kinematic:
                p.bias[2] -= dot3(&self.free_bodies[self.bodies[p.body_b].index].state[10], p.normal)
            self._jacobian_rows(p.body_a, p.point, 3, lin, ang, 1.0, &p.jw_a, &p.nv_a, &p.vel_a)
            self._jacobian_rows(p.body_b, p.point, 3, lin, ang, -1.0, &p.jw_b, &p.nv_b, &p.vel_b)
            for k in range(9):
                p.D[k] = 0.0
            _add_jw(p.D, 3, self.jw, p.jw_a, p.nv_a, p.jw_a, p.nv_a)
            _add_jw(p.D, 3, self.jw, p.jw_b, p.nv_b, p.jw_b, p.nv_b)
            if p.jw_a >= 0 and p.jw_b >= 0 and p.vel_a == p.vel_b:
                _add_jw(p.D, 3, self.jw, p.jw_a, p.nv_a, p.jw_b, p.nv_b)
                _add_jw(p.D, 3, self.jw, p.jw_b, p.nv_b, p.jw_a, p.nv_a)
            _eig2(p.D[0], p.D[1], p.D[4], p.Dt_eig, p.Dt_rot)
            self._warm_start_patch(p, p.cached)
        # patch blocks, after every Jacobian is in place (jw may move while it grows)
        self.blocks_size = 0
        for i in range(self.npatch):
            p = &self.patches[i]
            k = (p.count + 3) * (p.count + 3)
            if self.blocks_size + k > self.blocks_cap:
                self.blocks_cap = 2 * (self.blocks_size + k)
                self.blocks = <double*> realloc(self.blocks, self.blocks_cap * sizeof(double))
            p.block = self.blocks_size
            patch_block(p, self.contacts, self.jw, &self.blocks[p.block])
            self.blocks_size += k
        self._joint_rows(dt)

    cdef int _cached_patch(self, int body_a, int body_b) noexcept nogil:
        # index of the first of the previous step's patches of this pair, -1 if none: patches
        # are recorded in (body_a, body_b)-sorted order (a stable sort: a pair's patches stay
        # together, in their order), so a binary search finds them
        cdef int lo = 0, hi = self.npcache - 1, mid
        cdef long key = (<long> body_a) * self.nbody + body_b, k
        while lo <= hi:
            mid = (lo + hi) // 2
            k = (<long> self.pcache[mid].body_a) * self.nbody + self.pcache[mid].body_b
            if k == key:
                while mid > 0 and self._cached_pair_is(mid - 1, body_a, body_b):
                    mid -= 1
                return mid
            if k < key:
                lo = mid + 1
            else:
                hi = mid - 1
        return -1

    cdef inline bint _cached_pair_is(self, int k, int body_a, int body_b) noexcept nogil:
        return (0 <= k < self.npcache and self.pcache[k].body_a == body_a
                and self.pcache[k].body_b == body_b)

    cdef int _warm_start_contact(self, ContactC* c, int cached) noexcept nogil:
        # normal impulse of the cached contact of the same pair nearest to this one (a's frame);
        # returns the cached patch that contact was in (-1: none within WARM_START_RADIUS)
        cdef BodyC* a = &self.bodies[c.body_a]
        cdef double local[3]
        cdef double t[3]
        cdef double d2, best = WARM_START_RADIUS * WARM_START_RADIUS
        cdef int i, hit = -1, k, patch = -1
        c.lam = 0.0
        if cached < 0:
            return -1
        for k in range(3):
            t[k] = c.point[k] - a.p[k]
        mat3T_vec(a.R, t, local)
        while self._cached_pair_is(cached, c.body_a, c.body_b):
            for i in range(self.pcache[cached].first, self.pcache[cached].first + self.pcache[cached].count):
                d2 = 0.0
                for k in range(3):
                    d2 += (self.cache[i].point_A[k] - local[k]) ** 2
                if d2 < best:
                    best = d2
                    hit = i
                    patch = cached
            cached += 1
        if hit >= 0 and c.bounce == 0.0:
            c.lam = self.cache[hit].lam
        return patch

    cdef void _warm_start_patch(self, PatchC* p, int cached) noexcept nogil:
        # the pair's friction impulse of the previous step, in the new tangent basis, on its disk
        cdef int i
        cdef double normal = 0.0, spin = 0.0, lt, limit
        p.lam[0] = p.lam[1] = p.lam[2] = 0.0
        if cached >= 0:
            p.lam[0] = dot3(self.pcache[cached].friction, p.t1)
            p.lam[1] = dot3(self.pcache[cached].friction, p.t2)
            p.lam[2] = self.pcache[cached].torsion
        for i in range(p.first, p.first + p.count):
            normal += self.contacts[i].lam
            spin += self.contacts[i].lam * self.contacts[i].rho
        lt = sqrt(p.lam[0] * p.lam[0] + p.lam[1] * p.lam[1])
        limit = p.mu * normal
        if lt > limit and lt > 0.0:
            p.lam[0] *= limit / lt
            p.lam[1] *= limit / lt
        p.lam[2] = min(max(p.lam[2], -p.mu * spin), p.mu * spin)

    cdef void _joint_rows(self, double dt) noexcept nogil:
        # joint limits (unilateral, speculative) and joint dry friction (bounded) rows
        cdef int r, k, qi, side, j
        cdef RobotC* rob
        cdef RowC* row
        cdef double gap, speed
        self.nrow = 0
        for r in range(self.nrobot):
            rob = &self.robots[r]
            for k in range(rob.model.nv):
                qi = rob.dof_q[k]
                if qi < 0:
                    continue
                speed = fabs(self.vel[rob.vel_offset + k])
                for side in range(3):
                    if side == 0:
                        gap = rob.q[qi] - rob.q_lower[qi]
                    elif side == 1:
                        gap = rob.q_upper[qi] - rob.q[qi]
                    else:
                        gap = 0.0
                        if rob.dry_friction[k] <= 0.0:
                            rob.row_lam[3 * k + 2] = 0.0
                            continue
                    if side < 2 and not (gap <= speed * dt + 1e-3):
                        rob.row_lam[3 * k + side] = 0.0
                        continue
                    self._robot_minv(r)
                    if self.nrow == self.row_cap:
                        self.row_cap *= 2
                        self.rows = <RowC*> realloc(self.rows, self.row_cap * sizeof(RowC))
                    row = &self.rows[self.nrow]
                    row.vel = rob.vel_offset + k
                    row.vel0 = rob.vel_offset
                    row.nv = rob.model.nv
                    row.wcol = self._reserve_jw(rob.model.nv)
                    for j in range(rob.model.nv):
                        self.jw[row.wcol + j] = rob.data.Minv[j * rob.model.nv + k]
                    row.D = rob.data.Minv[k * rob.model.nv + k]
                    row.lam = rob.row_lam[3 * k + side]
                    if side == 2:
                        row.sign = 1.0
                        row.lo = -rob.dry_friction[k] * dt
                        row.hi = rob.dry_friction[k] * dt
                        row.target = 0.0
                    else:
                        row.sign = 1.0 if side == 0 else -1.0
                        row.lo = 0.0
                        row.hi = INFINITY
                        row.target = -gap / dt if gap >= 0.0 else min(-PUSH_OUT_RATE * gap / dt, MAX_PUSH_OUT_SPEED)
                    self.nrow += 1

    cdef void _integrate(self, double dt) noexcept nogil:
        # (vel) => q, v and free-body states at the end of the step
        cdef int r, i, k
        cdef RobotC* rob
        cdef FreeBodyC* f
        for r in range(self.nrobot):
            rob = &self.robots[r]
            for k in range(rob.model.nv):
                rob.v[k] = self.vel[rob.vel_offset + k]
            integrate_config(rob.model, rob.q, rob.v, dt, rob.q_next)
            memcpy(rob.q, rob.q_next, rob.model.nq * sizeof(double))
        for i in range(self.nfree):
            f = &self.free_bodies[i]
            if not f.kinematic:
                for k in range(3):
                    f.state[7 + k] = self.vel[f.vel_offset + k]
                    f.state[10 + k] = self.vel[f.vel_offset + 3 + k]
            for k in range(3):
                f.state[k] += dt * f.state[7 + k]
            _quat_mul_exp(&f.state[3], &f.state[10], dt)

    cdef void _record(self, double dt) noexcept nogil:
        # (impulses) => warm-start caches for the next step; row impulses kept per DOF
        cdef int i, k, r
        cdef ContactC* c
        cdef PatchC* p
        cdef BodyC* a
        cdef double t[3]
        cdef RowC* row
        if self.ncontact > self.cache_cap:
            self.cache_cap = 2 * self.ncontact
            self.cache = <CacheEntry*> realloc(self.cache, self.cache_cap * sizeof(CacheEntry))
        for i in range(self.ncontact):
            c = &self.contacts[i]
            a = &self.bodies[c.body_a]
            self.cache[i].body_a = c.body_a
            self.cache[i].body_b = c.body_b
            # the point as seen from a's frame at the START of the step (where it was found)
            for k in range(3):
                t[k] = c.point[k] - a.p[k]
            mat3T_vec(a.R, t, self.cache[i].point_A)
            self.cache[i].lam = c.lam
        self.ncache = self.ncontact
        # pairs that touched last step: kept aside to find the ones that separate now
        self.nseparated = 0
        for i in range(self.npcache):
            if self.pcache[i].touched:
                if self.nseparated > 0 and self.separated[2 * self.nseparated - 2] == self.pcache[i].body_a \
                        and self.separated[2 * self.nseparated - 1] == self.pcache[i].body_b:
                    continue            # another patch of the pair (the cache is sorted by pair)
                if self.nseparated == self.separated_cap:
                    self.separated_cap *= 2
                    self.separated = <int*> realloc(self.separated, 2 * self.separated_cap * sizeof(int))
                self.separated[2 * self.nseparated] = self.pcache[i].body_a
                self.separated[2 * self.nseparated + 1] = self.pcache[i].body_b
                self.nseparated += 1
        if self.npatch > self.pcache_cap:
            self.pcache_cap = 2 * self.npatch
            self.pcache = <PatchCache*> realloc(self.pcache, self.pcache_cap * sizeof(PatchCache))
        for i in range(self.npatch):
            p = &self.patches[i]
            self.pcache[i].body_a = p.body_a
            self.pcache[i].body_b = p.body_b
            for k in range(3):
                self.pcache[i].friction[k] = p.lam[0] * p.t1[k] + p.lam[1] * p.t2[k]
            self.pcache[i].torsion = p.lam[2]
            self.pcache[i].first = p.first
            self.pcache[i].count = p.count
            self.pcache[i].touched = 0
            for k in range(p.first, p.first + p.count):
                if self.contacts[k].depth >= 0.0:
                    self.pcache[i].touched = 1
        self.npcache = self.npatch
        _sort_patch_cache(self.pcache, self.npcache, self.nbody)
        # drop from the old touching pairs those that still touch (both lists sorted)
        k = 0
        for i in range(self.nseparated):
            if not self._pair_touched(self.separated[2 * i], self.separated[2 * i + 1]):
                self.separated[2 * k] = self.separated[2 * i]
                self.separated[2 * k + 1] = self.separated[2 * i + 1]
                k += 1
        self.nseparated = k
        for i in range(self.nrow):
            row = &self.rows[i]
            for r in range(self.nrobot):
                if self.robots[r].vel_offset == row.vel0:
                    k = row.vel - row.vel0
                    if row.lo == 0.0:
                        self.robots[r].row_lam[3 * k + (0 if row.sign > 0 else 1)] = row.lam
                    else:
                        self.robots[r].row_lam[3 * k + 2] = row.lam
                    break

    cdef bint _pair_touched(self, int body_a, int body_b) noexcept nogil:
        # some patch of the pair recorded by the last step was within the boundary layers
        cdef int k = self._cached_patch(body_a, body_b)
        while k >= 0 and self._cached_pair_is(k, body_a, body_b):
            if self.pcache[k].touched:
                return True
            k += 1
        return False

    cdef int _feedback_entry(self, int a, int b, bint create) noexcept nogil:
        # index of pair (a < b) in the feedback table; inserted (zeroed) when create, else -1
        cdef int lo = 0, hi = self.nfeedback, mid
        cdef long key = (<long> a) * self.nbody + b, k
        while lo < hi:
            mid = (lo + hi) // 2
            k = (<long> self.fb[mid].body_a) * self.nbody + self.fb[mid].body_b
            if k == key:
                return mid
            if k < key:
                lo = mid + 1
            else:
                hi = mid
        if not create:
            return -1
        if self.nfeedback == self.feedback_cap:
            self.feedback_cap *= 2
            self.fb = <FeedbackC*> realloc(self.fb, self.feedback_cap * sizeof(FeedbackC))
        memmove(&self.fb[lo + 1], &self.fb[lo], (self.nfeedback - lo) * sizeof(FeedbackC))
        memset(&self.fb[lo], 0, sizeof(FeedbackC))
        self.fb[lo].body_a = a
        self.fb[lo].body_b = b
        self.nfeedback += 1
        return lo

    cdef void _feedback(self, double dt) noexcept nogil:
        # (patches, impulses) => per-pair contact feedback of this step, accumulated
        cdef int i, j, k, e
        cdef PatchC* p
        cdef ContactC* c
        cdef FeedbackC* f
        cdef double sign, touching, lin[3]
        cdef double ang[3]
        for e in range(self.nfeedback):
            f = &self.fb[e]
            f.touching = 0
            for k in range(3):
                f.force[k] = 0.0
                f.torque[k] = 0.0
        for i in range(self.npatch):
            p = &self.patches[i]
            e = self._feedback_entry(min(p.body_a, p.body_b), max(p.body_a, p.body_b),
                                     self.feedback_all)
            if e < 0:
                continue
            f = &self.fb[e]
            sign = 1.0 if p.body_a < p.body_b else -1.0
            # impulse on a: normal impulses, the patch friction at its centroid, torsion
            for k in range(3):
                lin[k] = p.lam[0] * p.t1[k] + p.lam[1] * p.t2[k]
            cross3(p.point, lin, ang)
            for k in range(3):
                ang[k] += p.lam[2] * p.normal[k]
            touching = 0
            for j in range(p.first, p.first + p.count):
                c = &self.contacts[j]
                for k in range(3):
                    lin[k] += c.lam * c.normal[k]
                ang[0] += c.lam * (c.point[1] * c.normal[2] - c.point[2] * c.normal[1])
                ang[1] += c.lam * (c.point[2] * c.normal[0] - c.point[0] * c.normal[2])
                ang[2] += c.lam * (c.point[0] * c.normal[1] - c.point[1] * c.normal[0])
                if c.depth >= 0.0:
                    touching = 1
                if c.distance < 0.0:
                    f.penetrated = 1
            if touching:
                f.touching = 1
            for k in range(3):
                f.force[k] += sign * lin[k] / dt
                f.torque[k] += sign * ang[k] / dt
                f.impulse[k] += sign * lin[k]
                f.moment[k] += sign * ang[k]
        for e in range(self.nfeedback):
            if self.fb[e].touching:
                self.fb[e].steps_touching += 1

    # -- feedback --------------------------------------------------------------------------
    def enable_feedback(self, int body_a, int body_b, bint enabled=True):
        """Record contact feedback between two collision bodies (see `feedback`)."""
        self._check_body(body_a)
        self._check_body(body_b)
        cdef int a = min(body_a, body_b), b = max(body_a, body_b), e
        if enabled:
            self._feedback_entry(a, b, True)
        elif not self.feedback_all:
            e = self._feedback_entry(a, b, False)
            if e >= 0:
                memmove(&self.fb[e], &self.fb[e + 1],
                        (self.nfeedback - e - 1) * sizeof(FeedbackC))
                self.nfeedback -= 1

    def enable_feedback_all(self, bint enabled=True):
        """Record contact feedback for every body pair that comes within the boundary layers."""
        self.feedback_all = enabled

    def begin_feedback_window(self):
        """Start a new feedback window: the `had_*` flags and sums cover the steps from here."""
        cdef int e
        self.window_steps = 0
        self.window_time = 0.0
        for e in range(self.nfeedback):
            self.fb[e].steps_touching = 0
            self.fb[e].penetrated = 0
            for k in range(3):
                self.fb[e].impulse[k] = 0.0
                self.fb[e].moment[k] = 0.0

    def feedback_table(self):
        """Every recorded pair as arrays: body_a < body_b, touching, had_contact,
        had_separation, had_penetration (as in `feedback`), force and torque on body_a (n, 3)."""
        n = self.nfeedback
        out = {"body_a": np.empty(n, np.int32), "body_b": np.empty(n, np.int32),
               "touching": np.empty(n, bool), "had_contact": np.empty(n, bool),
               "had_separation": np.empty(n, bool), "had_penetration": np.empty(n, bool),
               "force": np.empty((n, 3)), "torque": np.empty((n, 3))}
        cdef int e, k
        for e in range(n):
            out["body_a"][e] = self.fb[e].body_a
            out["body_b"][e] = self.fb[e].body_b
            out["touching"][e] = self.fb[e].touching
            out["had_contact"][e] = self.fb[e].steps_touching > 0
            out["had_separation"][e] = self.fb[e].steps_touching < self.window_steps
            out["had_penetration"][e] = self.fb[e].penetrated
            for k in range(3):
                out["force"][e, k] = self.fb[e].force[k]
                out["torque"][e, k] = self.fb[e].torque[k]
        return out

    def feedback(self, int body_a, int body_b):
        """Contact feedback of a body pair, on body_a from body_b, or None when it is not
        recorded: touching (at the last step), had_contact / had_separation / had_penetration
        (during the window: some step touching, some step not touching, the real geometries
        overlapping at some step), force and torque (about the world origin) of the last step
        [N, N m], impulse and angular_impulse summed over the window [N s, N m s], and the
        window's steps and duration [s]."""
        self._check_body(body_a)
        self._check_body(body_b)
        cdef int e = self._feedback_entry(min(body_a, body_b), max(body_a, body_b), False)
        if e < 0:
            return None
        cdef FeedbackC* f = &self.fb[e]
        sign = 1.0 if body_a <= body_b else -1.0
        return {
            "touching": bool(f.touching),
            "had_contact": f.steps_touching > 0,
            "had_separation": f.steps_touching < self.window_steps,
            "had_penetration": bool(f.penetrated),
            "force": sign * np.array([f.force[0], f.force[1], f.force[2]]),
            "torque": sign * np.array([f.torque[0], f.torque[1], f.torque[2]]),
            "impulse": sign * np.array([f.impulse[0], f.impulse[1], f.impulse[2]]),
            "angular_impulse": sign * np.array([f.moment[0], f.moment[1], f.moment[2]]),
            "window_steps": self.window_steps, "window_time": self.window_time,
        }

    def contact_arrays(self):
        """The contacts of the last step as arrays: body_a, body_b (collision bodies; the normal
        points from b to a), point (n, 3), normal (n, 3), distance, depth [m], impulse (n, 3)
        on a [N s] (normal impulse plus the contact's share of its patch's friction, in
        proportion to its normal impulse), and the patch's torsional impulse share [N m s]."""
        n = self.ncontact
        out = {"body_a": np.empty(n, np.int32), "body_b": np.empty(n, np.int32),
               "point": np.empty((n, 3)), "normal": np.empty((n, 3)), "distance": np.empty(n),
               "depth": np.empty(n), "impulse": np.empty((n, 3)), "torsion": np.empty(n),
               "patch": np.empty(n, np.int32)}
        cdef int i, k, j
        cdef ContactC* c
        cdef PatchC* p
        cdef double total, share
        for i in range(n):
            c = &self.contacts[i]
            p = &self.patches[c.patch]
            total = 0.0
            for j in range(p.first, p.first + p.count):
                total += self.contacts[j].lam
            share = c.lam / total if total > 0.0 else 1.0 / p.count
            out["body_a"][i] = c.body_a
            out["body_b"][i] = c.body_b
            out["patch"][i] = c.patch
            out["distance"][i] = c.distance
            out["depth"][i] = c.depth
            out["torsion"][i] = share * p.lam[2]
            for k in range(3):
                out["point"][i, k] = c.point[k]
                out["normal"][i, k] = c.normal[k]
                out["impulse"][i, k] = c.lam * c.normal[k] + share * (p.lam[0] * p.t1[k] + p.lam[1] * p.t2[k])
        return out

    def pair_arrays(self):
        """The body pairs of the last step, one row per pair (its patches together): body_a,
        body_b, count (contacts), impulse (3) on a [N s], angular_impulse (3) on a about the
        world origin [N m s] (contact moments plus the torsional friction), touched (a contact
        within the boundary layers) and penetrated (the real geometries overlapped)."""
        cdef int i, j, k, row = -1
        cdef PatchC* p
        cdef ContactC* c
        n = sum(1 for i in range(self.npatch) if i == 0
                or self.patches[i].body_a != self.patches[i - 1].body_a
                or self.patches[i].body_b != self.patches[i - 1].body_b)
        out = {"body_a": np.empty(n, np.int32), "body_b": np.empty(n, np.int32),
               "count": np.zeros(n, np.int32), "impulse": np.zeros((n, 3)),
               "angular_impulse": np.zeros((n, 3)), "touched": np.zeros(n, bool),
               "penetrated": np.zeros(n, bool)}
        contacts = self.contact_arrays()
        for i in range(self.npatch):
            p = &self.patches[i]
            if row < 0 or p.body_a != out["body_a"][row] or p.body_b != out["body_b"][row]:
                row += 1        # (a pair's patches are consecutive)
            out["body_a"][row] = p.body_a
            out["body_b"][row] = p.body_b
            out["count"][row] += p.count
            for j in range(p.first, p.first + p.count):
                c = &self.contacts[j]
                out["impulse"][row] += contacts["impulse"][j]
                out["angular_impulse"][row] += np.cross(contacts["point"][j], contacts["impulse"][j])
                if c.depth >= 0.0:
                    out["touched"][row] = True
                if c.distance < 0.0:
                    out["penetrated"][row] = True
            for k in range(3):
                out["angular_impulse"][row, k] += p.lam[2] * p.normal[k]
        return out

    def separated_pairs(self):
        """Body pairs (body_a, body_b) that touched at the step before the last and no longer do."""
        return [(self.separated[2 * i], self.separated[2 * i + 1]) for i in range(self.nseparated)]

    def reset_counters(self):
        self.count_shape_pairs = self.count_contacts = self.count_row_updates = 0

    # -- state -----------------------------------------------------------------------------
    def _state_arrays(self):
        # per robot: state, solver warm starts, and the actuator commands and their memory
        return [self.robot_q, self.robot_v, self.robot_row_lam, self.robot_mode,
                self.robot_tau_ff, self.robot_kp, self.robot_ki, self.robot_kd,
                self.robot_q_des, self.robot_v_des, self.robot_iterm, self.robot_advance,
                self.robot_tau]

    def get_state(self):
        """Everything a restored run needs to continue bit for bit, as bytes: time, robot
        states and actuator commands, free-body states, warm-start caches."""
        cdef int i, k
        parts = [np.array([self.time]), *(a for group in self._state_arrays() for a in group),
                 self.free_state.reshape(-1)]
        cache = np.empty((self.ncache, 6))
        for i in range(self.ncache):
            cache[i, 0] = self.cache[i].body_a
            cache[i, 1] = self.cache[i].body_b
            for k in range(3):
                cache[i, 2 + k] = self.cache[i].point_A[k]
            cache[i, 5] = self.cache[i].lam
        pcache = np.empty((self.npcache, 9))
        for i in range(self.npcache):
            pcache[i, 0] = self.pcache[i].body_a
            pcache[i, 1] = self.pcache[i].body_b
            for k in range(3):
                pcache[i, 2 + k] = self.pcache[i].friction[k]
            pcache[i, 5] = self.pcache[i].torsion
            pcache[i, 6] = self.pcache[i].first
            pcache[i, 7] = self.pcache[i].count
            pcache[i, 8] = self.pcache[i].touched
        head = np.array([self.ncache, self.npcache], dtype=np.float64)
        return b"".join(p.astype(np.float64).tobytes()
                        for p in (*parts, head, cache.reshape(-1), pcache.reshape(-1)))

    def set_state(self, bytes state):
        cdef int i, k
        arrays = self._state_arrays()
        fixed = 1 + sum(a.size for group in arrays for a in group) + self.free_state.size
        values = np.frombuffer(state, dtype=np.float64)
        if values.size < fixed + 2:
            raise ValueError("state does not belong to this scene (too short)")
        if np.isnan(values).any():
            raise ValueError("state contains NaN")
        if not (0 <= values[fixed] <= values.size and 0 <= values[fixed + 1] <= values.size):
            raise ValueError("state does not belong to this scene (cache sizes)")
        ncache, npcache = int(values[fixed]), int(values[fixed + 1])
        if values.size != fixed + 2 + 6 * ncache + 9 * npcache:
            raise ValueError("state does not belong to this scene (size mismatch)")
        _check_state_indices(values[fixed + 2:fixed + 2 + 6 * ncache].reshape(ncache, 6),
                             values[fixed + 2 + 6 * ncache:].reshape(npcache, 9),
                             self.nbody)
        offset = 1 + sum(a.size for a in arrays[0] + arrays[1] + arrays[2])
        modes = values[offset:offset + sum(a.size for a in arrays[3])]
        if not np.isin(modes, (ACTUATOR_OFF, ACTUATOR_TORQUE, ACTUATOR_PID)).all():
            raise ValueError("state holds an unknown actuator mode")
        self.time = values[0]
        offset = 1
        for group in arrays:
            for a in group:
                a[:] = values[offset:offset + a.size]
                offset += a.size
        self.free_state[:] = values[offset:offset + self.free_state.size].reshape(self.free_state.shape)
        cache = values[fixed + 2:fixed + 2 + 6 * ncache].reshape(ncache, 6)
        pcache = values[fixed + 2 + 6 * ncache:].reshape(npcache, 9)
        if ncache > self.cache_cap:
            self.cache_cap = ncache
            self.cache = <CacheEntry*> realloc(self.cache, self.cache_cap * sizeof(CacheEntry))
        if npcache > self.pcache_cap:
            self.pcache_cap = npcache
            self.pcache = <PatchCache*> realloc(self.pcache, self.pcache_cap * sizeof(PatchCache))
        for i in range(ncache):
            self.cache[i].body_a = int(cache[i, 0])
            self.cache[i].body_b = int(cache[i, 1])
            for k in range(3):
                self.cache[i].point_A[k] = cache[i, 2 + k]
            self.cache[i].lam = cache[i, 5]
        for i in range(npcache):
            self.pcache[i].body_a = int(pcache[i, 0])
            self.pcache[i].body_b = int(pcache[i, 1])
            for k in range(3):
                self.pcache[i].friction[k] = pcache[i, 2 + k]
            self.pcache[i].torsion = pcache[i, 5]
            self.pcache[i].first = int(pcache[i, 6])
            self.pcache[i].count = int(pcache[i, 7])
            self.pcache[i].touched = int(pcache[i, 8])
        self.ncache = ncache
        self.npcache = npcache
        self.status = STATUS_NORMAL
        # the contacts of the last step belong to the state left behind: none until a step
        self.ncontact = self.npatch = self.nrow = 0
        self.refresh()


def _check_state_indices(cache, pcache, int nbody):
    # a restored state's warm-start caches index bodies and cache rows: out of range they would
    # read outside the arrays in the step
    for table in (cache, pcache):
        for column in (0, 1):
            ids = table[:, column]
            if ((ids < 0) | (ids >= nbody) | (ids != np.floor(ids))).any():
                raise ValueError("state does not belong to this scene (body index)")
    first, count, touched = pcache[:, 6], pcache[:, 7], pcache[:, 8]
    if ((first < 0) | (count < 0) | (first + count > cache.shape[0])
            | (first != np.floor(first)) | (count != np.floor(count))
            | ((touched != 0) & (touched != 1))).any():
        raise ValueError("state does not belong to this scene (cache rows)")


_INT_FIELDS = {"tris", "tri_adjacent", "face_start", "face_verts", "child", "first", "count",
               "item"}


cdef object _joint_vector(x, str what, int njoint, int nfull, double bound, str unit):
    # x as a contiguous float64 vector of njoint or nfull finite values within +-bound (None
    # stays None)
    if x is None:
        return None
    a = np.ascontiguousarray(x, dtype=np.float64)
    if a.ndim != 1 or (a.shape[0] != njoint and a.shape[0] != nfull):
        raise ValueError(f"{what}: expected {njoint} joint values"
                         + (f" (or {nfull})" if nfull != njoint else "") + f", got shape {np.shape(x)}")
    cdef const double[::1] view = a
    cdef Py_ssize_t i
    for i in range(view.shape[0]):
        if not isfinite(view[i]):
            raise ValueError(f"{what}: value {i} is {view[i]} (must be finite)")
        if fabs(view[i]) > bound:
            raise ValueError(f"{what}: value {i} = {view[i]!r} is beyond the bound |value| <= "
                             f"{bound:g} {unit}")
    return a


cdef inline void _advance_target(RobotC* rob, int k, double dt) noexcept nogil:
    # DOF k's PID target moves on with v_des for min(dt, advance) (a spherical joint's three
    # DOFs together, from its first: Q_des <- Q_des exp(v_des h)); v_des drops to 0 at the end
    cdef double h = dt if dt < rob.advance[k] else rob.advance[k]
    cdef double w[3]
    cdef double a[4]
    cdef double b[4]
    cdef double c[4]
    cdef int j, n = 1
    if rob.dof_ball[k] < 0:
        rob.q_des[k] += rob.v_des[k] * h
    elif rob.dof_ball[k] == 0:
        n = 3
        for j in range(3):
            w[j] = rob.v_des[k + j] * h
        quat_exp(&rob.q_des[k], a)
        quat_exp(w, b)
        quat_mul(a, b, c)
        quat_log(c, &rob.q_des[k])
    else:
        return          # moved with the joint's first DOF
    for j in range(k, k + n):
        rob.advance[j] -= h
        if rob.advance[j] <= 0.0:
            rob.advance[j] = 0.0
            rob.v_des[j] = 0.0


cdef inline void _ball_error(const double* q, const double* r_des, double* e) noexcept nogil:
    # e = log(Q^-1 Q_des): the rotation, in child axes, from the joint's quaternion Q to its
    # target Q_des = exp(r_des), the shorter way round
    cdef double target[4]
    cdef double inverse[4]
    cdef double rel[4]
    quat_exp(r_des, target)
    inverse[0] = -q[0]
    inverse[1] = -q[1]
    inverse[2] = -q[2]
    inverse[3] = q[3]
    quat_mul(inverse, target, rel)
    quat_log(rel, e)


cdef void _ball_target(const double* quat, double* r, int index) except *:
    # r = the rotation vector of the quaternion quat (normalised; a zero one is refused)
    cdef double n = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2]
                         + quat[3] * quat[3])
    if not n > 1e-9:
        raise ValueError(f"position targets: the quaternion at entry {index} is zero; a "
                         "spherical joint's target must be a rotation")
    quat_log(quat, r)


cdef inline double* _ptr(cnp.ndarray a):
    return <double*> cnp.PyArray_DATA(a)


cdef inline bint _dynamic(Scene s, const BodyC* b) noexcept nogil:
    if b.kind == BODY_ROBOT:
        return True
    if b.kind == BODY_FREE:
        return not s.free_bodies[b.index].kinematic
    return False


cdef inline bint _flip_shapes(const ShapeC* a, const ShapeC* b) noexcept nogil:
    # collide() wants the plane / mesh / heightfield as B, and the sphere first among spheres
    if a.type == SHAPE_PLANE or a.type == SHAPE_HEIGHTFIELD:
        return True
    if a.type == SHAPE_MESH and b.type != SHAPE_PLANE and b.type != SHAPE_HEIGHTFIELD and b.type != SHAPE_MESH:
        return True
    if b.type == SHAPE_SPHERE and a.type != SHAPE_SPHERE and a.type != SHAPE_PLANE:
        return True
    return False


cdef inline void _flip_raw(RawContact* c) noexcept nogil:
    cdef double t
    cdef int k
    for k in range(3):
        t = c.pa[k]
        c.pa[k] = c.pb[k]
        c.pb[k] = t
        c.normal[k] = -c.normal[k]


cdef void _sort_patch_cache(PatchCache* c, int n, int nbody) noexcept nogil:
    # insertion sort by (body_a, body_b): patches come nearly sorted (broadphase order)
    cdef int i, j
    cdef PatchCache t
    cdef long key
    for i in range(1, n):
        t = c[i]
        key = (<long> t.body_a) * nbody + t.body_b
        j = i - 1
        while j >= 0 and (<long> c[j].body_a) * nbody + c[j].body_b > key:
            c[j + 1] = c[j]
            j -= 1
        c[j + 1] = t


cdef inline void _eig2(double a, double b, double d, double* eig, double* rot) noexcept nogil:
    # eigenvalues and first eigenvector (cos, sin) of the symmetric [[a, b], [b, d]]
    cdef double half = 0.5 * (a - d)
    cdef double rad = sqrt(half * half + b * b)
    cdef double angle = 0.5 * atan2(2.0 * b, a - d)
    eig[0] = 0.5 * (a + d) + rad
    eig[1] = 0.5 * (a + d) - rad
    rot[0] = cos(angle)
    rot[1] = sin(angle)


cdef inline void _skew_mul(const double* w, const double* A, double* out) noexcept nogil:
    # out = [w]x A
    cdef int c
    for c in range(3):
        out[c] = w[1] * A[6 + c] - w[2] * A[3 + c]
        out[3 + c] = w[2] * A[c] - w[0] * A[6 + c]
        out[6 + c] = w[0] * A[3 + c] - w[1] * A[c]


cdef inline void _mul_transpose(const double* A, const double* B, double* out) noexcept nogil:
    # out = A B^T
    cdef int r, c
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = A[3 * r] * B[3 * c] + A[3 * r + 1] * B[3 * c + 1] + A[3 * r + 2] * B[3 * c + 2]


cdef inline void _add_jw(double* D, int nrow, const double* jw, int off_j, int nv_j, int off_w,
                         int nv_w) noexcept nogil:
    # D += J W (nrow x nrow) for the side whose J is at off_j and the side whose W is at off_w
    # (both on the same DOFs)
    cdef int k, l, j
    cdef double s
    if off_j < 0 or off_w < 0:
        return
    for k in range(nrow):
        for l in range(nrow):
            s = 0.0
            for j in range(nv_j):
                s += jw[off_j + k * nv_j + j] * jw[off_w + nrow * nv_w + l * nv_w + j]
            D[nrow * k + l] += s


cdef inline void _inverse3(const double* A, double* out) noexcept nogil:
    # inverse of a 3 x 3 matrix by cofactors (the Delassus blocks are positive definite)
    cdef double det
    out[0] = A[4] * A[8] - A[5] * A[7]
    out[1] = A[2] * A[7] - A[1] * A[8]
    out[2] = A[1] * A[5] - A[2] * A[4]
    out[3] = A[5] * A[6] - A[3] * A[8]
    out[4] = A[0] * A[8] - A[2] * A[6]
    out[5] = A[2] * A[3] - A[0] * A[5]
    out[6] = A[3] * A[7] - A[4] * A[6]
    out[7] = A[1] * A[6] - A[0] * A[7]
    out[8] = A[0] * A[4] - A[1] * A[3]
    det = A[0] * out[0] + A[1] * out[3] + A[2] * out[6]
    for k in range(9):
        out[k] /= det
