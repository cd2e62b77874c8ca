"""Klamp't's sensor framework on SimRobotController (issue 12 §2): simulated sensors with
Klamp't's type names, settings (names, string values) and measurement layouts.

    s = sim.controller(0).addSensor("lidar", "LaserRangeSensor")
    s.setSetting("link", "3"); s.setSetting("measurementCount", "360")
    sim.simulate(0.1)
    ranges = s.getMeasurements()            # numpy (n,), names in s.measurementNames()

Types: LaserRangeSensor (sim.rayCast), CameraSensor (sim_node.sim.camera.Camera),
JointPositionSensor, JointVelocitySensor, DriverTorqueSensor, ContactSensor,
ForceTorqueSensor, Accelerometer, GyroSensor, IMUSensor.

Updates: a sensor measures while the Simulator steps (Simulator._advance splits the substeps at
the sensors' due times, as it does for motion-queue ticks): with ``rate`` r > 0 [Hz] at the
first substep boundary at or after every k / r of sim time (the first at the first simulate()
call, of the state then); with rate 0 at the end of every simulate() call. Before its first
update a sensor's measurements are empty (as Klamp't's). A disabled sensor keeps its last
measurements and does not advance its schedule.

Noise: Klamp't's variances (a variance, not a std: std = sqrt(variance)); resolution rounds to
the nearest multiple after the noise (Klamp't's Discretize). Every sensor draws from its own
generator (PCG64) seeded by the ``seed`` setting (our addition; default 0); its state is part
of Simulator.getState(), so setState continues noisy sensors bit for bit.

Settings are strings as in Klamp't (getSetting / setSetting); numbers print as C++ streams do
(6 significant digits), the value kept is the one parsed. ``Tsensor`` is Klamp't's string of a
rigid transform: the rotation's 3 rows, then the translation (12 numbers; Klamp't 0.10 reads
and prints the rotation row by row). setSetting validates: a bad value raises ValueError naming
the sensor, the setting and what is valid, and changes nothing.

Our additions (in settings() beside Klamp't's): ``seed`` on every sensor, ``dropout`` on
LaserRangeSensor (the fraction of readings returned as out of range, i.e. depthMaximum).
"""
from __future__ import annotations

import base64
import math
import zlib

import numpy as np

from sim_node.math.rotation_input import as_matrix

MAX_SENSORS = 256               # per robot
MAX_RATE = 1e6                  # [Hz]
MAX_LASER_RAYS = 1_000_000      # measurementCount bound
MAX_CAMERA_PIXELS = 4096 * 4096  # xres * yres bound (2 channels of float64: 268 MB)
MAX_RANGE = 1e4                 # [m] length of a laser ray with depthMaximum = inf
MAX_SEED = 2 ** 63 - 1

# Klamp't's sweep patterns (LaserRangeSensor xSweepType / ySweepType)
SWEEP_SINUSOID, SWEEP_TRIANGULAR, SWEEP_SAWTOOTH = 0, 1, 2


# -- setting formats -------------------------------------------------------------------------
def _g(x: float) -> str:
    # a number as a C++ ostream prints it (6 significant digits; inf as "inf")
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:g}"


class _Setting:
    """One setting: parse(str) -> value (ValueError with what is valid), format(value)."""

    def __init__(self, default, parse, fmt=None, valid=""):
        self.default, self.parse, self.fmt, self.valid = default, parse, fmt or _g, valid


def _number(lo=-math.inf, hi=math.inf, allow_inf=False, integer=False):
    def parse(text):
        try:
            x = int(text) if integer else float(text)
        except (TypeError, ValueError):
            raise ValueError("not a number") from None
        if isinstance(x, float) and math.isnan(x):
            raise ValueError("NaN")
        if math.isinf(x) and not (allow_inf and x > 0):
            raise ValueError("not finite")
        if not lo <= x <= hi:
            raise ValueError("out of range")
        return x
    return parse


def _flag(text):
    t = str(text).strip().lower()
    if t in ("1", "true"):
        return True
    if t in ("0", "false"):
        return False
    raise ValueError("not a flag")


def _vector(n=None, lo=-math.inf, hi=math.inf, integer=False):
    def parse(text):
        try:
            values = [int(v) if integer else float(v) for v in str(text).split()]
        except ValueError:
            raise ValueError("not a list of numbers") from None
        if n is not None and len(values) != n:
            raise ValueError(f"{len(values)} values")
        if not all(math.isfinite(v) and lo <= v <= hi for v in values):
            raise ValueError("a value is not finite or out of range")
        return tuple(values)
    return parse


def _fmt_vector(values) -> str:
    return " ".join(_g(v) if isinstance(v, float) else str(v) for v in values)


def _transform(text):
    values = _vector(12)(text)
    R = np.array(values[:9]).reshape(3, 3)          # rows, as Klamp't 0.10 reads it
    if np.abs(R @ R.T - np.eye(3)).max() > 1e-5 or np.linalg.det(R) < 0.0:
        raise ValueError("the rotation is not a rotation matrix")
    if np.abs(values[9:]).max(initial=0.0) > 1e4:
        raise ValueError("the translation is beyond 1e4 m")
    return values


