"""SimRobotController: the actuators of one simulated robot (seed 002 and Klamp't's API).

Actuator modes per joint, computed by the engine at every physics substep and clipped to the
torque limits (URDF effort):
    PID     tau = kP (qD - qA) + kD (dqD - dqA) + kI I + tau_ff, I the integral of qD - qA
            (kept so that |kI I| stays within the torque limit, as Klamp't does);
    torque  tau = the commanded torque.
Joint dry friction (stick-slip: the joint sticks until the breakaway torque, the URDF
`friction`) and viscous friction (URDF `damping`) act in every mode, inside the engine's
constraint solve.

Vectors are in joint space: one entry per joint of ``robot.getJointNames()`` (for a fixed base
that is q itself). Full vectors are accepted too, so Klamp't-style code can pass a whole
configuration: q-sized for positions (a floating base's 7 entries are ignored), v-sized for
velocities and torques. ``getSensed*`` return the full q and v of the robot.

The robot starts under PID holding its initial configuration with the gains of the world file
(zero gains, i.e. limp, when it gives none). Motion-queue commands (setMilestone, addMilestone,
addMilestoneLinear, setLinear/addLinear, setCubic/addCubic, setVelocity) are evaluated at the
controller's rate (``setRate``, 10 ms by default) and the PID target moves on linearly with the
queue's velocity between two evaluations, at every physics substep.
"""
from __future__ import annotations

import math

import numpy as np

from sim_node.sim import bounds
from sim_node.sim.motionqueue import MotionQueue

ACTUATOR_OFF, ACTUATOR_TORQUE, ACTUATOR_PID = 0, 1, 2
DEFAULT_RATE = 0.01             # [s] controller period (Klamp't's default control time step)
FALLBACK_VELOCITY_LIMIT = 1.0   # [rad/s or m/s] for the motion queue when the URDF gives none


