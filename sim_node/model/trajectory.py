"""Trajectories: timed milestones with an interpolation rule (``klampt.model.trajectory``).

* Trajectory: piecewise linear in Cartesian space;
* RobotTrajectory: along a robot's configuration-space geodesics (RobotModel.interpolate);
* GeodesicTrajectory, SO3Trajectory, SE3Trajectory: along geodesics of a GeodesicSpace
  (sim_node.math.geodesic; SO3 milestones are so3 9-lists, SE3 ones R (9) + t (3));
* HermiteTrajectory: cubic Hermite segments, milestones [x, dx] in phase space;
* GeodesicHermiteTrajectory, SO3HermiteTrajectory, SE3HermiteTrajectory: Hermite curves on a
  GeodesicSpace (de Casteljau along geodesics), milestones [point, outgoing Lie derivative].

Milestones, results and times are Python lists, as Klamp't's. Unlike Klamp't, which checks
nothing until ``checkValid()``, the constructor validates what it is given: times finite and
non-decreasing (equal times make a jump), milestones finite and all of one length, as many as
times; evaluation times must be finite; errors are ValueError naming the entry. Code that edits
``times`` / ``milestones`` in place can call ``checkValid()`` afterwards.

Segment lookup: at time t, milestone i with times[i] <= t < times[i+1] starts the segment
(bisection); before the start / after the end the first / last milestone holds ('halt'), or
the time wraps modulo the end time ('loop', Klamp't's rule: meaningful for trajectories
starting at 0).
"""
from __future__ import annotations

import bisect
import math
import warnings

from sim_node.math import se3, so3, spline, vectorops
from sim_node.math.geodesic import GeodesicSpace, SE3Space, SO3Space
from sim_node.math.rotation_input import as_klampt, as_matrix

_END_BEHAVIORS = ("halt", "loop")
_JUMP_POLICIES = ("strict", "blend", "jump")


def _finite_time(t, where: str) -> float:
    try:
        t = float(t)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: a time must be a number, got {type(t).__name__}") from None
    if not math.isfinite(t):
        raise ValueError(f"{where}: a time must be finite, got {t}")
    return t


def _vector(x, where: str) -> list:
    try:
        values = [float(v) for v in x]
    except (TypeError, ValueError):
        raise ValueError(f"{where}: must be a sequence of numbers, got "
                         f"{type(x).__name__}") from None
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"{where}: contains NaN or infinity")
    return values


def _checked(times, milestones, where: str, size=None):
    """(times, milestones) as new lists of floats; ValueError on a bad entry. size: the
    required milestone length (None: the first milestone's)."""
    times = [_finite_time(t, f"{where} times[{i}]") for i, t in enumerate(times)]
    milestones = [_vector(m, f"{where} milestones[{i}]") for i, m in enumerate(milestones)]
    if len(times) != len(milestones):
        raise ValueError(f"{where}: {len(times)} times but {len(milestones)} milestones")
    for i in range(1, len(times)):
        if times[i] < times[i - 1]:
            raise ValueError(f"{where}: times must be non-decreasing, but times[{i}] = "
                             f"{times[i]} < times[{i - 1}] = {times[i - 1]}")
    n = size if size is not None else (len(milestones[0]) if milestones else None)
    for i, m in enumerate(milestones):
        if len(m) != n:
            raise ValueError(f"{where}: milestones[{i}] has {len(m)} entries, expected {n}")
    return times, milestones


def _end_behavior(endBehavior: str) -> str:
    if endBehavior not in _END_BEHAVIORS:
        raise ValueError(f"endBehavior must be 'halt' or 'loop', got {endBehavior!r}")
    return endBehavior