def _fmt_transform(values) -> str:
    rows = [" ".join(_g(v) for v in values[3 * i:3 * i + 3]) for i in range(3)]
    return "\n".join(rows + [" ".join(_g(v) for v in values[9:])])


_IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)


def _common(link_default=-1, has_transform=True):
    s = {"enabled": _Setting(True, _flag, lambda v: "1" if v else "0", "0 or 1"),
         "rate": _Setting(0.0, _number(0.0, MAX_RATE), valid=f"a rate in [0, {MAX_RATE:g}] Hz"),
         "link": _Setting(link_default, _number(-1, 10 ** 9, integer=True), str,
                          "a link index or name of the robot, or -1 for the world"),
         "seed": _Setting(0, _number(0, MAX_SEED, integer=True), str,
                          f"an integer in [0, {MAX_SEED}]")}
    if has_transform:
        s["Tsensor"] = _Setting(_IDENTITY, _transform, _fmt_transform,
                                "12 numbers: a rotation matrix row by row, then a translation")
    return s


def _nonneg(default=0.0, allow_inf=False, what="a number >= 0"):
    return _Setting(default, _number(0.0, allow_inf=allow_inf), valid=what)


# -- the sensor base -------------------------------------------------------------------------
class SimRobotSensor:
    """A simulated sensor on a robot (Klamp't's SimRobotSensor / SensorModel API)."""

    TYPE = ""
    SETTINGS: dict = {}

    def __init__(self, controller, name: str):
        self._controller = controller
        self._name = name
        self._values = {k: s.default for k, s in self.SETTINGS.items()}
        self._measurements = np.zeros(0)
        self._next = 0.0            # sim time of the next update (rate > 0)
        self._last_t = None         # sim time of the last update
        self._last_dt = 0.0         # time between the last two updates
        self._reseed()

    # -- Klamp't's API -----------------------------------------------------------------------
    def name(self) -> str:
        return self._name

    def type(self) -> str:
        return self.TYPE

    getName, getType = name, type

    def settings(self) -> list:
        """The setting names (sorted, as Klamp't lists them)."""
        return sorted(self.SETTINGS)

    def getSetting(self, name: str) -> str:
        if name not in self.SETTINGS:
            raise ValueError(self._unknown(name))
        return self.SETTINGS[name].fmt(self._values[name])

    def setSetting(self, name: str, value):
        """Set a setting from its string (numbers and bools are accepted too)."""
        if name not in self.SETTINGS:
            raise ValueError(self._unknown(name))
        spec = self.SETTINGS[name]
        text = value if isinstance(value, str) else (
            ("1" if value else "0") if isinstance(value, bool) else
            _fmt_vector(value) if isinstance(value, (list, tuple, np.ndarray)) else repr(value))
        if name == "link" and text.strip() in self._link_names():
            text = str(self._link_names()[text.strip()])     # a link name: its index
        try:
            parsed = spec.parse(text)
            self._check(name, parsed)
        except ValueError as error:
            raise ValueError(f"{self._where()}: setting '{name}' = {text!r} is invalid "
                             f"({error}); valid: {spec.valid}") from None
        self._values[name] = parsed
        if name == "seed":
            self._reseed()
        elif name == "rate":
            self._next = self._sim_time() if self._last_t is None else self._last_t

    def _check(self, name, value):
        # cross-setting and robot checks of a parsed value (ValueError: why)
        if name == "link":
            n = self._robot().numLinks()
            if not -1 <= value < n:
                raise ValueError(f"the robot has links 0..{n - 1}")

    def _link_names(self) -> dict:
        robot = self._robot()
        return {robot.link(i).getName(): i for i in range(robot.numLinks())}

    def getEnabled(self) -> bool:
        return self._values["enabled"]

    def setEnabled(self, enabled: bool):
        self._values["enabled"] = bool(enabled)

    def getLink(self) -> int:
        return self._values.get("link", -1)

    def setLink(self, link):
        """The link the sensor rides on: an index, a name, a RobotModelLink or -1 (the
        world)."""
        self.setSetting("link", str(link.getIndex() if hasattr(link, "getIndex") else link))

    def getTransform(self):
        """(R (3, 3), t (3,)): the sensor frame in its link's frame (Tsensor)."""
        v = self._values.get("Tsensor", _IDENTITY)     # none (gyro, FT): the link frame
        return np.array(v[:9]).reshape(3, 3), np.array(v[9:])

    def setTransform(self, R, t):
        """R: 3x3 or Klamp't's column-major 9-list (sim_node.math.rotation_input)."""
        R, t = as_matrix(R, "setTransform: R"), np.asarray(t, dtype=float)
        self.setSetting("Tsensor", _fmt_vector(list(R.reshape(9)) + list(t.reshape(3))))

    def getTransformWorld(self):
        """(R, t): the sensor frame in the world, in the simulated state."""
        R_s, t_s = self.getTransform()
        link = self.getLink()
        if link < 0:
            return R_s, t_s
        R, p = self._sim().getLinkTransforms(self._controller._index)
        return R[link] @ R_s, R[link] @ t_s + p[link]

    def measurementNames(self) -> list:
        return list(self._names())

    def getMeasurements(self) -> np.ndarray:
        """The last measurements (copy; empty before the first update)."""
        return self._measurements.copy()

    # -- for subclasses --------------------------------------------------------------------
    def _names(self) -> list:
        raise NotImplementedError

    def _measure(self, t: float) -> np.ndarray:
        raise NotImplementedError

    def _sim(self):
        return self._controller._sim

    def _sim_time(self) -> float:
        return self._sim().getTime()

    def _robot(self):
        return self._controller._robot

    def _where(self) -> str:
        return (f"sensor '{self._name}' ({self.TYPE}) of robot "
                f"'{self._robot().getName()}'")

    def _unknown(self, name) -> str:
        return (f"{self._where()} has no setting '{name}'; settings: "
                f"{', '.join(self.settings())}")

    def _reseed(self):
        # independent streams per sensor name: the seed and the name's CRC
        self._rng = np.random.Generator(np.random.PCG64(
            [self._values["seed"], zlib.crc32(self._name.encode())]))

    def _noisy(self, x: np.ndarray, resolution, variance) -> np.ndarray:
        """Klamp't's Discretize: Gaussian noise of `variance`, then rounding to `resolution`
        (both broadcast against x)."""
        variance = np.broadcast_to(np.asarray(variance, dtype=float), x.shape)
        if np.any(variance > 0.0):
            x = x + self._rng.standard_normal(x.shape) * np.sqrt(variance)
        resolution = np.broadcast_to(np.asarray(resolution, dtype=float), x.shape)
        if np.any(resolution > 0.0):
            r = np.where(resolution > 0.0, resolution, 1.0)
            x = np.where(resolution > 0.0, np.round(x / r) * r, x)
        return x

    # -- the Simulator's schedule ----------------------------------------------------------
    def _due(self, t: float) -> bool:
        return self._values["rate"] > 0.0 and t >= self._next - 1e-9

    def _update(self, t: float):
        self._last_dt = 0.0 if self._last_t is None else t - self._last_t
        self._last_t = t
        self._measurements = np.asarray(self._measure(t), dtype=float).ravel()
        rate = self._values["rate"]
        if rate > 0.0:
            period = 1.0 / rate
            self._next = (math.floor(t / period + 1e-9) + 1) * period

    def _reset(self):
        # back to before the first update (the Simulator restarting)
        self._measurements = np.zeros(0)
        self._next, self._last_t, self._last_dt = 0.0, None, 0.0
        self._reseed()

    def _get_state(self) -> dict:
        m = np.ascontiguousarray(self._measurements, dtype="<f8")
        return {"name": self._name, "type": self.TYPE,
                "settings": {k: self.getSetting(k) for k in self.SETTINGS},
                "next": self._next, "last_t": self._last_t, "last_dt": self._last_dt,
                "rng": self._rng.bit_generator.state,
                "measurements": base64.b64encode(m.tobytes()).decode(),
                "extra": self._extra_state()}

    def _parse_state(self, state: dict):
        """The parts of a _get_state() dict, checked (ValueError naming the sensor); nothing
        of this sensor changes."""
        try:
            if state["type"] != self.TYPE:
                raise ValueError(f"type {state['type']!r}")
            check = type(self)(self._controller, self._name)    # validates the settings
            for k, v in state["settings"].items():
                check.setSetting(k, v)
            last_t = None if state["last_t"] is None else float(state["last_t"])
            times = (float(state["next"]), last_t, float(state["last_dt"]))
            rng = np.random.Generator(np.random.PCG64())
            rng.bit_generator.state = state["rng"]
            m = np.frombuffer(base64.b64decode(state["measurements"], validate=True),
                              dtype="<f8").copy()
            extra = self._parse_extra(state["extra"])
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            raise ValueError(f"setState: bad state of {self._where()} ({error})") from None
        return check._values, times, rng, m, extra

    def _set_state(self, parsed):
        """Apply _parse_state()'s result."""
        values, (self._next, self._last_t, self._last_dt), self._rng, m, extra = parsed
        self._values, self._measurements = dict(values), m
        if isinstance(self, CameraSensor):
            self._camera = None
        self._set_extra(extra)

    def _extra_state(self):
        return None

    def _parse_extra(self, extra):
        return extra

    def _set_extra(self, extra):
        pass


