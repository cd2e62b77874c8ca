"""Where a robot's scalar joints sit in its q and v, and their limits: what joint states and
joint commands carry (sensor_msgs/JointState, ros2_control's command arrays)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim_node.sim import bounds


@dataclass(frozen=True)
class JointLayout:
    """Where a robot's scalar joints (the revolute, continuous and prismatic joints of
    robot.getJointNames(), in order) sit in its q and v: the joints of sensor_msgs/JointState
    and of joint commands. Spherical, planar and floating joints have several coordinates and
    are left out (their child links are on /tf).

    names: joint names (n); joint_index (n): their index in robot.getJointNames() (what
    SimRobotController.setJointCommands takes); q_index, v_index (n): their entries of q and v;
    lower, upper (n): position limits [rad or m]; velocity_limit, effort_limit (n): |dq|
    [rad/s or m/s] and |tau| [N m or N] bounds; multi_dof: name -> type of the joints left out.
    Where the URDF gives no limit (or 0), the documented bounds of sim_node.sim.bounds stand in
    (MAX_JOINT_POSITION, MAX_ANGULAR_SPEED, MAX_TORQUE): commands beyond them are refused."""
    names: tuple
    joint_index: np.ndarray
    q_index: np.ndarray
    v_index: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    multi_dof: dict

    @classmethod
    def of(cls, robot) -> "JointLayout":
        st = robot.structure
        all_names = robot.getJointNames()
        scalar = [i for i, n in enumerate(all_names) if st.joint_nv[n] == 1]
        names = tuple(all_names[i] for i in scalar)
        q_index = np.array([st.joint_q_index[n] for n in names], dtype=np.intp)
        v_index = np.array([st.joint_v_index[n] for n in names], dtype=np.intp)
        lower, upper = robot.getJointLimits()

        def bound(values, absurd):
            # the URDF's limit, or (none given) the documented bound (sim_node.sim.bounds)
            values = np.asarray(values, dtype=float)[v_index]
            return np.where((values > 0) & np.isfinite(values), values, absurd)

        return cls(names, np.array(scalar, dtype=np.intp), q_index, v_index,
                   np.maximum(lower[q_index], -bounds.MAX_JOINT_POSITION),
                   np.minimum(upper[q_index], bounds.MAX_JOINT_POSITION),
                   bound(robot.getVelocityLimits(), bounds.MAX_ANGULAR_SPEED),
                   bound(robot.getTorqueLimits(), bounds.MAX_TORQUE),
                   {n: st.joint_type[n] for n in all_names if st.joint_nv[n] != 1})

    def index(self, names) -> np.ndarray:
        """Joint indices of `names`; ValueError naming an unknown, multi-DOF or repeated
        joint."""
        lookup = {n: i for i, n in enumerate(self.names)}
        out = []
        for name in names:
            if name in self.multi_dof:
                raise ValueError(f"joint '{name}' is a {self.multi_dof[name]} joint: joint "
                                 "states and joint commands carry scalar joints only (revolute, "
                                 "continuous, prismatic)")
            if name not in lookup:
                raise ValueError(f"unknown joint '{name}'; joints: {', '.join(self.names)}")
            out.append(lookup[name])
        if len(set(out)) != len(out):
            repeated = sorted({n for n in names if list(names).count(n) > 1})
            raise ValueError(f"joint(s) listed twice: {', '.join(repeated)}")
        return np.array(out, dtype=np.intp)

    def check(self, joints: np.ndarray, what: str, values, limit_low, limit_high, unit: str):
        """ValueError unless `values` (one per joint of `joints`) are finite and within
        [limit_low, limit_high] per joint."""
        values = np.asarray(values, dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            name = self.names[joints[np.argmax(bad)]]
            raise ValueError(f"{what} of joint '{name}' is {values[np.argmax(bad)]}; values "
                             f"must be finite")
        outside = (values < limit_low[joints]) | (values > limit_high[joints])
        if outside.any():
            k = int(np.argmax(outside))
            j = joints[k]
            raise ValueError(f"{what} {values[k]:g} {unit} of joint '{self.names[j]}' is "
                             f"outside its limits [{limit_low[j]:g}, {limit_high[j]:g}]")
        return values

    def check_positions(self, joints, values):
        return self.check(joints, "position", values, self.lower, self.upper, "rad or m")

    def check_velocities(self, joints, values):
        return self.check(joints, "velocity", values, -self.velocity_limit,
                          self.velocity_limit, "rad/s or m/s")

    def check_efforts(self, joints, values):
        return self.check(joints, "effort", values, -self.effort_limit, self.effort_limit,
                          "N m or N")
