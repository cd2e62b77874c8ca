"""Robot optimisation problems (Klamp't's klampt.plan.robotoptimize, seed 001).

A RobotOptimizationProblem finds a robot configuration q (and, optionally, other Klamp't-typed
variables: KlamptVariable) that

    minimises   sum_i w_i c_i(q, v)  +  sum_j w_j |g_j(q, v)|^2           (costs, soft equalities)
    subject to  r_k(q) = 0                       (hard IK objectives, sim_node.model.ik residuals)
                g_l(q, v) = 0,  h_m(q, v) <= 0   (hard equalities / inequalities)
                qmin <= q <= qmax                (joint limits, on the active DOFs)
                feasible_n(q, v) is True         (black-box feasibility tests)

over the active DOFs of q (the other entries stay at the seed, the robot's configuration when
solve() is called). With soft IK objectives (a weight, or enableSoftIK()) the problem becomes
lexicographic, as Klamp't documents: first minimise the weighted IK error E(q) = sum w |r(q)|^2,
then minimise the costs keeping E at its minimum (exactly at 0 when the targets are reached).

The optimiser is scipy's SLSQP (see the README's "Robot optimization"): bounds for the joint
limits, equality constraints with the analytic IK Jacobians of IKSolver.getJacobian, and a
Newton (IKSolver.solve) seed for hard IK so SLSQP starts on the constraint manifold.

Costs, equalities, inequalities and feasibility tests are Python callables ``f(q, *values)``
(q the full configuration, values the Klamp't values of the optimised KlamptVariables in the
order they were added) or expression strings (sim_node.plan.expression) over ``q`` and the
variable names, with robot functions ``link_position(link, local)``, ``link_rotation(link)``,
``com()``. Only expressions and IK objectives can be saved by toJson.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.spatial.transform import Rotation

from sim_node.model import ik
from sim_node.model.robot import RobotModel, RobotModelLink
from sim_node.plan import ik_json, rotation_encoding
from sim_node.plan.expression import CONSTANTS, FUNCTIONS, Expression, ExpressionError
from sim_node.plan.ik_json import JSONError

OBJECTIVE_TYPES = ("cost", "eq", "ineq", "feas")
JSON_VERSION = 1
MAX_ITERS = 1_000_000
# bounds are met to this (SLSQP may step a rounding error outside); the result is clipped
_BOUND_SLACK = 1e-9


class OptimizerParams:
    """Settings of RobotOptimizationProblem.solve (Klamp't's OptimizerParams).

    numIters (alias maxIters): iterations of each Newton IK solve and each SLSQP run (1..1e6);
    tol: feasibility tolerance, on every |equality residual| (IK residuals in m and rad) and
    inequality violation (> 0); numRestarts: local solves (>= 1): the first from the robot's
    configuration unless startRandom, the others from random configurations within the limits;
    timeout [s]: no new restart starts after it (a bound on effort, not a result); seed: the
    random generator's seed (None: fresh entropy); globalMethod: None or 'random-restart' (the
    same thing here); localMethod: None, 'auto', 'scipy' or 'scipy.SLSQP' (all SLSQP)."""

    def __init__(self, numIters=50, tol=1e-3, startRandom=False, numRestarts=1, timeout=10,
                 globalMethod=None, localMethod=None, seed=None):
        self.numIters = numIters
        self.tol = tol
        self.startRandom = startRandom
        self.numRestarts = numRestarts
        self.timeout = timeout
        self.globalMethod = globalMethod
        self.localMethod = localMethod
        self.seed = seed

    @property
    def maxIters(self):
        return self.numIters

    @maxIters.setter
    def maxIters(self, value):
        self.numIters = value

    _FIELDS = ("numIters", "tol", "startRandom", "numRestarts", "timeout", "globalMethod",
               "localMethod", "seed")

    def toJson(self) -> dict:
        return {name: getattr(self, name) for name in self._FIELDS}

    def fromJson(self, obj):
        if not isinstance(obj, dict):
            raise JSONError(f"OptimizerParams: an object is required, got {type(obj).__name__}")
        unknown = set(obj) - set(self._FIELDS)
        if unknown:
            raise JSONError(f"OptimizerParams: unknown keys {sorted(unknown)}; valid: "
                            f"{list(self._FIELDS)}")
        for name in self._FIELDS:
            if name in obj:
                setattr(self, name, obj[name])
        self.check()
        return self

    def check(self):
        """ValueError naming the first invalid setting."""
        for name, low in (("numIters", 1), ("numRestarts", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                    or not low <= value <= MAX_ITERS:
                raise ValueError(f"OptimizerParams.{name}: an integer in [{low}, {MAX_ITERS}] "
                                 f"is required, got {value!r}")
        if not _is_number(self.tol) or not 0 < self.tol < math.inf:
            raise ValueError(f"OptimizerParams.tol: a finite number > 0 is required, got "
                             f"{self.tol!r}")
        if not _is_number(self.timeout) or not self.timeout > 0:
            raise ValueError(f"OptimizerParams.timeout: a number > 0 [s] (inf allowed) is "
                             f"required, got {self.timeout!r}")
        if not isinstance(self.startRandom, (bool, np.bool_)):
            raise ValueError(f"OptimizerParams.startRandom: True or False, got "
                             f"{self.startRandom!r}")
        if self.globalMethod not in (None, "random-restart"):
            raise ValueError(f"OptimizerParams.globalMethod: {self.globalMethod!r} is not "
                             "supported; valid: None, 'random-restart' (Klamp't's DIRECT, "
                             "differential_evolution and pyOpt are not provided)")
        if self.localMethod not in (None, "auto", "scipy", "scipy.SLSQP"):
            raise ValueError(f"OptimizerParams.localMethod: {self.localMethod!r} is not "
                             "supported; valid: None, 'auto', 'scipy', 'scipy.SLSQP'")
        if self.seed is not None and (isinstance(self.seed, bool) or
                                      not isinstance(self.seed, (int, np.integer))
                                      or self.seed < 0):
            raise ValueError(f"OptimizerParams.seed: None or an integer >= 0, got "
                             f"{self.seed!r}")


@dataclass
class OptimizationObjective:
    """One cost or constraint. type: 'cost' (added to the cost), 'eq' (f = 0), 'ineq'
    (f <= 0) or 'feas' (f is True); soft: an 'eq'/'ineq' penalised by weight*|f|^2 (resp.
    weight*|max(f, 0)|^2) instead of enforced; expr: the IKObjective, Expression or callable;
    grad: optional derivative of a callable with respect to q (cost: (nq,), eq/ineq:
    (m, nq)); internal: a constraint that a KlamptVariable's encoding adds (not saved)."""
    expr: object
    type: str
    weight: float = 1.0
    soft: bool = False
    name: str | None = None
    grad: object = None
    internal: bool = False

    @property
    def isIK(self) -> bool:
        return isinstance(self.expr, ik.IKObjective)


@dataclass
class _Block:
    """A parameter vector of a KlamptVariable: name, size, bounds (None: unbounded)."""
    name: str
    size: int
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None