# -- joint sensors ---------------------------------------------------------------------------
def _indices_setting():
    return _Setting((), _vector(lo=0, hi=10 ** 9, integer=True), _fmt_vector,
                    "joint indices (entries of the robot's q or v), empty = all")


class _JointSensor(SimRobotSensor):
    PREFIX = ""
    RES, VAR = "", ""

    def _size(self) -> int:
        raise NotImplementedError

    def _all(self) -> np.ndarray:
        raise NotImplementedError

    def _check(self, name, value):
        if name == "indices" and value and max(value) >= self._size():
            raise ValueError(f"the robot has entries 0..{self._size() - 1}")

    def _index(self) -> np.ndarray:
        idx = self._values["indices"]
        return np.array(idx, dtype=np.intp) if idx else np.arange(self._size())

    def _names(self):
        return [f"{self.PREFIX}[{i}]" for i in self._index()]

    def _measure(self, t):
        values = self._all()
        res, var = self._values[self.RES], self._values[self.VAR]
        # one value for every entry or one per entry of the whole vector (Klamp't's: noise
        # and rounding on the whole vector, then the indices picked)
        res = res[0] if len(res) == 1 else (np.array(res) if len(res) == len(values) else 0.0)
        var = var[0] if len(var) == 1 else (np.array(var) if len(var) == len(values) else 0.0)
        return self._noisy(values, res, var)[self._index()]


