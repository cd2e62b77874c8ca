"""The physics clients of sim_node.pybullet: one WorldModel + Simulator per physicsClientId.

Every PyBullet function takes ``physicsClientId`` and starts with ``get_client(id)``; the
client owns the world, the simulator (rebuilt whenever a body comes or goes: never keep
``client.sim`` across calls), the bodies by unique id, and the step hooks the other modules
of this package install (motors, constraints, logging).

PyBullet's frames, reproduced here once for every module:
  * a PyBullet "joint" j is the URDF link that is not the root, in the URDF's depth-first
    order (the order of ``RobotStructure.link_names``: PyBullet's own, checked against it on
    pybullet_data's robots), fixed joints included; link index -1 is the base (root link);
  * the inertial frame of a link (the URDF <inertial><origin>, turned to the principal axes
    when the inertia tensor is not diagonal, as Bullet's importer does) is Bullet's link frame:
    getBasePositionAndOrientation and getLinkState's first pose are that frame, the URDF link
    frame is getLinkState's worldLinkFrame and loadURDF's basePosition.
"""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
from lxml import etree
from transforms3d.euler import euler2mat
from transforms3d.quaternions import mat2quat, quat2mat

from sim_node.model.robot import RobotModel
from sim_node.model.world import WorldModel
from sim_node.pybullet.errors import PhysicsWarning, error
from sim_node.sim.entities import all_entities as _entities
from sim_node.sim.simulator import STATUS_UNSTABLE, Simulator

__all__: list = []      # (internal module: nothing for ``import sim_node.pybullet as p``)

DEFAULT_TIME_STEP = 1.0 / 240.0     # PyBullet's fixedTimeStep
MAX_CLIENTS = 16                    # PyBullet's MAX_PHYSICS_CLIENTS

_clients: dict = {}


def get_client(physicsClientId: int = 0) -> "Client":
    """The connected client with this id; error when there is none."""
    try:
        cid = int(physicsClientId)
    except (TypeError, ValueError, OverflowError):
        raise error(f"physicsClientId must be an integer, got {physicsClientId!r}") from None
    client = _clients.get(cid)
    if client is None:
        raise error(f"not connected to a physics server (physicsClientId={cid})")
    return client


def new_client(mode: int) -> "Client":
    """A new client on the smallest free id (PyBullet reuses freed ids: 0, 1, then 0 again
    after disconnecting 0)."""
    for cid in range(MAX_CLIENTS):
        if cid not in _clients:
            client = Client(cid, mode)
            _clients[cid] = client
            return client
    raise error(f"connect: too many physics clients (at most {MAX_CLIENTS}); disconnect one")


def drop_client(physicsClientId: int):
    _clients.pop(int(physicsClientId), None)


def connected_ids() -> list:
    return sorted(_clients)


