"""SimRobotController: the actuators of one simulated robot (seed 002 and Klamp't's API).

Actuator modes per joint, computed by the engine at every physics substep and clipped to the
torque limits (URDF effort):
    PID     tau = kP (qD - qA) + kD (dqD - dqA) + kI I + tau_ff, I the integral of qD - qA
            (kept so that |kI I| stays within the torque limit, as Klamp't does);
    torque  tau = the commanded torque.
Joint dry friction (stick-slip: the joint sticks until the breakaway torque, the URDF
`friction`) and viscous friction (URDF `damping`) act in every mode, inside the engine's
constraint solve.

Vectors are in joint space: positions hold the coordinates of the joints of
``robot.getJointNames()`` in order (q after a floating base's 7 entries; a spherical joint's
quaternion, normalised here, a zero one refused), velocities, torques and gains one entry per
joint DOF (v after a floating base's 6). For a fixed base these are q and v themselves. Full
vectors are accepted too, so Klamp't-style code can pass a whole configuration: q-sized for
positions (a floating base's 7 entries are ignored), v-sized for velocities and torques.
``getSensed*`` return the full q and v of the robot.

Spherical joints are under PID like the others, per DOF of their angular velocity (child axes):
the position error is the rotation vector log(R^T R_des) from the joint's orientation R to its
target R_des, kD acts on the angular velocity error, kI on the integral of the rotation error.
Floating joints in the tree are unactuated, as a floating base: their entries in commands are
ignored. setJointCommands takes scalar joints only (revolute, continuous, prismatic).

The robot starts under PID holding its initial configuration. A joint named in the world file's
`controller` gains takes all three gains from there (absent ones are 0); every other joint gets
the default gains derived from the robot (sim_node.sim.gains: a critically damped PID from the
largest mass-matrix diagonal entry within the joint limits, the joint damping and the effort
limit). Motion-queue commands (setMilestone, addMilestone,
addMilestoneLinear, setLinear/addLinear, setCubic/addCubic, setVelocity) are evaluated at the
controller's rate (``setRate``, 10 ms by default) and the PID target moves on linearly with the
queue's velocity between two evaluations, at every physics substep. Linear commands
(addMilestoneLinear, setLinear/addLinear, setVelocity) turn spherical joints along the geodesic
(slerp) between orientations; milestones and cubics end exactly at their target orientation
(sim_node.sim.motionqueue says how).
"""
from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np

from sim_node.engine.api import ActuatorMode, Data, crba
from sim_node.sim import bounds
from sim_node.sim.gains import (CONFIG_SAMPLES, DEFAULT_BANDWIDTH, MAX_BANDWIDTH_STEPS,
                                 default_pid_gains, largest_mass_diagonal)
from sim_node.sim.motionqueue import MotionQueue

ACTUATOR_OFF, ACTUATOR_TORQUE, ACTUATOR_PID = (int(m) for m in ActuatorMode)  # engine's, once
DEFAULT_RATE = 0.01             # [s] controller period (Klamp't's default control time step)
DEFAULT_GAINS_CACHE = 32        # robots whose default gains are remembered (least recent out)
_DEFAULT_GAINS: OrderedDict = OrderedDict()
_DEFAULT_GAINS_LOCK = threading.Lock()
FALLBACK_VELOCITY_LIMIT = 1.0   # [rad/s or m/s] for the motion queue when the URDF gives none