class Trajectory:
    """Piecewise-linear interpolation of ``milestones`` (lists of floats) at ``times`` [s].

    Subclasses change the geometry by overriding interpolate_state / difference_state and
    constructor (the factory used by split, concat, discretize ...)."""

    def __init__(self, times=None, milestones=None):
        """times: non-decreasing (default 0, 1, 2, ... per milestone); milestones: vectors of
        one length. ValueError on non-finite, decreasing or mismatched input."""
        if milestones is None:
            milestones = []
        if times is None:
            times = list(range(len(milestones)))
        self.times, self.milestones = _checked(times, milestones, type(self).__name__,
                                               self._milestone_size())

    def _milestone_size(self):
        """The required milestone length, or None for any (one length for all)."""
        return None

    # -- files ----------------------------------------------------------------------------
    def load(self, fn: str) -> None:
        """Read Klamp't's text format: one line per milestone, ``t n x1 ... xn``."""
        times, milestones = [], []
        with open(fn) as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    values = [float(v) for v in line.split()]
                except ValueError:
                    raise ValueError(f"{fn}:{lineno}: not a line of numbers 't n x1 ... xn'")\
                        from None
                if len(values) < 2 or values[1] != len(values) - 2:
                    raise ValueError(f"{fn}:{lineno}: expected 't n x1 ... xn' with n the count "
                                     f"of the x values")
                times.append(values[0])
                milestones.append(values[2:])
        self.times, self.milestones = _checked(times, milestones, fn, self._milestone_size())

    def save(self, fn: str) -> None:
        """Write Klamp't's text format (see load); times with 6 decimals, as Klamp't."""
        with open(fn, "w") as f:
            for t, x in zip(self.times, self.milestones):
                f.write("%f\t%d " % (t, len(x)))
                f.write(" ".join(repr(float(v)) for v in x))
                f.write("\n")

    # -- time -----------------------------------------------------------------------------
    def startTime(self) -> float:
        """The first time (0 when empty)."""
        return self.times[0] if self.times else 0.0

    def endTime(self) -> float:
        """The last time (0 when empty)."""
        return self.times[-1] if self.times else 0.0

    def duration(self) -> float:
        return self.endTime() - self.startTime()

    def checkValid(self) -> None:
        """ValueError unless the trajectory is non-empty, with finite non-decreasing times and
        finite milestones of one length, as many as times."""
        if not self.times and not self.milestones:
            raise ValueError(f"{type(self).__name__} is empty")
        _checked(self.times, self.milestones, type(self).__name__, self._milestone_size())

    def getSegment(self, t: float, endBehavior: str = "halt") -> tuple:
        """(i, u): time t lies u of the way through the segment from milestone i to i+1;
        i = -1 before the start or for a single milestone, i = n-1 at or after the end."""
        t = _finite_time(t, f"{type(self).__name__}.getSegment")
        _end_behavior(endBehavior)
        if not self.times:
            raise ValueError(f"{type(self).__name__} is empty: nothing to evaluate")
        if len(self.times) == 1:
            return -1, 0
        if t > self.times[-1]:
            if endBehavior == "loop":
                t = t % self.times[-1] if self.times[-1] != 0 else 0.0
            else:
                return len(self.milestones) - 1, 0
        if t >= self.times[-1]:
            return len(self.milestones) - 1, 0
        if t <= self.times[0]:
            return -1, 0
        i = bisect.bisect_right(self.times, t)
        p = i - 1
        u = (t - self.times[p]) / (self.times[i] - self.times[p])
        return p, u

    # -- evaluation -----------------------------------------------------------------------
    def eval(self, t: float, endBehavior: str = "halt") -> list:
        """The configuration at time t."""
        return self.eval_state(t, endBehavior)

    def deriv(self, t: float, endBehavior: str = "halt") -> list:
        """The velocity at time t (the segment's; zero before the start and after the end)."""
        return self.deriv_state(t, endBehavior)

    def waypoint(self, state):
        """The configuration part of a state (the state itself, except in phase-space
        trajectories)."""
        return state

    def eval_state(self, t: float, endBehavior: str = "halt") -> list:
        i, u = self.getSegment(t, endBehavior)
        if i < 0:
            return list(self.milestones[0])
        if i + 1 >= len(self.milestones):
            return list(self.milestones[-1])
        return self.interpolate_state(self.milestones[i], self.milestones[i + 1], u,
                                      self.times[i + 1] - self.times[i])

    def deriv_state(self, t: float, endBehavior: str = "halt") -> list:
        i, u = self.getSegment(t, endBehavior)
        if i < 0 or i + 1 >= len(self.milestones):
            return self._zero_velocity()
        return self.difference_state(self.milestones[i + 1], self.milestones[i], u,
                                     self.times[i + 1] - self.times[i])

    def _zero_velocity(self) -> list:
        return [0.0] * len(self.milestones[0])

    def interpolate_state(self, a, b, u: float, dt: float) -> list:
        """The state u of the way from a to b along the geodesic (dt: the segment's
        duration)."""
        return vectorops.interpolate(a, b, u)

    def difference_state(self, a, b, u: float, dt: float) -> list:
        """The time derivative at u of the segment from b (u = 0) to a (u = 1) lasting dt:
        (a - b) / dt here."""
        return vectorops.mul(vectorops.sub(a, b), 1.0 / dt)

    # -- editing --------------------------------------------------------------------------
    def concat(self, suffix: "Trajectory", relative: bool = False,
               jumpPolicy: str = "strict") -> "Trajectory":
        """A new trajectory: this one then `suffix` (shifted by this end time if relative).
        Where the suffix starts exactly at this end time, jumpPolicy decides: 'strict' requires
        equal milestones there (ValueError otherwise) and keeps one, 'blend' drops this last
        milestone, 'jump' keeps both (a discontinuity)."""
        if jumpPolicy not in _JUMP_POLICIES:
            raise ValueError(f"concat: jumpPolicy must be one of {_JUMP_POLICIES}, got "
                             f"{jumpPolicy!r}")
        if self.__class__ is not suffix.__class__:
            raise ValueError(f"concat: can only concatenate trajectories of one class: "
                             f"{type(self).__name__} and {type(suffix).__name__}")
        offset = self.times[-1] if relative and self.times else 0.0
        if self.times and suffix.times:
            start = suffix.times[0] + offset
            if start < self.times[-1]:
                raise ValueError(f"concat: the suffix starts at {start}, before this "
                                 f"trajectory's end {self.times[-1]}")
            if start == self.times[-1]:
                same = list(suffix.milestones[0]) == list(self.milestones[-1])
                if jumpPolicy == "strict" and not same:
                    raise ValueError(
                        "concat: the suffix's first milestone differs from this last one "
                        f"(distance {vectorops.distance(suffix.milestones[0], self.milestones[-1]):g}"
                        "); use jumpPolicy='blend' or 'jump'")
                if jumpPolicy == "strict" or (jumpPolicy == "blend" and not same):
                    return self.constructor()(
                        self.times[:-1] + [t + offset for t in suffix.times],
                        self.milestones[:-1] + suffix.milestones)
        return self.constructor()(self.times + [t + offset for t in suffix.times],
                                  self.milestones + suffix.milestones)

    def insert(self, time: float) -> int:
        """Add a milestone at `time` (the interpolated state; a copy of the end milestone
        outside the time range) and return its index; an existing milestone at that time is
        reused. Empty trajectories get an empty milestone."""
        time = _finite_time(time, f"{type(self).__name__}.insert")
        if not self.times:
            self.times, self.milestones = [time], [[]]
            return 0
        if time <= self.times[0]:
            if time < self.times[0]:
                self.times.insert(0, time)
                self.milestones.insert(0, list(self.milestones[0]))
            return 0
        if time >= self.times[-1]:
            if time > self.times[-1]:
                self.times.append(time)
                self.milestones.append(list(self.milestones[-1]))
            return len(self.times) - 1
        i, u = self.getSegment(time)
        if u == 0:
            return i
        # (Klamp't 0.10.1 inserts at i, before the segment's start: out of time order)
        q = self.interpolate_state(self.milestones[i], self.milestones[i + 1], u,
                                   self.times[i + 1] - self.times[i])
        self.times.insert(i + 1, time)
        self.milestones.insert(i + 1, q)
        return i + 1

    def split(self, time: float) -> tuple:
        """(prefix, suffix) with prefix.endTime() == time == suffix.startTime() and
        prefix.milestones[-1] == suffix.milestones[0]."""
        time = _finite_time(time, f"{type(self).__name__}.split")
        make = self.constructor()
        if time <= self.times[0]:
            return (make([time], [self.milestones[0]]),
                    make([time] + self.times, [self.milestones[0]] + self.milestones))
        if time >= self.times[-1]:
            return (make(self.times + [time], self.milestones + [self.milestones[-1]]),
                    make([time], [self.milestones[-1]]))
        i, u = self.getSegment(time)
        point = self.interpolate_state(self.milestones[i], self.milestones[i + 1], u,
                                       self.times[i + 1] - self.times[i])
        front_t, front_m = self.times[:i + 1], self.milestones[:i + 1]
        back_t, back_m = self.times[i + 1:], self.milestones[i + 1:]
        if u > 0:
            front_t, front_m = front_t + [time], front_m + [point]
        if u < 1:
            back_t, back_m = [time] + back_t, [point] + back_m
        return make(front_t, front_m), make(back_t, back_m)

    def before(self, time: float) -> "Trajectory":
        """The part up to `time`."""
        return self.split(time)[0]

    def after(self, time: float) -> "Trajectory":
        """The part from `time` on."""
        return self.split(time)[1]

    def splice(self, suffix: "Trajectory", time=None, relative: bool = False,
               jumpPolicy: str = "strict") -> "Trajectory":
        """This trajectory up to `time` (default: the suffix's start, shifted by this end time
        if relative), then the suffix (see concat)."""
        offset = self.times[-1] if relative and self.times else 0.0
        if time is None:
            time = suffix.times[0]
        return self.before(time + offset).concat(suffix, relative, jumpPolicy)

    def constructor(self):
        """The factory f(times, milestones) that split, concat, discretize ... use."""
        return type(self)

    def length(self, metric=None) -> float:
        """Arc length: the sum of metric(a, b) over consecutive milestones (default: the
        space's distance; Euclidean here)."""
        if metric is None:
            metric = vectorops.distance
        return sum(metric(a, b) for a, b in zip(self.milestones[:-1], self.milestones[1:]))

    def discretize_state(self, dt: float) -> "Trajectory":
        """Milestones every dt from the start time, plus the exact end (a last step shorter
        than 1e-6 s is merged into it)."""
        dt = _finite_time(dt, "discretize: dt")
        if not dt > 0:
            raise ValueError(f"discretize: dt must be a positive finite number, got {dt!r}")
        if not self.times:
            raise ValueError(f"{type(self).__name__} is empty: nothing to discretize")
        t = self.times[0]
        times, milestones = [t], [list(self.milestones[0])]
        while t + dt < self.times[-1]:
            t += dt
            times.append(t)
            milestones.append(self.eval_state(t))
        if abs(t - self.times[-1]) > 1e-6:
            times.append(self.times[-1])
            milestones.append(list(self.milestones[-1]))
        else:
            times[-1] = self.times[-1]
            milestones[-1] = list(self.milestones[-1])
        return self.constructor()(times, milestones)

    def discretize(self, dt: float) -> "Trajectory":
        """discretize_state in configuration space (Hermite trajectories drop velocities)."""
        return self.discretize_state(dt)

    def remesh(self, newtimes, tol: float = 1e-6) -> tuple:
        """(path, indices): a trajectory following this one ('halt') with a milestone at
        every time of `newtimes` (path.times[indices[k]] == newtimes[k]); this trajectory's own
        milestones are kept, except those the neighbouring milestones of the result reproduce
        within `tol` (the norm of difference_state)."""
        newtimes = [_finite_time(t, f"{type(self).__name__}.remesh newtimes[{k}]")
                    for k, t in enumerate(newtimes)]
        if not self.times:
            raise ValueError(f"{type(self).__name__} is empty: nothing to remesh")
        wanted = sorted(set(newtimes))
        # merged entries [time, state, keep]: every old milestone (jumps too), then each
        # wanted time that no old milestone has
        entries = [[t, list(x), False] for t, x in zip(self.times, self.milestones)]
        old = set(self.times)
        for t in wanted:
            if t not in old:
                entries.append([t, self.eval_state(t), True])
            else:       # 'halt' evaluation at a jump takes the last milestone of that time
                last = max(k for k, e in enumerate(entries) if e[0] == t)
                entries[last][2] = True
        entries.sort(key=lambda e: e[0])        # stable: jumps keep their order
        counts = {}
        for e in entries:
            counts[e[0]] = counts.get(e[0], 0) + 1
        result = [entries[0]]
        dropped = []
        for k in range(1, len(entries)):
            e = entries[k]
            removable = (not e[2] and k + 1 < len(entries) and counts[e[0]] == 1
                         and counts[result[-1][0]] == 1)
            if removable:
                nxt = entries[k + 1]
                span = nxt[0] - result[-1][0]
                if all(vectorops.norm(self.difference_state(
                        self.interpolate_state(result[-1][1], nxt[1],
                                               (d[0] - result[-1][0]) / span, span),
                        d[1], 1.0, 1.0)) <= tol for d in dropped + [e]):
                    dropped.append(e)
                    continue
            dropped = []
            result.append(e)
        path = self.constructor()([e[0] for e in result], [e[1] for e in result])
        index = {}
        for k, e in enumerate(result):
            index[e[0]] = k          # the last entry of a time: where 'halt' evaluates
        return path, [index[t] for t in newtimes]

    def extractDofs(self, dofs) -> "Trajectory":
        """The trajectory of the milestone entries `dofs` (indices; negative count from the
        end)."""
        if not self.times:
            return self.constructor()()
        n = len(self.milestones[0])
        for d in dofs:
            if not -n <= d < n:
                raise ValueError(f"extractDofs: index {d} out of range for milestones of "
                                 f"{n} entries")
        return self.constructor()(list(self.times), [[m[j] for j in dofs]
                                                     for m in self.milestones])

    def stackDofs(self, trajs, strict: bool = True) -> None:
        """Set this trajectory to the trajectories `trajs` side by side: milestones at every
        time of any of them ('halt' outside a trajectory's range), entries concatenated in
        order. strict: warn when a trajectory's class differs from this one's."""
        if not isinstance(trajs, (list, tuple)):
            raise ValueError("stackDofs takes a list of trajectories")
        if strict and any(traj.__class__ is not self.__class__ for traj in trajs):
            warnings.warn("Trajectory.stackDofs is merging trajectories of different classes",
                          stacklevel=2)
        times = sorted({t for traj in trajs for t in traj.times})
        milestones = [sum((list(traj.eval_state(t)) for traj in trajs), []) for t in times]
        self.times, self.milestones = _checked(times, milestones, type(self).__name__)