class Body:
    """One body of a client (what a PyBullet body unique id names): a RobotModel whose PyBullet
    joints are its non-root URDF links."""

    def __init__(self, client: "Client", uid: int, entity: RobotModel, name, info: dict):
        self.client = client
        self.uid = uid
        self.entity = entity
        st = entity.structure
        self.name = name.encode() if isinstance(name, str) else bytes(name)
        self.base_name = st.link_names[0].encode()
        self.num_joints = len(st.link_names) - 1
        self.info = info                # loader's extras: fileName, flags, globalScaling, ...
        # per robot link: its inertial frame in the link frame (p_LC, R_LC), Bullet's link frame
        self.inertial_frames = info.pop("inertial_frames", None) or inertial_frames(entity)
        # per joint name: (lower, upper, effort, velocity) as PyBullet reports them
        self.joint_limits = info.pop("joint_limits", None) or {}
        # PyBullet joint index -> robot link index (the root is -1 -> 0)
        self._link_of_joint = list(range(1, len(st.link_names)))
        # the scalar (1-DOF) joints: PyBullet joint indices, their q and v indices (int arrays),
        # and each joint's position in them
        scalar = [(j, *self.joint_coords(j)) for j in range(self.num_joints)]
        scalar = [(j, qs.start, vs.start) for j, qs, vs in scalar if qs.stop - qs.start == 1]
        self.scalar_joints = tuple(np.array([s[i] for s in scalar], dtype=np.intp)
                                   for i in range(3))
        self.scalar_position = {s[0]: k for k, s in enumerate(scalar)}
        self.scalar_lists = tuple([s[i] for s in scalar] for i in range(3))
        self._robot_index = None
        self.motors = None              # sim_node.pybullet.control's motor table
        self.sensors = set()            # joints with enableJointForceTorqueSensor
        self.reactions = {}             # their reaction wrenches of the last step

    # -- PyBullet indices ----------------------------------------------------------------
    def check_link(self, link_index, function: str, what: str = "linkIndex") -> int:
        """link_index as an int in [-1, num_joints); error naming `function` otherwise."""
        k = _as_index(link_index, function, what)
        if not -1 <= k < self.num_joints:
            raise error(f"{function}: {what} {k} out of range for body {self.uid} "
                        f"(valid: -1 for the base, 0..{self.num_joints - 1})")
        return k

    def check_joint(self, joint_index, function: str, what: str = "jointIndex") -> int:
        """joint_index as an int in [0, num_joints); error naming `function` otherwise."""
        k = _as_index(joint_index, function, what)
        if not 0 <= k < self.num_joints:
            raise error(f"{function}: {what} {k} out of range for body {self.uid} "
                        f"(it has {self.num_joints} joints: 0..{self.num_joints - 1})")
        return k

    def robot_link(self, link_index: int) -> int:
        """The RobotModel link index of a PyBullet link index (-1 = base = 0)."""
        return 0 if link_index < 0 else self._link_of_joint[link_index]

    def link(self, link_index: int):
        """The RobotModelLink of a PyBullet link index (-1 = base)."""
        return self.entity.link(self.robot_link(link_index))

    def joint_name(self, joint_index: int) -> str:
        return self.entity.structure.link_joint[self.robot_link(joint_index)]

    def joint_type(self, joint_index: int) -> str:
        """URDF type of the joint above PyBullet link `joint_index`."""
        return self.entity.urdf.joints[self.joint_name(joint_index)].type

    def joint_coords(self, joint_index: int) -> tuple:
        """(q_slice, v_slice) of the joint into the robot's full q and v (empty for fixed and
        mimic joints)."""
        st = self.entity.structure
        name = self.joint_name(joint_index)
        if name not in st.joint_q_index:
            return slice(0, 0), slice(0, 0)
        qi, vi = st.joint_q_index[name], st.joint_v_index[name]
        return slice(qi, qi + st.joint_nq[name]), slice(vi, vi + st.joint_nv[name])

    def world_id(self, link_index: int) -> int:
        """Simulator / World ID of a link (-1 = base); current after rebuilds."""
        return self.link(link_index).getID()

    # -- the simulated state ---------------------------------------------------------------
    def robot_index(self) -> int:
        """This body's robot index in the client's world (and simulator); cached, renewed at
        every rebuild."""
        if self._robot_index is None:
            world = self.client.world
            self._robot_index = next((r for r in range(world.numRobots())
                                      if world.robot(r) is self.entity), None)
            if self._robot_index is None:
                raise error(f"body {self.uid} is not in its client's world")  # (a bug)
        return self._robot_index

    def q(self) -> np.ndarray:
        """The simulated configuration (a live view: write through it, then refresh)."""
        return self.client.sim.engine.robot_q[self.robot_index()]

    def v(self) -> np.ndarray:
        return self.client.sim.engine.robot_v[self.robot_index()]

    def link_frames(self):
        """(R (nlinks, 3, 3), p (nlinks, 3)): URDF link frames in the world, robot link order,
        simulated state."""
        return self.client.sim.getLinkTransforms(self.entity)

    def com_frame(self, robot_link: int, R_link, p_link):
        """(R, p) of a link's inertial (Bullet link) frame from its URDF frame."""
        p_lc, R_lc = self.inertial_frames[robot_link]
        return R_link @ R_lc, p_link + R_link @ p_lc