def _joint_settings(res, var):
    s = _common(has_transform=False)
    del s["link"]
    s["indices"] = _indices_setting()
    for key in (res, var):
        s[key] = _Setting((0.0,), _vector(lo=0.0), _fmt_vector,
                          "one number >= 0, or one per entry of the robot's vector")
    return s


class JointPositionSensor(_JointSensor):
    """q of the robot (getActualConfig), names q[i]."""
    TYPE, PREFIX, RES, VAR = "JointPositionSensor", "q", "qresolution", "qvariance"
    SETTINGS = _joint_settings(RES, VAR)

    def _size(self):
        return len(self._sim().getActualConfig(self._controller._index))

    def _all(self):
        return self._sim().getActualConfig(self._controller._index)


class JointVelocitySensor(_JointSensor):
    """v of the robot (getActualVelocity), names dq[i]."""
    TYPE, PREFIX, RES, VAR = "JointVelocitySensor", "dq", "dqresolution", "dqvariance"
    SETTINGS = _joint_settings(RES, VAR)

    def _size(self):
        return len(self._sim().getActualVelocity(self._controller._index))

    def _all(self):
        return self._sim().getActualVelocity(self._controller._index)


class DriverTorqueSensor(_JointSensor):
    """Actuator torques of the last step (getActualTorque, nv), names t[i]."""
    TYPE, PREFIX, RES, VAR = "DriverTorqueSensor", "t", "tresolution", "tvariance"
    SETTINGS = _joint_settings(RES, VAR)

    def _size(self):
        return len(self._sim().getActualVelocity(self._controller._index))

    def _all(self):
        return self._sim().getActualTorque(self._controller._index)


# -- laser range finder ----------------------------------------------------------------------
def _sweep(kind: int, x: np.ndarray, correction: float = 1.0) -> np.ndarray:
    # Klamp't's EvalPattern, including its triangular pattern's range (1 .. 3)
    if kind == SWEEP_SINUSOID:
        return np.sin(x * 2.0 * math.pi)
    if kind == SWEEP_TRIANGULAR:
        return 2.0 * (1.0 + np.abs(np.mod(x, 2.0) - 1.0)) - 1.0
    return 2.0 * (np.mod(x / correction, 1.0) * correction) - 1.0


def _laser_settings():
    s = _common()
    s.update({
        "measurementCount": _Setting(180, _number(1, MAX_LASER_RAYS, integer=True), str,
                                     f"an integer in [1, {MAX_LASER_RAYS}]"),
        "depthResolution": _nonneg(),
        "depthMinimum": _nonneg(0.1),
        "depthMaximum": _Setting(math.inf, _number(0.0, allow_inf=True),
                                 valid="a range > depthMinimum [m], or inf"),
        "depthVarianceLinear": _nonneg(), "depthVarianceConstant": _nonneg(),
        "dropout": _Setting(0.0, _number(0.0, 1.0), valid="a fraction in [0, 1]"),
    })
    for axis, magnitude, kind in (("x", math.pi / 2, SWEEP_SAWTOOTH), ("y", 0.0, SWEEP_SINUSOID)):
        s.update({
            f"{axis}SweepMagnitude": _Setting(magnitude, _number(-2 * math.pi, 2 * math.pi),
                                              valid="an angle in [-2 pi, 2 pi] rad"),
            f"{axis}SweepPeriod": _nonneg(what="a period >= 0 [s] (0: one sweep per update)"),
            f"{axis}SweepPhase": _Setting(0.0, _number(), valid="a finite time [s]"),
            f"{axis}SweepType": _Setting(kind, _number(0, 2, integer=True), str,
                                         "0 (sinusoid), 1 (triangular) or 2 (sawtooth)")})
    return s


