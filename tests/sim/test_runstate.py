"""The run-state machine (sim_node/sim/runstate.py) without ROS: every transition between
PLAYING, PAUSED and STOPPED; STOPPED resets time and state (the fresh Simulator's state bytes)
and keeps spawned entities; steps only while paused, leaving PAUSED; the pacing bounds."""
from __future__ import annotations

from pathlib import Path

import pytest

from sim_node import Simulator, WorldModel
from sim_node.sim.runstate import (AlreadyInState, Run, RunState, StepsRefused,
                                   physics_dt_problem, real_time_factor_problem)

REPO = Path(__file__).resolve().parents[2]
PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
BLOCK_URDF = REPO / "tests" / "ros" / "data" / "block.urdf"


def fresh() -> Simulator:
    world = WorldModel()
    world.readFile(PENDULUM_WORLD)
    return Simulator(world)


@pytest.mark.parametrize("start", list(Run))
@pytest.mark.parametrize("target", list(Run))
def test_every_transition(start, target):
    run = RunState(fresh(), paused=start != Run.PLAYING)
    if start == Run.STOPPED:
        run.set(Run.STOPPED)
    assert run.state == start
    if target == start:
        with pytest.raises(AlreadyInState, match=f"already {target.name}"):
            run.set(target)
        assert run.state == start
        return
    run.set(target)
    assert run.state == target
    assert run.paused == (target != Run.PLAYING)


def test_stop_resets_time_and_state_and_keeps_spawned_entities():
    reference = fresh()
    sim = fresh()
    run = RunState(sim)
    sim.controller(0).setPIDCommand([0.5])
    sim.simulate(0.2)
    run.set(Run.STOPPED)
    assert sim.getTime() == 0.0 and sim.getState() == reference.getState()
    sim.spawn(str(BLOCK_URDF), t=[0, 2, 1])
    run.set(Run.PLAYING)
    sim.simulate(0.1)
    run.set(Run.STOPPED)
    assert sim.getTime() == 0.0
    assert sim.getWorld().numRigidObjects() == 1


def test_steps_only_while_paused_and_they_leave_paused():
    run = RunState(fresh())
    with pytest.raises(StepsRefused, match="step_simulation needs a paused simulation"):
        run.check_steps(3, "step_simulation")
    run.set(Run.STOPPED)
    with pytest.raises(StepsRefused, match="steps must be >= 1, got 0"):
        run.check_steps(0, "step_simulation")
    assert run.state == Run.STOPPED
    run.check_steps(1, "step_simulation")
    assert run.state == Run.PAUSED


def test_a_restore_or_failure_leaves_stopped_or_playing_for_paused():
    run = RunState(fresh(), paused=True)
    run.set(Run.STOPPED)
    run.restored()
    assert run.state == Run.PAUSED
    run.set(Run.PLAYING)
    run.halt()
    assert run.state == Run.PAUSED


@pytest.mark.parametrize("value, ok", [(0, True), (0.0, True), (1e-3, True), (1e3, True),
                                       (1, True), (9.9e-4, False), (1001, False), (-1, False),
                                       (float("nan"), False), (True, False), ("1", False)])
def test_real_time_factor_bounds(value, ok):
    assert (real_time_factor_problem(value) is None) == ok


@pytest.mark.parametrize("value, ok", [(1e-5, True), (0.1, True), (0.001, True),
                                       (0, False), (0.11, False), (float("inf"), False),
                                       (False, False)])
def test_physics_dt_bounds(value, ok):
    problem = physics_dt_problem(value)
    assert (problem is None) == ok
    if not ok:
        assert "physics_dt must be within [1e-05, 0.1] s" in problem
