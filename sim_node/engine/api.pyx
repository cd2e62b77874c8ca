"""The engine's Python face: `Scene`, a SceneModel and a SceneData stepped by the pipeline.

The only engine object the layers above use (built by sim_node.model.scene). It validates at the
boundary and delegates; the physics is in pipeline/, the state bytes in state.pyx, the contact
readouts and other queries in queries/ (contacts, aabb, distance, raycast). The state lives
in numpy arrays exposed as attributes: robot_q[r],
robot_v[r], free_state (n, 13) (com position, quaternion xyzw, com velocity, angular velocity,
all world), and the per-step inputs robot_tau_ff[r], robot_kp[r], robot_kd[r], robot_q_des[r],
robot_v_des[r], robot_tau_ext[r], free_wrench (n, 6).
"""
import numpy as np

cimport numpy as cnp
from libc.math cimport fabs, isfinite, sqrt, INFINITY
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memmove

from sim_node.engine import state
from sim_node.engine.constraint cimport (UCONS_FIXED, UCONS_GEAR, UCONS_MAX_ROWS,
                                         UCONS_POINT2POINT, UCONS_PRISMATIC, UserConstraintC)
from sim_node.engine.queries import aabb, contacts, distance, raycast
from sim_node.engine.pipeline.actuation cimport advance_target
from sim_node.engine.pipeline.feedback cimport feedback_entry
from sim_node.engine.pipeline.kinematics cimport kinematics as kinematics_stage
from sim_node.engine.pipeline.step cimport step_adaptive
from sim_node.engine.model cimport JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL
from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel
from sim_node.engine.spatial cimport quat_exp, quat_log
from sim_node.engine.types cimport (ACTUATOR_OFF, ACTUATOR_PID, ACTUATOR_TORQUE, BODY_FREE,
                                    BODY_KINEMATIC, BODY_ROBOT, BODY_STATIC, BodyC,
                                    BodyStateC, FeedbackC, NSTAGE, RobotC, RobotStateC,
                                    STATUS_ADAPTIVE_TIME_STEPPING, STATUS_CONTACT_UNRELIABLE,
                                    STATUS_ERROR, STATUS_NORMAL, STATUS_UNSTABLE)

cnp.import_array()

# The rest of the face, re-exported so that the layers above import only this module: the
# robot Model/Data pair and the dynamics algorithms on it (Pinocchio-style f(model, data, ...)),
# and the builders of the collision structures a Scene is made from.
from sim_node.engine import aba, coriolis, crba, ik, kinematics, ltdl, motors, rnea  # noqa: E402
from sim_node.engine.bvh import build_bvh  # noqa: E402
from sim_node.engine.heightfield import make_heightfield_arrays  # noqa: E402
from sim_node.engine.model import Data, Model  # noqa: E402
from sim_node.engine.stepper import RobotStep  # noqa: E402
from sim_node.engine.queries.render import Rasterizer  # noqa: E402

import enum  # noqa: E402


class ActuatorMode(enum.IntEnum):
    """A DOF's actuator (Scene.robot_mode; types.pxd ActuatorMode): OFF (tau = 0), TORQUE
    (tau = tau_ff), PID (tau = tau_ff + kp e + kd (v_des - v) + ki iterm), clipped to the
    effort limit."""
    OFF = ACTUATOR_OFF
    TORQUE = ACTUATOR_TORQUE
    PID = ACTUATOR_PID


class JointType(enum.IntEnum):
    """A robot Model's joint types (model.pxd JointType)."""
    REVOLUTE = JOINT_REVOLUTE
    PRISMATIC = JOINT_PRISMATIC
    FREE = JOINT_FREE
    SPHERICAL = JOINT_SPHERICAL


class BodyKind(enum.IntEnum):
    """A Scene body's kind (types.pxd BodyKind): STATIC (terrain), KINEMATIC (a free body
    following its set velocity), FREE (rigid body with dynamics), ROBOT (a robot's moving
    body)."""
    STATIC = BODY_STATIC
    KINEMATIC = BODY_KINEMATIC
    FREE = BODY_FREE
    ROBOT = BODY_ROBOT


class ConstraintKind(enum.IntEnum):
    """A user constraint's kind (constraint.pxd UserConstraintKind) and its rows: FIXED 6,
    POINT2POINT 3, GEAR 1, PRISMATIC 5."""
    FIXED = UCONS_FIXED
    POINT2POINT = UCONS_POINT2POINT
    GEAR = UCONS_GEAR
    PRISMATIC = UCONS_PRISMATIC


CONSTRAINT_ROWS = {UCONS_FIXED: 6, UCONS_POINT2POINT: 3, UCONS_GEAR: 1, UCONS_PRISMATIC: 5}


class Status(enum.IntEnum):
    """Scene.status (types.pxd Status; Klamp't's codes, the numbers of msg/SimStatus.msg)."""
    NORMAL = STATUS_NORMAL
    ADAPTIVE_TIME_STEPPING = STATUS_ADAPTIVE_TIME_STEPPING
    CONTACT_UNRELIABLE = STATUS_CONTACT_UNRELIABLE
    UNSTABLE = STATUS_UNSTABLE
    ERROR = STATUS_ERROR