class LaserRangeSensor(SimRobotSensor):
    """A scanning range finder (Klamp't's LaserRangeSensor), rays cast with sim.rayCast.

    Ray i leaves the sensor frame's origin along (sin a, cos a sin b, cos a cos b) (a = x sweep
    angle, b = y sweep angle: a scan about the sensor's y axis, around its +z), starting at
    depthMinimum. With both sweep periods 0 the angles of the n = measurementCount rays are
    a_i = xSweepMagnitude * pattern(i / (n - 1)) (sawtooth: evenly from -magnitude to
    +magnitude) and likewise b_i; with a period P > 0 the rays cover the part of the pattern
    swept since the last update, u from (t_prev + phase) / P to (t + phase) / P. Readings
    [m]: the distance from the origin, noise (variance depthVarianceConstant +
    depthVarianceLinear * d) then depthResolution rounding; a miss, a reading <= depthMinimum
    or >= depthMaximum, and a dropped reading (probability `dropout`) read depthMaximum (inf
    by default), as Klamp't returns them.
    """
    TYPE = "LaserRangeSensor"
    SETTINGS = _laser_settings()

    def _check(self, name, value):
        super()._check(name, value)
        v = self._values
        lo = value if name == "depthMinimum" else v["depthMinimum"]
        hi = value if name == "depthMaximum" else v["depthMaximum"]
        if name in ("depthMinimum", "depthMaximum") and not hi > lo:
            raise ValueError(f"depthMaximum must exceed depthMinimum ({_g(lo)} m)")

    def _names(self):
        return [f"d[{i}]" for i in range(self._values["measurementCount"])]

    def directions(self) -> np.ndarray:
        """(n, 3) unit ray directions in the sensor frame for the current update window."""
        v = self._values
        n = v["measurementCount"]
        t, dt = (self._last_t or 0.0), self._last_dt
        # Klamp't: the sawtooth reaches +magnitude at the last ray once time has advanced
        # (before that its last ray wraps to -magnitude: we always apply the correction); its
        # y correction is never applied (it sets xscale twice)
        xscale = 1.0 + 1.0 / (n - 1) if (v["xSweepType"] == SWEEP_SAWTOOTH and n > 1) else 1.0

        def span(axis):
            period, phase = v[f"{axis}SweepPeriod"], v[f"{axis}SweepPhase"]
            u0 = 0.0 if period == 0 else (t - dt + phase) / period
            u1 = 1.0 if period == 0 else (t + phase) / period
            if period != 0 and n > 1:
                u0 += (u1 - u0) / (n - 1)
            u = u0 + np.arange(n) / max(n - 1, 1) * (u1 - u0)
            u[-1] = u1
            return u
        a = v["xSweepMagnitude"] * _sweep(v["xSweepType"], span("x"), xscale)
        b = v["ySweepMagnitude"] * _sweep(v["ySweepType"], span("y"), 1.0)
        return np.stack([np.sin(a), np.cos(a) * np.sin(b), np.cos(a) * np.cos(b)], axis=1)

    def _measure(self, t):
        v = self._values
        R, p = self.getTransformWorld()
        d = self.directions() @ R.T
        dmin = v["depthMinimum"]
        length = min(v["depthMaximum"], MAX_RANGE) - dmin
        origins = p + dmin * d
        hits = self._sim().rayCast(origins, origins + length * d)
        hit = np.asarray(hits.fraction) < 1.0
        ranges = np.where(hit, np.asarray(hits.fraction) * length + dmin, np.inf)
        variance = v["depthVarianceConstant"] + v["depthVarianceLinear"] * np.where(
            hit, ranges, 0.0)
        ranges[hit] = self._noisy(ranges[hit], v["depthResolution"], variance[hit])
        out = (ranges <= dmin) | (ranges >= v["depthMaximum"])
        if v["dropout"] > 0.0:
            out |= self._rng.random(len(ranges)) < v["dropout"]
        ranges[out] = v["depthMaximum"]
        return ranges


# -- camera ----------------------------------------------------------------------------------
def _camera_settings():
    s = _common()
    s.update({
        "rgb": _Setting(True, _flag, lambda x: "1" if x else "0", "0 or 1"),
        "depth": _Setting(True, _flag, lambda x: "1" if x else "0", "0 or 1"),
        "xres": _Setting(640, _number(1, 1 << 16, integer=True), str,
                         f"pixels in [1, 65536], xres * yres <= {MAX_CAMERA_PIXELS}"),
        "yres": _Setting(480, _number(1, 1 << 16, integer=True), str,
                         f"pixels in [1, 65536], xres * yres <= {MAX_CAMERA_PIXELS}"),
        "xfov": _Setting(math.radians(56.0), _number(1e-6, math.pi - 1e-6),
                         valid="an angle in (0, pi) rad"),
        "yfov": _Setting(math.radians(43.0), _number(1e-6, math.pi - 1e-6),
                         valid="an angle in (0, pi) rad"),
        "zmin": _nonneg(0.4, what="a depth > 0 [m] below zmax"),
        "zmax": _nonneg(4.0, what="a depth [m] above zmin"),
        "zresolution": _nonneg(), "zvarianceLinear": _nonneg(), "zvarianceConstant": _nonneg(),
    })
    return s