class KlamptVariable:
    """A Klamp't-typed optimisation variable (Config, Configs, Vector/Vector3, Rotation,
    RigidTransform) and its encoding as parameter vectors.

    name, type, encoding (Rotation / RigidTransform: 'rotation_vector', 'quaternion', 'rpy' or
    None), variables (the parameter blocks' names), constraints (the equality objectives the
    encoding adds), optimize (True: its parameters are optimised; False: held at its value).
    Values (getValue, callables' arguments): Config / Vector as numpy arrays, Configs as a list
    of them, Rotation as Klamp't's column-major 9-list, RigidTransform as (9-list, 3-list)."""

    def __init__(self, name, type):
        self.name = name
        self.type = type
        self.encoding = None
        self.blocks: list[_Block] = []
        self.constraints = []
        self.optimize = True
        self.addConstraints = True
        self._params = None         # flat parameter vector, None when unbound

    @property
    def variables(self) -> list:
        return [block.name for block in self.blocks]

    @property
    def size(self) -> int:
        return sum(block.size for block in self.blocks)

    def bind(self, obj):
        """Binds the parameters to the encoding of the Klamp't object obj."""
        self._params = self.encode(obj)

    def getParams(self):
        """The bound parameters: one array, or a list of arrays for several blocks."""
        if self._params is None:
            raise ValueError(f"KlamptVariable '{self.name}' is not bound")
        parts, start = [], 0
        for block in self.blocks:
            parts.append(self._params[start:start + block.size].copy())
            start += block.size
        return parts[0] if len(parts) == 1 else parts

    def getValue(self):
        """The Klamp't value of the bound parameters."""
        if self._params is None:
            raise ValueError(f"KlamptVariable '{self.name}' is not bound")
        return self.decode(self._params)

    def unbind(self):
        self._params = None

    def encode(self, obj) -> np.ndarray:
        """The flat parameter vector encoding the Klamp't object obj (checked)."""
        what = f"KlamptVariable '{self.name}' ({self.type})"
        if self.type in ("Config", "Vector"):
            return _finite_vector(obj, self.blocks[0].size, what)
        if self.type == "Configs":
            if not isinstance(obj, (list, tuple, np.ndarray)) or len(obj) != len(self.blocks):
                raise ValueError(f"{what}: {len(self.blocks)} configurations are required")
            return np.concatenate([_finite_vector(c, b.size, f"{what}[{i}]")
                                   for i, (c, b) in enumerate(zip(obj, self.blocks))])
        if self.type == "Rotation":
            return rotation_encoding.encode(self.encoding, obj)
        if self.type == "RigidTransform":
            R, t = _transform_pair(obj, what)
            return np.concatenate([rotation_encoding.encode(self.encoding, R),
                                   _finite_vector(t, 3, f"{what} translation")])
        raise ValueError(f"{what}: unsupported type")

    def decode(self, params):
        """The Klamp't object that the flat parameter vector params encodes."""
        params = np.asarray(params, dtype=float)
        if self.type in ("Config", "Vector"):
            return params.copy()
        if self.type == "Configs":
            out, start = [], 0
            for block in self.blocks:
                out.append(params[start:start + block.size].copy())
                start += block.size
            return out
        if self.type == "Rotation":
            return rotation_encoding.decode(self.encoding, params)
        n = self.blocks[0].size
        return (rotation_encoding.decode(self.encoding, params[:n]),
                params[n:n + 3].tolist())

    def expressionValues(self, params) -> dict:
        """The names this variable gives expressions: Config / Vector: its array; Rotation:
        its (3, 3) matrix; RigidTransform: NAME_R (3, 3) and NAME_t (3); Configs: NAME_i."""
        params = np.asarray(params, dtype=float)
        if self.type == "Rotation":
            return {self.name: rotation_encoding.decode_matrix(self.encoding, params)}
        if self.type == "RigidTransform":
            n = self.blocks[0].size
            return {self.name + "_R": rotation_encoding.decode_matrix(self.encoding, params[:n]),
                    self.name + "_t": params[n:n + 3].copy()}
        if self.type == "Configs":
            return {f"{self.name}_{i}": v for i, v in enumerate(self.decode(params))}
        return {self.name: params.copy()}

    def expressionNames(self) -> list:
        if self.type == "RigidTransform":
            return [self.name + "_R", self.name + "_t"]
        if self.type == "Configs":
            return [f"{self.name}_{i}" for i in range(len(self.blocks))]
        return [self.name]

    def __repr__(self):
        return f"KlamptVariable({self.name!r}, {self.type!r}, encoding={self.encoding!r})"


