"""Rigid objects and terrains: the bodies of a world besides robots."""
from __future__ import annotations

import math

import numpy as np

from sim_node.math.rotation_input import as_rotation
from sim_node.model import geometry as geo
from sim_node.model.errors import ModelLoadError
from sim_node.model.robot import Mass
from sim_node.model.settings import BodySettings


def rigid_transform(R, t):
    """(R (3, 3), t (3,)) checked: R a rotation as rotation_input reads it (a 3x3 matrix or
    Klamp't's column-major 9-list), t 3 finite numbers [m]."""
    R = as_rotation(R, "R")
    t = np.array(t, dtype=float)
    if t.shape != (3,):
        raise ValueError(f"t: a translation is 3 numbers, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("t: the translation contains NaN or infinity")
    return R, t


class _Body:
    """What rigid objects and terrains share: a name, an ID, collision geometry, a placement in
    the world and contact settings."""

    def __init__(self, name: str, geometry: tuple, R, t):
        self._name = name
        self._geometry = tuple(geometry)
        self._R, self._t = rigid_transform(R, t)
        self.settings = BodySettings()
        self._id = -1

    def getName(self) -> str:
        return self._name

    def getID(self) -> int:
        return self._id

    def getTransform(self):
        """(R, t): rotation (3x3) and translation (3) of the body frame in the world."""
        return self._R.copy(), self._t.copy()

    def getCollisionGeometry(self) -> tuple:
        """The collision elements (GeometryElement: origin in the body frame, shape)."""
        return self._geometry

    def geometry(self):
        """Klamp't's geometry(): a Geometry3D of the collision elements at the body's current
        transform. Bound to the body: setting its contents (setGeometricPrimitive, loadFile,
        transform, ...) changes the body's collision geometry (a Simulator made earlier keeps
        the geometry it was built with); its current transform is a copy."""
        from sim_node.model.geometry3d import Geometry3D

        g = Geometry3D.of_elements(self._geometry, self._R, self._t)
        g.bind(self._set_geometry)
        return g

    def _set_geometry(self, elements):
        if not elements:
            raise ValueError(f"'{self._name}' needs collision geometry; the geometry is empty")
        self._geometry = tuple(elements)


class RigidObjectModel(_Body):
    """A free rigid body: collision geometry, Mass, transform and velocity."""

    def __init__(self, name: str, geometry: tuple, mass: Mass, R=np.eye(3), t=np.zeros(3)):
        super().__init__(name, geometry, R, t)
        self._mass = mass
        self._w = np.zeros(3)
        self._v = np.zeros(3)

    def setTransform(self, R, t):
        self._R, self._t = rigid_transform(R, t)

    def getVelocity(self):
        """(w, v): angular and linear velocity [rad/s, m/s] in world axes."""
        return self._w.copy(), self._v.copy()

    def setVelocity(self, w, v):
        w, v = np.array(w, dtype=float).reshape(3), np.array(v, dtype=float).reshape(3)
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(v))):
            raise ValueError("velocity contains NaN or infinity")
        self._w, self._v = w, v

    def getMass(self) -> Mass:
        return Mass(self._mass.getMass(), self._mass.getCom(), self._mass.getInertia())

    def setMass(self, mass: Mass):
        if not isinstance(mass, Mass):
            raise TypeError(f"setMass expects a Mass, got {type(mass).__name__}")
        self._mass = Mass(mass.getMass(), mass.getCom(), mass.getInertia())

    def __repr__(self):
        return f"RigidObjectModel('{self._name}', mass={self._mass.getMass():g} kg)"


class TerrainModel(_Body):
    """A static body (ground plane, mesh, heightfield) fixed in the world."""

    def __init__(self, name: str, geometry: tuple, R=np.eye(3), t=np.zeros(3)):
        super().__init__(name, geometry, R, t)

    def __repr__(self):
        return f"TerrainModel('{self._name}')"


def geometry_mass(elements, mass: float, source: str = "<geometry>") -> Mass:
    """Mass properties of `mass` kg spread uniformly over the first volumetric element."""
    if not math.isfinite(mass) or mass <= 0:
        raise ValueError(f"mass must be positive, got {mass}")
    element = elements[0]
    try:
        props = geo.mass_properties(element.shape, mass)
    except geo.MeshLoadError as exc:
        raise ModelLoadError(source, "collision geometry", str(exc)) from None
    R, p = element.origin.R, element.origin.p
    return Mass(mass, p + R @ props.com, R @ props.inertia @ R.T)