class CameraSensor(SimRobotSensor):
    """An RGB-D camera (Klamp't's CameraSensor) rendered with sim_node.sim.camera.Camera.

    Frame: the sensor frame (Tsensor on its link) has z forward, x right, y down. Intrinsics
    as Klamp't 0.10's: fx = xres / (2 tan(xfov / 2)), fy = yres / (2 tan(yfov / 2)),
    cx = xres / 2, cy = yres / 2, pixel (i, j) (column, row) seen along ((i - cx) / fx,
    (j - cy) / fy, 1) (Klamp't's pixel coordinates start at the pixel centre: the Camera gets
    cx + 0.5, cy + 0.5 in its OpenCV convention).
    Measurements: if rgb, xres * yres pixels row by row, each 0xRRGGBB as a float (as
    Klamp't 0.10's ray-cast camera packs them); then if depth, xres * yres z-depths [m] row by row,
    zmax where no surface lies within [zmin, zmax], noise (variance zvarianceConstant +
    zvarianceLinear * z) then zresolution rounding. Names as Klamp't's: rgb[i,j] / d[i,j]
    for i < xres, j < yres (column-major names over row-major values, as Klamp't).
    """
    TYPE = "CameraSensor"
    SETTINGS = _camera_settings()

    def __init__(self, controller, name):
        super().__init__(controller, name)
        self._camera = self._camera_sim = None

    def _check(self, name, value):
        super()._check(name, value)
        v = dict(self._values)
        v[name] = value
        if name in ("xres", "yres") and v["xres"] * v["yres"] > MAX_CAMERA_PIXELS:
            raise ValueError(f"{v['xres']} x {v['yres']} pixels exceed the bound of "
                             f"{MAX_CAMERA_PIXELS} pixels")
        if name in ("zmin", "zmax") and not 0.0 < v["zmin"] < v["zmax"]:
            raise ValueError("0 < zmin < zmax is required")
        if name in ("xres", "yres", "xfov", "yfov", "zmin", "zmax"):
            self._camera = None

    def getSetting(self, name):
        # Klamp't 0.10 also answers the intrinsics (not in settings())
        if name in ("fx", "fy", "cx", "cy"):
            return _g(dict(zip(("fx", "fy", "cx", "cy"), self.intrinsics()))[name])
        return super().getSetting(name)

    def intrinsics(self):
        """(fx, fy, cx, cy) [pixels], Klamp't's."""
        v = self._values
        return (v["xres"] / (2.0 * math.tan(v["xfov"] / 2.0)),
                v["yres"] / (2.0 * math.tan(v["yfov"] / 2.0)), v["xres"] / 2.0, v["yres"] / 2.0)

    def _names(self):
        v = self._values
        names = []
        for kind, on in (("rgb", v["rgb"]), ("d", v["depth"])):
            if on:
                names += [f"{kind}[{i},{j}]" for i in range(v["xres"]) for j in range(v["yres"])]
        return names

    def _make_camera(self):
        from sim_node.sim.camera import Camera

        v = self._values
        fx, fy, cx, cy = self.intrinsics()
        K = np.array([[fx, 0.0, cx + 0.5], [0.0, fy, cy + 0.5], [0.0, 0.0, 1.0]])
        return Camera(self._sim(), width=v["xres"], height=v["yres"], K=K, near=v["zmin"],
                      far=v["zmax"])

    def _measure(self, t):
        v = self._values
        if not (v["rgb"] or v["depth"]):
            return np.zeros(0)
        if self._camera is None or self._camera_sim is not self._sim():
            self._camera, self._camera_sim = self._make_camera(), self._sim()
        R, p = self.getTransformWorld()
        img = self._camera.render(R, p, rgb=v["rgb"], depth=v["depth"])
        parts = []
        if v["rgb"]:
            c = img.rgb.astype(np.uint32)
            packed = (c[..., 0] << 16) | (c[..., 1] << 8) | c[..., 2]
            parts.append(packed.astype(float).ravel())
        if v["depth"]:
            z = np.asarray(img.depth, dtype=float).ravel()
            seen = np.isfinite(z) & (z <= v["zmax"])
            variance = v["zvarianceConstant"] + v["zvarianceLinear"] * np.where(seen, z, 0.0)
            z = np.where(seen, z, v["zmax"])
            z[seen] = self._noisy(z[seen], v["zresolution"], variance[seen])
            parts.append(z)
        return np.concatenate(parts)


# -- link sensors ----------------------------------------------------------------------------
def _link_state(sensor):
    # (R_WS, p_WS, w_W, v_W): the sensor frame's orientation, origin, angular velocity and
    # the origin's velocity (world axes) in the simulated state
    sim, link = sensor._sim(), sensor.getLink()
    R_s, t_s = sensor.getTransform()
    if link < 0:
        return R_s, t_s, np.zeros(3), np.zeros(3)
    R, p = sim.getLinkTransforms(sensor._controller._index)
    body = sim.body(sensor._robot().link(link))
    w, v_com = body.getVelocity()
    com = R[link] @ sensor._robot().link(link).getMass().getCom() + p[link]
    origin = R[link] @ t_s + p[link]
    return R[link] @ R_s, origin, w, v_com + np.cross(w, origin - com)


def _flags3():
    return _Setting((0, 0, 0), _vector(3, 0, 1, integer=True),
                    lambda v: " ".join(str(x) for x in v) + " ", "three flags 0 or 1")