class RobotOptimizationProblem:
    """An optimisation problem over a robot's configuration (see the module docstring).

    RobotOptimizationProblem(robot=None, world=None, *ikgoals): the robot (default: the
    world's first robot) and hard IK objectives. Attributes: robot, world, activeDofs (q
    indices or None: every DOF with a scalar coordinate), objectives (OptimizationObjective),
    managedVariables (name -> KlamptVariable)."""

    def __init__(self, robot=None, world=None, *ikgoals):
        if robot is None and world is not None and world.numRobots() > 0:
            robot = world.robot(0)
        if not isinstance(robot, RobotModel):
            raise ValueError(f"RobotOptimizationProblem needs a RobotModel (or a world with a "
                             f"robot), got {type(robot).__name__}")
        self.robot = robot
        self.world = world
        self.activeDofs = None
        self.objectives: list[OptimizationObjective] = []
        self.managedVariables: dict[str, KlamptVariable] = {}
        self._limits = None
        self.setJointLimits()
        for goal in ikgoals:
            self.addIKObjective(goal)

    # -- DOFs and limits ----------------------------------------------------------------
    def _nq(self) -> int:
        return self.robot.getConfig().size

    def _scalar_dofs(self) -> list:
        """q indices that are plain coordinates (joints with nq == nv): the optimisable
        entries; quaternion-parameterised joints (floating base, spherical, floating) are
        held at the seed."""
        return list(self._q_to_v())

    def _q_to_v(self) -> dict:
        """q index -> v index of every plain coordinate (IKSolver's DOFs index v)."""
        out = {}
        for name in self.robot.getJointNames():
            nq, nv = self.robot.jointSize(name)
            if nq == nv:
                q_start, v_start = self.robot.jointIndices(name)
                out.update({q_start + i: v_start + i for i in range(nq)})
        return out

    def _dof_index(self, dof) -> int:
        robot = self.robot
        scalar = self._scalar_dofs()
        if isinstance(dof, RobotModelLink):
            if dof.getRobot() is not robot:
                raise ValueError(f"{dof!r} belongs to another robot than "
                                 f"'{robot.getName()}'")
            dof = dof.getName()
        if isinstance(dof, str):
            joint = dof
            if joint not in robot.getJointNames():
                try:
                    joint = robot.link(dof).getParentJoint()
                except KeyError:
                    raise ValueError(f"active DOF {dof!r}: robot '{robot.getName()}' has no "
                                     f"movable joint or link of that name; joints: "
                                     f"{robot.getJointNames()}") from None
                if joint not in robot.getJointNames():
                    raise ValueError(f"active DOF {dof!r}: the link hangs on joint {joint!r}, "
                                     f"which does not move; joints: {robot.getJointNames()}")
            nq, nv = robot.jointSize(joint)
            if (nq, nv) != (1, 1):
                raise ValueError(f"active DOF {dof!r}: joint '{joint}' has {nq} coordinates; "
                                 "give its coordinates' q indices (quaternion joints cannot "
                                 "be optimised)")
            return robot.jointIndices(joint)[0]
        if isinstance(dof, bool) or not isinstance(dof, (int, np.integer)):
            raise ValueError(f"active DOF {dof!r}: a q index, a joint or link name, or a "
                             "RobotModelLink is required")
        if int(dof) not in scalar:
            raise ValueError(f"active DOF {dof}: not an optimisable q index of robot "
                             f"'{robot.getName()}' (valid: {scalar}; quaternion entries are "
                             "not)")
        return int(dof)

    def setActiveDofs(self, links):
        """Sets the active DOFs: q indices, joint or link names, or RobotModelLinks (a link
        stands for its parent joint). The others are held at the seed."""
        indices = [self._dof_index(d) for d in links]
        if len(set(indices)) != len(indices):
            raise ValueError(f"active DOFs contain duplicates: {indices}")
        self.activeDofs = indices

    def enableDof(self, link):
        """Adds a DOF to the active ones; the first call makes it the only active DOF (by
        default all DOFs are active), as in Klamp't."""
        index = self._dof_index(link)
        if self.activeDofs is None:
            self.activeDofs = [index]
        elif index not in self.activeDofs:
            self.activeDofs.append(index)

    def disableDof(self, link):
        """Removes a DOF from the active ones (starting from all of them)."""
        index = self._dof_index(link)
        active = self._active()
        if index in active:
            active.remove(index)
        self.activeDofs = active

    def _active(self) -> list:
        return list(self.activeDofs) if self.activeDofs is not None else self._scalar_dofs()

    def disableJointLimits(self):
        """No joint limits (by default the robot's are used)."""
        self._limits = None

    def setJointLimits(self, qmin=None, qmax=None):
        """Sets the joint limits: None -> the robot's; empty lists -> none; else qmin, qmax of
        length nq, or of len(activeDofs) when active DOFs are set (the other entries keep the
        robot's limits). -inf / inf mean unbounded; NaN or qmin > qmax are refused."""
        robot_min, robot_max = self.robot.getJointLimits()
        if qmin is None and qmax is None:
            self._limits = (robot_min, robot_max)
            return
        if qmin is None or qmax is None:
            raise ValueError("setJointLimits: give both qmin and qmax (or neither)")
        lo = np.array(qmin, dtype=float).reshape(-1)
        hi = np.array(qmax, dtype=float).reshape(-1)
        if lo.size == 0 and hi.size == 0:
            self._limits = None
            return
        if lo.shape != hi.shape:
            raise ValueError(f"setJointLimits: qmin has {lo.size} values, qmax {hi.size}")
        if np.isnan(lo).any() or np.isnan(hi).any():
            raise ValueError("setJointLimits: NaN in the limits")
        if (lo > hi).any():
            i = int(np.argmax(lo > hi))
            raise ValueError(f"setJointLimits: qmin[{i}] = {lo[i]} > qmax[{i}] = {hi[i]}")
        nq = self._nq()
        if lo.size == nq:
            self._limits = (lo, hi)
        elif self.activeDofs is not None and lo.size == len(self.activeDofs):
            full_lo, full_hi = robot_min, robot_max
            full_lo[self.activeDofs], full_hi[self.activeDofs] = lo, hi
            self._limits = (full_lo, full_hi)
        else:
            active = "" if self.activeDofs is None else f" or {len(self.activeDofs)} (active)"
            raise ValueError(f"setJointLimits: {lo.size} values; {nq} (nq){active} expected")

    def setBounds(self, var, xmin=None, xmax=None):
        """Bounds of 'q' (the joint limits: setJointLimits, or none when both are None) or of
        a Config / Vector Klamp't variable (None, None: unbounded)."""
        if var == "q":
            if xmin is None and xmax is None:
                self.disableJointLimits()
            else:
                self.setJointLimits(xmin, xmax)
            return
        kv = self.managedVariables.get(var)
        if kv is None or kv.type not in ("Config", "Vector"):
            raise ValueError(f"setBounds: {var!r} is not 'q' or a Config / Vector variable; "
                             f"variables: {sorted(self.managedVariables)}")
        block = kv.blocks[0]
        if xmin is None and xmax is None:
            block.lower = block.upper = None
            return
        lo = _finite_or_inf(xmin, block.size, f"setBounds {var!r} xmin", -math.inf)
        hi = _finite_or_inf(xmax, block.size, f"setBounds {var!r} xmax", math.inf)
        if (lo > hi).any():
            raise ValueError(f"setBounds {var!r}: xmin > xmax at {np.flatnonzero(lo > hi)}")
        block.lower, block.upper = lo, hi

    def addUserData(self, name, fn):
        """Klamp't's auto-loaded user data (files read by klampt.io.loader) is not
        supported: pass data to callables directly, or write it into an expression."""
        raise NotImplementedError("addUserData: auto-loaded user data files are not supported "
                                  "(give the data to a callable, or as numbers in an "
                                  "expression)")

    def getJointLimits(self):
        """(qmin, qmax) in use, or None when disabled."""
        return None if self._limits is None else (self._limits[0].copy(),
                                                  self._limits[1].copy())

    def inJointLimits(self, q) -> bool:
        """True if q (nq) is within the joint limits in use (always, when disabled)."""
        q = _finite_vector(q, self._nq(), "inJointLimits q")
        if self._limits is None:
            return True
        return bool(np.all(q >= self._limits[0]) and np.all(q <= self._limits[1]))

    # -- objectives ---------------------------------------------------------------------
    def addIKObjective(self, obj, weight=None):
        """Adds an IKObjective (sim_node.model.ik): a hard constraint, or a soft one
        penalised by weight*|residual|^2 when weight is given."""
        if not isinstance(obj, ik.IKObjective):
            raise ValueError(f"addIKObjective: an ik.IKObjective is required, got "
                             f"{type(obj).__name__}")
        owner = getattr(obj, "robot", None)
        if owner is not None and owner is not self.robot:
            raise ValueError(f"addIKObjective: the objective is on robot '{owner.getName()}', "
                             f"the problem on '{self.robot.getName()}'")
        n = self.robot.numLinks()
        if not (0 <= obj.link() < n and -1 <= obj.destLink() < n):
            raise ValueError(f"addIKObjective: links {obj.link()} -> {obj.destLink()} are not "
                             f"links of robot '{self.robot.getName()}' ({n} links; -1 is the "
                             "world, as a destination only)")
        return self._add(OptimizationObjective(obj, "eq", *self._weight(weight, "IK")))

    def isIKObjective(self, index) -> bool:
        """True if objectives[index] is an IK objective."""
        return self.objectives[index].isIK

    def getIKObjective(self, index):
        """The IKObjective of objectives[index] (ValueError if it is not one)."""
        if not self.isIKObjective(index):
            raise ValueError(f"objective {index} is not an IK objective")
        return self.objectives[index].expr

    def enableSoftIK(self, enabled=True):
        """Makes every IK objective soft (weight 1 unless it has one) or, with False, hard.
        Soft IK reaches the targets when it can and otherwise minimises the error first."""
        for obj in self.objectives:
            if obj.isIK:
                obj.soft = bool(enabled)

    def addCost(self, f, weight=1, name=None, grad=None):
        """Adds weight * f(q, *values) to the cost (f: callable or expression string; a scalar)."""
        return self._add(self._objective(f, "cost", weight, False, name, grad))

    def addEquality(self, f, weight=None, name=None, grad=None):
        """Requires f(q, *values) = 0 (a vector); with weight, penalises weight*|f|^2 instead."""
        return self._add(self._objective(f, "eq", *self._weight(weight, "equality"), name,
                                         grad))

    def addInequality(self, f, weight=None, name=None, grad=None):
        """Requires f(q, *values) <= 0 (elementwise); with weight, penalises
        weight*|max(f, 0)|^2 instead."""
        return self._add(self._objective(f, "ineq", *self._weight(weight, "inequality"), name,
                                         grad))

    def addFeasibilityTest(self, f, weight=None, name=None):
        """Requires f(q, *values) to be true (a black box, checked on candidate solutions)."""
        if weight is not None:
            raise ValueError("addFeasibilityTest: soft feasibility tests are not supported "
                             "(a boolean has no gradient); leave weight None")
        return self._add(self._objective(f, "feas", 1.0, False, name, None))

    @staticmethod
    def _weight(weight, what):
        if weight is None:
            return 1.0, False
        if not _is_number(weight) or not 0 < weight < math.inf:
            raise ValueError(f"{what} weight: a finite number > 0 is required, got {weight!r}")
        return float(weight), True

    def _objective(self, f, type_, weight, soft, name, grad):
        if type_ == "cost" and (not _is_number(weight) or not math.isfinite(weight)
                                or weight < 0):
            raise ValueError(f"cost weight: a finite number >= 0 is required, got {weight!r}")
        if name is not None and not isinstance(name, str):
            raise ValueError(f"objective name: a string, got {type(name).__name__}")
        if isinstance(f, str):
            f = self._expression(f)
            if grad is not None:
                raise ValueError("grad is for callables; an expression is differentiated "
                                 "numerically")
        elif not callable(f):
            raise ValueError(f"a {type_} is a callable f(q, *values) or an expression string, "
                             f"got {type(f).__name__}")
        if grad is not None and not callable(grad):
            raise ValueError("grad: a callable grad(q, *values) is required")
        return OptimizationObjective(f, type_, float(weight), soft, name, grad)

    def _expression(self, text) -> Expression:
        names = ["q"] + [n for kv in self.managedVariables.values()
                         for n in kv.expressionNames()]
        expression = Expression(text, names, self._robot_functions())
        for link in expression.constantArguments(("link_position", "link_rotation")):
            if isinstance(link, str) and link not in [l.getName() for l in self.robot.links()]:
                raise ExpressionError(f"expression {text!r}: robot '{self.robot.getName()}' "
                                      f"has no link {link!r}")
        return expression

    def _robot_functions(self) -> dict:
        robot = self.robot

        def link(name_or_index):
            if isinstance(name_or_index, str):
                return robot.link(name_or_index)
            return robot.link(int(name_or_index))

        return {"link_position": lambda l, p=(0.0, 0.0, 0.0): link(l).getWorldPosition(p),
                "link_rotation": lambda l: link(l).getTransform()[0],
                "com": lambda: robot.getCom()}

    def _add(self, objective):
        self.objectives.append(objective)
        return objective

    # -- Klamp't variables ----------------------------------------------------------------
    def addKlamptVar(self, name, type=None, initialValue=None, encoding="auto",
                     constraints=True, optimize=True):
        """Adds a Klamp't-typed variable ('Config', 'Configs', 'Vector', 'Vector3' / 'Point',
        'Rotation', 'RigidTransform'); type None infers it from initialValue. Rotation and
        RigidTransform use ``encoding`` (sim_node.plan.rotation_encoding); constraints adds
        joint-limit bounds (Config, Configs) or the encoding's equalities (quaternion norm,
        orthonormal matrix); optimize=False holds it at its value."""
        if not isinstance(name, str) or not name.isidentifier() or name == "q" \
                or name in _RESERVED:
            raise ValueError(f"addKlamptVar: name {name!r} must be an identifier other than "
                             f"'q' and {sorted(_RESERVED)}")
        if name in self.managedVariables:
            raise ValueError(f"Klamp't variable name {name!r} already defined")
        if type is None:
            if initialValue is None:
                raise ValueError("addKlamptVar: give a type or an initialValue")
            type = self._infer_type(initialValue)
        if type in ("Vector3", "Point"):
            initialValue = [0.0] * 3 if initialValue is None else initialValue
            type = "Vector"
        kv = KlamptVariable(name, type)
        kv.optimize, kv.addConstraints = bool(optimize), bool(constraints)
        nq = self._nq()
        limits = self.robot.getJointLimits()
        if type == "Config":
            initialValue = self.robot.getConfig() if initialValue is None else initialValue
            kv.blocks = [_Block(name, nq, *(limits if constraints else (None, None)))]
        elif type == "Configs":
            if initialValue is None or not isinstance(initialValue, (list, tuple, np.ndarray)) \
                    or len(initialValue) == 0:
                raise ValueError("addKlamptVar: a Configs variable needs an initialValue (a "
                                 "list of configurations)")
            kv.blocks = [_Block(f"{name}_{i}", nq, *(limits if constraints else (None, None)))
                         for i in range(len(initialValue))]
        elif type == "Vector":
            if initialValue is None:
                raise ValueError("addKlamptVar: a Vector variable needs an initialValue")
            kv.blocks = [_Block(name, int(np.size(initialValue)))]
        elif type in ("Rotation", "RigidTransform"):
            kv.encoding = rotation_encoding.check_encoding(encoding, f"addKlamptVar {name!r}")
            size = rotation_encoding.SIZES[kv.encoding][0]
            suffix = {"rotation_vector": "_rv", "quaternion": "_q", "rpy": "_rpy", None: ""}
            if type == "Rotation":
                initialValue = np.eye(3) if initialValue is None else initialValue
                kv.blocks = [_Block(name + suffix[kv.encoding], size)]
            else:
                initialValue = (np.eye(3), [0.0] * 3) if initialValue is None else initialValue
                kv.blocks = [_Block(name + "_R" + suffix[kv.encoding], size),
                             _Block(name + "_t", 3)]
        else:
            raise ValueError(f"addKlamptVar: unsupported type {type!r}; valid: 'Config', "
                             "'Configs', 'Vector', 'Vector3', 'Point', 'Rotation', "
                             "'RigidTransform'")
        kv.bind(initialValue)
        if type in ("Rotation", "RigidTransform") and constraints \
                and rotation_encoding.SIZES[kv.encoding][1]:
            kv.constraints = [self._encoding_constraint(kv)]
        self.managedVariables[name] = kv
        self.objectives.extend(kv.constraints)
        return kv

    def _encoding_constraint(self, kv):
        encoding, size = kv.encoding, kv.blocks[0].size

        def residual(q, *values, _kv=kv):
            return rotation_encoding.constraint(encoding, _kv._params[:size])

        objective = OptimizationObjective(residual, "eq", 1.0, False,
                                          f"{kv.name}_encoding_constraint", internal=True)
        objective.encoding_of = kv
        return objective

    def _infer_type(self, value) -> str:
        if isinstance(value, tuple) and len(value) == 2 and np.size(value[1]) == 3:
            return "RigidTransform"
        shape = np.shape(value)
        nq = self._nq()
        if shape == (3, 3):
            return "Rotation"
        if shape == (9,) and nq != 9:
            return "Rotation"
        if shape == (nq,):
            return "Config"
        if len(shape) == 2 and shape[1] == nq:
            return "Configs"
        if shape == (3,):
            return "Vector3"
        if len(shape) == 1:
            return "Vector"
        raise ValueError(f"addKlamptVar: cannot infer a type from a value of shape {shape}; "
                         "give type=")

    def get(self, name, defaultValue=None):
        """The managed KlamptVariable called name, or defaultValue."""
        return self.managedVariables.get(name, defaultValue)

    def rename(self, itemname, newname):
        """Renames a managed KlamptVariable (refused while an expression refers to it)."""
        if itemname not in self.managedVariables:
            raise ValueError(f"rename: no Klamp't variable {itemname!r}; variables: "
                             f"{sorted(self.managedVariables)}")
        if not isinstance(newname, str) or not newname.isidentifier() or newname == "q" \
                or newname in self.managedVariables or newname in _RESERVED:
            raise ValueError(f"rename: {newname!r} is not a free identifier")
        kv = self.managedVariables[itemname]
        used = [o.expr.text for o in self.objectives if isinstance(o.expr, Expression)
                and set(kv.expressionNames()) & o.expr.identifiers]
        if used:
            raise ValueError(f"rename: expressions refer to {itemname!r}: {used}")
        del self.managedVariables[itemname]
        kv.name = newname
        for block in kv.blocks:
            block.name = newname + block.name[len(itemname):]
        self.managedVariables = {**self.managedVariables, newname: kv}

    # -- evaluation -------------------------------------------------------------------------
    def _optimized(self) -> list:
        return [kv for kv in self.managedVariables.values() if kv.optimize]

    def _call(self, objective, q):
        """Value of a non-IK objective at q with the managed variables' bound values."""
        if isinstance(objective.expr, Expression):
            if objective.expr.identifiers & _ROBOT_FUNCTIONS:
                self.robot.setConfig(q)
            values = {"q": q}
            for kv in self.managedVariables.values():
                values.update(kv.expressionValues(kv._params))
            return objective.expr(values)
        return objective.expr(q, *[kv.getValue() for kv in self._optimized()])

    def cost(self, q=None) -> float:
        """The cost (costs and soft penalties, IK included) at q (default: the robot's
        configuration) with the managed variables' bound values."""
        q = self.robot.getConfig() if q is None else _finite_vector(q, self._nq(), "cost q")
        total = 0.0
        for objective in self.objectives:
            if objective.type == "cost":
                total += objective.weight * _scalar(self._call(objective, q), objective)
            elif objective.soft:
                r = self._residual(objective, q)
                if objective.type == "ineq":
                    r = np.maximum(r, 0.0)
                total += objective.weight * float(r @ r)
        return total

    def _residual(self, objective, q) -> np.ndarray:
        if objective.isIK:
            self.robot.setConfig(q)
            solver = ik.IKSolver(self.robot)
            solver.add(objective.expr)
            return np.asarray(solver.getResidual(), dtype=float).reshape(-1)
        return _vector(self._call(objective, q), objective)

    def equalityResidual(self, soft=True, q=None) -> np.ndarray:
        """The stacked hard (and soft, if soft) equality and IK residuals at q (default: the
        robot's configuration), unweighted."""
        q = self.robot.getConfig() if q is None else _finite_vector(q, self._nq(), "q")
        parts = [self._residual(o, q) for o in self.objectives
                 if o.type == "eq" and (soft or not o.soft)]
        return np.concatenate(parts) if parts else np.zeros(0)

    def feasibilityTestsPass(self, soft=False, q=None) -> bool:
        """True if the feasibility tests pass at q (soft: Klamp't's argument; there are no
        soft feasibility tests here)."""
        q = self.robot.getConfig() if q is None else _finite_vector(q, self._nq(), "q")
        return all(bool(np.all(self._call(o, q))) for o in self.objectives if o.type == "feas")

    def isFeasible(self, eqTol=1e-3, q=None) -> bool:
        """q within the joint limits, hard equalities within eqTol, hard inequalities <= eqTol,
        and the feasibility tests pass."""
        q = self.robot.getConfig() if q is None else _finite_vector(q, self._nq(), "q")
        if not self.inJointLimits(q):
            return False
        for o in self.objectives:
            if o.soft or o.type == "cost":
                continue
            if o.type == "eq" and np.abs(self._residual(o, q)).max(initial=0.0) > eqTol:
                return False
            if o.type == "ineq" and self._residual(o, q).max(initial=-math.inf) > eqTol:
                return False
        return self.feasibilityTestsPass(q=q)

    # -- JSON -------------------------------------------------------------------------------
    def toJson(self, saveContextFunctions=False, prettyPrintExprs=False) -> dict:
        """A JSON object of the problem: joint limits, active DOFs, Klamp't variables (with
        their values) and objectives. Expressions and IK objectives can be saved; a Python
        callable cannot (ValueError naming it). saveContextFunctions=True is refused for the
        same reason; prettyPrintExprs is accepted (expressions are always text)."""
        if saveContextFunctions:
            raise ValueError("toJson: saving Python functions is not supported; write costs "
                             "and constraints as expression strings to save them")
        self._check_bound("toJson")
        objectives = []
        for i, o in enumerate(self.objectives):
            if o.internal:
                continue                   # re-created by its Klamp't variable on load
            entry = {"type": o.type, "name": o.name, "weight": o.weight, "soft": o.soft}
            if o.isIK:
                entry["ik"] = ik_json.to_json(o.expr)
            elif isinstance(o.expr, Expression):
                entry["expr"] = o.expr.text
            else:
                label = f" ({o.name!r})" if o.name else ""
                raise ValueError(f"toJson: objective {i}{label}, a {o.type}, is a Python "
                                 f"callable ({getattr(o.expr, '__name__', type(o.expr).__name__)}"
                                 "), which cannot be saved; give it as an expression string "
                                 "(e.g. addCost('norm(q - [0.1, 0.2])**2'))")
            objectives.append(entry)
        variables = [{"name": kv.name, "type": kv.type, "encoding": kv.encoding,
                      "constraints": kv.addConstraints, "optimize": kv.optimize,
                      "value": kv._params.tolist()}
                     for kv in self.managedVariables.values()]
        limits = None if self._limits is None else {
            "qmin": [None if math.isinf(v) else float(v) for v in self._limits[0]],
            "qmax": [None if math.isinf(v) else float(v) for v in self._limits[1]]}
        return {"type": "RobotOptimizationProblem", "version": JSON_VERSION,
                "robot": self.robot.getName(), "nq": self._nq(),
                "activeDofs": None if self.activeDofs is None else list(self.activeDofs),
                "jointLimits": limits, "managedVariables": variables,
                "objectives": objectives}

    def fromJson(self, obj, doAutoLoad=True):
        """Loads a problem saved by toJson (a dict, or its JSON text) onto this problem's
        robot. All or nothing: on any error (JSONError naming the field) nothing changes."""
        if isinstance(obj, (str, bytes)):
            try:
                obj = json.loads(obj)
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                raise JSONError(f"RobotOptimizationProblem JSON: not valid JSON "
                                f"({getattr(err, 'msg', 'not UTF-8')}, line "
                                f"{getattr(err, 'lineno', '?')} column "
                                f"{getattr(err, 'colno', '?')})") from None
        fresh = RobotOptimizationProblem(self.robot, self.world)
        try:
            fresh._load(obj)
        except JSONError:
            raise
        except (ValueError, TypeError, ExpressionError) as err:
            raise JSONError(f"RobotOptimizationProblem JSON: {err}") from None
        self.__dict__.update(fresh.__dict__)

    def _load(self, obj):
        where = "RobotOptimizationProblem JSON"
        if not isinstance(obj, dict):
            raise JSONError(f"{where}: an object is required, got {type(obj).__name__}")
        keys = {"type", "version", "robot", "nq", "activeDofs", "jointLimits",
                "managedVariables", "objectives", "autoLoad"}
        unknown = set(obj) - keys
        if unknown:
            raise JSONError(f"{where}: unknown keys {sorted(unknown)}; valid: {sorted(keys)}")
        if obj.get("type") != "RobotOptimizationProblem":
            raise JSONError(f"{where}.type: {obj.get('type')!r}, expected "
                            "'RobotOptimizationProblem'")
        if obj.get("version") != JSON_VERSION:
            raise JSONError(f"{where}.version: {obj.get('version')!r}, expected {JSON_VERSION}")
        if obj.get("autoLoad"):
            raise JSONError(f"{where}.autoLoad: auto-loaded user data files are not supported")
        if obj.get("nq") != self._nq():
            raise JSONError(f"{where}.nq: {obj.get('nq')!r}, but robot "
                            f"'{self.robot.getName()}' has {self._nq()} coordinates")
        limits = obj.get("jointLimits")
        if limits is None:
            self.disableJointLimits()
        else:
            if not isinstance(limits, dict) or set(limits) != {"qmin", "qmax"}:
                raise JSONError(f"{where}.jointLimits: null or {{'qmin': [...], 'qmax': [...]}}")
            lo = [-math.inf if v is None else _json_number(v, f"{where}.jointLimits.qmin")
                  for v in _json_list(limits["qmin"], f"{where}.jointLimits.qmin")]
            hi = [math.inf if v is None else _json_number(v, f"{where}.jointLimits.qmax")
                  for v in _json_list(limits["qmax"], f"{where}.jointLimits.qmax")]
            self.setJointLimits(lo, hi)
        active = obj.get("activeDofs")
        if active is not None:
            self.setActiveDofs(_json_list(active, f"{where}.activeDofs"))
        for i, var in enumerate(_json_list(obj.get("managedVariables", []),
                                           f"{where}.managedVariables")):
            self._load_variable(var, f"{where}.managedVariables[{i}]")
        for i, entry in enumerate(_json_list(obj.get("objectives", []), f"{where}.objectives")):
            self._load_objective(entry, f"{where}.objectives[{i}]")

    def _load_variable(self, var, where):
        keys = {"name", "type", "encoding", "constraints", "optimize", "value"}
        if not isinstance(var, dict) or set(var) != keys:
            raise JSONError(f"{where}: an object with keys {sorted(keys)} is required")
        kv = KlamptVariable(var["name"], var["type"])
        if var["type"] not in ("Config", "Configs", "Vector", "Rotation", "RigidTransform"):
            raise JSONError(f"{where}.type: {var['type']!r} is not a Klamp't variable type")
        params = np.array([_json_number(v, f"{where}.value")
                           for v in _json_list(var["value"], f"{where}.value")])
        nq = self._nq()
        if var["type"] == "Rotation":
            kv.encoding = rotation_encoding.check_encoding(var["encoding"], f"{where}.encoding")
            initial = rotation_encoding.decode(kv.encoding, _sized(params, rotation_encoding.
                                               SIZES[kv.encoding][0], f"{where}.value"))
        elif var["type"] == "RigidTransform":
            kv.encoding = rotation_encoding.check_encoding(var["encoding"], f"{where}.encoding")
            n = rotation_encoding.SIZES[kv.encoding][0]
            params = _sized(params, n + 3, f"{where}.value")
            initial = (rotation_encoding.decode(kv.encoding, params[:n]), params[n:])
        elif var["type"] == "Configs":
            if params.size == 0 or params.size % nq:
                raise JSONError(f"{where}.value: a multiple of nq = {nq} values is required")
            initial = list(params.reshape(-1, nq))
        else:
            initial = params
        self.addKlamptVar(var["name"], var["type"], initial, var["encoding"] or None
                          if var["type"] in ("Rotation", "RigidTransform") else "auto",
                          _json_bool(var["constraints"], f"{where}.constraints"),
                          _json_bool(var["optimize"], f"{where}.optimize"))
        # keep the saved parameters exactly (re-encoding a decoded rotation may round)
        self.managedVariables[var["name"]]._params = params.copy()

    def _load_objective(self, entry, where):
        if not isinstance(entry, dict):
            raise JSONError(f"{where}: an object is required")
        keys = {"type", "name", "weight", "soft", "expr", "ik"}
        unknown = set(entry) - keys
        if unknown:
            raise JSONError(f"{where}: unknown keys {sorted(unknown)}; valid: {sorted(keys)}")
        type_ = entry.get("type")
        if type_ not in OBJECTIVE_TYPES:
            raise JSONError(f"{where}.type: {type_!r}; valid: {list(OBJECTIVE_TYPES)}")
        soft = _json_bool(entry.get("soft", False), f"{where}.soft")
        weight = _json_number(entry.get("weight", 1.0), f"{where}.weight")
        name = entry.get("name")
        if name is not None and not isinstance(name, str):
            raise JSONError(f"{where}.name: a string or null")
        if ("ik" in entry) == ("expr" in entry):
            raise JSONError(f"{where}: exactly one of 'expr' (an expression) and 'ik' (an "
                            "IKObjective) is required")
        if "ik" in entry:
            if type_ != "eq":
                raise JSONError(f"{where}.type: an IK objective is an 'eq'")
            goal = ik_json.from_json(entry["ik"], self.robot.numLinks(), f"{where}.ik")
            objective = self.addIKObjective(goal, weight if soft else None)
        else:
            if not isinstance(entry["expr"], str):
                raise JSONError(f"{where}.expr: an expression string is required")
            if type_ == "cost":
                objective = self.addCost(entry["expr"], weight)
            elif type_ == "feas":
                objective = self.addFeasibilityTest(entry["expr"])
            else:
                add = self.addEquality if type_ == "eq" else self.addInequality
                objective = add(entry["expr"], weight if soft else None)
        objective.name = name

    # -- solving ----------------------------------------------------------------------------
    def solve(self, params=None):
        """Solves the problem from the robot's configuration (params.startRandom=False) and
        from random restarts; returns the best feasible configuration (nq ndarray), leaving
        the robot there and the Klamp't variables bound to their optimal values, or None
        (robot and variables as before) when no restart found a feasible point."""
        params = OptimizerParams() if params is None else params
        if not isinstance(params, OptimizerParams):
            raise ValueError(f"solve: an OptimizerParams is required, got "
                             f"{type(params).__name__}")
        params.check()
        self._check_bound("solve")
        seed_q = self.robot.getConfig()
        saved = {name: kv._params.copy() for name, kv in self.managedVariables.items()}
        if not self.objectives:
            return seed_q
        layout = _Layout(self, seed_q)
        rng = np.random.default_rng(params.seed)
        best_x, best_quality = None, None
        start = time.monotonic()
        try:
            for attempt in range(params.numRestarts):
                if attempt and time.monotonic() - start > params.timeout:
                    break
                x0 = layout.x_seed if attempt == 0 and not params.startRandom \
                    else layout.sample(rng)
                x = _LocalSolve(layout, params).run(x0)
                quality = layout.quality(x, params.tol)
                if quality is not None and (best_quality is None or quality < best_quality):
                    best_x, best_quality = x, quality
                    if not layout.has_costs and not layout.has_soft:
                        break               # feasible, nothing to improve (as Klamp't)
        except BaseException:
            self._restore(seed_q, saved)
            raise
        if best_x is None:
            self._restore(seed_q, saved)
            return None
        q = layout.apply(best_x)
        self.robot.setConfig(q)
        return q

    def _check_bound(self, what):
        unbound = [name for name, kv in self.managedVariables.items() if kv._params is None]
        if unbound:
            raise ValueError(f"{what}: Klamp't variables {unbound} are not bound; bind() a "
                             "value (the start of the optimisation) first")

    def _restore(self, q, saved):
        self.robot.setConfig(q)
        for name, params in saved.items():
            self.managedVariables[name]._params = params


