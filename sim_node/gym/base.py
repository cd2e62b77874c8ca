"""A task run on N copies of a robot in one simulated world, and the single environment on it.

Every environment of sim_node.gym is a `Task`: one WorldModel holding `copies` copies of the
task's robot that never collide with each other (collision filters), stepped by ONE Simulator.
The single environment (`TaskEnv`, a gymnasium.Env) is the task with one copy; the vector
environment (sim_node.gym.vector) is the same task with N copies and the same code per copy.
Where a task has no contacts its copies share one place, do the single environment's exact
arithmetic, and the two agree bit for bit (tests/gym/test_vector.py); the README's
"Gymnasium environments (decisions)" says what holds for the ant.

A task's arrays are batched over the copies: actions (N, *action_shape), observations
(N, obs_dim) float64, rewards (N,) float64, terminations (N,) bool.
"""
from __future__ import annotations

import functools
import warnings
from pathlib import Path

import gymnasium
import numpy as np

from sim_node.model.errors import URDFWarning
from sim_node.model.urdf import parse_urdf

# the rgb_array frame (pixels), and the camera's horizontal field of view [rad]
RENDER_WIDTH, RENDER_HEIGHT, RENDER_FOV = 320, 240, 1.0


def pybullet_data_file(*parts: str) -> Path:
    """A file of the pybullet_data package (inside the pybullet wheel), found without importing
    it: sim_node never imports pybullet. A missing package or file raises FileNotFoundError
    saying what to install."""
    import importlib.util

    spec = importlib.util.find_spec("pybullet_data")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"sim_node.gym needs pybullet_data's {'/'.join(parts)}: install the pybullet wheel "
            f"that carries it (pip install pybullet==3.2.7)")
    path = Path(list(spec.submodule_search_locations)[0]).joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed pybullet_data")
    return path