def _var3():
    return _Setting((0.0, 0.0, 0.0), _vector(3, lo=0.0), _fmt_vector, "three numbers >= 0")


def _var33():
    return _Setting((0.0,) * 9, _vector(9, lo=0.0), _fmt_vector,
                    "nine numbers >= 0 (a 3x3 covariance; its diagonal is used)")


class _InertialSensor(SimRobotSensor):
    """Finite differences of the sensor frame's velocities between two updates (the mean
    acceleration over the last update period; zero at the first update)."""

    def __init__(self, controller, name):
        super().__init__(controller, name)
        self._prev = None       # (w, v) of the last update

    def _kinematics(self, t):
        R, p, w, v = _link_state(self)
        prev = self._prev
        if prev is not None and self._last_dt > 0.0:
            a, alpha = (v - prev[1]) / self._last_dt, (w - prev[0]) / self._last_dt
        else:
            a, alpha = np.zeros(3), np.zeros(3)
        self._prev = (w, v)
        return R, p, w, v, a, alpha

    def _reset(self):
        super()._reset()
        self._prev = None

    def _extra_state(self):
        prev = self._prev
        return None if prev is None else [prev[0].tolist(), prev[1].tolist()]

    def _parse_extra(self, extra):
        if extra is None:
            return None
        w, v = np.array(extra[0], dtype=float), np.array(extra[1], dtype=float)
        if w.shape != (3,) or v.shape != (3,):
            raise ValueError("velocities")
        return (w, v)

    def _set_extra(self, extra):
        self._prev = extra


class Accelerometer(_InertialSensor):
    """Linear acceleration of the sensor origin minus gravity, in sensor axes (at rest:
    +9.81 up), names accel_x/y/z; hasAxis (our reading: all axes are measured; Klamp't's
    flags only select its noise)."""
    TYPE = "Accelerometer"
    SETTINGS = dict(_common(link_default=0), hasAxis=_flags3(), accelVariance=_var3())

    def _names(self):
        return ["accel_x", "accel_y", "accel_z"]

    def _measure(self, t):
        R, _, _, _, a, _ = self._kinematics(t)
        f = R.T @ (a - self._sim().getGravity())
        return self._noisy(f, 0.0, np.array(self._values["accelVariance"]))


_R_NAMES = [f"R_{a}{b}" for a in "xyz" for b in "xyz"]


class GyroSensor(_InertialSensor):
    """Orientation (R_WS row by row), angular velocity and angular acceleration (world
    axes, as Klamp't), names R_xx .. R_zz, angVel_*, angAccel_*."""
    TYPE = "GyroSensor"
    SETTINGS = dict(_common(link_default=0, has_transform=False),
                    hasAngAccel=_Setting(False, _flag, lambda x: "1" if x else "0", "0 or 1"),
                    hasAngVel=_Setting(False, _flag, lambda x: "1" if x else "0", "0 or 1"),
                    hasRotation=_Setting(False, _flag, lambda x: "1" if x else "0", "0 or 1"),
                    angAccelVariance=_var33(), angVelVariance=_var33(),
                    rotationVariance=_var33())

    def _names(self):
        return _R_NAMES + [f"angVel_{a}" for a in "xyz"] + [f"angAccel_{a}" for a in "xyz"]

    def _measure(self, t):
        R, _, w, _, _, alpha = self._kinematics(t)
        diag = lambda key: np.array(self._values[key])[[0, 4, 8]]  # noqa: E731
        w = self._noisy(w, 0.0, diag("angVelVariance"))
        alpha = self._noisy(alpha, 0.0, diag("angAccelVariance"))
        return np.concatenate([R.reshape(9), w, alpha])


class IMUSensor(_InertialSensor):
    """Accelerometer and gyro in one: accel (sensor axes, minus gravity), origin velocity and
    position (world), angular acceleration, angular velocity (world), R_WS row by row."""
    TYPE = "IMUSensor"
    SETTINGS = dict(_common(link_default=0), hasAxis=_flags3(), accelVariance=_var3(),
                    hasAngAccel=GyroSensor.SETTINGS["hasAngAccel"],
                    hasAngVel=GyroSensor.SETTINGS["hasAngVel"],
                    hasRotation=GyroSensor.SETTINGS["hasRotation"],
                    angAccelVariance=_var33(), angVelVariance=_var33(),
                    rotationVariance=_var33())

    def _names(self):
        return ([f"accel_{a}" for a in "xyz"] + [f"vel_{a}" for a in "xyz"]
                + [f"trans_{a}" for a in "xyz"] + [f"angAccel_{a}" for a in "xyz"]
                + [f"angVel_{a}" for a in "xyz"] + _R_NAMES)

    def _measure(self, t):
        R, p, w, v, a, alpha = self._kinematics(t)
        f = self._noisy(R.T @ (a - self._sim().getGravity()), 0.0,
                        np.array(self._values["accelVariance"]))
        return np.concatenate([f, v, p, alpha, w, R.reshape(9)])