_ROBOT_FUNCTIONS = frozenset({"link_position", "link_rotation", "com"})
_RESERVED = _ROBOT_FUNCTIONS | frozenset(FUNCTIONS) | frozenset(CONSTANTS)


class _Layout:
    """The optimisation vector x = [q[active], parameters of the optimised variables] and
    the problem's functions of x (values and derivatives)."""

    def __init__(self, problem: RobotOptimizationProblem, seed_q):
        self.problem = problem
        self.seed_q = seed_q.copy()
        self.active = problem._active()
        self.variables = problem._optimized()
        k = len(self.active)
        limits = problem._limits
        lo = [-math.inf] * k if limits is None else list(limits[0][self.active])
        hi = [math.inf] * k if limits is None else list(limits[1][self.active])
        x_seed = [self.seed_q[self.active]]
        self.slices = []
        for kv in self.variables:
            start = k + sum(v.size for v in self.variables[:len(self.slices)])
            self.slices.append(slice(start, start + kv.size))
            for block in kv.blocks:
                lo += [-math.inf] * block.size if block.lower is None else list(block.lower)
                hi += [math.inf] * block.size if block.upper is None else list(block.upper)
            x_seed.append(kv._params)
        self.lower, self.upper = np.array(lo, dtype=float), np.array(hi, dtype=float)
        self.x_seed = np.clip(np.concatenate(x_seed), self.lower, self.upper)
        self.n = self.x_seed.size
        objectives = problem.objectives
        self.hard_ik = [o for o in objectives if o.isIK and not o.soft]
        self.soft = [o for o in objectives if o.type in ("eq", "ineq") and o.soft]
        self.hard_eq = [o for o in objectives if o.type == "eq" and not o.soft and not o.isIK]
        self.hard_ineq = [o for o in objectives if o.type == "ineq" and not o.soft]
        self.costs = [o for o in objectives if o.type == "cost"]
        self.feas = [o for o in objectives if o.type == "feas"]
        self.has_costs, self.has_soft = bool(self.costs), bool(self.soft)
        self.solver = self._ik_solver(self.hard_ik) if self.hard_ik else None
        self.soft_solvers = {id(o): self._ik_solver([o]) for o in self.soft if o.isIK}

    def _ik_solver(self, objectives):
        if not self.active:
            raise ValueError("solve: IK objectives need at least one active DOF (the active "
                             "DOF list is empty)")
        solver = ik.IKSolver(self.problem.robot)
        for o in objectives:
            solver.add(o.expr)
        q_to_v = self.problem._q_to_v()
        solver.setActiveDofs([q_to_v[i] for i in self.active])   # columns = d/dq[active]
        solver.setJointLimits(*(self.problem._limits or ([], [])))  # [] []: none
        return solver

    # x <-> state
    def apply(self, x) -> np.ndarray:
        """Binds the variables to x and returns the full configuration it denotes."""
        q = self.seed_q.copy()
        q[self.active] = x[:len(self.active)]
        for kv, part in zip(self.variables, self.slices):
            kv._params = np.array(x[part], dtype=float)
        return q

    def sample(self, rng) -> np.ndarray:
        """A random start: active DOFs uniform within finite limits (the seed plus a unit
        normal where unbounded), rotations uniform, other variables at their seed."""
        x = self.x_seed.copy()
        k = len(self.active)
        lo, hi = self.lower[:k], self.upper[:k]
        bounded = np.isfinite(lo) & np.isfinite(hi)
        x[:k] = np.where(bounded, rng.uniform(np.where(bounded, lo, 0), np.where(bounded, hi, 1)),
                         x[:k] + rng.normal(size=k))
        x[:k] = np.clip(x[:k], lo, hi)
        for kv, part in zip(self.variables, self.slices):
            if kv.type in ("Rotation", "RigidTransform"):
                R = Rotation.random(random_state=rng).as_matrix()
                n = kv.blocks[0].size
                x[part.start:part.start + n] = rotation_encoding.encode(kv.encoding, R)
            elif kv.type in ("Config", "Configs") and kv.addConstraints:
                lo_v, hi_v = self.lower[part], self.upper[part]
                ok = np.isfinite(lo_v) & np.isfinite(hi_v)
                x[part] = np.where(ok, rng.uniform(np.where(ok, lo_v, 0), np.where(ok, hi_v, 1)),
                                   x[part])
        return x

    # functions of x
    def residual(self, objective, x) -> np.ndarray:
        q = self.apply(x)
        if objective.isIK and id(objective) in self.soft_solvers:
            self.problem.robot.setConfig(q)
            return np.asarray(self.soft_solvers[id(objective)].getResidual(), dtype=float)
        return self.problem._residual(objective, q)

    def jacobian(self, objective, x) -> np.ndarray:
        """d residual / d x: analytic for IK (IKSolver.getJacobian), for callables with grad
        (their q part) and the encoding constraints; forward differences otherwise."""
        q = self.apply(x)
        k = len(self.active)
        if objective.isIK:
            self.problem.robot.setConfig(q)
            solver = self.soft_solvers[id(objective)]
            Jq = np.asarray(solver.getJacobian(), dtype=float)
            J = np.zeros((Jq.shape[0], self.n))
            J[:, :k] = Jq
            return J
        if objective.internal:
            kv = objective.encoding_of
            Jp = rotation_encoding.constraint_jacobian(kv.encoding, kv._params[:kv.blocks[0].size])
            J = np.zeros((Jp.shape[0], self.n))
            if kv in self.variables:
                start = self.slices[self.variables.index(kv)].start
                J[:, start:start + Jp.shape[1]] = Jp
            return J
        f0 = self.residual(objective, x)
        J = np.zeros((f0.size, self.n))
        columns = range(self.n)
        if objective.grad is not None:
            G = np.atleast_2d(np.asarray(objective.grad(q, *[kv.getValue() for kv in
                                                                self.variables]), dtype=float))
            if G.shape != (f0.size, q.size):
                raise ValueError(f"grad of {objective.type} {objective.name or ''}: shape "
                                 f"{G.shape}, expected {(f0.size, q.size)}")
            J[:, :k] = G[:, self.active]
            columns = range(k, self.n)
        for j in columns:
            step = 1.49e-8 * max(1.0, abs(x[j]))
            xj = x.copy()
            xj[j] += step
            J[:, j] = (self.residual(objective, xj) - f0) / step
        self.apply(x)
        return J

    def cost(self, x) -> float:
        q = self.apply(x)
        return sum(o.weight * _scalar(self.problem._call(o, q), o) for o in self.costs)

    def cost_grad(self, x) -> np.ndarray:
        g = np.zeros(self.n)
        for o in self.costs:
            g += o.weight * self.jacobian(o, x)[0]
        return g

    def soft_error(self, x) -> float:
        total = 0.0
        for o in self.soft:
            r = self.residual(o, x)
            if o.type == "ineq":
                r = np.maximum(r, 0.0)
            total += o.weight * float(r @ r)
        return total

    def soft_error_grad(self, x) -> np.ndarray:
        g = np.zeros(self.n)
        for o in self.soft:
            r = self.residual(o, x)
            if o.type == "ineq":
                r = np.maximum(r, 0.0)
            g += 2.0 * o.weight * (self.jacobian(o, x).T @ r)
        return g

    def quality(self, x, tol):
        """(soft IK error, cost) of a feasible x (soft error 0 when every soft residual is
        within tol, as Klamp't); None when x is infeasible."""
        if np.any(x < self.lower - _BOUND_SLACK) or np.any(x > self.upper + _BOUND_SLACK):
            return None
        x = np.clip(x, self.lower, self.upper)
        for o in self.hard_ik + self.hard_eq:
            if np.abs(self.residual(o, x)).max(initial=0.0) > tol:
                return None
        for o in self.hard_ineq:
            if self.residual(o, x).max(initial=-math.inf) > tol:
                return None
        q = self.apply(x)
        if not all(bool(np.all(self.problem._call(o, q))) for o in self.feas):
            return None
        soft = 0.0 if self.soft_reached(x, tol) else self.soft_error(x)
        return soft, (self.cost(x) if self.has_costs else 0.0)

    def soft_reached(self, x, tol) -> bool:
        for o in self.soft:
            r = self.residual(o, x)
            if o.type == "ineq":
                r = np.maximum(r, 0.0)
            if np.abs(r).max(initial=0.0) > tol:
                return False
        return True