class RobotTrajectory(Trajectory):
    """Interpolation along a robot's configuration-space geodesics (RobotModel.interpolate:
    quaternions along rotations, continuous joints the shorter way round). Milestones have nq
    entries; ``deriv`` returns velocities with nv entries (the layout of setVelocity)."""

    def __init__(self, robot, times=None, milestones=None):
        if not all(hasattr(robot, m) for m in ("interpolate", "interpolateDeriv", "distance",
                                                "getConfig", "setConfig")):
            raise ValueError("RobotTrajectory needs a RobotModel as its first argument, got "
                             f"{type(robot).__name__}")
        self.robot = robot
        super().__init__(times, milestones)

    def _milestone_size(self):
        return len(self.robot.getConfig())

    def interpolate_state(self, a, b, u, dt):
        return self.robot.interpolate(a, b, u).tolist()

    def difference_state(self, a, b, u, dt):
        return (self.robot.interpolateDeriv(b, a, u) * (1.0 / dt)).tolist()

    def _zero_velocity(self) -> list:
        return [0.0] * len(self.robot.getVelocity())

    def constructor(self):
        robot = self.robot
        return lambda times=None, milestones=None: RobotTrajectory(robot, times, milestones)

    def getLinkTrajectory(self, link, discretization=None) -> "SE3Trajectory":
        """The SE3Trajectory of a link's frame (index, name or RobotModelLink) through the
        milestones (every `discretization` seconds if given). The robot's configuration is
        left as it was."""
        if discretization is not None:
            return self.discretize(discretization).getLinkTrajectory(link)
        if isinstance(link, (int, str)):
            link = self.robot.link(link)
        saved = self.robot.getConfig()
        try:
            transforms = []
            for m in self.milestones:
                self.robot.setConfig(m)
                R, t = link.getTransform()
                transforms.append(R.T.reshape(9).tolist() + t.tolist())
        finally:
            self.robot.setConfig(saved)
        return SE3Trajectory(list(self.times), transforms)

    def length(self, metric=None) -> float:
        return super().length(self.robot.distance if metric is None else metric)

    def extractDofs(self, dofs):
        raise ValueError("RobotTrajectory.extractDofs needs Klamp't's SubRobotModel, which "
                         "sim_node does not have; Trajectory(traj.times, [[m[i] for i in dofs] "
                         "for m in traj.milestones]) gives the plain trajectory of those entries")

    def stackDofs(self, trajs, strict: bool = False) -> None:
        super().stackDofs(trajs, strict=False)
        self.checkValid()