def _sat3():
    return _Setting((math.inf,) * 3, _sat_parse, _fmt_vector, "three numbers >= 0 (inf allowed)")


def _sat_parse(text):
    values = _vector(3, lo=0.0)(str(text).replace("inf", "1e300"))
    return tuple(math.inf if x >= 1e300 else x for x in values)


def _contact_force(sensor):
    # (in contact, the total contact force on the sensor's link body [N], world axes)
    sim, link = sensor._sim(), sensor.getLink()
    if link < 0:
        return False, np.zeros(3)
    own = sim.getBodyID(sensor._robot().link(link).getID())
    c = sim.getAllContacts()
    sign = (c["id1"] == own).astype(float) - (c["id2"] == own).astype(float)
    touching = bool(np.any(sign != 0.0))
    return touching, (c["force"] * sign[:, None]).sum(axis=0)


class ContactSensor(SimRobotSensor):
    """Whether the sensor's link touches anything (1/0, name "contact"), then the contact
    force on the link in the sensor frame on the axes flagged in hasForce (names force_x/y/z):
    fVariance noise, fResolution rounding, saturation at fSaturation. A simplification of
    Klamp't's patch model: the whole link (its simulated body) is the patch; patchMin,
    patchMax, patchTolerance, fSensitivity and falloffCoefficient are kept, not used."""
    TYPE = "ContactSensor"
    SETTINGS = dict(_common(link_default=0), hasForce=_flags3(),
                    fResolution=_var3(), fVariance=_var3(), fSaturation=_sat3(),
                    fSensitivity=_nonneg(), falloffCoefficient=_nonneg(),
                    patchMin=_Setting((0.0, 0.0), _vector(2), _fmt_vector, "two numbers"),
                    patchMax=_Setting((0.0, 0.0), _vector(2), _fmt_vector, "two numbers"),
                    patchTolerance=_nonneg(0.001))

    def _names(self):
        return ["contact"] + [f"force_{a}" for a, on in zip("xyz", self._values["hasForce"])
                              if on]

    def _measure(self, t):
        touching, f = _contact_force(self)
        R, _ = self.getTransformWorld()
        on = np.array(self._values["hasForce"], dtype=bool)
        f = self._noisy(R.T @ f, np.array(self._values["fResolution"]),
                        np.array(self._values["fVariance"]))
        sat = np.array(self._values["fSaturation"])
        f = np.clip(f, -sat, sat)
        return np.concatenate([[1.0 if touching else 0.0], f[on]])


class ForceTorqueSensor(SimRobotSensor):
    """The contact wrench on the sensor's link (force [N], torque [N m] about the link
    origin, link axes), names force_x/y/z, torque_x/y/z; fVariance / tVariance noise.
    A simplification of Klamp't's (which reads the joint's constraint wrench): what the
    robot's environment pushes on this link; the joint reaction force is the ROS
    force_torque plugin's."""
    TYPE = "ForceTorqueSensor"
    SETTINGS = dict(_common(link_default=0, has_transform=False), hasForce=_flags3(),
                    hasTorque=_flags3(), fVariance=_var3(), tVariance=_var3())

    def _names(self):
        return [f"force_{a}" for a in "xyz"] + [f"torque_{a}" for a in "xyz"]

    def _measure(self, t):
        sim, link = self._sim(), self.getLink()
        if link < 0:
            return np.zeros(6)
        own = sim.getBodyID(self._robot().link(link).getID())
        c = sim.getAllContacts()
        sign = ((c["id1"] == own).astype(float) - (c["id2"] == own).astype(float))[:, None]
        R, p = sim.getLinkTransforms(self._controller._index)
        force = (c["force"] * sign).sum(axis=0)
        torque = np.cross(c["point"] - p[link], c["force"] * sign).sum(axis=0)
        f = self._noisy(R[link].T @ force, 0.0, np.array(self._values["fVariance"]))
        tq = self._noisy(R[link].T @ torque, 0.0, np.array(self._values["tVariance"]))
        return np.concatenate([f, tq])


SENSOR_TYPES = {cls.TYPE: cls for cls in (
    LaserRangeSensor, CameraSensor, JointPositionSensor, JointVelocitySensor,
    DriverTorqueSensor, ContactSensor, ForceTorqueSensor, Accelerometer, GyroSensor,
    IMUSensor)}


def make_sensor(controller, name: str, type_: str, settings=None) -> SimRobotSensor:
    """A sensor of Klamp't type `type_` named `name` on a controller, its settings applied
    ({name: string}); ValueError naming what is wrong."""
    if type_ not in SENSOR_TYPES:
        raise ValueError(f"unknown sensor type {type_!r}; types: {', '.join(SENSOR_TYPES)}")
    if not isinstance(name, str) or not name or len(name) > 256:
        raise ValueError(f"a sensor name must be a non-empty string of <= 256 characters, "
                         f"got {name!r}")
    sensor = SENSOR_TYPES[type_](controller, name)
    for key, value in (settings or {}).items():
        sensor.setSetting(key, value)
    return sensor