class Client:
    """A physics client: a world, its simulator and PyBullet's settings (module docstring)."""

    def __init__(self, cid: int, mode: int):
        self.id = cid
        self.mode = mode
        self.viewer = None                  # the viewer issue sets it in GUI mode
        self.pre_step: list = []            # callables(client) at the start of each step
        self.post_step: list = []           # callables(client) after each step
        self._rebuild_callbacks: list = []
        self.search_paths: list = []
        self.time_step = DEFAULT_TIME_STEP
        self.num_sub_steps = 0
        self.solver_options: dict = {}      # engine Scene attributes set by the user
        self.real_time = False              # setRealTimeSimulation (no effect: DIRECT)
        self.reset()

    def reset(self):
        """Empty world, gravity 0, body ids restart at 0 (resetSimulation); the time step and
        the hooks stay, as in PyBullet."""
        self.world = WorldModel()
        self.gravity = (0.0, 0.0, 0.0)
        self.bodies: dict = {}
        self._next_uid = 0
        self.engine_parameters: dict = {}   # setPhysicsEngineParameter values kept as given
        self.states: dict = {}              # saveState id -> state (sim_node.pybullet.state)
        self.user_data = None               # sim_node.pybullet.userdata's table, when used
        self._failing = False               # the last step failed (PhysicsWarning given)
        self._make_sim()

    def _make_sim(self):
        sim = Simulator(self.world)
        sim.setGravity(self.gravity)
        for name, value in self.solver_options.items():
            setattr(sim.engine, name, value)
        self.sim = sim
        self.apply_time_step()

    def apply_time_step(self):
        self.sim.setSimStep(self.time_step / max(1, self.num_sub_steps))

    def set_gravity(self, g):
        self.gravity = tuple(float(x) for x in g)
        self.sim.setGravity(self.gravity)

    # -- bodies ----------------------------------------------------------------------------
    def body(self, uid) -> Body:
        try:
            key = int(uid)
        except (TypeError, ValueError, OverflowError):
            raise error(f"bodyUniqueId must be an integer, got {uid!r}") from None
        body = self.bodies.get(key)
        if body is None:
            raise error(f"no body with unique id {key} in physics client {self.id} (bodies: "
                        f"{sorted(self.bodies) or 'none'})")
        return body

    def add_body(self, entity, **info) -> int:
        """Add a built RobotModel (in no world) to the world and the simulation; its uid."""
        if not isinstance(entity, RobotModel):
            raise error(f"add_body: expected a RobotModel, got {type(entity).__name__}")
        uid = self._next_uid
        # getBodyInfo's name: the URDF's <robot name> unless the loader says otherwise
        name = info.pop("name", None) or entity.urdf.name
        # PyBullet's motors are limited by their `force` only (URDF efforts are reported, not
        # enforced): the engine's actuators get no effort limit on the actuated DOFs
        effort = entity.structure.effort_limit
        effort[effort > 0] = math.inf
        if entity.getName() in {e.getName() for e in _entities(self.world)}:
            # (PyBullet's body names need not be unique, the world's entity names must: the
            # name getBodyInfo reports is `name`, the entity's may carry a suffix)
            raise error(f"add_body: the world already has an entity named "
                        f"'{entity.getName()}'; build it with client.world.makeRobot(...) "
                        "(which picks a free name) or give it another name")
        try:
            self.sim.addEntity(entity)
        except ValueError as e:
            raise error(f"cannot add the body: {e}") from None
        # no actuator acts until the motors say so (sim_node.pybullet.control); joints without
        # a PyBullet motor (spherical, planar) stay limp, as in PyBullet
        self.sim.controller(entity).setTorqueCommand(np.zeros(entity.model.nv))
        body = Body(self, uid, entity, name, info)
        self.bodies[uid] = body
        self._next_uid += 1
        self._rebuilt()
        return uid

    def remove_body(self, uid: int):
        body = self.body(uid)
        try:
            self.sim.removeEntity(body.entity)
        except ValueError as e:
            raise error(f"removeBody: {e}") from None
        del self.bodies[body.uid]
        if self.user_data is not None:
            self.user_data.drop_body(body.uid)
        self._rebuilt()

    def locate(self, world_id: int) -> tuple:
        """(uid, linkIndex) of a Simulator / World ID (-1: the base); (-1, -1) if unknown."""
        try:
            entity = self.world.getEntity(int(world_id))
        except (IndexError, ValueError):
            return -1, -1
        for body in self.bodies.values():
            if entity is body.entity:
                return body.uid, -1
            if getattr(entity, "getRobot", None) and entity.getRobot() is body.entity:
                index = entity.getIndex()
                return body.uid, (index - 1 if index > 0 else -1)
        return -1, -1

    def on_rebuild(self, callback):
        """callback(client) after every rebuild of the simulation (a body added or removed,
        resetSimulation)."""
        self._rebuild_callbacks.append(callback)

    def _rebuilt(self):
        for body in self.bodies.values():
            body._robot_index = None
        for callback in list(self._rebuild_callbacks):
            callback(self)

    # -- stepping --------------------------------------------------------------------------
    def step(self):
        """One stepSimulation: the pre-step hooks, time_step of physics, the post-step hooks."""
        for hook in list(self.pre_step):
            hook(self)
        self.sim.simulate(self.time_step)
        self._report_failure()
        for hook in list(self.post_step):
            hook(self)

    def _report_failure(self):
        """A PhysicsWarning when the physics stops advancing (once until it advances again):
        PyBullet's API has no status, and a frozen scene must not be silent."""
        failed = self.sim.getStatus() == STATUS_UNSTABLE
        if failed and not self._failing:
            warnings.warn(PhysicsWarning(
                f"stepSimulation: the physics failed at t = {self.sim.getTime():.6f} s (a step "
                "with non-finite or exploding velocities, even at 1/32 of the time step): the "
                "state stays at the last good step and time does not advance"
                + self._deepest_contact() + ". Bodies placed deep inside each other, or "
                "constraints that cannot all hold, cause this"), stacklevel=4)
        self._failing = failed

    def _deepest_contact(self) -> str:
        """'; the deepest contact: ...' of the failed step, naming bodies and links as PyBullet
        does; '' without contacts."""
        contacts = self.sim.engine.contact_arrays()
        if not len(contacts["depth"]):
            return ""
        k = int(np.argmax(contacts["depth"]))
        ids = self.sim.layout.id_of_body
        (ua, la), (ub, lb) = (self.locate(ids[int(contacts[side][k])])
                              for side in ("body_a", "body_b"))
        depth = float(contacts["depth"][k])
        return (f"; the deepest contact: body {ua} link {la} in body {ub} link {lb}, "
                + (f"{depth:.3g} m deep" if depth > 0.0 else f"{-depth:.3g} m apart"))


