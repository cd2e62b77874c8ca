"""RobotModel, RobotModelLink and Mass: the Klamp't-style robot API over the engine.

Dynamics methods act at the robot's current configuration and velocity (``setConfig``,
``setVelocity``), as in the seed documents, and return fresh numpy arrays:
    B(q) qdd + C(q, qd) + G(q) = tau            (gravity is not part of C or torquesFromAccel)
q/v layout: fixed base q, v = the joints' coordinates and velocities in ``getJointNames()``
order; floating base q = [base position (3), base quaternion xyzw (4), joints], v = [base
linear velocity, base angular velocity (both in base axes), joints]. A joint has
``jointSize(name)`` = (q entries, v entries): 1, 1 for revolute, continuous and prismatic
joints; 4, 3 (quaternion xyzw, angular velocity in child axes) for spherical; 3, 3 (x, y,
theta) for planar; 7, 6 (position, quaternion; linear and angular velocity in child axes) for
floating joints. Quaternions are normalised where a configuration enters (a zero one is refused).
"""
from __future__ import annotations

import math

import numpy as np

from sim_node.engine.api import Data, aba, coriolis, crba, kinematics, ltdl, rnea
from sim_node.model.builder import RobotStructure, body_mass_properties
from sim_node.model import drivers as _drivers
from sim_node.model.config_space import ConfigSpace
from sim_node.model.settings import RobotSettings
from sim_node.model.urdf import URDFRobot

DEFAULT_ACCELERATION_TIME = 0.25   # [s] to reach the velocity limit (motion-queue default)


class Mass:
    """Inertial properties of a body: mass [kg], centre of mass [m] and inertia matrix about
    the centre of mass [kg m^2], both in the body's local coordinates."""

    def __init__(self, mass: float = 0.0, com=(0.0, 0.0, 0.0), inertia=0.0):
        self.setMass(mass)
        self.setCom(com)
        self.setInertia(inertia)

    def getMass(self) -> float:
        return self._mass

    def setMass(self, mass: float):
        mass = float(mass)
        if not np.isfinite(mass) or mass < 0:
            raise ValueError(f"mass must be finite and non-negative, got {mass}")
        self._mass = mass

    def getCom(self) -> np.ndarray:
        return self._com.copy()

    def setCom(self, com):
        com = np.array(com, dtype=float)
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise ValueError(f"com must be 3 finite numbers, got {com!r}")
        self._com = com

    def getInertia(self) -> np.ndarray:
        """The inertia matrix as a 9-vector, rows of the 3x3 matrix."""
        return self._inertia.reshape(9).copy()

    def setInertia(self, inertia):
        """A float (isotropic), 3 numbers (diagonal) or 9 numbers (rows of the matrix)."""
        arr = np.array(inertia, dtype=float)
        if arr.ndim == 0:
            matrix = np.eye(3) * float(arr)
        elif arr.shape == (3,):
            matrix = np.diag(arr)
        elif arr.size == 9:
            matrix = arr.reshape(3, 3)
        else:
            raise ValueError(f"inertia must be a float, 3 or 9 numbers, got shape {arr.shape}")
        if not np.all(np.isfinite(matrix)) or not np.allclose(matrix, matrix.T, rtol=0, atol=1e-12 * max(1.0, np.abs(matrix).max())):
            raise ValueError("inertia must be a finite symmetric matrix")
        if np.linalg.eigvalsh(matrix)[0] < -1e-12 * max(1.0, np.abs(matrix).max()):
            raise ValueError("inertia must be positive semi-definite")
        self._inertia = matrix

    def inertiaMatrix(self) -> np.ndarray:
        return self._inertia.copy()

    def __eq__(self, other):
        return (isinstance(other, Mass) and self._mass == other._mass
                and np.array_equal(self._com, other._com)
                and np.array_equal(self._inertia, other._inertia))

    def __repr__(self):
        return f"Mass(mass={self._mass!r}, com={self._com.tolist()!r}, inertia={self.getInertia().tolist()!r})"