# Bounds of joint commands, checked by set_commands / set_joint_commands (sim_node.sim.bounds
# documents them as MAX_JOINT_POSITION, MAX_ANGULAR_SPEED, MAX_TORQUE)
MAX_POSITION_TARGET = 1e4               # [rad or m]
MAX_VELOCITY_TARGET = 1e4               # [rad/s or m/s]
MAX_FEEDFORWARD = 1e9                   # [N m or N]
# Bounds of ray casts (Scene.ray_cast): rays per call (outputs take 64 bytes a ray: 2,000,000
# is a 1080p image's worth, 128 MB) and the coordinates of their ends
MAX_RAYS = 2_000_000
MAX_RAY_COORDINATE = 1e6                # [m]

# the pipeline's stages in step order (types.pxd Stage)
STAGE_NAMES = ("kinematics", "broadphase", "narrowphase", "clustering", "actuation", "dynamics",
               "constraints", "solve", "integration", "record", "feedback")
assert len(STAGE_NAMES) == NSTAGE


cdef class Scene:
    """Robots, free bodies and terrains with their collision shapes, stepped in time: the
    constant `model` (SceneModel) and the mutable `data` (SceneData), behind one face."""
    cdef readonly SceneModel model
    cdef readonly SceneData data

    def __init__(self, *, robots, free_bodies, bodies, shapes, meshes, gravity=(0.0, 0.0, -9.81),
                 max_contacts=20, max_iterations=30, tolerance=1e-5, regularization=0.02):
        """robots: list of dicts (model, q, v, q_lower, q_upper, effort, dry_friction, damping,
        dof_q, floating_base, body_adjacent (optional: the model's parents), first_body,
        self_collision); free_bodies: list of dicts (mass, com_B, I_B,
        state (13), kinematic, body); bodies: list of dicts (kind, index, robot_body, id,
        first_shape, nshape, padding, restitution, friction, stiffness, damping, group, mask,
        extent, R, p (the pose of a static body)); shapes: list of dicts (type, body, size,
        R_BS, p_BS, mesh); meshes: list of dicts of arrays (see geometry.pxd MeshC)."""
        self.model = SceneModel(robots=robots, free_bodies=free_bodies, bodies=bodies,
                                shapes=shapes, meshes=meshes, gravity=gravity,
                                max_contacts=max_contacts, max_iterations=max_iterations,
                                tolerance=tolerance, regularization=regularization)
        self.data = SceneData(self.model, robots=robots, free_bodies=free_bodies)
        self.refresh()

    # -- sizes, settings and state, read from the model and the data ----------------------
    @property
    def nrobot(self): return self.model.nrobot
    @property
    def nfree(self): return self.model.nfree
    @property
    def nbody(self): return self.model.nbody
    @property
    def nshape(self): return self.model.nshape
    @property
    def nmesh(self): return self.model.nmesh
    @property
    def nvel(self): return self.model.nvel
    @property
    def max_contacts(self): return self.model.max_contacts
    @property
    def max_iterations(self): return self.model.max_iterations
    @max_iterations.setter
    def max_iterations(self, int value): self.model.max_iterations = value
    @property
    def tolerance(self): return self.model.tolerance
    @tolerance.setter
    def tolerance(self, double value): self.model.tolerance = value
    @property
    def regularization(self): return self.model.regularization
    @regularization.setter
    def regularization(self, double value): self.model.regularization = value
    @property
    def robot_models(self): return self.model.robot_models
    @property
    def robot_joint_offset(self): return self.model.robot_joint_offset
    @property
    def robot_joint_q_offset(self): return self.model.robot_joint_q_offset
    @property
    def time(self): return self.data.time
    @property
    def status(self): return self.data.status
    @property
    def last_iterations(self): return self.data.last_iterations
    @property
    def last_dt(self): return self.data.last_dt
    @property
    def robot_data(self): return self.data.robot_data
    @property
    def robot_q(self): return self.data.robot_q
    @property
    def robot_v(self): return self.data.robot_v
    @property
    def robot_tau_ff(self): return self.data.robot_tau_ff
    @property
    def robot_kp(self): return self.data.robot_kp
    @property
    def robot_ki(self): return self.data.robot_ki
    @property
    def robot_kd(self): return self.data.robot_kd
    @property
    def robot_q_des(self): return self.data.robot_q_des
    @property
    def robot_v_des(self): return self.data.robot_v_des
    @property
    def robot_mode(self): return self.data.robot_mode
    @property
    def robot_iterm(self): return self.data.robot_iterm
    @property
    def robot_advance(self): return self.data.robot_advance
    @property
    def robot_tau(self): return self.data.robot_tau
    @property
    def robot_tau_ext(self): return self.data.robot_tau_ext
    @property
    def robot_row_lam(self): return self.data.robot_row_lam
    @property
    def free_state(self): return self.data.free_state
    @property
    def free_wrench(self): return self.data.free_wrench
    @property
    def ncontact(self): return self.data.ncontact
    @property
    def npatch(self): return self.data.npatch
    @property
    def nrow(self): return self.data.nrow
    @property
    def ncollidable(self): return self.data.ncollidable
    @property
    def feedback_all(self): return self.data.feedback_all
    @property
    def window_steps(self): return self.data.window_steps
    @property
    def window_time(self): return self.data.window_time
    @property
    def count_shape_pairs(self): return self.data.count_shape_pairs
    @property
    def count_contacts(self): return self.data.count_contacts
    @property
    def count_row_updates(self): return self.data.count_row_updates

    # -- configuration -----------------------------------------------------------------
    def set_gravity(self, gravity):
        g = np.asarray(gravity, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity must be 3 finite numbers, got {gravity!r}")
        self.model.g[0], self.model.g[1], self.model.g[2] = g

    def get_gravity(self):
        return np.array([self.model.g[0], self.model.g[1], self.model.g[2]])

    def set_body_surface(self, int body, double restitution, double friction, double stiffness,
                         double damping):
        self._check_body(body)
        cdef BodyC* b = &self.model.bodies[body]
        b.restitution = restitution
        b.friction = friction
        b.stiffness = stiffness
        b.damping = damping

    def get_body_surface(self, int body):
        self._check_body(body)
        cdef BodyC* b = &self.model.bodies[body]
        return b.restitution, b.friction, b.stiffness, b.damping

    def set_body_padding(self, int body, double padding):
        self._check_body(body)
        if not padding >= 0.0:
            raise ValueError(f"padding must be non-negative, got {padding}")
        self.model.bodies[body].padding = padding

    def get_body_padding(self, int body):
        self._check_body(body)
        return self.model.bodies[body].padding

    def set_body_enabled(self, int body, bint enabled):
        self._check_body(body)
        self.model.bodies[body].enabled = enabled
        self.data.filters_changed = True

    def body_enabled(self, int body):
        self._check_body(body)
        return bool(self.model.bodies[body].enabled)

    def set_time(self, double t):
        """Set the simulation time [s] (fake stepping; a state restore sets it too)."""
        if not isfinite(t):
            raise ValueError(f"time must be finite, got {t}")
        self.data.time = t

    def set_collision_filter(self, int body, unsigned int group, unsigned int mask):
        self._check_body(body)
        self.model.bodies[body].group = group
        self.model.bodies[body].mask = mask
        self.data.filters_changed = True

    def set_pair_enabled(self, int id_a, int id_b, enabled):
        """The pair override of the bodies with world IDs id_a and id_b (PyBullet's
        setCollisionFilterPair): True: they collide whatever their group / mask, False: they
        never collide, None: back to their group / mask. The robot rules (self-collision off,
        adjacent bodies) hold either way (broadphase.filtered)."""
        cdef SceneModel m = self.model
        key = (min(id_a, id_b), max(id_a, id_b))
        disabled = set(self.disabled_pairs())
        enabled_ = set(self.enabled_pairs())
        disabled.discard(key)
        enabled_.discard(key)
        if enabled is True:
            enabled_.add(key)
        elif enabled is False:
            disabled.add(key)
        elif enabled is not None:
            raise TypeError(f"set_pair_enabled: enabled must be True, False or None, got {enabled!r}")
        free(m.disabled)
        m.disabled = _pair_keys(sorted(disabled))
        m.ndisabled = len(disabled)
        free(m.enabled)
        m.enabled = _pair_keys(sorted(enabled_))
        m.nenabled = len(enabled_)
        self.data.filters_changed = True

    def disabled_pairs(self):
        """(id_a, id_b), id_a <= id_b, of every pair disabled by world ID, sorted."""
        cdef SceneModel m = self.model
        return [(int(m.disabled[i] >> 32), int(m.disabled[i] & 0xFFFFFFFF))
                for i in range(m.ndisabled)]

    def enabled_pairs(self):
        """(id_a, id_b), id_a <= id_b, of every pair enabled by override, sorted."""
        cdef SceneModel m = self.model
        return [(int(m.enabled[i] >> 32), int(m.enabled[i] & 0xFFFFFFFF))
                for i in range(m.nenabled)]

    def get_collision_filter(self, int body):
        """(group, mask) of a collision body."""
        self._check_body(body)
        return int(self.model.bodies[body].group), int(self.model.bodies[body].mask)

    def body_shapes(self, int body):
        """(first, count): the body's shapes are first .. first + count - 1."""
        self._check_body(body)
        return self.model.bodies[body].first_shape, self.model.bodies[body].nshape

    def closest_points(self, shapes_a, shapes_b, double max_distance):
        """Closest points of every pair of shapes (shapes_a[i], shapes_b[j]) within max_distance
        [m], every body placed at the current state first (queries/distance.pyx)."""
        if not isfinite(max_distance):
            raise ValueError(f"closest_points: max_distance must be finite, got {max_distance}")
        self.refresh()
        return distance.closest_points(self.model, self.data, shapes_a, shapes_b, max_distance)

    def set_free_body_kinematic(self, int i, bint kinematic):
        """Kinematic free bodies follow their set velocity; their velocity entries in vel stay
        (so switching back keeps the layout) but nothing acts on them."""
        if not 0 <= i < self.model.nfree:
            raise IndexError(f"free body {i} out of range")
        self.model.free_bodies[i].kinematic = kinematic
        self.data.filters_changed = True

    def _check_body(self, int body):
        if not 0 <= body < self.model.nbody:
            raise IndexError(f"collision body {body} out of range [0, {self.model.nbody})")

    def body_pose(self, int body):
        """(R, p) of a collision body's frame in the world, as of the last kinematics pass."""
        self._check_body(body)
        cdef BodyStateC* b = &self.data.bodies[body]
        return (np.array([b.R[k] for k in range(9)]).reshape(3, 3),
                np.array([b.p[0], b.p[1], b.p[2]]))

    def body_info(self, int body):
        self._check_body(body)
        cdef BodyC* b = &self.model.bodies[body]
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
        cdef SceneModel m = self.model
        cdef SceneData d = self.data
        with nogil:
            for k in range(steps):
                step_adaptive(m, d, dt, 0)
                if d.status == STATUS_UNSTABLE:
                    break
        return d.status

    def clear_status(self):
        self.data.status = STATUS_NORMAL

    def refresh(self):
        """Recompute placements after the state arrays were changed from Python."""
        cdef SceneModel m = self.model
        cdef SceneData d = self.data
        with nogil:
            kinematics_stage(m, d, 0.0)

    def body_aabbs(self, out=None):
        """(nbody, 2, 3) world bounding boxes of the collision bodies [lower; upper] [m], every
        body placed at the current state first (queries/aabb.pyx)."""
        self.refresh()
        return aabb.body_aabbs(self.model, self.data, out)

    def shape_aabbs(self, out=None):
        """(nshape, 2, 3) world bounding boxes of the collision shapes [lower; upper] [m], every
        body placed at the current state first (queries/aabb.pyx)."""
        self.refresh()
        return aabb.shape_aabbs(self.model, self.data, out)

    def ray_cast(self, origins, ends, mask=None, threads=None, out=None):
        """The nearest hit along each segment origins[i] -> ends[i] (queries/raycast.pyx states
        what counts as a hit). origins, ends: (N, 3) [m], world, finite, |x| <= MAX_RAY_COORDINATE,
        N <= MAX_RAYS. mask: only bodies with (group & mask) != 0 are hit (None: all); disabled
        bodies never are. threads: None = every core this process may use, 1 = serial.
        Returns (fraction (N,) float64 in [0, 1], 1 = no hit; shape (N,) int64 shape index,
        -1 = none; point (N, 3) world hit point, the end when none; normal (N, 3) unit outward
        normal, world, zeros when none). `out`, such a tuple of C-contiguous arrays, is filled
        and returned. Every body is placed at the current state first (refresh)."""
        o = _ray_points(origins, "origins", -1)
        e = _ray_points(ends, "ends", o.shape[0])
        n = o.shape[0]
        cdef unsigned int bits = 0xFFFFFFFF
        if mask is not None:
            if not isinstance(mask, (int, np.integer)) or isinstance(mask, (bool, np.bool_)):
                raise TypeError(f"ray_cast: mask must be an int, got {type(mask).__name__}")
            if not -(1 << 31) <= mask < (1 << 32):
                raise ValueError(f"ray_cast: mask {mask} does not fit in 32 bits")
            bits = <unsigned int> (int(mask) & 0xFFFFFFFF)
        if threads is None:
            from sim_node.engine.batched import default_threads
            nthreads = default_threads()
        elif isinstance(threads, (int, np.integer)) and not isinstance(threads, (bool, np.bool_)) \
                and 1 <= threads <= 1024:
            nthreads = int(threads)
        else:
            raise ValueError(f"ray_cast: threads must be None or an int in [1, 1024], got {threads!r}")
        if out is None:
            out = (np.empty(n), np.empty(n, dtype=np.int64), np.empty((n, 3)), np.empty((n, 3)))
        else:
            out = tuple(out)
            wanted = (((n,), np.float64), ((n,), np.int64), ((n, 3), np.float64),
                      ((n, 3), np.float64))
            if len(out) != 4 or any(
                    not isinstance(a, np.ndarray) or a.shape != shape or a.dtype != dtype
                    or not a.flags.c_contiguous or not a.flags.writeable
                    for a, (shape, dtype) in zip(out, wanted)):
                raise ValueError(f"ray_cast: out must be 4 writeable C-contiguous arrays: "
                                 f"float64 ({n},), int64 ({n},), float64 ({n}, 3), float64 ({n}, 3)")
        self.refresh()
        raycast.ray_cast(self.model, self.data, o, e, out[0], out[1], out[2], out[3], bits,
                         nthreads)
        return out

    def shape_bodies(self):
        """(nshape,) int64: the collision body of each shape."""
        return np.array([self.model.shapes[j].body for j in range(self.model.nshape)],
                        dtype=np.int64)

    # -- actuator commands ---------------------------------------------------------------
    def set_commands(self, int robot, int mode, q_des=None, v_des=None, tau_ff=None,
                     double advance=0.0):
        """Command every actuated joint of a robot at once: the actuator mode (ACTUATOR_OFF /
        TORQUE / PID = 0 / 1 / 2), position targets (None: keep them), velocity targets and
        feed-forward torques (None: zero), and the time the targets move on with v_des (0:
        they hold). q_des holds the joints' coordinates (q after a floating base's 7 entries: a
        spherical joint's quaternion, normalised here) or the whole q; v_des and tau_ff the
        joints' DOFs (v after a floating base's 6) or the whole v. Free joints stay unactuated.
        Everything is validated before anything is applied."""
        self._check_robot(robot)
        if mode not in (ACTUATOR_OFF, ACTUATOR_TORQUE, ACTUATOR_PID):
            raise ValueError(f"unknown actuator mode {mode}")
        if not (isfinite(advance) and advance >= 0.0):
            raise ValueError(f"advance must be a finite time >= 0, got {advance}")
        cdef const RobotC* rob = &self.model.robots[robot]
        cdef RobotStateC* rs = &self.data.robots[robot]
        cdef int offset = self.model.robot_joint_offset[robot], k
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
            rs.mode[k] = mode
            if qd is not None:
                rs.q_des[k] = (qd[rob.dof_q[k] - qshift] if rob.dof_ball[k] < 0
                               else ball[k - rob.dof_ball[k], rob.dof_ball[k]])
            rs.v_des[k] = 0.0 if vd is None else vd[k - vshift]
            rs.tau_ff[k] = 0.0 if tf is None else tf[k - tshift]
            rs.advance[k] = advance

    def set_joint_commands(self, int robot, dofs, int mode, q_des=None, v_des=None,
                           tau_ff=None, double advance=0.0):
        """As set_commands for some scalar joints only: `dofs` are joint DOF indices (0 ..
        nv - robot_joint_offset - 1: v after a floating base), each the DOF of a revolute,
        prismatic or planar coordinate (spherical joints and free joints are commanded with
        set_commands); q_des (None: keep), v_des, tau_ff (None: zero) hold one value per listed
        DOF; advance may be inf (the target moves until the next command). The other DOFs keep
        their commands. Validated whole before anything is applied."""
        self._check_robot(robot)
        if mode not in (ACTUATOR_OFF, ACTUATOR_TORQUE, ACTUATOR_PID):
            raise ValueError(f"unknown actuator mode {mode}")
        if not advance >= 0.0:
            raise ValueError(f"advance must be a time >= 0 (inf allowed), got {advance}")
        cdef const RobotC* rob = &self.model.robots[robot]
        cdef RobotStateC* rs = &self.data.robots[robot]
        cdef int offset = self.model.robot_joint_offset[robot], njoint = rob.model.nv - offset
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
            rs.mode[k] = mode
            if qd is not None:
                rs.q_des[k] = qd[i]
            rs.v_des[k] = 0.0 if vd is None else vd[i]
            rs.tau_ff[k] = 0.0 if tf is None else tf[i]
            rs.advance[k] = advance

    def commanded_config(self, int robot):
        """q (nq, a new array) with every DOF under PID at its target (a spherical joint's
        quaternion exp(q_des), w >= 0) and every other coordinate as it is."""
        self._check_robot(robot)
        cdef const RobotC* rob = &self.model.robots[robot]
        cdef RobotStateC* rs = &self.data.robots[robot]
        cdef cnp.ndarray out = self.data.robot_q[robot].copy()
        cdef double* q = <double*> cnp.PyArray_DATA(out)
        cdef int k
        for k in range(rob.model.nv):
            if rs.mode[k] != ACTUATOR_PID or rob.dof_q[k] < 0:
                continue
            if rob.dof_ball[k] < 0:
                q[rob.dof_q[k]] = rs.q_des[k]
            elif rob.dof_ball[k] == 0:
                quat_exp(&rs.q_des[k], &q[rob.dof_q[k]])
        return out

    def advance_targets(self, int robot, double dt):
        """Move the PID targets of a robot on by dt [s] as a step does (without the physics:
        fakeSimulate)."""
        self._check_robot(robot)
        cdef const RobotC* rob = &self.model.robots[robot]
        cdef RobotStateC* rs = &self.data.robots[robot]
        cdef int k
        for k in range(rob.model.nv):
            if rs.mode[k] == ACTUATOR_PID and rs.advance[k] > 0.0:
                advance_target(rob, rs, k, dt)

    def _check_robot(self, int robot):
        if not 0 <= robot < self.model.nrobot:
            raise IndexError(f"robot {robot} out of range [0, {self.model.nrobot})")

    def _check_scalar_dof(self, int robot, int dof):
        self._check_robot(robot)
        cdef const RobotC* rob = &self.model.robots[robot]
        if not 0 <= dof < rob.model.nv:
            raise IndexError(f"DOF {dof} out of range [0, {rob.model.nv}) of robot {robot}")
        if rob.dof_q[dof] < 0 or rob.dof_ball[dof] >= 0:
            raise ValueError(f"DOF {dof} of robot {robot} is not a scalar joint's (revolute, "
                             "prismatic, continuous, planar coordinate)")

    # -- joint parameters (the robot's model arrays; the next step uses them) --------------
    def set_joint_damping(self, int robot, int dof, double damping):
        """Set the viscous damping [N m s/rad or N s/m] of DOF `dof` (index into the robot's
        v; not a floating base's) to a finite value >= 0."""
        self._check_robot(robot)
        cdef const RobotC* rob = &self.model.robots[robot]
        if not self.model.robot_joint_offset[robot] <= dof < rob.model.nv:
            raise IndexError(f"joint DOF {dof} out of range [{self.model.robot_joint_offset[robot]}"
                             f", {rob.model.nv}) of robot {robot}")
        if not (isfinite(damping) and damping >= 0.0):
            raise ValueError(f"joint damping must be finite and >= 0, got {damping}")
        (<double*> rob.damping)[dof] = damping

    def get_joint_damping(self, int robot, int dof):
        self._check_robot(robot)
        cdef const RobotC* rob = &self.model.robots[robot]
        if not 0 <= dof < rob.model.nv:
            raise IndexError(f"DOF {dof} out of range [0, {rob.model.nv}) of robot {robot}")
        return rob.damping[dof]

    def set_joint_limits(self, int robot, int dof, double lower, double upper):
        """Set the position limits [rad or m] of a scalar joint DOF's coordinate: lower <= upper
        (equal: the joint is held), -inf / inf for none on that side; NaN, lower = inf and
        upper = -inf are refused. A coordinate already beyond a new limit is pushed back as a
        penetrating one is (at most MAX_PUSH_OUT_SPEED)."""
        self._check_scalar_dof(robot, dof)
        if not (lower <= upper and lower < INFINITY and upper > -INFINITY):
            raise ValueError(f"joint limits must satisfy lower <= upper (not NaN, lower < inf, "
                             f"upper > -inf), got [{lower}, {upper}]")
        cdef const RobotC* rob = &self.model.robots[robot]
        cdef int qi = rob.dof_q[dof]
        (<double*> rob.q_lower)[qi] = lower
        (<double*> rob.q_upper)[qi] = upper

    def get_joint_limits(self, int robot, int dof):
        """(lower, upper) of a scalar joint DOF's coordinate."""
        self._check_scalar_dof(robot, dof)
        cdef const RobotC* rob = &self.model.robots[robot]
        return rob.q_lower[rob.dof_q[dof]], rob.q_upper[rob.dof_q[dof]]

    # -- contacts and feedback -----------------------------------------------------------
    def enable_feedback(self, int body_a, int body_b, bint enabled=True):
        """Record contact feedback between two collision bodies (see `feedback`)."""
        self._check_body(body_a)
        self._check_body(body_b)
        cdef SceneData d = self.data
        cdef int a = min(body_a, body_b), b = max(body_a, body_b), e
        if enabled:
            feedback_entry(self.model, d, a, b, True)
        elif not d.feedback_all:
            e = feedback_entry(self.model, d, a, b, False)
            if e >= 0:
                memmove(&d.fb[e], &d.fb[e + 1], (d.nfeedback - e - 1) * sizeof(FeedbackC))
                d.nfeedback -= 1

    def enable_feedback_all(self, bint enabled=True):
        """Record contact feedback for every body pair that comes within the boundary layers."""
        self.data.feedback_all = enabled

    def begin_feedback_window(self):
        """Start a new feedback window: the `had_*` flags and sums cover the steps from here."""
        cdef SceneData d = self.data
        cdef int e, k
        d.window_steps = 0
        d.window_time = 0.0
        for e in range(d.nfeedback):
            d.fb[e].steps_touching = 0
            d.fb[e].penetrated = 0
            for k in range(3):
                d.fb[e].impulse[k] = 0.0
                d.fb[e].moment[k] = 0.0

    def feedback_table(self):
        """Every recorded pair as arrays: body_a < body_b, touching, had_contact,
        had_separation, had_penetration (as in `feedback`), force and torque on body_a (n, 3)."""
        return contacts.feedback_table(self.data)

    def feedback(self, int body_a, int body_b):
        """Contact feedback of a body pair, on body_a from body_b, or None when it is not
        recorded: touching (at the last step), had_contact / had_separation / had_penetration
        (during the window: some step touching, some step not touching, the real geometries
        overlapping at some step), force and torque (about the world origin) of the last step
        [N, N m], impulse and angular_impulse summed over the window [N s, N m s], and the
        window's steps and duration [s]."""
        self._check_body(body_a)
        self._check_body(body_b)
        return contacts.feedback(self.model, self.data, body_a, body_b)

    def contact_arrays(self, out=None):
        """The contacts of the last step as arrays: body_a, body_b (collision bodies; the normal
        points from b to a), point (n, 3), normal (n, 3), distance, depth [m], impulse (n, 3)
        on a [N s] (normal impulse plus the contact's share of its patch's friction, in
        proportion to its normal impulse), the patch's torsional impulse share [N m s], and the
        patch index. `out`: a dict an earlier call returned, whose arrays are refilled when they
        have the right length (a caller polling every step allocates nothing then)."""
        return contacts.contact_arrays(self.data, out)

    def pair_arrays(self):
        """The body pairs of the last step, one row per pair (its patches together): body_a,
        body_b, count (contacts), impulse (3) on a [N s], angular_impulse (3) on a about the
        world origin [N m s] (contact moments plus the torsional friction), touched (a contact
        within the boundary layers) and penetrated (the real geometries overlapped)."""
        return contacts.pair_arrays(self.data)

    def separated_pairs(self):
        """Body pairs (body_a, body_b) that touched at the step before the last and no longer do."""
        cdef SceneData d = self.data
        return [(d.separated[2 * i], d.separated[2 * i + 1]) for i in range(d.nseparated)]

    # -- counters and profile ------------------------------------------------------------
    def reset_counters(self):
        """Zero the work counters and the stage profile."""
        cdef SceneData d = self.data
        cdef int i
        d.count_shape_pairs = d.count_contacts = d.count_row_updates = 0
        for i in range(NSTAGE):
            d.stage_seconds[i] = 0.0
            d.stage_calls[i] = 0

    def set_profile(self, bint enabled):
        """Time each stage of every step from now on (see stage_profile)."""
        self.data.profile = enabled

    def stage_profile(self):
        """{stage name: seconds} summed over the profiled steps since reset_counters, in step
        order (the kinematics include recounting the collidable bodies after a filter
        change; the integration, moving the PID targets on)."""
        cdef SceneData d = self.data
        return {name: d.stage_seconds[i] for i, name in enumerate(STAGE_NAMES)}

    def stage_calls(self):
        """{stage name: times it ran} since reset_counters, while profiling."""
        cdef SceneData d = self.data
        return {name: d.stage_calls[i] for i, name in enumerate(STAGE_NAMES)}

    # -- state ---------------------------------------------------------------------------
    # -- user constraints (pipeline/user_constraints.pyx) ----------------------------------
    @property
    def nconstraint(self): return self.model.nucons

    def set_constraints(self, specs):
        """Replace the user constraints by `specs`, a list of dicts: kind (ConstraintKind),
        body_a (collision body), body_b (collision body or -1: the world), R_a (3x3), p_a (3)
        [m]: frame on body a in its body frame, R_b, p_b: on body b (world frame when -1);
        axis (3, PRISMATIC: slide axis in frame a, nonzero); max_force (>= 0, inf allowed)
        [N or N m]; erp (in [0, 1]); GEAR: dof_a, dof_b (scalar joint DOFs of the robots of
        body_a and body_b, indices into their v), ratio, target [rad or m], dof_aux (a DOF of
        robot a or -1); lam (optional, UCONS_MAX_ROWS row impulses to warm start from). Every
        spec is checked before anything changes (ValueError naming the spec and the field)."""
        cdef SceneModel m = self.model
        cdef SceneData d = self.data
        cdef int n = len(specs), i, k, r
        cdef UserConstraintC* out = <UserConstraintC*> malloc(max(1, n) * sizeof(UserConstraintC))
        lams = np.zeros((n, UCONS_MAX_ROWS))
        try:
            for i, spec in enumerate(specs):
                _constraint_spec(m, spec, i, &out[i], lams[i])
        except BaseException:
            free(out)
            raise
        free(m.ucons)
        m.ucons = out
        m.nucons = n
        d.ucons_lam = <double*> realloc(d.ucons_lam, max(1, n * UCONS_MAX_ROWS) * sizeof(double))
        for i in range(n):
            for k in range(UCONS_MAX_ROWS):
                d.ucons_lam[UCONS_MAX_ROWS * i + k] = lams[i, k]
        d.nurow = 0
        for r in range(m.nrobot):
            d.robots[r].constrained = 0
        for i in range(n):
            for k in (out[i].body_a, out[i].body_b):
                if k >= 0 and m.bodies[k].kind == BODY_ROBOT:
                    d.robots[m.bodies[k].index].constrained = 1
        self.refresh()

    def constraint_impulses(self):
        """(nconstraint, UCONS_MAX_ROWS) the impulse of each constraint row over the last step
        [N s or N m s] (rows in the order of user_constraints.pyx; unused entries 0): divided
        by last_dt, the constraint forces."""
        cdef SceneData d = self.data
        out = np.empty((self.model.nucons, UCONS_MAX_ROWS))
        cdef int i
        for i in range(self.model.nucons * UCONS_MAX_ROWS):
            out[i // UCONS_MAX_ROWS, i % UCONS_MAX_ROWS] = d.ucons_lam[i]
        return out

    def get_state(self):
        """Everything a restored run needs to continue bit for bit, as bytes: time, robot
        states and actuator commands, free-body states, warm-start caches (state.pyx)."""
        return state.get_state(self.model, self.data)

    def set_state(self, bytes state_bytes):
        """Restore get_state's bytes of a scene built the same way (checked before use)."""
        state.set_state(self.model, self.data, state_bytes)


cdef _constraint_spec(SceneModel m, spec, int i, UserConstraintC* c, double[::1] lam):
    # one user constraint spec checked and written into c (Scene.set_constraints)
    where = f"constraint {i}"
    try:
        kind = spec["kind"]
        if kind not in CONSTRAINT_ROWS:
            raise ValueError(f"{where}: unknown kind {kind!r}; valid: "
                             f"{', '.join(f'{int(k)} ({k.name})' for k in ConstraintKind)}")
        c.kind = kind
        c.body_a = spec["body_a"]
        c.body_b = spec["body_b"]
    except KeyError as e:
        raise ValueError(f"{where}: missing field {e}") from None
    if not 0 <= c.body_a < m.nbody:
        raise ValueError(f"{where}: body_a {c.body_a} out of range [0, {m.nbody})")
    if not -1 <= c.body_b < m.nbody:
        raise ValueError(f"{where}: body_b {c.body_b} out of range [-1, {m.nbody})")
    if c.body_a == c.body_b:
        raise ValueError(f"{where}: body_a and body_b are the same body {c.body_a}")
    cdef int k
    frames = []
    for name in ("a", "b"):
        R = np.asarray(spec.get(f"R_{name}", np.eye(3)), dtype=np.float64)
        p = np.asarray(spec.get(f"p_{name}", np.zeros(3)), dtype=np.float64)
        if R.shape != (3, 3) or not np.all(np.isfinite(R)) \
                or not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
            raise ValueError(f"{where}: R_{name} must be a 3x3 rotation matrix")
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise ValueError(f"{where}: p_{name} must be 3 finite numbers [m]")
        frames.append((R.reshape(-1), p))
    for k in range(9):
        c.R_a[k] = frames[0][0][k]
        c.R_b[k] = frames[1][0][k]
    for k in range(3):
        c.p_a[k] = frames[0][1][k]
        c.p_b[k] = frames[1][1][k]
    axis = np.asarray(spec.get("axis", (0.0, 0.0, 1.0)), dtype=np.float64)
    if axis.shape != (3,) or not np.all(np.isfinite(axis)) or not np.linalg.norm(axis) > 1e-9:
        raise ValueError(f"{where}: axis must be 3 finite numbers, not zero")
    axis = axis / np.linalg.norm(axis)
    for k in range(3):
        c.axis[k] = axis[k]
    c.max_force = float(spec.get("max_force", INFINITY))
    if not c.max_force >= 0.0:
        raise ValueError(f"{where}: max_force must be >= 0 (inf allowed), got {c.max_force}")
    c.erp = float(spec.get("erp", 0.2))
    if not 0.0 <= c.erp <= 1.0:
        raise ValueError(f"{where}: erp must be in [0, 1], got {c.erp}")
    c.ratio = float(spec.get("ratio", 1.0))
    c.target = float(spec.get("target", 0.0))
    if not (isfinite(c.ratio) and isfinite(c.target)):
        raise ValueError(f"{where}: ratio and target must be finite")
    c.dof_a = spec.get("dof_a", -1)
    c.dof_b = spec.get("dof_b", -1)
    c.dof_aux = spec.get("dof_aux", -1)
    cdef const RobotC* rob
    if c.kind == UCONS_GEAR:
        if c.body_b < 0:
            raise ValueError(f"{where}: a gear joins two robot joints; body_b is the world")
        for side, body, dof in (("a", c.body_a, c.dof_a), ("b", c.body_b, c.dof_b),
                                ("aux", c.body_a, c.dof_aux)):
            if side == "aux" and dof == -1:
                continue
            if m.bodies[body].kind != BODY_ROBOT:
                raise ValueError(f"{where}: a gear's body_{side if side != 'aux' else 'a'} must be "
                                 "a robot body")
            rob = &m.robots[m.bodies[body].index]
            if not 0 <= dof < rob.model.nv or rob.dof_q[dof] < 0 \
                    or (rob.has_ball and rob.dof_ball[dof] >= 0):
                raise ValueError(f"{where}: dof_{side} {dof} is not a scalar joint DOF of its "
                                 f"robot (0 .. {rob.model.nv - 1}, revolute or prismatic)")
    values = spec.get("lam")
    if values is not None:
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if values.shape != (UCONS_MAX_ROWS,) or not np.all(np.isfinite(values)):
            raise ValueError(f"{where}: lam must be {UCONS_MAX_ROWS} finite impulses")
        for k in range(UCONS_MAX_ROWS):
            lam[k] = values[k]


cdef unsigned long long* _pair_keys(list pairs) except NULL:
    # sorted (a, b) pairs of world IDs as the keys broadphase.filtered searches (a << 32 | b)
    cdef unsigned long long* keys = <unsigned long long*> malloc(
        max(1, len(pairs)) * sizeof(unsigned long long))
    if keys == NULL:
        raise MemoryError("pair filter keys")
    for i, (a, b) in enumerate(pairs):
        keys[i] = ((<unsigned long long> a) << 32) | (<unsigned long long> b)
    return keys


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


def _ray_points(x, str what, Py_ssize_t n):
    # x as a C-contiguous float64 (N, 3) array of finite coordinates within MAX_RAY_COORDINATE
    # (N = n unless n < 0, N <= MAX_RAYS)
    try:
        a = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"ray_cast: {what} must be an (N, 3) array of numbers") from None
    if a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"ray_cast: {what} must have shape (N, 3), got {np.shape(a)}")
    if a.shape[0] > MAX_RAYS:
        raise ValueError(f"ray_cast: {a.shape[0]} rays in one call; at most {MAX_RAYS:,} "
                         "(cast more in chunks)")
    if n >= 0 and a.shape[0] != n:
        raise ValueError(f"ray_cast: {n} origins but {a.shape[0]} ends")
    if a.size and not np.abs(a).max() <= MAX_RAY_COORDINATE:     # (NaN fails too)
        i, k = np.argwhere(~(np.abs(a) <= MAX_RAY_COORDINATE))[0]
        raise ValueError(f"ray_cast: {what}[{i}, {k}] = {float(a[i, k])!r}; coordinates must be finite "
                         f"and within +-{MAX_RAY_COORDINATE:g} m")
    return a


cdef void _ball_target(const double* quat, double* r, int index) except *:
    # r = the rotation vector of the quaternion quat (normalised; a zero one is refused)
    cdef double n = sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2]
                         + quat[3] * quat[3])
    if not n > 1e-9:
        raise ValueError(f"position targets: the quaternion at entry {index} is zero; a "
                         "spherical joint's target must be a rotation")
    quat_log(quat, r)