class GeodesicTrajectory(Trajectory):
    """Interpolation along the geodesics of a GeodesicSpace (sim_node.math.geodesic)."""

    def __init__(self, geodesic: GeodesicSpace, times=None, milestones=None):
        self.geodesic = geodesic
        super().__init__(times, milestones)

    def _milestone_size(self):
        try:
            return self.geodesic.extrinsicDimension()
        except NotImplementedError:
            return None

    def interpolate_state(self, a, b, u, dt):
        return self.geodesic.interpolate(a, b, u)

    def difference_state(self, a, b, u, dt):
        x = self.interpolate_state(b, a, u, dt)
        return vectorops.mul(vectorops.sub(self.geodesic.difference(a, x),
                                           self.geodesic.difference(b, x)), 1.0 / dt)

    def constructor(self):
        geodesic = self.geodesic
        return lambda times=None, milestones=None: GeodesicTrajectory(geodesic, times,
                                                                      milestones)

    def length(self, metric=None) -> float:
        return super().length(self.geodesic.distance if metric is None else metric)

    def extractDofs(self, dofs):
        raise ValueError(f"cannot extract entries of a {type(self).__name__}: its milestones "
                         "are points of a curved space")

    def stackDofs(self, trajs, strict: bool = True):
        raise ValueError(f"cannot stack trajectories into a {type(self).__name__}")


class SO3Trajectory(GeodesicTrajectory):
    """Rotations (so3 9-lists, column-major; (3, 3) matrices are accepted) along so3
    geodesics. deriv gives [w] (9-list), the cross-product matrix of the angular velocity w in
    world axes (dR/dt = [w] R); deriv_angvel gives w (Klamp't 0.10.1 returns R(t) w)."""

    def __init__(self, times=None, milestones=None):
        if milestones is not None:
            milestones = [as_klampt(as_matrix(m, f"SO3Trajectory milestones[{i}]"))
                          for i, m in enumerate(milestones)]
        super().__init__(SO3Space(), times, milestones)

    def deriv_angvel(self, t: float, endBehavior: str = "halt") -> list:
        """The angular velocity [rad/s] in world axes at time t."""
        return so3.deskew(self.deriv(t, endBehavior))

    def preTransform(self, R) -> None:
        """Every milestone m becomes R m (re-express the rotations in another frame)."""
        self.milestones = [so3.mul(R, m) for m in self.milestones]

    def postTransform(self, R) -> None:
        """Every milestone m becomes m R."""
        self.milestones = [so3.mul(m, R) for m in self.milestones]

    def getPointTrajectory(self, localPt) -> Trajectory:
        """The Trajectory of the point localPt fixed in the rotating frame (milestone by
        milestone: discretize first for accuracy)."""
        return Trajectory(list(self.times), [list(so3.apply(m, localPt))
                                             for m in self.milestones])

    def constructor(self):
        return SO3Trajectory


