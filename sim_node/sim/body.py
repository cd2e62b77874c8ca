"""SimBody: one simulated body of a Simulator (seed 002), for "playing God".

As in the seed, a SimBody's reference frame is centred at the body's centre of mass, with the
axes of the link or object frame: getTransform / setTransform, getVelocity / setVelocity and
local points of applyForceAtLocalPoint use that frame. getObjectTransform /
setObjectTransform give the link or object frame itself (the WorldModel's frame).

Bodies are rigid objects (free, or kinematic once dynamics are disabled: they then move with
the velocity set on them), terrains (static) and robot links (moved by their joints: only the
root link of a floating-base robot can be placed or given a velocity). Links welded together
by fixed joints form one simulated body; their SimBodies share collision settings.
"""
from __future__ import annotations

import numpy as np
from transforms3d.quaternions import mat2quat, quat2mat

from sim_node.math.rotation_input import as_rotation
from sim_node.model.robot import RobotModelLink
from sim_node.model.surface import SurfaceParameters
from sim_node.model.world import RigidObjectModel, TerrainModel
from sim_node.sim import bounds

_KINEMATIC, _FREE, _ROBOT = 1, 2, 3


def _rotation(R, what: str) -> np.ndarray:
    """A 3x3 matrix, or Klamp't's column-major 9-list (sim_node.math.rotation_input)."""
    return as_rotation(R, what)


def _xyzw(R) -> np.ndarray:
    w, x, y, z = mat2quat(R)
    return np.array([x, y, z, w])


