"""The run state of a simulation driven by a loop (the ROS node, or any Python runner):
PLAYING, PAUSED or STOPPED, and the bounds of how it is paced.

    PLAYING   the loop steps the simulation
    PAUSED    it does not; steps are taken only when asked for (``check_steps``)
    STOPPED   paused after a reset of time and state (``set(STOPPED)`` resets the Simulator:
              ResetScope TIME | STATE; spawned entities stay)

Transitions: any state to any other; asking for the state it is in is AlreadyInState. A step
request needs PAUSED or STOPPED and leaves PAUSED. RunState holds no thread: its owner calls it
where it may change the simulation (the node: on its simulation thread)."""
from __future__ import annotations

import enum

from sim_node.sim.reset import ResetScope

# documented bounds (README "Safety and bounds"), refused outside at start and at run time
REAL_TIME_FACTOR_BOUNDS = (1e-3, 1e3)   # or 0: as fast as possible
PHYSICS_DT_BOUNDS = (1e-5, 0.1)         # [s]


class Run(enum.IntEnum):
    """Run states (the values of simulation_interfaces/SimulationState)."""
    STOPPED = 0
    PLAYING = 1
    PAUSED = 2


class AlreadyInState(ValueError):
    """A transition to the state the simulation is in."""


class StepsRefused(ValueError):
    """Steps asked for while playing, or fewer than one."""


class StepRequestInterrupted(Exception):
    """A step request ended before its last step (the message says by what)."""


class StepRequestBusy(Exception):
    """A step request while another runs."""


class RunState:
    """The run state of `sim` (a Simulator), PAUSED at start when `paused`, else PLAYING."""

    def __init__(self, sim, paused: bool = False):
        self.sim = sim
        self.paused = bool(paused)      # read by the loop at every iteration
        self.stopped = False

    @property
    def state(self) -> Run:
        if not self.paused:
            return Run.PLAYING
        return Run.STOPPED if self.stopped else Run.PAUSED

    def set(self, target: Run):
        """Go to `target`: PLAYING, PAUSED, or STOPPED (which resets time and state);
        AlreadyInState when it is there."""
        target = Run(target)
        if target == self.state:
            raise AlreadyInState(f"the simulation is already {target.name}")
        if target == Run.PLAYING:
            self.stopped, self.paused = False, False
        elif target == Run.PAUSED:
            self.stopped, self.paused = False, True
        else:
            self.paused = True
            self.sim.reset(ResetScope.TIME | ResetScope.STATE)
            self.stopped = True

    def halt(self):
        """Pause after a failure (an error in the step, a blow-up it cannot recover from)."""
        self.paused = True

    def restored(self):
        """A saved state was restored: STOPPED becomes PAUSED (the time is not 0 any more)."""
        self.stopped = False

    def check_steps(self, steps: int, what: str):
        """Steps may be taken now (PAUSED or STOPPED, steps >= 1), leaving STOPPED for
        PAUSED; StepsRefused naming `what` otherwise."""
        if steps < 1:
            raise StepsRefused(f"{what}: steps must be >= 1, got {steps}")
        if not self.paused:
            raise StepsRefused(f"{what} needs a paused simulation; it is playing (pause it with "
                               f"~/set_simulation_state)")
        self.stopped = False


def real_time_factor_problem(value) -> str | None:
    """Why a real-time factor is refused (None: 0, as fast as possible, or within
    REAL_TIME_FACTOR_BOUNDS)."""
    low, high = REAL_TIME_FACTOR_BOUNDS
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not (value == 0 or low <= value <= high):
        return (f"real_time_factor must be a number >= 0: 0 (as fast as possible) or within "
                f"[{low:g}, {high:g}], got {value!r}")
    return None


def physics_dt_problem(value) -> str | None:
    """Why a physics step [s] is refused (None: within PHYSICS_DT_BOUNDS)."""
    low, high = PHYSICS_DT_BOUNDS
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not low <= value <= high:
        return f"physics_dt must be within [{low:g}, {high:g}] s, got {value!r}"
    return None