class _LocalSolve:
    """One local solve from x0 (see the module docstring): a Newton IK seed, then SLSQP on
    the soft error and/or the cost under the hard constraints."""

    def __init__(self, layout: _Layout, params: OptimizerParams):
        self.layout = layout
        self.params = params

    def constraints(self, extra=()):
        lay = self.layout
        cons = [{"type": "eq", "fun": lambda x, o=o: lay.residual(o, x),
                 "jac": lambda x, o=o: lay.jacobian(o, x)} for o in lay.hard_eq]
        if lay.hard_ik:
            cons.append({"type": "eq", "fun": self._ik_residual, "jac": self._ik_jacobian})
        for o in lay.hard_ineq:            # scipy's inequalities are fun(x) >= 0
            cons.append({"type": "ineq", "fun": lambda x, o=o: -lay.residual(o, x),
                         "jac": lambda x, o=o: -lay.jacobian(o, x)})
        return cons + list(extra)

    def _ik_residual(self, x):
        self.layout.problem.robot.setConfig(self.layout.apply(x))
        return np.asarray(self.layout.solver.getResidual(), dtype=float)

    def _ik_jacobian(self, x):
        lay = self.layout
        lay.problem.robot.setConfig(lay.apply(x))
        Jq = np.asarray(lay.solver.getJacobian(), dtype=float)
        J = np.zeros((Jq.shape[0], lay.n))
        J[:, :len(lay.active)] = Jq
        return J

    def slsqp(self, fun, jac, x0, extra=()):
        lay = self.layout
        bounds = list(zip([None if math.isinf(v) else v for v in lay.lower],
                          [None if math.isinf(v) else v for v in lay.upper]))
        result = minimize(fun, x0, jac=jac, method="SLSQP", bounds=bounds,
                          constraints=self.constraints(extra),
                          options={"maxiter": self.params.numIters, "ftol": 1e-12})
        x = np.asarray(result.x, dtype=float)
        if not np.all(np.isfinite(x)):
            return x0
        return np.clip(x, lay.lower, lay.upper)

    def newton(self, x):
        """Hard IK by IKSolver.solve from x (the solver moves the active DOFs only): its
        result if it meets the tolerance, else x (a failed Newton run often ends pinned at
        the limits, a worse start for SLSQP than x)."""
        lay = self.layout
        robot = lay.problem.robot
        robot.setConfig(lay.apply(x))
        lay.solver.setMaxIters(self.params.numIters)
        lay.solver.setTolerance(self.params.tol * 1e-3)
        lay.solver.solve()
        solved = x.copy()
        solved[:len(lay.active)] = robot.getConfig()[lay.active]
        solved = np.clip(solved, lay.lower, lay.upper)
        return solved if np.abs(self._ik_residual(solved)).max(initial=0.0) <= \
            self.params.tol else x

    def run(self, x0) -> np.ndarray:
        lay, tol = self.layout, self.params.tol
        x = np.clip(np.asarray(x0, dtype=float), lay.lower, lay.upper)
        if lay.hard_ik:
            x = self.newton(x)
        if lay.has_soft:
            x = self.slsqp(lay.soft_error, lay.soft_error_grad, x)
            if lay.has_costs:
                x = self._cost_keeping_soft_error(x, tol)
        elif lay.has_costs:
            x = self.slsqp(lay.cost, lay.cost_grad, x)
        elif (lay.hard_eq or lay.hard_ineq or lay.hard_ik) and lay.quality(x, tol) is None:
            anchor = x.copy()      # no cost: the feasible point nearest to the start
            x = self.slsqp(lambda y: 0.5 * float((y - anchor) @ (y - anchor)),
                           lambda y: y - anchor, x)
        return x

    def _cost_keeping_soft_error(self, x, tol):
        """Second priority: minimise the cost keeping the soft error at its minimum E*
        (the soft residuals at 0 when they are reached)."""
        lay = self.layout
        if lay.soft_reached(x, tol):
            extra = [{"type": "eq", "fun": lambda y, o=o: lay.residual(o, y),
                      "jac": lambda y, o=o: lay.jacobian(o, y)}
                     for o in lay.soft if o.type == "eq"]
            extra += [{"type": "ineq", "fun": lambda y, o=o: -lay.residual(o, y),
                       "jac": lambda y, o=o: -lay.jacobian(o, y)}
                      for o in lay.soft if o.type == "ineq"]
        else:
            limit = lay.soft_error(x) * (1 + 1e-9) + 1e-12
            extra = [{"type": "ineq", "fun": lambda y: limit - lay.soft_error(y),
                      "jac": lambda y: -lay.soft_error_grad(y)}]
        first = lay.soft_error(x)
        improved = self.slsqp(lay.cost, lay.cost_grad, x, extra)
        kept = lay.soft_reached(improved, tol) if lay.soft_reached(x, tol) else \
            lay.soft_error(improved) <= first * (1 + 1e-6) + 1e-12
        return improved if kept else x