class SE3Trajectory(GeodesicTrajectory):
    """Rigid transforms along se3 geodesics: milestones are R (9) + t (3) lists, or (R, t)
    pairs (R a 9-list or a 3x3 matrix), which the constructor flattens. eval returns (R, t)."""

    def __init__(self, times=None, milestones=None):
        if milestones is not None:
            milestones = [self._flat(m, i) for i, m in enumerate(milestones)]
        super().__init__(SE3Space(), times, milestones)

    @staticmethod
    def _flat(m, i: int) -> list:
        if len(m) == 2:
            R, t = m
            where = f"SE3Trajectory milestones[{i}]"
            t = _vector(t, f"{where} translation")
            if len(t) != 3:
                raise ValueError(f"{where}: the translation must be 3 numbers, got {len(t)}")
            return as_klampt(as_matrix(R, f"{where} rotation")) + t
        return m

    def to_se3(self, state) -> tuple:
        """(R, t) of a 12-vector state."""
        return list(state[:9]), list(state[9:])

    def waypoint(self, state) -> tuple:
        return self.to_se3(state)

    def from_se3(self, T) -> list:
        """The 12-vector state of (R, t)."""
        return list(T[0]) + list(T[1])

    def eval(self, t: float, endBehavior: str = "halt") -> tuple:
        """(R, t) at time t."""
        return self.to_se3(self.eval_state(t, endBehavior))

    def deriv(self, t: float, endBehavior: str = "halt") -> tuple:
        """([w], v): the world angular velocity's cross-product matrix (9-list) and the
        linear velocity of the origin."""
        return self.to_se3(self.deriv_state(t, endBehavior))

    def deriv_screw(self, t: float, endBehavior: str = "halt") -> list:
        """[angular velocity (3), linear velocity (3)] from deriv."""
        dR, dt = self.deriv(t, endBehavior)
        return so3.deskew(dR) + dt

    def preTransform(self, T) -> None:
        """Every milestone m becomes T m."""
        self.milestones = [self.from_se3(se3.mul(T, self.to_se3(m))) for m in self.milestones]

    def postTransform(self, T) -> None:
        """Every milestone m becomes m T."""
        self.milestones = [self.from_se3(se3.mul(self.to_se3(m), T)) for m in self.milestones]

    def getRotationTrajectory(self) -> SO3Trajectory:
        return SO3Trajectory(list(self.times), [m[:9] for m in self.milestones])

    def getPositionTrajectory(self, localPt=None) -> Trajectory:
        """The Trajectory of the frame's origin (or of localPt fixed in the frame)."""
        if localPt is None:
            return Trajectory(list(self.times), [m[9:] for m in self.milestones])
        return Trajectory(list(self.times), [se3.apply(self.to_se3(m), localPt)
                                             for m in self.milestones])

    def extractDofs(self, dofs) -> Trajectory:
        """Entries 0..8 in order: the SO3Trajectory; entries >= 9 only: a Trajectory of the
        translation entries."""
        if list(dofs) == list(range(9)):
            return self.getRotationTrajectory()
        if all(9 <= d < 12 for d in dofs):
            return Trajectory(list(self.times), [[m[d] for d in dofs] for m in self.milestones])
        raise ValueError("SE3Trajectory.extractDofs: only the rotation (0..8 in order) or "
                         "translation entries (9..11) can be extracted")

    def constructor(self):
        return SE3Trajectory


def _bezier_to_hermite(times, controlPoints, difference) -> tuple:
    """(times, milestones, derivatives) of the Hermite curve equal to the piecewise cubic
    Bezier curve on controlPoints[3i : 3i+4] over [times[i], times[i+1]]; `difference(b, a)`
    is the tangent from a to b (b - a in a vector space). A kink doubles its knot."""
    nsegs = len(times) - 1
    if nsegs < 1 or nsegs * 3 + 1 != len(controlPoints):
        raise ValueError(f"makeBezier: {len(times)} times need {max(nsegs, 0) * 3 + 1} "
                         f"control points (3 per segment + 1), got {len(controlPoints)}")
    newtimes, milestones, derivatives = [], [], []
    for i in range(nsegs):
        a, b, c, d = controlPoints[i * 3:i * 3 + 4]
        dt = times[i + 1] - times[i]
        if not dt > 0:
            raise ValueError(f"makeBezier: times must increase strictly, but times[{i + 1}]"
                             f" = {times[i + 1]} <= times[{i}] = {times[i]}")
        v_start = vectorops.mul(difference(b, a), 3 / dt)
        v_end = vectorops.mul(difference(c, d), -3 / dt)
        if i == 0:
            newtimes.append(times[0])
            milestones.append(a)
            derivatives.append(v_start)
        elif vectorops.distance(v_start, derivatives[-1]) > 1e-4:
            newtimes.append(newtimes[-1])        # a kink: a doubled knot
            milestones.append(milestones[-1])
            derivatives.append(v_start)
        newtimes.append(times[i + 1])
        milestones.append(d)
        derivatives.append(v_end)
    return newtimes, milestones, derivatives


