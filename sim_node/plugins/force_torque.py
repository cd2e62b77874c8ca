"""force_torque (sensor): the wrench a joint transmits, geometry_msgs/WrenchStamped on
``<namespace>/<topic>`` (topic "wrench" by default).

The joint's child subtree S (the child link and every link below it) moves under gravity, the
contact forces on it and the wrench W from the parent through the joint (constraint and
actuator together). Newton-Euler for S about the world origin O:

    F = dP/dt - m_S g - F_c                   P   = sum_i m_i v_i       (linear momentum)
    T_O = dL_O/dt - sum_i c_i x m_i g - T_c   L_O = sum_i c_i x m_i v_i + R_i I_i R_i^T w_i

(i over the links of S: mass m_i, centre of mass c_i moving at v_i, inertia I_i about it in link
axes, rotation R_i, angular velocity w_i; F_c, T_c the contact forces on S and their moment
about O). dP/dt and dL_O/dt are the change over the last control step divided by its length
(exact for the integrator's discrete motion); the first publication after a reset has no step
before it and takes them as 0 (exact at rest), and no contacts (none reported since the
reset). Published: the wrench at the joint (the child link's origin p, T_p = T_O - p x F) in
the child link's axes, as the parent applies it to the child ("parent_to_child", the default:
a hanging weight reads +m g upwards) or its opposite ("child_to_parent"), plus Gaussian noise
of std force_noise [N] / torque_noise [N m] per axis from ctx.rng.

Not included: forces applied with SimBody.applyForce* / applyWrench (the Simulator does not
expose them). Contacts on a body that welds links of both sides of the joint (a fixed joint)
count as on the child side.

Config: joint (required; any URDF joint, fixed ones included), rate [Hz] of sim time (default
100; 0: every control step), force_noise, torque_noise, measure_direction, frame_id ('' = the
child link's TF frame), topic. The sensor samples the state only at the step of each
publication and the one before it.

Readings: <topic>_force (3) [N], <topic>_torque (3) [N m] of the last publication.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import WrenchStamped

from sim_node.plugins.common import (SampleSchedule, body_world_id, check_std, require_robot,
                                     require_sampling_every_step, robot_of, topic_name)
from sim_node.ros.namespaces import link_frame
from sim_node.ros.stamps import time_msg
from sim_node.sim.simulation import SensorEmulator

QUEUE_DEPTH = 10
DIRECTIONS = ("parent_to_child", "child_to_parent")


def subtree_links(robot, joint: str) -> list[int]:
    """Link indices of the child subtree of `joint` (its child link first); ValueError naming
    the joints when there is no such joint."""
    structure = robot.structure
    joints = [j for j in structure.link_joint if j]
    if joint not in joints:
        raise ValueError(f"robot '{robot.getName()}' has no joint '{joint}'; joints: "
                         f"{', '.join(joints)}")
    child = structure.link_joint.index(joint)
    links = [child]
    for link, parent in enumerate(structure.link_parent):      # parents come first
        if parent in links and link not in links:
            links.append(link)
    return links


class ForceTorqueSensor(SensorEmulator):
    """The wrench through a joint, from the momentum of its child subtree (module
    docstring)."""

    @dataclass(frozen=True, kw_only=True)
    class Config(SensorEmulator.Config):
        """joint; rate [Hz]; force_noise [N], torque_noise [N m] (std); measure_direction
        parent_to_child or child_to_parent; frame_id ('' = the child link frame); topic."""
        joint: str
        rate: float = 100.0
        force_noise: float = 0.0
        torque_noise: float = 0.0
        measure_direction: str = "parent_to_child"
        frame_id: str = ""
        topic: str = "wrench"

        def __post_init__(self):
            super().__post_init__()
            require_sampling_every_step(self, "force_torque")
            check_std(self.force_noise, "force_noise")
            check_std(self.torque_noise, "torque_noise")
            if self.measure_direction not in DIRECTIONS:
                raise ValueError(f"measure_direction must be one of {', '.join(DIRECTIONS)}, "
                                 f"got '{self.measure_direction}'")

    def configure(self, ctx, config):
        require_robot(self, ctx)
        super().configure(ctx, config)
        robot = robot_of(ctx)
        self._links = subtree_links(robot, config.joint)
        masses = [robot.link(i).getMass() for i in self._links]
        self._mass = np.array([m.getMass() for m in masses])
        self._com_L = np.array([m.getCom() for m in masses])
        self._inertia_L = np.array([m.inertiaMatrix() for m in masses])
        self._moving = [k for k, m in enumerate(self._mass) if m > 0.0]
        self.frame_id = config.frame_id or link_frame(robot, self._links[0])
        self._sign = 1.0 if config.measure_direction == "parent_to_child" else -1.0
        self._keys = (f"{config.topic}_force", f"{config.topic}_torque")
        self._schedule = SampleSchedule(config.rate)
        self._publisher = None
        if ctx.create_publisher is not None:
            self._publisher = ctx.create_publisher(WrenchStamped, topic_name(ctx, config.topic),
                                                   QUEUE_DEPTH)

    def reset(self, scope):
        """Forget the last sample; publish from the current time."""
        self._schedule.reset(self.ctx.sim.getTime())
        self._previous = None       # (t [s], P (3), L_O (3))
        self._readings = {}

    def _momentum(self):
        # (P, L_O, R_WL (n, 3, 3), centres of mass c (n, 3)) of the subtree's links
        sim, robot = self.ctx.sim, robot_of(self.ctx)
        R, p = sim.getLinkTransforms(self.ctx.robot)
        R, p = R[self._links], p[self._links]
        c = p + np.einsum("nij,nj->ni", R, self._com_L)
        P, L = np.zeros(3), np.zeros(3)
        for k in self._moving:
            w, v = sim.body(robot.link(self._links[k])).getVelocity()
            m = self._mass[k]
            P += m * v
            L += m * np.cross(c[k], v) + R[k] @ (self._inertia_L[k] @ (R[k].T @ w))
        return P, L, R, p, c

    def _contact_wrench(self, t: float):
        # (F_c, T_c about the world origin) of the contacts on the subtree's bodies
        sim, robot = self.ctx.sim, robot_of(self.ctx)
        own = {body_world_id(sim, robot.link(i).getID()) for i in self._links}
        contacts = sim.getAllContacts()     # none right after a reset: no step since
        on_first = np.isin(contacts["id1"], list(own))
        on_second = np.isin(contacts["id2"], list(own))
        sign = (on_first.astype(float) - on_second.astype(float))[:, None]  # internal: 0
        force = contacts["force"] * sign
        return force.sum(axis=0), np.cross(contacts["point"], force).sum(axis=0)

    def update(self, t=None):
        sim = self.ctx.sim
        t = sim.getTime() if t is None else t
        publish, sample = self._schedule.step(t)
        if not sample:
            self._previous = None
            return self._readings
        P, L, R, p, c = self._momentum()
        previous, self._previous = self._previous, (t, P, L)
        if not publish:
            return self._readings
        dP, dL = np.zeros(3), np.zeros(3)
        if previous is not None and t > previous[0]:
            dP, dL = (P - previous[1]) / (t - previous[0]), (L - previous[2]) / (t - previous[0])
        g = sim.getGravity()
        F_c, T_c = self._contact_wrench(t)
        force_W = dP - self._mass.sum() * g - F_c
        torque_O = dL - np.cross(c, self._mass[:, None] * g).sum(axis=0) - T_c
        torque_W = torque_O - np.cross(p[0], force_W)
        R_WC = R[0]
        force = self._sign * (R_WC.T @ force_W)
        torque = self._sign * (R_WC.T @ torque_W)
        config, rng = self.config, self.ctx.rng
        if config.force_noise > 0.0:
            force += rng.normal(0.0, config.force_noise, 3)
        if config.torque_noise > 0.0:
            torque += rng.normal(0.0, config.torque_noise, 3)
        self._readings = {self._keys[0]: force, self._keys[1]: torque}
        if self._publisher is not None:
            message = WrenchStamped()
            message.header.stamp = time_msg(t)
            message.header.frame_id = self.frame_id
            f, tq = message.wrench.force, message.wrench.torque
            f.x, f.y, f.z = (float(v) for v in force)
            tq.x, tq.y, tq.z = (float(v) for v in torque)
            self._publisher.publish(message)
        return self._readings

    def get_state(self) -> dict:
        previous = self._previous
        return {"schedule": self._schedule.get_state(),
                "previous": None if previous is None else [previous[0], previous[1].tolist(),
                                                           previous[2].tolist()],
                "readings": {k: v.tolist() for k, v in self._readings.items()}}

    def set_state(self, state: dict):
        try:
            previous = state["previous"]
            previous = None if previous is None else (
                float(previous[0]), np.array(previous[1], dtype=float),
                np.array(previous[2], dtype=float))
            readings = {k: np.array(v, dtype=float) for k, v in state["readings"].items()}
            self._schedule.set_state(state["schedule"])       # last: nothing set on errors
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise ValueError(f"force_torque: bad state ({error})") from None
        self._previous, self._readings = previous, readings

    def shutdown(self):
        self._publisher = None