@functools.lru_cache(maxsize=8)
def pybullet_data_urdf(*parts: str):
    """A URDF of pybullet_data, parsed once per process (the Panda's visual meshes take seconds
    to load; every environment of the process shares the parse). Its harmless defects, which
    the loader repairs (massless links with an inertia, an axis on a fixed joint), are not
    warned about: they are PyBullet's files, not the user's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        return parse_urdf(str(pybullet_data_file(*parts)))


class Task:
    """N copies of one robot task in one Simulator. Subclasses set the spaces, `dt` (seconds of
    simulated time per step) and `max_episode_steps`, build the world in __init__, and
    implement reset_copies / apply / observe / evaluate (or, as CartPole, reset_copies /
    observe / step itself)."""

    observation_space: gymnasium.spaces.Box
    action_space: gymnasium.spaces.Space
    dt: float
    max_episode_steps: int
    name: str                   # the environment id, for error messages

    def __init__(self, copies: int):
        if not isinstance(copies, (int, np.integer)) or isinstance(copies, bool) or copies < 1:
            raise ValueError(f"{self.name}: copies must be an int >= 1, got {copies!r}")
        self.copies = int(copies)
        self.sim = None         # the Simulator, built by the subclass

    # -- per task --------------------------------------------------------------------------
    def reset_copies(self, indices, rngs):
        """Put copies `indices` (ints) into a new episode's initial state, drawing from
        rngs[k] (a numpy Generator) for copy indices[k]."""
        raise NotImplementedError

    def apply(self, actions: np.ndarray):
        """Command every copy with actions (N, *action_shape), already validated."""
        raise NotImplementedError

    def observe(self) -> np.ndarray:
        """Observations (N, obs_dim) float64 of the current state."""
        raise NotImplementedError

    def evaluate(self, obs: np.ndarray):
        """(reward (N,) float64, terminated (N,) bool, success (N,) bool or None) of the
        state whose observations are obs."""
        raise NotImplementedError

    def camera(self):
        """(eye, target) [m] of the rgb_array camera looking at copy 0."""
        raise NotImplementedError

    # -- shared ----------------------------------------------------------------------------
    def filter_collisions(self, entities, group: int, mask: int):
        """PyBullet's group / mask collision filter on every body of `entities` (robots,
        terrains): the copies of a task never collide with each other."""
        for entity in entities:
            self.sim.setCollisionFilterGroupMask(entity.getID(), None, group, mask)

    def step(self, actions: np.ndarray):
        """Apply actions (N, ...) for dt, then (obs, reward, terminated, success)."""
        self.apply(actions)
        self.sim.simulate(self.dt)
        obs = self.observe()
        reward, terminated, success = self.evaluate(obs)
        return obs, reward, terminated, success

    def check_actions(self, actions, batched: bool) -> np.ndarray:
        """The actions as an array (N, *action_shape) after checking them against the action
        space; anything else raises ValueError naming the action, the copy and what is valid."""
        fast = self._fast_actions(actions, batched)
        return fast if fast is not None else self._checked_actions(actions, batched)

    def _fast_actions(self, actions, batched: bool):
        # the common cases in a few operations (a single env's step is mostly Python overhead):
        # an int of a Discrete space, a float array of a Box's shape within its bounds; None
        # sends everything else (and every error) through the full check
        space = self.action_space
        if isinstance(space, gymnasium.spaces.Discrete):
            if not batched and type(actions) in (int, np.int64) \
                    and space.start <= actions < space.start + space.n:
                return np.array((actions,))
            if batched and type(actions) is np.ndarray and actions.dtype == np.int64 \
                    and actions.shape == (self.copies,) and (actions >= space.start).all() \
                    and (actions < space.start + space.n).all():
                return actions
            return None
        if type(actions) is np.ndarray and actions.dtype == np.float64 \
                and actions.shape == ((self.copies, *space.shape) if batched else space.shape) \
                and (actions >= space.low).all() and (actions <= space.high).all():
            return actions if batched else actions[None]
        return None

    def _checked_actions(self, actions, batched: bool) -> np.ndarray:
        space = self.action_space
        discrete = isinstance(space, gymnasium.spaces.Discrete)
        where = "actions" if batched else "action"
        try:
            array = np.asarray(actions)
        except (TypeError, ValueError):
            array = None
        shape = (self.copies, *space.shape) if batched else space.shape
        if array is None or array.shape != shape or array.dtype == object \
                or not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
            per_copy = f" for each of {self.copies} copies, shape {shape}" if batched else ""
            raise ValueError(f"{self.name} step: {where} {actions!r} is not valid: expected "
                             f"{_describe(space)}{per_copy}")
        if discrete:
            if not (np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_):
                bad = np.ones(array.shape, dtype=bool)
                self._refuse(where, array, bad, batched, space)
            low, high = space.start, space.start + space.n - 1
        else:
            low, high = space.low, space.high
        with np.errstate(invalid="ignore"):
            bad = ~((array >= low) & (array <= high))   # NaN is bad too
        if bad.any():
            self._refuse(where, array, bad, batched, space)
        array = array.astype(np.int64 if discrete else np.float64)
        return array if batched else array[None]

    def _refuse(self, where, array, bad, batched, space):
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        value = array[index].item() if array.ndim else array[()].item()
        at = f"{where}[{', '.join(map(str, index))}]" if index else where
        copy = f" (copy {index[0]})" if batched else ""
        raise ValueError(f"{self.name} step: {at} = {value!r}{copy} is outside the action "
                         f"space: expected {_describe(space)}")


def _describe(space) -> str:
    if isinstance(space, gymnasium.spaces.Discrete):
        return (f"an integer in [{space.start}, {space.start + space.n - 1}] "
                f"(Discrete({space.n}))")
    low, high = np.unique(space.low), np.unique(space.high)
    bounds = (f"within [{low[0]:g}, {high[0]:g}]" if low.size == 1 and high.size == 1
              else "within the Box bounds")
    return f"finite numbers of shape {space.shape} {bounds}"


def look_at(eye, target) -> tuple[np.ndarray, np.ndarray]:
    """(R, t) of an optical frame (z forward, x right, y down, REP-103) at eye looking at
    target, world z up."""
    eye, target = np.asarray(eye, float), np.asarray(target, float)
    z = target - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, (0.0, 0.0, 1.0))
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return np.column_stack((x, y, z)), eye


class TaskEnv(gymnasium.Env):
    """A gymnasium environment on one copy of a Task. Observations float64; render_mode
    "rgb_array" draws the world through sim_node's CPU camera (sim_node.sim.camera)."""

    metadata = {"render_modes": ["rgb_array"]}
    task_class: type = Task

    def __init__(self, render_mode: str | None = None, **options):
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.render_mode = render_mode
        self.task = self.task_class(1, **options)
        self.observation_space = self.task.observation_space
        self.action_space = self.task.action_space
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.task.dt)}
        self._camera = None
        self._ready = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.task.reset_copies([0], [self.np_random])
        self._ready = True
        return self.task.observe()[0], {}

    def step(self, action):
        if not self._ready:
            raise RuntimeError(f"{self.task.name}: call reset() before step()")
        actions = self.task.check_actions(action, batched=False)
        obs, reward, terminated, success = self.task.step(actions)
        info = {} if success is None else {"is_success": bool(success[0])}
        return obs[0], float(reward[0]), bool(terminated[0]), False, info

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        from sim_node.sim.camera import Camera

        if self._camera is None:
            self._camera = Camera(self.task.sim, RENDER_WIDTH, RENDER_HEIGHT, RENDER_FOV)
        R, t = look_at(*self.task.camera())
        return self._camera.render(R, t).rgb

    def close(self):
        self._camera = None