def _as_index(value, function: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        try:
            if isinstance(value, float) and value.is_integer():
                return int(value)
        except (AttributeError, OverflowError):
            pass
        raise error(f"{function}: {what} must be an integer, got {value!r}")
    return int(value)


# -- inertial frames (Bullet's link frames) -------------------------------------------------
def inertial_frames(robot: RobotModel, principal: bool = False) -> list:
    """Per robot link: (p_LC (3,), R_LC (3, 3)), the inertial frame in the URDF link frame as
    Bullet's URDF importer makes it: the <inertial><origin>; with `principal`
    (URDF_USE_INERTIA_FROM_FILE, where Bullet uses the file's tensor) rotated onto the principal
    axes when the tensor has products of inertia. Links without <inertial>: the link frame."""
    frames = {}
    try:
        root = etree.fromstring(robot.urdf.xml.encode("utf-8")) if robot.urdf.xml else None
    except etree.XMLSyntaxError:
        root = None
    if root is not None:
        for link_el in root.iter("link"):
            frames[link_el.get("name")] = _inertial_frame(link_el, principal)
    out = []
    for name in robot.structure.link_names:
        frame = frames.get(name)
        if frame is None:
            inertial = robot.urdf.links[name].inertial
            com = np.zeros(3) if inertial is None else np.array(inertial.com, dtype=float)
            frame = (com, np.eye(3))
        out.append(frame)
    return out


def raw_joint_limits(xml: str) -> dict:
    """joint name -> (lower, upper, effort, velocity) of the <limit> elements as Bullet's URDF
    parser reads them: a missing lower / upper is 0 / -1 (PyBullet's "no limit"), a missing
    effort or velocity 0; also on fixed joints, whose limits Bullet reports too."""
    out = {}
    try:
        root = etree.fromstring(xml.encode("utf-8")) if xml else None
    except etree.XMLSyntaxError:
        return out
    if root is None:
        return out
    for joint_el in root.iter("joint"):
        limit = joint_el.find("limit")
        if joint_el.get("name") is None or limit is None:
            continue
        values = []
        for key, default in (("lower", 0.0), ("upper", -1.0), ("effort", 0.0),
                             ("velocity", 0.0)):
            x = _leading_float(limit.get(key), default)
            values.append(x if math.isfinite(x) else default)
        missing = limit.get("lower") is None and limit.get("upper") is None
        out[joint_el.get("name")] = (*values, missing)
    return out


# the longest number at the start of a string, as C++'s istream >> double in Bullet's URDF
# parser reads it ("-1.57." in pybullet_data's biped2d_pybullet.urdf is -1.57)
_LEADING_FLOAT = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _leading_float(text, default: float) -> float:
    """text as Bullet's URDF parser reads a number: its leading number, else default."""
    if text is None:
        return default
    try:
        return float(text)
    except ValueError:
        match = _LEADING_FLOAT.match(text)
        return float(match.group()) if match else default


def _numbers(text, n, default):
    try:
        values = [float(x) for x in (text or "").split()]
    except ValueError:
        return np.array(default, dtype=float)
    return np.array(values[:n], dtype=float) if len(values) >= n else np.array(default, float)


def _inertial_frame(link_el, principal: bool):
    inertial = link_el.find("inertial")
    if inertial is None:
        return None
    origin = inertial.find("origin")
    p = _numbers(origin.get("xyz") if origin is not None else None, 3, (0.0, 0.0, 0.0))
    rpy = _numbers(origin.get("rpy") if origin is not None else None, 3, (0.0, 0.0, 0.0))
    R = euler2mat(*rpy, axes="sxyz")
    tensor = inertial.find("inertia")
    if tensor is not None and principal:
        def get(key):
            try:
                return float(tensor.get(key, 0.0))
            except ValueError:
                return 0.0
        ixy, ixz, iyz = get("ixy"), get("ixz"), get("iyz")
        if ixy or ixz or iyz:
            matrix = np.array([[get("ixx"), ixy, ixz], [ixy, get("iyy"), iyz],
                               [ixz, iyz, get("izz")]])
            if np.all(np.isfinite(matrix)):
                _, axes = np.linalg.eigh(matrix)
                if np.linalg.det(axes) < 0:
                    axes[:, 2] = -axes[:, 2]
                R = R @ axes
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(R))):
        return None
    return p, R