def normalized_config(structure: RobotStructure, q, what: str) -> np.ndarray:
    """q (nq finite values) as a new array with every quaternion (floating base, spherical and
    floating joints) normalised; ValueError naming the joint when one is zero. A unit
    quaternion is kept bit for bit."""
    q = _config_vector(q, structure.model.nq, what)
    for k in structure.quaternions:
        norm = np.linalg.norm(q[k:k + 4])
        if norm < 1e-9:
            owner = next((f"joint '{n}'" for n in structure.joint_names
                          if structure.joint_q_index[n] <= k < structure.joint_q_index[n]
                          + structure.joint_nq[n]), "the base")
            raise ValueError(f"{what}: quaternion is zero at entries {k}..{k + 3} ({owner}); "
                             "it must be a rotation (x, y, z, w)")
        if abs(norm - 1.0) > 1e-12:
            q[k:k + 4] /= norm
    return q


def random_config(structure: RobotStructure, lo, hi, unbounded_scale: float = 1.0) -> np.ndarray:
    """A configuration (nq) drawn from numpy's global generator (np.random.seed repeats it):
    coordinates bounded on both sides uniform in [lo, hi]; unbounded ones (continuous joints,
    a floating base's position) from a Laplace distribution of scale unbounded_scale centred
    at 0, or one-sided from their single finite bound (Klamp't's rule); quaternions uniform
    on SO(3)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    q = np.empty(structure.model.nq)
    lo_f, hi_f = np.isfinite(lo), np.isfinite(hi)
    both = lo_f & hi_f
    q[both] = np.random.uniform(lo[both], hi[both])
    if not both.all():
        lap = np.random.laplace(0.0, unbounded_scale, int(np.count_nonzero(~both)))
        lo_o, hi_o = lo[~both], hi[~both]
        q[~both] = np.where(np.isfinite(lo_o), lo_o + np.abs(lap),
                            np.where(np.isfinite(hi_o), hi_o - np.abs(lap), lap))
    for k in structure.quaternions:
        quat = np.random.normal(size=4)
        q[k:k + 4] = quat / np.linalg.norm(quat)
    return q


def _config_vector(x, n: int, what: str) -> np.ndarray:
    arr = np.array(x, dtype=float).reshape(-1) if not np.isscalar(x) else None
    if arr is None or arr.shape != (n,):
        raise ValueError(f"{what}: expected {n} values, got {np.shape(x)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: contains NaN or infinity")
    return arr


class RobotModel:
    """An articulated robot: its kinematic tree, inertias, limits and current state."""

    def __init__(self, name: str, urdf: URDFRobot, structure: RobotStructure):
        self._name = name
        self.urdf = urdf
        self.structure = structure
        self.model = structure.model
        self.data = Data(structure.model)
        self._q = structure.q_default.copy()
        self._v = np.zeros(structure.model.nv)
        self._links = [RobotModelLink(self, i) for i in range(len(structure.link_names))]
        self._link_index = {n: i for i, n in enumerate(structure.link_names)}
        # per-link inertials {link index: (mass, com_L, inertia_L)} for setMass
        self._inertials = {}
        for i, name_ in enumerate(structure.link_names):
            inertial = urdf.links[name_].inertial
            if inertial is not None:
                self._inertials[i] = (inertial.mass, inertial.com.copy(), inertial.inertia.copy())
        self._frames_valid = False
        self._id = -1
        self.world = None
        self._acceleration_limit = None
        self._drivers = None
        self._settings = RobotSettings(sensors=getattr(urdf, "sensors", ()))

    @property
    def settings(self) -> RobotSettings:
        """Its settings (namespace, controller gains, plugins, ...: RobotSettings, frozen);
        assigning a mapping of RobotSettings' fields parses it."""
        return self._settings

    @settings.setter
    def settings(self, value):
        self._settings = RobotSettings.of(value)

    # -- identity ------------------------------------------------------------------------
    def getName(self) -> str:
        return self._name

    def getID(self) -> int:
        return self._id

    def numLinks(self) -> int:
        return len(self._links)

    def link(self, index_or_name) -> "RobotModelLink":
        if isinstance(index_or_name, str):
            if index_or_name not in self._link_index:
                raise KeyError(f"robot '{self._name}' has no link '{index_or_name}'; links: "
                               f"{self.structure.link_names}")
            return self._links[self._link_index[index_or_name]]
        index = int(index_or_name)
        if not 0 <= index < len(self._links):
            raise IndexError(f"link index {index} out of range [0, {len(self._links)})")
        return self._links[index]

    def links(self) -> list:
        return list(self._links)

    def isFloatingBase(self) -> bool:
        return self.structure.floating

    def getJointNames(self) -> list:
        """The independent movable joints in q/v order (after the base for floating robots)."""
        return list(self.structure.joint_names)

    def numJoints(self) -> int:
        return len(self.structure.joint_names)

    def jointType(self, name: str) -> str:
        """The URDF type of a movable joint: revolute, continuous, prismatic, spherical, planar
        or floating."""
        return self.structure.joint_type[self._joint(name)]

    def jointSize(self, name: str) -> tuple:
        """(q entries, v entries) of a movable joint (see the module docstring)."""
        name = self._joint(name)
        return self.structure.joint_nq[name], self.structure.joint_nv[name]

    def jointIndices(self, name: str) -> tuple:
        """(first q index, first v index) of a movable joint's coordinates and velocities."""
        name = self._joint(name)
        return self.structure.joint_q_index[name], self.structure.joint_v_index[name]

    def getJointCoordinateNames(self):
        """(q labels, v labels): a name for each entry of q and v after a floating base's (the
        joints' coordinates and DOFs in order). A scalar joint's entry is its name; the others
        are '<joint>.<item>': spherical qx qy qz qw / wx wy wz, planar x y theta (both), floating
        px py pz qx qy qz qw / vx vy vz wx wy wz (velocities in child axes)."""
        items = {"spherical": (("qx", "qy", "qz", "qw"), ("wx", "wy", "wz")),
                 "planar": (("x", "y", "theta"), ("x", "y", "theta")),
                 "floating": (("px", "py", "pz", "qx", "qy", "qz", "qw"),
                              ("vx", "vy", "vz", "wx", "wy", "wz"))}
        q_names, v_names = [], []
        for name in self.structure.joint_names:
            q_items, v_items = items.get(self.structure.joint_type[name], ((), ()))
            q_names += [f"{name}.{i}" for i in q_items] or [name]
            v_names += [f"{name}.{i}" for i in v_items] or [name]
        return q_names, v_names

    def _joint(self, name: str) -> str:
        if name not in self.structure.joint_type:
            raise KeyError(f"robot '{self._name}' has no movable joint '{name}'; joints: "
                           f"{self.structure.joint_names}")
        return name

    # -- state ---------------------------------------------------------------------------
    def getConfig(self) -> np.ndarray:
        return self._q.copy()

    def setConfig(self, q):
        """q (nq); quaternions are normalised, a zero one is refused (ValueError)."""
        self._q = normalized_config(self.structure, q, f"robot '{self._name}' config")
        self._frames_valid = False

    def randomizeConfig(self, unboundedScale: float = 1.0):
        """Moves the robot to a random configuration within its joint limits (see
        random_config: numpy's global generator, Laplace(unboundedScale) on unbounded
        coordinates, uniform rotations). Klamp't draws from its own C++ generator instead."""
        scale = float(unboundedScale)
        if not (math.isfinite(scale) and scale > 0):
            raise ValueError(f"randomizeConfig: unboundedScale must be finite and > 0, got {unboundedScale!r}")
        self.setConfig(random_config(self.structure, self.structure.q_lower, self.structure.q_upper, scale))

    def getVelocity(self) -> np.ndarray:
        return self._v.copy()

    def setVelocity(self, v):
        self._v = _config_vector(v, self.model.nv, f"robot '{self._name}' velocity")

    def getJointLimits(self):
        """(qmin, qmax) over q [rad or m]; unbounded entries are -inf / inf (every quaternion
        entry, and the coordinates of spherical and floating joints)."""
        return self.structure.q_lower.copy(), self.structure.q_upper.copy()

    def getVelocityLimits(self) -> np.ndarray:
        """(nv) velocity bounds per DOF [rad/s or m/s] (inf where the URDF gives none)."""
        return self.structure.velocity_limit.copy()

    def getAccelerationLimits(self) -> np.ndarray:
        """(nv) acceleration bounds [rad/s^2 or m/s^2] of the controller's motion queue. URDF
        has none: by default a joint reaches its velocity limit in 0.25 s (4 x the velocity
        limit; 4 when the URDF gives no finite velocity limit); inf on a floating base."""
        if self._acceleration_limit is None:
            v = self.structure.velocity_limit
            a = np.where((v > 0) & np.isfinite(v), v, 1.0) / DEFAULT_ACCELERATION_TIME
            if self.structure.floating:
                a[:6] = math.inf
            self._acceleration_limit = a
        return self._acceleration_limit.copy()

    def setAccelerationLimits(self, amax):
        a = _config_vector(amax, self.model.nv, f"robot '{self._name}' acceleration limits")
        if np.any(a <= 0):
            raise ValueError(f"robot '{self._name}' acceleration limits must be positive")
        self._acceleration_limit = a

    def getTorqueLimits(self) -> np.ndarray:
        """(nv) effort bounds per DOF [N m or N]; 0 on unactuated DOFs (a floating base,
        floating joints)."""
        return self.structure.effort_limit.copy()

    # -- drivers (Klamp't's actuators: sim_node.model.drivers) --------------------------------
    def _driver_specs(self) -> list:
        if self._drivers is None:
            self._drivers = _drivers.driver_specs(self.structure)
        return self._drivers

    def numDrivers(self) -> int:
        """One driver per scalar movable joint (revolute, continuous, prismatic)."""
        return len(self._driver_specs())

    def driver(self, index_or_name) -> "_drivers.RobotModelDriver":
        """The driver with this index, or named after its child link (Klamp't's name) or its
        joint."""
        specs = self._driver_specs()
        if isinstance(index_or_name, str):
            for i, spec in enumerate(specs):
                if index_or_name in (spec.name, spec.joint):
                    return _drivers.RobotModelDriver(self, i, spec)
            raise KeyError(f"robot '{self._name}' has no driver '{index_or_name}'; drivers: "
                           f"{[s.name for s in specs]}")
        index = int(index_or_name)
        if not 0 <= index < len(specs):
            raise IndexError(f"driver index {index} out of range [0, {len(specs)})")
        return _drivers.RobotModelDriver(self, index, specs[index])

    def getDrivers(self) -> tuple:
        return tuple(self.driver(i) for i in range(self.numDrivers()))

    def getDriversDict(self) -> dict:
        return {d.getName(): d for d in self.getDrivers()}

    def getDriverIndices(self):
        """(q indices, v indices): the entry of each driver's joint in q and in v, int arrays
        (numDrivers,)."""
        specs = self._driver_specs()
        return (np.array([s.q_index for s in specs], dtype=np.int64),
                np.array([s.v_index for s in specs], dtype=np.int64))

    def configToDrivers(self, q) -> np.ndarray:
        """(numDrivers,) driver values of a configuration q (nq)."""
        return _drivers.driver_values(self._driver_specs(), q, self.model.nq,
                                      f"robot '{self._name}' configToDrivers", False)

    def velocityToDrivers(self, v) -> np.ndarray:
        """(numDrivers,) driver velocities of a velocity v (nv)."""
        return _drivers.driver_values(self._driver_specs(), v, self.model.nv,
                                      f"robot '{self._name}' velocityToDrivers", True)

    def configFromDrivers(self, values) -> np.ndarray:
        """(nq) the robot's current configuration with the drivers' entries set to `values`
        (numDrivers,), as Klamp't (entries without a driver, e.g. a floating base, keep their
        current values)."""
        return _drivers.from_driver_values(self._driver_specs(), values, self._q,
                                           f"robot '{self._name}' configFromDrivers", False)

    def velocityFromDrivers(self, values) -> np.ndarray:
        """(nv) the robot's current velocity with the drivers' entries set to `values`."""
        return _drivers.from_driver_values(self._driver_specs(), values, self._v,
                                           f"robot '{self._name}' velocityFromDrivers", True)

    driversToConfig = configFromDrivers     # (older Klamp't spelling)

    # -- dynamics at the current state ---------------------------------------------------
    def getMassMatrix(self) -> np.ndarray:
        return crba.mass_matrix(self.model, self.data, self._q).copy()

    def getMassMatrixInv(self) -> np.ndarray:
        return ltdl.mass_matrix_inverse(self.model, self.data, self._q).copy()

    def getCoriolisForceMatrix(self) -> np.ndarray:
        return coriolis.coriolis(self.model, self.data, self._q, self._v).copy()

    def getCoriolisForces(self) -> np.ndarray:
        return rnea.coriolis_forces(self.model, self.data, self._q, self._v).copy()

    def getGravityForces(self, gravity=(0.0, 0.0, -9.81)) -> np.ndarray:
        return rnea.generalized_gravity(self.model, self.data, self._q, gravity).copy()

    def torquesFromAccel(self, ddq) -> np.ndarray:
        """B(q) ddq + C(q, qd), without gravity."""
        return rnea.inverse_dynamics(self.model, self.data, self._q, self._v, ddq).copy()

    def accelFromTorques(self, torques) -> np.ndarray:
        """B(q)^-1 (torques - C(q, qd)), without gravity."""
        return aba.forward_dynamics(self.model, self.data, self._q, self._v, torques).copy()

    def getCom(self) -> np.ndarray:
        return kinematics.com(self.model, self.data, self._q).copy()

    def getTotalMass(self) -> float:
        return kinematics.total_mass(self.model)

    # -- geodesics (Klamp't's interpolate / interpolateDeriv / distance) -------------------
    def interpolate(self, a, b, u: float) -> np.ndarray:
        """The configuration u of the way from a to b (nq) along the configuration space's
        geodesic (sim_node.model.config_space): joints with limits and positions linearly,
        continuous joints the shorter way round, quaternions along the shorter rotation.
        u = 0 gives a; u outside [0, 1] extrapolates."""
        a, b, u = self._geodesic_args(a, b, u, "interpolate")
        return self._config_space().interpolate(a, b, u)

    def interpolateDeriv(self, a, b, u: float = 0.0) -> np.ndarray:
        """d/du interpolate(a, b, u) at u (default: at a) as a velocity vector (nv, the layout
        of setVelocity; free joints' rates in child axes). Klamp't gives a config-sized vector;
        ours is the same for robots whose joints are all scalar."""
        a, b, u = self._geodesic_args(a, b, u, "interpolateDeriv")
        return self._config_space().interpolate_deriv(a, b, u)

    def distance(self, a, b) -> float:
        """Length of the geodesic from a to b: the L2 norm of the joint differences
        (continuous joints' the shorter way round) and each free rotation's angle [rad]."""
        a, b, _ = self._geodesic_args(a, b, 0.0, "distance")
        return self._config_space().distance(a, b)

    def _geodesic_args(self, a, b, u, method: str):
        what = f"robot '{self._name}' {method}"
        a = normalized_config(self.structure, a, f"{what}: a")
        b = normalized_config(self.structure, b, f"{what}: b")
        try:
            u = float(u)
        except (TypeError, ValueError):
            raise ValueError(f"{what}: u must be a number, got {type(u).__name__}") from None
        if not math.isfinite(u):
            raise ValueError(f"{what}: u must be finite, got {u}")
        return a, b, u

    def _config_space(self) -> ConfigSpace:
        if getattr(self, "_geodesics", None) is None:
            self._geodesics = ConfigSpace(self.structure)
        return self._geodesics

    # -- internals -------------------------------------------------------------------------
    def _frames(self):
        if not self._frames_valid:
            R, p = kinematics.frames(self.model, self.data, self._q)
            self._link_R, self._link_p = R.copy(), p.copy()
            self._frames_valid = True
        return self._link_R, self._link_p

    def _set_link_inertial(self, index: int, mass: Mass):
        self._inertials[index] = (mass.getMass(), mass.getCom(), mass.inertiaMatrix())
        frame = self.structure.link_frames[index]
        if frame.body >= 0:
            m, com, inertia = body_mass_properties(self.structure, frame.body, self._inertials)
            self.model.set_body_inertia(frame.body, m, com, inertia)
        else:
            self.model.set_world_link_mass(index, mass.getMass(),
                                           frame.p + frame.R @ mass.getCom())

    def __repr__(self):
        return (f"RobotModel('{self._name}', {len(self._links)} links, nq={self.model.nq}, "
                f"nv={self.model.nv}, {'floating' if self.structure.floating else 'fixed'} base)")