# -- checks -----------------------------------------------------------------------------------
def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) \
        and not math.isnan(x)


def _finite_vector(x, n, what) -> np.ndarray:
    try:
        arr = np.array(x, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: {n} numbers are required, got {type(x).__name__}") from None
    if arr.size != n:
        raise ValueError(f"{what}: {n} values are required, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: contains NaN or infinity")
    return arr


def _finite_or_inf(x, n, what, default) -> np.ndarray:
    """n bounds (None: all ``default``); NaN refused, infinities kept."""
    if x is None:
        return np.full(n, default)
    arr = np.array(x, dtype=float).reshape(-1)
    if arr.size != n or np.isnan(arr).any():
        raise ValueError(f"{what}: {n} numbers (no NaN) are required")
    return arr


def _transform_pair(obj, what):
    if not isinstance(obj, (tuple, list)) or len(obj) != 2:
        raise ValueError(f"{what}: a rigid transform is a pair (R, t)")
    return obj


def _scalar(value, objective) -> float:
    arr = np.asarray(value, dtype=float)
    if arr.size != 1:
        raise ValueError(f"cost {objective.name or objective.expr!r} returned {arr.size} "
                         "values; a cost is a scalar")
    v = float(arr.reshape(-1)[0])
    if not math.isfinite(v):
        raise ValueError(f"cost {objective.name or objective.expr!r} returned {v}")
    return v


def _vector(value, objective) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value, dtype=float)).reshape(-1)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{objective.type} {objective.name or objective.expr!r} returned a "
                         "non-finite value")
    return arr


def _sized(params, n, where):
    if params.size != n:
        raise JSONError(f"{where}: {n} values are required, got {params.size}")
    return params


def _json_list(value, where) -> list:
    if not isinstance(value, list):
        raise JSONError(f"{where}: a list is required, got {type(value).__name__}")
    return value


def _json_number(value, where) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise JSONError(f"{where}: a finite number is required, got {value!r}")
    return float(value)


def _json_bool(value, where) -> bool:
    if not isinstance(value, bool):
        raise JSONError(f"{where}: true or false is required, got {value!r}")
    return value