def warn_once(client, key: str, message: str):
    """A warning issued once per client and key (accepted-and-ignored arguments)."""
    seen = client.__dict__.setdefault("_warned", set())
    if key not in seen:
        seen.add(key)
        warnings.warn(message, stacklevel=3)


def finite_vector(value, n: int, function: str, what: str) -> np.ndarray:
    """value as n finite floats; error naming function and argument otherwise."""
    if isinstance(value, (str, bytes)) or any(isinstance(x, (str, bytes))
                                              for x in np.ravel(np.asarray(value, dtype=object))):
        raise error(f"{function}: {what} must be {n} numbers, got {value!r}")
    try:
        arr = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{function}: {what} must be {n} numbers, got {value!r}") from None
    if arr.shape != (n,):
        raise error(f"{function}: {what} must be {n} numbers, got {len(arr)}")
    if not np.all(np.isfinite(arr)):
        raise error(f"{function}: {what} must be finite, got {arr.tolist()}")
    return arr


def finite_float(value, function: str, what: str) -> float:
    if isinstance(value, (str, bytes)):
        raise error(f"{function}: {what} must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{function}: {what} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise error(f"{function}: {what} must be finite, got {x}")
    return x


def unit_quaternion(value, function: str, what: str) -> np.ndarray:
    """A quaternion (x, y, z, w), normalised; error when not 4 finite numbers or zero."""
    q = finite_vector(value, 4, function, what)
    norm = np.linalg.norm(q)
    if norm < 1e-9:
        raise error(f"{function}: {what} is a zero quaternion; give (x, y, z, w) of a rotation")
    return q / norm


def xyzw(R) -> tuple:
    """(x, y, z, w) of a rotation matrix, as Python floats."""
    w, x, y, z = mat2quat(R)
    return (float(x), float(y), float(z), float(w))


def rotation(q_xyzw) -> np.ndarray:
    """The rotation matrix of a quaternion (x, y, z, w)."""
    x, y, z, w = q_xyzw
    return quat2mat([w, x, y, z])


def vec(a) -> tuple:
    """A vector as a tuple of Python floats (PyBullet's return type)."""
    return tuple(float(x) for x in a)
