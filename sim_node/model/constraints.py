"""User constraints of a WorldModel (PyBullet's createConstraint): what they join, and their
engine specs.

A Constraint holds a frame on a parent entity (a robot link or a rigid object) on a frame of a
child entity (a robot link, a rigid object, or None: the world). Frames are (R, p) in the
entity's own frame: a link's URDF frame, a rigid object's frame (the world's for None). The
world keeps them (WorldModel.addConstraint), so they survive every rebuild of the simulation;
removing an entity removes the constraints on it. sim_node.model.scene.constraint_specs turns
them into the specs of the engine's Scene.set_constraints, on collision bodies and body frames.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim_node.model.bodies import RigidObjectModel
from sim_node.model.robot import RobotModelLink
from sim_node.model.scene import scalar_dof

KINDS = ("fixed", "point2point", "gear", "prismatic")
ROWS = {"fixed": 6, "point2point": 3, "gear": 1, "prismatic": 5}
DEFAULT_ERP = 0.2           # fraction of the position error removed per step


@dataclass(eq=False)
class Constraint:
    """One user constraint. kind: 'fixed', 'point2point', 'gear', 'prismatic'; parent, child:
    RobotModelLink or RigidObjectModel (child None: the world); parent_frame, child_frame:
    (R (3x3), p (3) [m]) in the entity frames; axis (3): a prismatic's slide axis in the
    parent frame's axes (parent_frame's R); max_force [N or N m] (inf: unbounded); erp in [0, 1]; gear_ratio,
    gear_aux (a link of the parent's robot whose joint velocity the gear pair follows, or
    None), relative_position_target [rad or m] (gear: the target of q_parent + ratio
    q_child; with erp 0 it is not corrected)."""
    kind: str
    parent: object
    child: object = None
    parent_frame: tuple = field(default_factory=lambda: (np.eye(3), np.zeros(3)))
    child_frame: tuple = field(default_factory=lambda: (np.eye(3), np.zeros(3)))
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    max_force: float = np.inf
    erp: float = DEFAULT_ERP
    gear_ratio: float = 1.0
    gear_aux: object = None
    relative_position_target: float = 0.0
    uid: int = -1           # set by WorldModel.addConstraint

    def entities(self) -> tuple:
        """The entities (robots for links, rigid objects) this constraint involves."""
        return tuple(_owner(e) for e in (self.parent, self.child, self.gear_aux) if e is not None)

    def check(self):
        """ValueError naming the field when something cannot be simulated."""
        if self.kind not in KINDS:
            raise ValueError(f"constraint kind {self.kind!r} unknown; valid: {', '.join(KINDS)}")
        for name in ("parent", "child"):
            entity = getattr(self, name)
            if entity is None and name == "child":
                continue
            if not isinstance(entity, (RobotModelLink, RigidObjectModel)):
                raise ValueError(f"constraint {name} must be a robot link or a rigid object"
                                 f"{' (or None: the world)' if name == 'child' else ''}, got "
                                 f"{type(entity).__name__}")
        if self.child is not None and _same(self.parent, self.child):
            raise ValueError("constraint parent and child are the same body")
        for name in ("parent_frame", "child_frame"):
            R, p = getattr(self, name)
            R = np.asarray(R, dtype=float)
            p = np.asarray(p, dtype=float)
            if R.shape != (3, 3) or not np.all(np.isfinite(R)) \
                    or not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
                raise ValueError(f"constraint {name}: R must be a 3x3 rotation matrix")
            if p.shape != (3,) or not np.all(np.isfinite(p)):
                raise ValueError(f"constraint {name}: p must be 3 finite numbers [m]")
        axis = np.asarray(self.axis, dtype=float)
        if axis.shape != (3,) or not np.all(np.isfinite(axis)):
            raise ValueError("constraint axis must be 3 finite numbers")
        if self.kind == "prismatic" and not np.linalg.norm(axis) > 1e-9:
            raise ValueError("a prismatic constraint's axis must not be zero")
        if not (isinstance(self.max_force, (int, float)) and self.max_force >= 0):
            raise ValueError(f"constraint max_force must be >= 0 (inf: unbounded), got "
                             f"{self.max_force!r}")
        if not (isinstance(self.erp, (int, float)) and 0.0 <= self.erp <= 1.0):
            raise ValueError(f"constraint erp must be in [0, 1], got {self.erp!r}")
        for name in ("gear_ratio", "relative_position_target"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and np.isfinite(value)):
                raise ValueError(f"constraint {name} must be a finite number, got {value!r}")
        if self.kind == "gear":
            for name in ("parent", "child", "gear_aux"):
                link = getattr(self, name)
                if link is None and name == "gear_aux":
                    continue
                if not isinstance(link, RobotModelLink) or scalar_dof(link) < 0:
                    raise ValueError(f"a gear constraint's {name} must be a robot link whose "
                                     "joint is revolute, continuous or prismatic")
            if self.gear_aux is not None and self.gear_aux.getRobot() is not self.parent.getRobot():
                raise ValueError("a gear constraint's gear_aux must be a link of the parent's robot")


def _owner(entity):
    return entity.getRobot() if isinstance(entity, RobotModelLink) else entity


def _same(a, b) -> bool:
    if isinstance(a, RobotModelLink) and isinstance(b, RobotModelLink):
        return a.getRobot() is b.getRobot() and a.getIndex() == b.getIndex()
    return a is b