class SimBody:
    """A body of the simulation (sim.body(link_or_object))."""

    def __init__(self, sim, id_: int):
        self._sim = sim
        self._id = id_
        scene = sim.engine
        self._body = sim.layout.body_of_id[id_]
        info = scene.body_info(self._body)
        self._kind = info["kind"]
        self._index = info["index"]
        self._dynamics = True
        entity = sim.getWorld().getEntity(id_)
        self._entity = entity
        if isinstance(entity, RobotModelLink):
            self._robot = sim._robot_index(entity.getRobot())
            self._link = entity.getIndex()
            self._com_local = entity.getMass().getCom()
            structure = entity.getRobot().structure
            self._root = structure.floating and structure.link_parent[self._link] < 0
        elif isinstance(entity, RigidObjectModel):
            self._com_local = entity.getMass().getCom()
        else:
            self._com_local = np.zeros(3)

    def getID(self) -> int:
        return self._id

    def __repr__(self):
        return f"SimBody({self._sim.getWorld().getName(self._id)!r}, ID {self._id})"

    # -- what kind of body -----------------------------------------------------------------
    def _is_object(self) -> bool:
        return self._kind in (_KINEMATIC, _FREE)

    def _free_state(self) -> np.ndarray:
        return self._sim.engine.free_state[self._index]

    def enable(self, enabled: bool = True):
        """Take the body out of the simulation (False) or put it back: a disabled body collides
        with nothing and, if it is a rigid object, stays where it is."""
        scene = self._sim.engine
        scene.set_body_enabled(self._body, bool(enabled))
        if self._is_object():
            if not enabled:
                self._free_state()[7:13] = 0.0
            scene.set_free_body_kinematic(self._index, not (enabled and self._dynamics))

    def isEnabled(self) -> bool:
        return bool(self._sim.engine.body_enabled(self._body))

    def enableDynamics(self, enabled: bool = True):
        """Rigid objects only: False makes the body kinematic, moving with the velocity given
        by setVelocity (nothing pushes it); True gives it back to the dynamics."""
        if not self._is_object():
            what = "a terrain" if isinstance(self._entity, TerrainModel) else "a robot link"
            raise ValueError(f"enableDynamics: {self!r} is {what}; only rigid objects can switch "
                             f"between dynamic and kinematic")
        self._dynamics = bool(enabled)
        self._sim.engine.set_free_body_kinematic(self._index,
                                                 not (self._dynamics and self.isEnabled()))

    def isDynamicsEnabled(self) -> bool:
        if self._is_object():
            return self._dynamics
        return self._kind == _ROBOT

    # -- placement -------------------------------------------------------------------------
    def getObjectTransform(self):
        """(R, t) of the link or object frame in the world."""
        if self._is_object():
            s = self._free_state()
            R = quat2mat([s[6], s[3], s[4], s[5]])
            return R, s[0:3] - R @ self._com_local
        if self._kind == _ROBOT:
            return self._sim.link_transform(self._robot, self._link)
        R, t = self._entity.getTransform()
        return R, t

    def getTransform(self):
        """(R, t) of the body frame: the object frame's axes, origin at the centre of mass."""
        R, t = self.getObjectTransform()
        return R, t + R @ self._com_local

    def setTransform(self, R, t):
        """Place the body by its centre-of-mass frame (see getTransform)."""
        R = _rotation(R, "setTransform")
        t = bounds.position(t, "setTransform translation")
        self.setObjectTransform(R, t - R @ self._com_local)

    def setObjectTransform(self, R, t):
        """Place the body by its link or object frame."""
        R = _rotation(R, "setObjectTransform")
        t = bounds.position(t, "setObjectTransform translation")
        if self._is_object() and np.any(np.abs(t + R @ self._com_local) > bounds.MAX_POSITION):
            raise ValueError(f"setObjectTransform: the centre of mass would be beyond the "
                             f"bound |x| <= {bounds.MAX_POSITION:g} m")
        scene = self._sim.engine
        if self._is_object():
            s = self._free_state()
            s[0:3] = t + R @ self._com_local
            s[3:7] = _xyzw(R)
        elif self._kind == _ROBOT and self._root:
            q = scene.robot_q[self._robot]
            q[0:3] = t
            q[3:7] = _xyzw(R)
        else:
            raise ValueError(f"setTransform: {self!r} cannot be moved "
                             f"({self._immovable_reason()})")
        scene.refresh()

    def _immovable_reason(self) -> str:
        if isinstance(self._entity, TerrainModel):
            return "a terrain is static"
        return "its joints place it; only the root link of a floating-base robot can be placed"

    # -- velocity --------------------------------------------------------------------------
    def getVelocity(self):
        """(w, v): angular velocity and the velocity of the centre of mass, world axes."""
        if self._is_object():
            s = self._free_state()
            return s[10:13].copy(), s[7:10].copy()
        if self._kind == _ROBOT:
            model, data, q = self._sim.robot_query(self._robot)
            from sim_node.engine.api import kinematics

            J = kinematics.jacobian(model, data, q, self._link, self._com_local)
            twist = J @ self._sim.engine.robot_v[self._robot]
            return twist[:3].copy(), twist[3:].copy()
        return np.zeros(3), np.zeros(3)

    def setVelocity(self, w, v):
        """Set the angular velocity w and the centre-of-mass velocity v (world axes). For a
        kinematic body (dynamics disabled) this is the motion it keeps."""
        w = bounds.angular_velocity(w, "setVelocity angular")
        v = bounds.linear_velocity(v, "setVelocity linear")
        scene = self._sim.engine
        if self._is_object():
            s = self._free_state()
            s[7:10] = v
            s[10:13] = w
        elif self._kind == _ROBOT and self._root:
            R, _ = self.getObjectTransform()
            v_origin = v - np.cross(w, R @ self._com_local)
            qd = scene.robot_v[self._robot]
            qd[0:3] = R.T @ v_origin        # base velocities in the base frame
            qd[3:6] = R.T @ w
        else:
            raise ValueError(f"setVelocity: {self!r} cannot be given a velocity "
                             f"({self._immovable_reason()})")

    def _object_state(self):
        """(R, t, w, v) of the object frame: v is the velocity of its origin."""
        R, t = self.getObjectTransform()
        w, v_com = self.getVelocity()
        return R, t, w, v_com - np.cross(w, R @ self._com_local)

    # -- surface and boundary layer --------------------------------------------------------
    def getSurface(self) -> SurfaceParameters:
        r, f, k, c = self._sim.engine.get_body_surface(self._body)
        return SurfaceParameters(kRestitution=r, kFriction=f, kStiffness=k, kDamping=c)

    def setSurface(self, surface: SurfaceParameters):
        if not isinstance(surface, SurfaceParameters):
            raise TypeError(f"setSurface expects SurfaceParameters, got {type(surface).__name__}")
        SurfaceParameters(surface.kRestitution, surface.kFriction, surface.kStiffness,
                          surface.kDamping)      # validates a possibly mutated instance
        bounds.surface(surface, "setSurface")
        self._sim.engine.set_body_surface(self._body, surface.kRestitution, surface.kFriction,
                                          surface.kStiffness, surface.kDamping)

    def getCollisionPadding(self) -> float:
        return self._sim.engine.get_body_padding(self._body)

    def setCollisionPadding(self, padding: float):
        """Boundary-layer thickness [m] of this body (seed 002; 2.5 mm by default), within
        [0, MAX_PADDING] (sim_node.sim.bounds)."""
        padding = float(padding)
        if not (0.0 <= padding <= bounds.MAX_PADDING):
            raise ValueError(f"setCollisionPadding: padding must be a length in [0, "
                             f"{bounds.MAX_PADDING:g}] m, got {padding}")
        self._sim.engine.set_body_padding(self._body, padding)

    # -- forces (held over the next simulate() call) --------------------------------------
    def applyForceAtPoint(self, fw, pw):
        """Add the world force fw [N] at the world point pw [m]."""
        fw = bounds.force(fw, "applyForceAtPoint force")
        pw = bounds.position(pw, "applyForceAtPoint point")
        com = self.getTransform()[1]
        self._add(fw, np.cross(pw - com, fw))

    def applyForceAtLocalPoint(self, fw, pl):
        """Add the world force fw [N] at the point pl given in the body frame (getTransform)."""
        fw = bounds.force(fw, "applyForceAtLocalPoint force")
        pl = bounds.position(pl, "applyForceAtLocalPoint point")
        R, _ = self.getTransform()
        self._add(fw, np.cross(R @ pl, fw))

    def applyWrench(self, f, t):
        """Add the force f [N] at the centre of mass and the torque t [N m], world axes."""
        self._add(bounds.force(f, "applyWrench force"), bounds.torque(t, "applyWrench torque"))

    def _add(self, force, torque):
        if not (self._is_object() or self._kind == _ROBOT):
            raise ValueError(f"{self!r} is static (a terrain or a robot link fixed to the world): "
                             f"forces on it have no effect")
        self._sim.add_wrench(self._id, np.concatenate([force, torque]))

    def _apply_wrench(self, wrench):
        # into the engine for the coming simulate() call
        scene = self._sim.engine
        if self._is_object():
            scene.free_wrench[self._index] += wrench
            return
        from sim_node.engine.api import kinematics

        model, data, q = self._sim.robot_query(self._robot)
        J = kinematics.jacobian(model, data, q, self._link, self._com_local)
        # J rows [angular; linear]: generalized force J^T [torque; force]
        scene.robot_tau_ext[self._robot][:] += J[:3].T @ wrench[3:] + J[3:].T @ wrench[:3]