class SimRobotController:
    """Commands and sensing of one robot in a Simulator (sim.controller(robot))."""

    def __init__(self, sim, index: int):
        self._sim = sim
        self._robot = sim.getWorld().robot(index)
        self._bind(index)
        model, st = self._robot.model, self._robot.structure
        self._n = model.nv - self._offset           # joint DOFs
        self._nq = model.nq - self._q_offset        # joint coordinates
        self._names = self._robot.getJointNames()
        # within the joint vectors: quaternions (spherical, and floating joints' orientation)
        # with their angular velocities, and the entries of actuated joints
        self._rotations = []
        self._actuated_q = np.ones(self._nq, dtype=bool)
        self._actuated_v = np.ones(self._n, dtype=bool)
        for name in self._names:
            qi, vi = st.joint_q_index[name] - self._q_offset, st.joint_v_index[name] - self._offset
            if st.joint_type[name] == "spherical":
                self._rotations.append((qi, vi))
            elif st.joint_type[name] == "floating":
                self._rotations.append((qi + 3, vi + 3))
                self._actuated_q[qi:qi + 7] = False
                self._actuated_v[vi:vi + 6] = False
        self._rate = DEFAULT_RATE
        self._next_tick = 0.0
        self._sensors = []              # sim_node.sim.sensors, in the order added
        for entry in getattr(self._robot.settings, "sensors", ()):
            from sim_node.sim.sensors import make_sensor
            try:
                self._sensors.append(make_sensor(self, entry.name, entry.type,
                                                 dict(entry.settings)))
            except ValueError as error:
                raise ValueError(f"robot '{self._robot.getName()}', sensor '{entry.name}': "
                                 f"{error}") from None
        self._set_initial_gains()
        vmax = self._robot.getVelocityLimits()[self._offset:]
        vmax = np.where((vmax > 0) & np.isfinite(vmax), vmax, FALLBACK_VELOCITY_LIMIT)
        amax = self._robot.getAccelerationLimits()[self._offset:]
        self._queue = MotionQueue(self._n, vmax, amax, self._rotations) if self._n else None
        self._hold(self._scene.robot_q[index][self._q_offset:])

    def _restart(self):
        # as when the simulator started: PID holding the robot's configuration, no integral,
        # no queue, sensors before their first update
        for s in self._sensors:
            s._reset()
        r = self._index
        self._scene.robot_iterm[r][:] = 0.0
        self._next_tick = 0.0
        self._hold(self._scene.robot_q[r][self._q_offset:])

    def _bind(self, index: int):
        # (re)attach to the simulator's current scene as its robot `index`
        self._index = index
        self._scene = self._sim.engine
        self._offset = self._scene.robot_joint_offset[index]
        self._q_offset = self._scene.robot_joint_q_offset[index]

    def _set_initial_gains(self):
        # defaults from the robot (sim_node.sim.gains), then the world file's gains joint by joint
        gains = self._robot.settings.controller
        st = self._robot.structure
        scene, r, o = self._scene, self._index, self._offset
        defaults = self._default_gains()
        arrays = (scene.robot_kp[r], scene.robot_ki[r], scene.robot_kd[r])
        for array, default in zip(arrays, defaults):
            array[o:] = default
        explicit = {name for key in ("kp", "ki", "kd") for name in gains.get(key, {})}
        for name in explicit:
            dofs = slice(st.joint_v_index[name], st.joint_v_index[name] + st.joint_nv[name])
            for key, array in zip(("kp", "ki", "kd"), arrays):
                array[dofs] = gains.get(key, {}).get(name, 0.0)

    def _default_gains(self):
        # (kP, kI, kD) of the joint DOFs (sim_node.sim.gains), remembered for the inputs they
        # depend on: a Monte Carlo run builds a Simulator of the same robot per sample
        st, model, o = self._robot.structure, self._robot.model, self._offset
        q0 = self._scene.robot_q[self._index]
        # B_jj depends only on the coordinates of DOF j's descendants: with none (a pendulum,
        # independent one-DOF joints off the world) B is constant and q0 tells it all
        varies = model.has_mimic or bool((model.arrays["dof_parent"] >= 0).any())
        dt = self._sim.getSimStep()
        key = (id(model), dt, o, self._q_offset, q0.tobytes() if varies else b"",
               *(a.tobytes() for a in (model.arrays["inertia_B"], st.effort_limit, st.damping,
                                       st.q_lower, st.q_upper)))
        with _DEFAULT_GAINS_LOCK:
            hit = _DEFAULT_GAINS.get(key)
            if hit is not None and hit[0] is model:
                _DEFAULT_GAINS.move_to_end(key)
                return hit[1]
        data = Data(model)
        joint_quaternions = [k for k in st.quaternions if k >= self._q_offset]
        in_quaternion = {k + i for k in joint_quaternions for i in range(4)}
        scalar = [k for k in range(self._q_offset, model.nq) if k not in in_quaternion]
        inertia = largest_mass_diagonal(lambda q: crba.mass_matrix(model, data, q), q0,
                                        st.q_lower, st.q_upper, scalar, joint_quaternions,
                                        samples=CONFIG_SAMPLES if varies else 0)
        bandwidth = min(DEFAULT_BANDWIDTH, MAX_BANDWIDTH_STEPS / dt)
        defaults = default_pid_gains(inertia[o:], st.effort_limit[o:], st.damping[o:], bandwidth)
        with _DEFAULT_GAINS_LOCK:
            _DEFAULT_GAINS[key] = (model, defaults)  # (the model kept: its id stays its own)
            if len(_DEFAULT_GAINS) > DEFAULT_GAINS_CACHE:
                _DEFAULT_GAINS.popitem(last=False)
        return defaults

    def _hold(self, q_joints):
        # PID holding q_joints
        self._stop_queue()
        self._scene.set_commands(self._index, ACTUATOR_PID, q_joints)

    # -- the robot -------------------------------------------------------------------------
    def model(self):
        """The RobotModel this controller drives."""
        return self._robot

    def setRate(self, dt: float):
        """Controller period [s]: how often a motion queue is evaluated."""
        dt = float(dt)
        if not (0.0 < dt < math.inf):
            raise ValueError(f"setRate: the period must be a positive time, got {dt}")
        self._rate = dt

    def getRate(self) -> float:
        return self._rate

    # -- sensors (sim_node.sim.sensors: Klamp't's sensor framework) -------------------------
    def sensor(self, name_or_index):
        """A sensor of this robot by name or index (ValueError listing them)."""
        if isinstance(name_or_index, str):
            for s in self._sensors:
                if s.name() == name_or_index:
                    return s
        elif isinstance(name_or_index, (int, np.integer)) and not isinstance(name_or_index,
                                                                             bool):
            if 0 <= name_or_index < len(self._sensors):
                return self._sensors[name_or_index]
        names = ", ".join(repr(s.name()) for s in self._sensors) or "none"
        raise ValueError(f"robot '{self._robot.getName()}' has no sensor {name_or_index!r} "
                         f"(sensors: {names})")

    def addSensor(self, name: str, type: str):
        """Add a sensor of Klamp't type `type` (sim_node.sim.sensors.SENSOR_TYPES) with its
        default settings; returns it."""
        from sim_node.sim.sensors import MAX_SENSORS, make_sensor

        if any(s.name() == name for s in self._sensors):
            raise ValueError(f"robot '{self._robot.getName()}' already has a sensor {name!r}")
        if len(self._sensors) >= MAX_SENSORS:
            raise ValueError(f"robot '{self._robot.getName()}' has the most sensors allowed "
                             f"({MAX_SENSORS})")
        sensor = make_sensor(self, name, type)
        self._sensors.append(sensor)
        self._sim.count_sensors()
        return sensor

    def numSensors(self) -> int:
        return len(self._sensors)

    def getSensors(self) -> tuple:
        return tuple(self._sensors)

    def getSensorsDict(self) -> dict:
        return {s.name(): s for s in self._sensors}

    # -- sensing ---------------------------------------------------------------------------
    def getSensedConfig(self) -> np.ndarray:
        return self._scene.robot_q[self._index].copy()

    def getSensedVelocity(self) -> np.ndarray:
        return self._scene.robot_v[self._index].copy()

    def getCommandedConfig(self) -> np.ndarray:
        """The commanded configuration (full q): the PID target, or the motion queue's position
        now while it runs; joints under torque control and a floating base read their sensed
        values."""
        scene, r = self._scene, self._index
        if self in self._sim.ticking:
            q = scene.robot_q[r].copy()
            joints = q[self._q_offset:]
            joints[self._actuated_q] = self._queue.evaluate(self._time())[0][self._actuated_q]
            return q
        return scene.commanded_config(r)

    def getCommandedVelocity(self) -> np.ndarray:
        """The commanded velocity (full v): the PID's velocity target, or the motion queue's
        velocity now while it runs; other entries read their sensed values."""
        scene, r = self._scene, self._index
        v = scene.robot_v[r].copy()
        if self in self._sim.ticking:
            joints = v[self._offset:]
            joints[self._actuated_v] = self._queue.evaluate(self._time())[1][self._actuated_v]
        else:
            pid = scene.robot_mode[r] == ACTUATOR_PID
            v[pid] = scene.robot_v_des[r][pid]
        return v

    def getCommandedTorque(self) -> np.ndarray:
        """The actuator torques of the last physics substep, after the torque limits (nv)."""
        return self._scene.robot_tau[self._index].copy()

    def getSensedTorque(self) -> np.ndarray:
        """What an ideal joint torque sensor reads: the actuator torques applied at the last
        physics substep (nv, as getCommandedTorque; Klamp't reads 0 without a torque sensor)."""
        return self._scene.robot_tau[self._index].copy()

    def getControlType(self) -> str:
        """'PID', 'torque', 'off' or 'mixed' (joints in different modes)."""
        modes = set(self._scene.robot_mode[self._index][self._offset:].tolist())
        names = {ACTUATOR_OFF: "off", ACTUATOR_TORQUE: "torque", ACTUATOR_PID: "PID"}
        return names[modes.pop()] if len(modes) == 1 else ("off" if not modes else "mixed")

    # -- gains -----------------------------------------------------------------------------
    def setPIDGains(self, kP, kI, kD):
        """PID gains, one per joint DOF (non-negative)."""
        scene, r, o = self._scene, self._index, self._offset
        values = [self._joint_gains(k, name) for k, name in ((kP, "kP"), (kI, "kI"), (kD, "kD"))]
        for array, value in zip((scene.robot_kp[r], scene.robot_ki[r], scene.robot_kd[r]), values):
            array[o:] = value

    def getPIDGains(self):
        """(kP, kI, kD), one entry per joint DOF."""
        scene, r, o = self._scene, self._index, self._offset
        return (scene.robot_kp[r][o:].copy(), scene.robot_ki[r][o:].copy(),
                scene.robot_kd[r][o:].copy())

    def _joint_gains(self, x, what) -> np.ndarray:
        a = np.asarray(x, dtype=float)
        nv = self._robot.model.nv
        if a.shape == (nv,) and nv != self._n:
            a = a[self._offset:]
        if a.shape != (self._n,):
            raise ValueError(f"setPIDGains: {what} needs {self._n} joint DOF values, got shape "
                             f"{np.shape(x)}")
        if not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ValueError(f"setPIDGains: {what} must be finite and non-negative")
        return a

    # -- direct commands -------------------------------------------------------------------
    def setPIDCommand(self, qdes, dqdes=None, tfeedforward=None):
        """PID towards qdes with velocity target dqdes (default 0) and feed-forward torque
        (default 0), held until the next command. Cancels a motion queue."""
        if self._rotations:     # (quaternions normalised, a zero one refused by joint name)
            qdes = self._joints(qdes, "setPIDCommand", True)
        try:                    # (shapes and the bounds of sim_node.sim.bounds: the engine's)
            self._scene.set_commands(self._index, ACTUATOR_PID, qdes, dqdes, tfeedforward)
        except ValueError as error:
            raise ValueError(f"setPIDCommand: {error}") from None
        self._stop_queue()

    def setTorqueCommand(self, torques):
        """Torque control: these torques (clipped to the limits), held until the next command.
        Cancels a motion queue."""
        try:
            self._scene.set_commands(self._index, ACTUATOR_TORQUE, None, None, torques)
        except ValueError as error:
            raise ValueError(f"setTorqueCommand: {error}") from None
        self._stop_queue()

    def setTorque(self, t):
        """Klamp't's torque command: `t` has one torque per driver (robot.numDrivers(), in
        driver order [N m or N]) or is any vector setTorqueCommand takes (joint DOFs or nv).
        Clipped to the torque limits, held until the next command; cancels a motion queue."""
        robot = self._robot
        a = np.asarray(t, dtype=float) if not isinstance(t, str) else None
        nd = robot.numDrivers()
        if a is not None and a.shape == (nd,) and nd not in (self._n, robot.model.nv):
            # joints without a driver (spherical, planar, floating) get no torque
            torques = np.zeros(self._n)
            torques[robot.getDriverIndices()[1] - self._offset] = a
            t = torques
        try:
            self._scene.set_commands(self._index, ACTUATOR_TORQUE, None, None, t)
        except ValueError as error:
            raise ValueError(f"setTorque: {error} (or give {nd} driver torques)") from None
        self._stop_queue()

    def setVelocity(self, dq, dt: float):
        """Move at joint velocity dq for dt seconds from the commanded configuration, then hold
        (PID tracking the moving target)."""
        self._queue_command("set_velocity", self._time(), self._joints(dq, "setVelocity"),
                            self._duration(dt, "setVelocity"))

    def setJointCommands(self, joints, mode: str, qdes=None, dqdes=None, tfeedforward=None,
                         duration: float = 0.0):
        """Command some scalar joints only (the ROS bridge's per-joint commands); the others
        keep theirs. joints: names or indices (in getJointNames()) of revolute, continuous or
        prismatic joints; mode 'pid' or 'torque'; qdes (None: keep the current targets), dqdes
        and tfeedforward (None: zero) one value per listed joint; duration [s]: how long the
        PID targets move on with dqdes (inf: until the next command; 0: they hold). Cancels a
        motion queue."""
        modes = {"pid": ACTUATOR_PID, "torque": ACTUATOR_TORQUE}
        if mode not in modes:
            raise ValueError(f"setJointCommands: mode must be 'pid' or 'torque', got {mode!r}")
        st = self._robot.structure
        index = []
        for joint in joints:
            if isinstance(joint, str):
                if joint not in self._names:
                    raise ValueError(f"setJointCommands: robot '{self._robot.getName()}' has no "
                                     f"joint '{joint}'; joints: {self._names}")
                name = joint
            else:
                k = int(joint)
                if not 0 <= k < len(self._names):
                    raise IndexError(f"setJointCommands: joint index {k} out of range "
                                     f"[0, {len(self._names)})")
                name = self._names[k]
            if st.joint_nv[name] != 1:
                raise ValueError(f"setJointCommands: joint '{name}' is {st.joint_type[name]} "
                                 f"({st.joint_nv[name]} DOFs); command it with setPIDCommand, "
                                 "setTorqueCommand or the motion queue")
            index.append(st.joint_v_index[name] - self._offset)
        duration = float(duration)
        if not duration >= 0.0:
            raise ValueError(f"setJointCommands: duration must be >= 0, got {duration}")
        try:
            self._scene.set_joint_commands(self._index, index, modes[mode], qdes, dqdes,
                                           tfeedforward, duration)
        except ValueError as error:
            raise ValueError(f"setJointCommands: {error}") from None
        self._stop_queue()

    # -- motion queue ----------------------------------------------------------------------
    def setMilestone(self, q, dq=None):
        """Time-optimal motion (joint velocity and acceleration limits) from the commanded
        state to q, ending with velocity dq (default 0); replaces the queue."""
        self._queue_command("set_milestone", self._time(), self._joints(q, "setMilestone", True),
                            None if dq is None else self._joints(dq, "setMilestone"))

    def addMilestone(self, q, dq=None):
        """As setMilestone, appended after the end of the queue."""
        self._queue_command("add_milestone", self._joints(q, "addMilestone", True),
                            None if dq is None else self._joints(dq, "addMilestone"))

    def addMilestoneLinear(self, q):
        """As addMilestone, along the straight joint-space line to q."""
        self._queue_command("add_milestone_linear", self._joints(q, "addMilestoneLinear", True))

    def setLinear(self, q, dt: float):
        """Linear interpolation from the commanded configuration to q over dt seconds."""
        self._queue_command("set_linear", self._time(), self._joints(q, "setLinear", True),
                            self._duration(dt, "setLinear"))

    def addLinear(self, q, dt: float):
        self._queue_command("add_linear", self._joints(q, "addLinear", True),
                            self._duration(dt, "addLinear"))

    def setCubic(self, q, v, dt: float):
        """Cubic (Hermite) interpolation from the commanded configuration and velocity to
        (q, v) over dt seconds."""
        self._queue_command("set_cubic", self._time(), self._joints(q, "setCubic", True),
                            self._joints(v, "setCubic"), self._duration(dt, "setCubic"))

    def addCubic(self, q, v, dt: float):
        self._queue_command("add_cubic", self._joints(q, "addCubic", True),
                            self._joints(v, "addCubic"), self._duration(dt, "addCubic"))

    def remainingTime(self) -> float:
        """Time [s] until the motion queue ends (0 when idle)."""
        if self._queue is None or self not in self._sim.ticking:
            return 0.0
        return self._queue.remaining_time(self._time())

    # -- internals -------------------------------------------------------------------------
    def _time(self) -> float:
        return self._scene.time

    def _joints(self, x, method: str, position: bool = False) -> np.ndarray:
        # joint positions (quaternions normalised) or joint velocities, from joint or full
        # vectors; a new array
        try:
            a = np.array(x, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{method}: expected a vector of numbers, got {type(x).__name__}") from None
        model = self._robot.model
        n, full, offset = ((self._nq, model.nq, self._q_offset) if position
                           else (self._n, model.nv, self._offset))
        if a.shape == (full,) and full != n:
            a = a[offset:]
        if a.shape != (n,):
            what = "joint coordinates" if position and n != self._n else "joint values"
            raise ValueError(f"{method}: expected {n} {what} (or {full}), got shape {np.shape(x)}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{method}: contains NaN or infinity; values must be finite")
        bound, unit = ((bounds.MAX_JOINT_POSITION, "rad or m") if position
                       else (bounds.MAX_ANGULAR_SPEED, "rad/s or m/s"))
        if np.any(np.abs(a) > bound):       # sim_node.sim.bounds
            raise ValueError(f"{method}: {a.tolist()} is beyond the bound |value| <= {bound:g} "
                             f"{unit}")
        if position:
            for iq, _ in self._rotations:
                norm = np.linalg.norm(a[iq:iq + 4])
                if norm < 1e-9:
                    name = next(n for n in self._names if self._robot.structure.joint_q_index[n]
                                - self._q_offset <= iq < self._robot.structure.joint_q_index[n]
                                - self._q_offset + self._robot.structure.joint_nq[n])
                    raise ValueError(f"{method}: the quaternion of joint '{name}' is zero; it "
                                     "must be a rotation (x, y, z, w)")
                if abs(norm - 1.0) > 1e-12:
                    a[iq:iq + 4] /= norm
        return a

    @staticmethod
    def _duration(dt, method: str) -> float:
        dt = float(dt)
        if not (0.0 < dt < math.inf):
            raise ValueError(f"{method}: the duration must be a positive time, got {dt}")
        return dt

    def _queue_command(self, method: str, *args):
        if self._queue is None:
            raise ValueError(f"robot '{self._robot.getName()}' has no joints to command")
        scene, r = self._scene, self._index
        if self not in self._sim.ticking:
            # the queue starts from the commanded state: the PID target, or where the robot is
            self._queue.reset(scene.commanded_config(r)[self._q_offset:], self._time())
        getattr(self._queue, method)(*args)
        if self not in self._sim.ticking:
            self._sim.ticking.append(self)
        self._next_tick = self._time()

    def _stop_queue(self):
        # a direct command ends the queue (the next queue command restarts it from the
        # commanded state)
        if self._sim.ticking and self in self._sim.ticking:
            self._sim.ticking.remove(self)

    def _tick(self, t: float, tolerance: float = 1e-9):
        # at the controller's period: the PID target moves in a straight line from the queue's
        # position at t to its position at the next tick (or the queue's end), through every
        # physics substep in between, and stops there
        if t + tolerance < self._next_tick:
            return
        queue = self._queue
        if queue.active(t):
            h = min(self._rate, queue.end_time() - t)
            q, _ = queue.evaluate(t)
            q_next, _ = queue.evaluate(t + h)
            # (spherical joints turn along the geodesic between the two at a constant rate)
            self._scene.set_commands(self._index, ACTUATOR_PID, q,
                                     queue.difference(q, q_next) / h, None, h)
            self._next_tick = t + self._rate
        else:
            q, _ = queue.evaluate(t)
            self._scene.set_commands(self._index, ACTUATOR_PID, q)
            self._sim.ticking.remove(self)

    def _fake_advance(self, t: float, dt: float):
        # fakeSimulate: PID joints jump to their targets at time t
        scene, r, o = self._scene, self._index, self._offset
        pid = scene.robot_mode[r][o:] == ACTUATOR_PID
        if self in self._sim.ticking:
            _, dq = self._queue.evaluate(t)
            self._next_tick = t
            self._tick(t)
        else:
            scene.advance_targets(r, dt)
            dq = scene.robot_v_des[r][o:]
        scene.robot_q[r][:] = scene.commanded_config(r)
        scene.robot_v[r][o:][pid] = dq[pid]

    # state (Simulator.getState): everything the engine does not hold
    def _get_state(self) -> dict:
        state = {"rate": self._rate, "next_tick": self._next_tick,
                 "ticking": self in self._sim.ticking,
                 "queue": None if self._queue is None else self._queue.get_state()}
        if self._sensors:
            state["sensors"] = [s._get_state() for s in self._sensors]
        return state

    def _parse_state(self, state: dict) -> dict:
        try:
            rate, next_tick = float(state["rate"]), float(state["next_tick"])
            ticking = bool(state["ticking"])
            queue = state["queue"]
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"setState: bad controller state for robot "
                             f"'{self._robot.getName()}' ({e})") from None
        if not (0.0 < rate < math.inf and math.isfinite(next_tick)):
            raise ValueError(f"setState: bad controller state for robot "
                             f"'{self._robot.getName()}' (rate {rate}, next tick {next_tick})")
        if (queue is None) != (self._queue is None):
            raise ValueError(f"setState: the state does not match robot '{self._robot.getName()}'")
        if queue is not None:
            check = MotionQueue(self._n, np.ones(self._n), np.ones(self._n), self._rotations)
            check.set_state(queue)           # validates without touching ours
        # sensors by name: ours missing from the state (added since) restart, a sensor of
        # the state we do not have is an error
        sensors = state.get("sensors", [])
        if not isinstance(sensors, list) or not all(isinstance(s, dict) for s in sensors):
            raise ValueError(f"setState: bad sensor states for robot '{self._robot.getName()}'")
        sensors = {s.get("name"): s for s in sensors}
        unknown = set(sensors) - {s.name() for s in self._sensors}
        if unknown:
            raise ValueError(f"setState: robot '{self._robot.getName()}' has no sensor(s) "
                             f"{sorted(map(str, unknown))}")
        sensors = {s.name(): s._parse_state(sensors[s.name()]) for s in self._sensors
                   if s.name() in sensors}
        return {"rate": rate, "next_tick": next_tick, "ticking": ticking, "queue": queue,
                "sensors": sensors}

    def _set_state(self, state: dict):
        for s in self._sensors:
            if s.name() in state["sensors"]:
                s._set_state(state["sensors"][s.name()])
            else:
                s._reset()
        self._rate = state["rate"]
        self._next_tick = state["next_tick"]
        if state["queue"] is not None:
            self._queue.set_state(state["queue"])
        ticking = self._sim.ticking
        if state["ticking"] and self not in ticking:
            ticking.append(self)
        elif not state["ticking"] and self in ticking:
            ticking.remove(self)
        # keep the order of ticking controllers deterministic: robot order
        ticking.sort(key=lambda c: c._index)