class RobotModelLink:
    """One link of a RobotModel (a URDF link)."""

    def __init__(self, robot: RobotModel, index: int):
        self._robot = robot
        self._index = index
        self._id = -1

    def getName(self) -> str:
        return self._robot.structure.link_names[self._index]

    def getIndex(self) -> int:
        return self._index

    def getID(self) -> int:
        return self._id

    def getRobot(self) -> RobotModel:
        return self._robot

    def getParent(self) -> int:
        """Index of the parent link, -1 for the root."""
        return self._robot.structure.link_parent[self._index]

    def getParentJoint(self) -> str:
        return self._robot.structure.link_joint[self._index]

    def getTransform(self):
        """(R, t): rotation (3x3) and translation (3) of the link frame in the world."""
        R, p = self._robot._frames()
        return R[self._index].copy(), p[self._index].copy()

    def getWorldPosition(self, p_local) -> np.ndarray:
        R, t = self.getTransform()
        return R @ _config_vector(p_local, 3, "point") + t

    def getJacobian(self, p_local=(0.0, 0.0, 0.0)) -> np.ndarray:
        """6 x nv Jacobian of the point p_local (link coordinates): rows [angular; linear] in
        world axes, so that [w; v_point] = J qd."""
        r = self._robot
        return kinematics.jacobian(r.model, r.data, r._q, self._index, p_local).copy()

    def getPositionJacobian(self, p_local=(0.0, 0.0, 0.0)) -> np.ndarray:
        return self.getJacobian(p_local)[3:]

    def getOrientationJacobian(self) -> np.ndarray:
        return self.getJacobian()[:3]

    def getMass(self) -> Mass:
        entry = self._robot._inertials.get(self._index)
        if entry is None:
            return Mass()
        mass, com, inertia = entry
        return Mass(mass, com, inertia)

    def setMass(self, mass: Mass):
        if not isinstance(mass, Mass):
            raise TypeError(f"setMass expects a Mass, got {type(mass).__name__}")
        self._robot._set_link_inertial(self._index, mass)

    def getCollisionGeometry(self) -> tuple:
        """The link's collision elements (origin in link coordinates, shape)."""
        return self._robot.urdf.links[self.getName()].collisions

    def geometry(self):
        """Klamp't's geometry(): a Geometry3D of the link's collision elements at the link's
        current transform (a copy: changing it does not change the robot)."""
        from sim_node.model.geometry3d import Geometry3D

        return Geometry3D.of_elements(self.getCollisionGeometry(), *self.getTransform())

    def getVisualGeometry(self) -> tuple:
        return self._robot.urdf.links[self.getName()].visuals

    def __repr__(self):
        return f"RobotModelLink('{self._robot.getName()}', '{self.getName()}')"