class HermiteTrajectory(Trajectory):
    """Cubic Hermite segments. Milestones are phase-space states [x, dx] (2n entries: the
    point and its velocity); eval gives x, deriv dx, eval_accel the acceleration and
    eval_state [x, dx]. HermiteTrajectory(times, milestones, dmilestones) takes points and
    velocities separately."""

    def __init__(self, times=None, milestones=None, dmilestones=None):
        if dmilestones is not None:
            if milestones is None or len(milestones) != len(dmilestones):
                raise ValueError("HermiteTrajectory: milestones and dmilestones must be given "
                                 "together, one velocity per milestone")
            for i, (q, dq) in enumerate(zip(milestones, dmilestones)):
                if len(q) != len(dq):
                    raise ValueError(f"HermiteTrajectory: milestones[{i}] has {len(q)} entries "
                                     f"but dmilestones[{i}] {len(dq)}")
            milestones = [list(q) + list(dq) for q, dq in zip(milestones, dmilestones)]
        super().__init__(times, milestones)
        for i, m in enumerate(self.milestones):
            if len(m) % 2:
                raise ValueError(f"HermiteTrajectory: milestones[{i}] has {len(m)} entries; a "
                                 "state [x, dx] has an even count")

    def makeSpline(self, waypointTrajectory: Trajectory, preventOvershoot: bool = True,
                   loop: bool = False) -> None:
        """Velocities for the milestones of a piecewise-linear trajectory (central
        differences; with preventOvershoot no coordinate leaves the range of its neighbours;
        loop: a closed curve whose first and last milestones must be equal), set on self."""
        t = waypointTrajectory
        if not t.milestones:
            raise ValueError("makeSpline: the waypoint trajectory is empty")
        if loop and list(t.milestones[-1]) != list(t.milestones[0]):
            raise ValueError("makeSpline: loop=True needs equal first and last milestones")
        d = len(t.milestones[0])
        N = len(t.milestones)
        third = 1.0 / 3.0
        if N == 1:
            velocities = [[0.0] * d]
        elif N == 2:
            if loop:
                v = [0.0] * d
            else:
                span = t.times[1] - t.times[0]
                v = vectorops.mul(vectorops.sub(t.milestones[1], t.milestones[0]),
                                  1.0 / span if span != 0 else 0)
            velocities = [v, v]
        else:
            velocities = []
            if loop:
                triples = zip([-2] + list(range(N - 1)), range(N), list(range(1, N)) + [1])
            else:
                triples = zip(range(N - 2), range(1, N - 1), range(2, N))
            for p, i, n in triples:
                dtp = t.times[-1] - t.times[-2] if p < 0 else t.times[i] - t.times[p]
                dtn = t.times[1] - t.times[0] if n <= i else t.times[n] - t.times[i]
                s = 1.0 / (dtp + dtn) if dtp + dtn != 0 else 0
                v = vectorops.mul(vectorops.sub(t.milestones[n], t.milestones[p]), s)
                if preventOvershoot:
                    for j, (x, a, b) in enumerate(zip(t.milestones[i], t.milestones[p],
                                                      t.milestones[n])):
                        # a monotone cubic: zero slope at an extremum, and the control points
                        # x -+ v dt/3 kept within the neighbours' values
                        if x <= min(a, b) or x >= max(a, b):
                            v[j] = 0.0
                        elif v[j] < 0 and x - v[j] * third * dtp >= a:
                            v[j] = 3.0 / dtp * (x - a)
                        elif v[j] > 0 and x - v[j] * third * dtp <= a:
                            v[j] = 3.0 / dtp * (x - a)
                        elif v[j] < 0 and x + v[j] * third * dtn < b:
                            v[j] = 3.0 / dtn * (b - x)
                        elif v[j] > 0 and x + v[j] * third * dtn > b:
                            v[j] = 3.0 / dtn * (b - x)
                velocities.append(v)
            if not loop:
                # end velocities of the quadratics through the end points and the next
                # control point
                dt0 = t.times[1] - t.times[0]
                x2 = vectorops.madd(t.milestones[1], velocities[0], -third * dt0)
                x1 = vectorops.madd(x2, vectorops.sub(t.milestones[1], t.milestones[0]), -third)
                v0 = vectorops.mul(vectorops.sub(x1, t.milestones[0]), 3.0 / dt0)
                dtn_ = t.times[-1] - t.times[-2]
                xn2 = vectorops.madd(t.milestones[-2], velocities[-1], third * dtn_)
                xn1 = vectorops.madd(xn2, vectorops.sub(t.milestones[-1], t.milestones[-2]),
                                     third)
                vn = vectorops.mul(vectorops.sub(t.milestones[-1], xn1), 3.0 / dtn_)
                velocities = [v0] + velocities + [vn]
        self.__init__(list(t.times), t.milestones, velocities)

    def makeBezier(self, times, controlPoints) -> None:
        """Segment i is the cubic Bezier curve on controlPoints[3i : 3i+4] over
        [times[i], times[i+1]] (times strictly increasing); set on self."""
        self.__init__(*_bezier_to_hermite(times, controlPoints, vectorops.sub))

    def makeMinTimeSpline(self, *args, **kwargs) -> None:
        raise ValueError("HermiteTrajectory.makeMinTimeSpline needs Klamp't's motion planning "
                         "module, which sim_node does not have")

    def waypoint(self, state):
        return state[:len(state) // 2]

    def eval(self, t, endBehavior="halt") -> list:
        """The point x at time t."""
        res = self.eval_state(t, endBehavior)
        return res[:len(res) // 2]

    def deriv(self, t, endBehavior="halt") -> list:
        """The velocity dx at time t."""
        res = self.eval_state(t, endBehavior)
        return res[len(res) // 2:]

    def eval_accel(self, t, endBehavior="halt") -> list:
        """The acceleration at time t."""
        res = self.deriv_state(t, endBehavior)
        return res[len(res) // 2:]

    def interpolate_state(self, a, b, u, dt):
        n = len(a) // 2
        x1, v1 = a[:n], vectorops.mul(a[n:], dt)
        x2, v2 = b[:n], vectorops.mul(b[n:], dt)
        return (spline.hermite_eval(x1, v1, x2, v2, u)
                + vectorops.mul(spline.hermite_deriv(x1, v1, x2, v2, u), 1.0 / dt))

    def difference_state(self, a, b, u, dt):
        # (Klamp't's argument order here: a is the segment's start, b its end)
        n = len(a) // 2
        x1, v1 = a[:n], vectorops.mul(a[n:], dt)
        x2, v2 = b[:n], vectorops.mul(b[n:], dt)
        return (vectorops.mul(spline.hermite_deriv(x1, v1, x2, v2, u, order=1), 1.0 / dt)
                + vectorops.mul(spline.hermite_deriv(x1, v1, x2, v2, u, order=2),
                                1.0 / dt ** 2))

    def deriv_state(self, t, endBehavior="halt"):
        i, u = self.getSegment(t, endBehavior)
        if i < 0 or i + 1 >= len(self.milestones):
            return self._zero_velocity()
        return self.difference_state(self.milestones[i], self.milestones[i + 1], u,
                                     self.times[i + 1] - self.times[i])

    def discretize(self, dt) -> Trajectory:
        """A piecewise-linear Trajectory of the points x every dt."""
        res = self.discretize_state(dt)
        n = len(res.milestones[0]) // 2
        return Trajectory(res.times, [m[:n] for m in res.milestones])

    def length(self, metric=None) -> float:
        """An upper bound on the arc length: the Bezier control polygons' lengths, control
        points x -+ v dt / 3 (Klamp't 0.10.1 leaves out dt, which is no bound unless segments
        last 1 s); discretize for an approximation of the true length."""
        if metric is not None:
            return super().length(metric)
        n = len(self.milestones[0]) // 2
        total = 0.0
        for i, (x, y) in enumerate(zip(self.milestones[:-1], self.milestones[1:])):
            dt = self.times[i + 1] - self.times[i]
            cp1 = vectorops.madd(x[:n], x[n:], dt / 3.0)
            cp2 = vectorops.madd(y[:n], y[n:], -dt / 3.0)
            total += (vectorops.distance(x[:n], cp1) + vectorops.distance(cp1, cp2)
                      + vectorops.distance(cp2, y[:n]))
        return total

    def extractDofs(self, dofs) -> "HermiteTrajectory":
        """The Hermite trajectory of the point entries `dofs` (and their velocities)."""
        if not self.times:
            return self.constructor()()
        n = len(self.milestones[0]) // 2
        for d in dofs:
            if not -n <= d < n:
                raise ValueError(f"extractDofs: index {d} out of range for {n} coordinates")
        return self.constructor()(list(self.times), [[m[j] for j in dofs] + [m[n + j] for j in dofs]
                                                     for m in self.milestones])

    def stackDofs(self, trajs, strict: bool = True) -> None:
        """Set this trajectory to HermiteTrajectories side by side (points then velocities)."""
        if not isinstance(trajs, (list, tuple)) or not all(
                isinstance(traj, HermiteTrajectory) for traj in trajs):
            raise ValueError("HermiteTrajectory.stackDofs takes a list of HermiteTrajectories")
        times = sorted({t for traj in trajs for t in traj.times})
        milestones = []
        for t in times:
            states = [traj.eval_state(t) for traj in trajs]
            milestones.append(sum((s[:len(s) // 2] for s in states), [])
                              + sum((s[len(s) // 2:] for s in states), []))
        self.times, self.milestones = _checked(times, milestones, "HermiteTrajectory")

    def constructor(self):
        return HermiteTrajectory


class GeodesicHermiteTrajectory(Trajectory):
    """Cubic Hermite curves on a GeodesicSpace, evaluated by de Casteljau's construction along
    geodesics. Milestones are [point (n), outgoing Lie derivative (n)] (n the space's extrinsic
    dimension); a segment's incoming derivative is its end milestone's outgoing one (duplicate
    a knot with another derivative for a kink). eval gives the point, deriv the velocity (the
    space's tangent: SO3Space's [w] of the world angular velocity) by central differences
    (1e-6 of the segment; Klamp't 0.10.1 uses forward ones)."""

    def __init__(self, geodesic: GeodesicSpace, times=None, milestones=None,
                 outgoingLieDerivatives=None):
        self.geodesic = geodesic
        if outgoingLieDerivatives is not None:
            if milestones is None or len(milestones) != len(outgoingLieDerivatives):
                raise ValueError(f"{type(self).__name__}: milestones and outgoingLieDerivatives "
                                 "must be given together, one derivative per milestone")
            milestones = [list(a) + list(b) for a, b in zip(milestones, outgoingLieDerivatives)]
        super().__init__(times, milestones)

    def _milestone_size(self):
        return 2 * self.geodesic.extrinsicDimension()

    def makeSpline(self, waypointTrajectory: Trajectory, loop: bool = False) -> None:
        """Lie derivatives for the milestones of a waypoint trajectory (the mean of the tangents
        to the neighbours; at the ends the tangent to the neighbour; loop: a closed curve whose
        first and last milestones must be equal), set on self."""
        t = waypointTrajectory
        if not t.milestones:
            raise ValueError("makeSpline: the waypoint trajectory is empty")
        if loop and list(t.milestones[-1]) != list(t.milestones[0]):
            raise ValueError("makeSpline: loop=True needs equal first and last milestones")
        g = self.geodesic
        d = len(t.milestones[0])
        N = len(t.milestones)
        if N == 1:
            velocities = [[0.0] * d]
        elif N == 2:
            if loop:
                velocities = [[0.0] * d, [0.0] * d]
            else:
                span = t.times[1] - t.times[0]
                s = 1.0 / span if span != 0 else 0
                velocities = [vectorops.mul(g.difference(t.milestones[1], t.milestones[0]), s),
                              vectorops.mul(g.difference(t.milestones[0], t.milestones[1]), -s)]
        else:
            velocities = []
            if loop:
                triples = zip([-2] + list(range(N - 1)), range(N), list(range(1, N)) + [1])
            else:
                triples = zip(range(N - 2), range(1, N - 1), range(2, N))
            for p, i, n in triples:
                dtp = t.times[-1] - t.times[-2] if p < 0 else t.times[i] - t.times[p]
                dtn = t.times[1] - t.times[0] if n <= i else t.times[n] - t.times[i]
                v_next = vectorops.mul(g.difference(t.milestones[n], t.milestones[i]),
                                       1.0 / dtn if dtn != 0 else 0)
                v_prev = vectorops.mul(g.difference(t.milestones[p], t.milestones[i]),
                                       -1.0 / dtp if dtp != 0 else 0)
                velocities.append(vectorops.mul(vectorops.add(v_prev, v_next), 0.5))
            if not loop:
                v0 = vectorops.mul(g.difference(t.milestones[1], t.milestones[0]),
                                   1.0 / (t.times[1] - t.times[0]))
                vn = vectorops.mul(g.difference(t.milestones[-2], t.milestones[-1]),
                                   -1.0 / (t.times[-1] - t.times[-2]))
                velocities = [v0] + velocities + [vn]
        GeodesicHermiteTrajectory.__init__(self, self.geodesic, list(t.times), t.milestones,
                                           velocities)

    def makeBezier(self, times, controlPoints) -> None:
        """Segment i is the geodesic Bezier curve on controlPoints[3i : 3i+4] over
        [times[i], times[i+1]] (times strictly increasing); set on self."""
        GeodesicHermiteTrajectory.__init__(
            self, self.geodesic, *_bezier_to_hermite(times, controlPoints,
                                                     self.geodesic.difference))

    def waypoint(self, state):
        return state[:len(state) // 2]

    def _point(self, a, b, u, dt):
        """de Casteljau: the point at u of the segment from state a to state b."""
        g = self.geodesic
        n = len(a) // 2
        c0, c3 = a[:n], b[:n]
        c1 = g.integrate(c0, vectorops.mul(a[n:], dt / 3.0))
        c2 = g.integrate(c3, vectorops.mul(b[n:], -dt / 3.0))
        d0, d1, d2 = g.interpolate(c0, c1, u), g.interpolate(c1, c2, u), g.interpolate(c2, c3, u)
        return g.interpolate(g.interpolate(d0, d1, u), g.interpolate(d1, d2, u), u)

    def interpolate_state(self, a, b, u, dt):
        h = 1e-6
        after, before = self._point(a, b, u + h, dt), self._point(a, b, u - h, dt)
        x = self._point(a, b, u, dt)
        v = vectorops.mul(vectorops.sub(self.geodesic.difference(after, x),
                                        self.geodesic.difference(before, x)), 0.5 / (h * dt))
        return list(x) + v

    def difference_state(self, a, b, u, dt):
        raise ValueError(f"{type(self).__name__}: accelerations are not available")

    def eval(self, t, endBehavior="halt"):
        """The point at time t."""
        i, u = self.getSegment(t, endBehavior)
        if i < 0:
            return self.waypoint(list(self.milestones[0]))
        if i + 1 >= len(self.milestones):
            return self.waypoint(list(self.milestones[-1]))
        return list(self._point(self.milestones[i], self.milestones[i + 1], u,
                                self.times[i + 1] - self.times[i]))

    def deriv(self, t, endBehavior="halt"):
        """The velocity (Lie derivative) at time t."""
        res = self.eval_state(t, endBehavior)
        return res[len(res) // 2:]

    def length(self, metric=None) -> float:
        """An upper bound on the arc length: the geodesic control polygons' lengths."""
        metric = metric or self.geodesic.distance
        total = 0.0
        for i, (a, b) in enumerate(zip(self.milestones[:-1], self.milestones[1:])):
            dt = self.times[i + 1] - self.times[i]
            n = len(a) // 2
            c1 = self.geodesic.integrate(a[:n], vectorops.mul(a[n:], dt / 3.0))
            c2 = self.geodesic.integrate(b[:n], vectorops.mul(b[n:], -dt / 3.0))
            total += metric(a[:n], c1) + metric(c1, c2) + metric(c2, b[:n])
        return total

    def discretize(self, dt) -> GeodesicTrajectory:
        """A piecewise-geodesic trajectory of the points every dt."""
        res = Trajectory.discretize_state(self, dt)
        return self._points_trajectory(res.times, [self.waypoint(m) for m in res.milestones])

    def _points_trajectory(self, times, points):
        return GeodesicTrajectory(self.geodesic, times, points)

    def eval_state(self, t, endBehavior="halt"):
        return Trajectory.eval_state(self, t, endBehavior)

    def extractDofs(self, dofs):
        raise ValueError(f"cannot extract entries of a {type(self).__name__}")

    def stackDofs(self, trajs, strict: bool = True):
        raise ValueError(f"cannot stack trajectories into a {type(self).__name__}")

    def constructor(self):
        geodesic = self.geodesic
        return lambda times=None, milestones=None: GeodesicHermiteTrajectory(geodesic, times,
                                                                             milestones)


class SO3HermiteTrajectory(GeodesicHermiteTrajectory):
    """Hermite curves of rotations: milestones are [R (9), [w] (9)], the so3 element and the
    cross-product matrix of its outgoing world angular velocity w."""

    def __init__(self, times=None, milestones=None, outgoingLieDerivatives=None):
        if outgoingLieDerivatives is not None and milestones is not None:
            milestones = [as_klampt(as_matrix(m, f"SO3HermiteTrajectory milestones[{i}]"))
                          for i, m in enumerate(milestones)]
        super().__init__(SO3Space(), times, milestones, outgoingLieDerivatives)

    def deriv_angvel(self, t, endBehavior="halt") -> list:
        """The world angular velocity [rad/s] at time t."""
        return so3.deskew(self.deriv(t, endBehavior))

    def preTransform(self, R) -> None:
        """Every milestone R_m becomes R R_m (and its angular velocity R w)."""
        self.milestones = [so3.mul(R, m[:9]) + so3.cross_product(so3.apply(R, so3.deskew(m[9:])))
                           for m in self.milestones]

    def postTransform(self, R) -> None:
        """Every milestone R_m becomes R_m R (the world angular velocity is unchanged)."""
        self.milestones = [so3.mul(m[:9], R) + list(m[9:]) for m in self.milestones]

    def _points_trajectory(self, times, points):
        return SO3Trajectory(times, points)

    def constructor(self):
        return SO3HermiteTrajectory


class SE3HermiteTrajectory(GeodesicHermiteTrajectory):
    """Hermite curves of rigid transforms: milestones are [R (9), t (3), [w] (9), v (3)], the
    transform and its outgoing world angular velocity matrix and linear velocity; (R, t) pairs
    are accepted for milestones and derivatives. eval gives (R, t), deriv ([w], v)."""

    def __init__(self, times=None, milestones=None, outgoingLieDerivatives=None):
        def flat(items):
            return None if items is None else [SE3Trajectory._flat(m, i)
                                                for i, m in enumerate(items)]
        super().__init__(SE3Space(), times, flat(milestones), flat(outgoingLieDerivatives))

    def to_se3(self, state) -> tuple:
        """(R, t) of a 12-vector."""
        return list(state[:9]), list(state[9:12])

    def from_se3(self, T) -> list:
        return list(T[0]) + list(T[1])

    def waypoint(self, state):
        return list(state[:12])

    def eval(self, t, endBehavior="halt") -> tuple:
        """(R, t) at time t."""
        return self.to_se3(super().eval(t, endBehavior))

    def deriv(self, t, endBehavior="halt") -> tuple:
        """([w], v) at time t."""
        return self.to_se3(super().deriv(t, endBehavior))

    def deriv_screw(self, t, endBehavior="halt") -> list:
        """[w (3), v (3)] at time t."""
        dR, dt = self.deriv(t, endBehavior)
        return so3.deskew(dR) + dt

    def preTransform(self, T) -> None:
        """Every milestone m becomes T m (velocities rotated by T's rotation)."""
        R = T[0]
        self.milestones = [
            self.from_se3(se3.mul(T, self.to_se3(m)))
            + so3.cross_product(so3.apply(R, so3.deskew(m[12:21]))) + list(so3.apply(R, m[21:]))
            for m in self.milestones]

    def postTransform(self, T) -> None:
        """Every milestone m becomes m T: the origin moves to m's point T.t, whose velocity is
        v + w x (R_m T.t)."""
        out = []
        for m in self.milestones:
            Rm, tm = self.to_se3(m)
            offset = so3.apply(Rm, T[1])
            w = so3.deskew(m[12:21])
            out.append(self.from_se3(se3.mul((Rm, tm), T)) + list(m[12:21])
                       + vectorops.add(m[21:], vectorops.cross(w, offset)))
        self.milestones = out

    def _points_trajectory(self, times, points):
        return SE3Trajectory(times, points)

    def constructor(self):
        return SE3HermiteTrajectory