class SimRobotController:
    """Commands and sensing of one robot in a Simulator (sim.controller(robot))."""

    def __init__(self, sim, index: int):
        self._sim = sim
        self._robot = sim.getWorld().robot(index)
        self._bind(index)
        nv = self._robot.model.nv
        self._n = nv - self._offset
        self._names = self._robot.getJointNames()
        st = self._robot.structure
        self._joint_q = np.array([st.joint_q_index[name] for name in self._names], dtype=np.intp)
        self._rate = DEFAULT_RATE
        self._next_tick = 0.0
        self._set_initial_gains()
        vmax = self._robot.getVelocityLimits()[self._offset:]
        vmax = np.where((vmax > 0) & np.isfinite(vmax), vmax, FALLBACK_VELOCITY_LIMIT)
        amax = self._robot.getAccelerationLimits()[self._offset:]
        self._queue = MotionQueue(self._n, vmax, amax) if self._n else None
        self._hold(self._scene.robot_q[index][self._joint_q])

    def _restart(self):
        # as when the simulator started: PID holding the robot's configuration, no integral,
        # no queue
        r = self._index
        self._scene.robot_iterm[r][:] = 0.0
        self._next_tick = 0.0
        self._hold(self._scene.robot_q[r][self._joint_q])

    def _bind(self, index: int):
        # (re)attach to the simulator's current scene as its robot `index`
        self._index = index
        self._scene = self._sim._scene
        self._offset = self._scene.robot_joint_offset[index]

    def _set_initial_gains(self):
        gains = self._robot.settings.get("controller", {}) if isinstance(
            self._robot.settings, dict) else {}
        st = self._robot.structure
        scene, r = self._scene, self._index
        for key, array in (("kp", scene.robot_kp[r]), ("ki", scene.robot_ki[r]),
                           ("kd", scene.robot_kd[r])):
            for name, value in gains.get(key, {}).items():
                array[st.joint_v_index[name]] = value

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
        q = scene.robot_q[r].copy()
        pid = scene.robot_mode[r][self._offset:] == ACTUATOR_PID
        if self in self._sim._ticking:
            q[self._joint_q] = self._queue.evaluate(self._time())[0]
        else:
            q[self._joint_q[pid]] = scene.robot_q_des[r][self._offset:][pid]
        return q

    def getCommandedVelocity(self) -> np.ndarray:
        """The commanded velocity (full v): the PID's velocity target, or the motion queue's
        velocity now while it runs; other entries read their sensed values."""
        scene, r = self._scene, self._index
        v = scene.robot_v[r].copy()
        if self in self._sim._ticking:
            v[self._offset:] = self._queue.evaluate(self._time())[1]
        else:
            pid = scene.robot_mode[r] == ACTUATOR_PID
            v[pid] = scene.robot_v_des[r][pid]
        return v

    def getCommandedTorque(self) -> np.ndarray:
        """The actuator torques of the last physics substep, after the torque limits (nv)."""
        return self._scene.robot_tau[self._index].copy()

    def getControlType(self) -> str:
        """'PID', 'torque', 'off' or 'mixed' (joints in different modes)."""
        modes = set(self._scene.robot_mode[self._index][self._offset:].tolist())
        names = {ACTUATOR_OFF: "off", ACTUATOR_TORQUE: "torque", ACTUATOR_PID: "PID"}
        return names[modes.pop()] if len(modes) == 1 else ("off" if not modes else "mixed")

    # -- gains -----------------------------------------------------------------------------
    def setPIDGains(self, kP, kI, kD):
        """PID gains, one per joint (non-negative)."""
        scene, r, o = self._scene, self._index, self._offset
        values = [self._joint_gains(k, name) for k, name in ((kP, "kP"), (kI, "kI"), (kD, "kD"))]
        for array, value in zip((scene.robot_kp[r], scene.robot_ki[r], scene.robot_kd[r]), values):
            array[o:] = value

    def getPIDGains(self):
        """(kP, kI, kD), one entry per joint."""
        scene, r, o = self._scene, self._index, self._offset
        return (scene.robot_kp[r][o:].copy(), scene.robot_ki[r][o:].copy(),
                scene.robot_kd[r][o:].copy())

    def _joint_gains(self, x, what) -> np.ndarray:
        a = np.asarray(x, dtype=float)
        nv = self._robot.model.nv
        if a.shape == (nv,) and nv != self._n:
            a = a[self._offset:]
        if a.shape != (self._n,):
            raise ValueError(f"setPIDGains: {what} needs {self._n} joint values, got shape "
                             f"{np.shape(x)}")
        if not np.all(np.isfinite(a)) or np.any(a < 0):
            raise ValueError(f"setPIDGains: {what} must be finite and non-negative")
        return a

    # -- direct commands -------------------------------------------------------------------
    def setPIDCommand(self, qdes, dqdes=None, tfeedforward=None):
        """PID towards qdes with velocity target dqdes (default 0) and feed-forward torque
        (default 0), held until the next command. Cancels a motion queue."""
        self._check_command("setPIDCommand", qdes, dqdes, tfeedforward)
        self._scene.set_commands(self._index, ACTUATOR_PID, qdes, dqdes, tfeedforward)
        self._stop_queue()

    def setTorqueCommand(self, torques):
        """Torque control: these torques (clipped to the limits), held until the next command.
        Cancels a motion queue."""
        self._check_command("setTorqueCommand", None, None, torques)
        self._scene.set_commands(self._index, ACTUATOR_TORQUE, None, None, torques)
        self._stop_queue()

    def setVelocity(self, dq, dt: float):
        """Move at joint velocity dq for dt seconds from the commanded configuration, then hold
        (PID tracking the moving target)."""
        self._queue_command("set_velocity", self._time(), self._joints(dq, "setVelocity"),
                            self._duration(dt, "setVelocity"))

    def setJointCommands(self, joints, mode: str, qdes=None, dqdes=None, tfeedforward=None,
                         duration: float = 0.0):
        """Command some joints only (the ROS bridge's per-joint commands); the others keep
        theirs. joints: joint names or indices; mode 'pid' or 'torque'; qdes (None: keep the
        current targets), dqdes and tfeedforward (None: zero) one value per listed joint;
        duration [s]: how long the PID targets move on with dqdes (inf: until the next
        command; 0: they hold). Cancels a motion queue."""
        modes = {"pid": ACTUATOR_PID, "torque": ACTUATOR_TORQUE}
        if mode not in modes:
            raise ValueError(f"setJointCommands: mode must be 'pid' or 'torque', got {mode!r}")
        index = []
        for joint in joints:
            if isinstance(joint, str):
                if joint not in self._names:
                    raise ValueError(f"setJointCommands: robot '{self._robot.getName()}' has no "
                                     f"joint '{joint}'; joints: {self._names}")
                index.append(self._names.index(joint))
            else:
                index.append(int(joint))
        duration = float(duration)
        if not duration >= 0.0:
            raise ValueError(f"setJointCommands: duration must be >= 0, got {duration}")
        self._check_command("setJointCommands", qdes, dqdes, tfeedforward)
        self._scene.set_joint_commands(self._index, index, modes[mode], qdes, dqdes,
                                       tfeedforward, duration)
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
        if self._queue is None or self not in self._sim._ticking:
            return 0.0
        return self._queue.remaining_time(self._time())

    # -- internals -------------------------------------------------------------------------
    def _time(self) -> float:
        return self._scene.time

    def _joints(self, x, method: str, position: bool = False) -> np.ndarray:
        a = np.asarray(x, dtype=float)
        model = self._robot.model
        full = model.nq if position else model.nv
        if a.shape == (full,) and full != self._n:
            a = a[self._joint_q] if position else a[self._offset:]
        if a.shape != (self._n,):
            raise ValueError(f"{method}: expected {self._n} joint values, got shape {np.shape(x)}")
        if position:
            return bounds.bounded(a, bounds.MAX_JOINT_POSITION, method, "rad or m")
        return bounds.bounded(a, bounds.MAX_ANGULAR_SPEED, method, "rad/s or m/s")

    @staticmethod
    def _check_command(method: str, qdes, dqdes, torques):
        # magnitudes only (shapes are the engine's check): sim_node.sim.bounds
        for x, bound, what, unit in ((qdes, bounds.MAX_JOINT_POSITION, "qdes", "rad or m"),
                                     (dqdes, bounds.MAX_ANGULAR_SPEED, "dqdes", "rad/s or m/s"),
                                     (torques, bounds.MAX_TORQUE, "torques", "N m or N")):
            if x is not None:
                bounds.bounded(x, bound, f"{method} {what}", unit)

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
        if self not in self._sim._ticking:
            # the queue starts from the commanded state: the PID target, or where the robot is
            pid = scene.robot_mode[r][self._offset:] == ACTUATOR_PID
            q = np.where(pid, scene.robot_q_des[r][self._offset:],
                         scene.robot_q[r][self._joint_q])
            self._queue.reset(q, self._time())
        getattr(self._queue, method)(*args)
        if self not in self._sim._ticking:
            self._sim._ticking.append(self)
        self._next_tick = self._time()

    def _stop_queue(self):
        # a direct command ends the queue (the next queue command restarts it from the
        # commanded state)
        if self._sim._ticking and self in self._sim._ticking:
            self._sim._ticking.remove(self)

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
            self._scene.set_commands(self._index, ACTUATOR_PID, q, (q_next - q) / h, None, h)
            self._next_tick = t + self._rate
        else:
            q, _ = queue.evaluate(t)
            self._scene.set_commands(self._index, ACTUATOR_PID, q)
            self._sim._ticking.remove(self)

    def _fake_advance(self, t: float, dt: float):
        # fakeSimulate: PID joints jump to their targets at time t
        scene, r, o = self._scene, self._index, self._offset
        pid = scene.robot_mode[r][o:] == ACTUATOR_PID
        if self in self._sim._ticking:
            q, dq = self._queue.evaluate(t)
            self._next_tick = t
            self._tick(t)
        else:
            q_des, v_des, advance = scene.robot_q_des[r], scene.robot_v_des[r], scene.robot_advance[r]
            step = np.minimum(advance, dt)
            q_des[:] += v_des * step
            advance[:] -= step
            v_des[advance <= 0.0] = 0.0
            q, dq = q_des[o:], v_des[o:]
        scene.robot_q[r][self._joint_q[pid]] = q[pid]
        scene.robot_v[r][o:][pid] = dq[pid]

    # state (Simulator.getState): everything the engine does not hold
    def _get_state(self) -> dict:
        return {"rate": self._rate, "next_tick": self._next_tick,
                "ticking": self in self._sim._ticking,
                "queue": None if self._queue is None else self._queue.get_state()}

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
            check = MotionQueue(self._n, np.ones(self._n), np.ones(self._n))
            check.set_state(queue)           # validates without touching ours
        return {"rate": rate, "next_tick": next_tick, "ticking": ticking, "queue": queue}

    def _set_state(self, state: dict):
        self._rate = state["rate"]
        self._next_tick = state["next_tick"]
        if state["queue"] is not None:
            self._queue.set_state(state["queue"])
        ticking = self._sim._ticking
        if state["ticking"] and self not in ticking:
            ticking.append(self)
        elif not state["ticking"] and self in ticking:
            ticking.remove(self)
        # keep the order of ticking controllers deterministic: robot order
        ticking.sort(key=lambda c: c._index)
