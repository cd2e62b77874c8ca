"""Reset scopes through the simulator API (Simulator.reset(scope), sim_node/sim/reset.py),
without ROS, against a fresh Simulator of the same world file: ALL and TIME | STATE give its
state; SPAWNED removes what was spawned and puts back what was deleted; STATE keeps the time;
TIME keeps poses and velocities, robots holding them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim_node import Simulator, WorldModel
from sim_node.sim.entities import all_entities
from sim_node.sim.reset import ResetScope, check_scope

REPO = Path(__file__).resolve().parents[2]
WORLD = REPO / "data" / "worlds" / "default.yaml"     # robots and rigid objects
PENDULUM_WORLD = REPO / "data" / "worlds" / "pendulum.yaml"
BLOCK_URDF = REPO / "tests" / "ros" / "data" / "block.urdf"


def fresh(path=PENDULUM_WORLD) -> Simulator:
    world = WorldModel()
    world.readFile(path)
    return Simulator(world)


def names(sim) -> list:
    return [e.getName() for e in all_entities(sim.getWorld())]


def moved(sim) -> Simulator:
    sim.controller(0).setPIDCommand([0.7])
    sim.simulate(0.3)
    return sim


@pytest.mark.parametrize("scope", [ResetScope.ALL, ResetScope.TIME | ResetScope.STATE, None])
def test_time_and_state_give_the_fresh_state(scope):
    reference = fresh()
    sim = moved(fresh())
    assert sim.getState() != reference.getState()
    sim.reset(scope)
    assert sim.getState() == reference.getState()
    sim.simulate(0.2)
    reference.simulate(0.2)
    assert sim.getState() == reference.getState()     # and it runs on the same


def test_all_after_spawn_and_delete_gives_the_fresh_world():
    reference = fresh()
    sim = moved(fresh())
    sim.spawn(str(BLOCK_URDF), t=[0.0, 2.0, 1.0])
    sim.delete("ground")
    sim.simulate(0.1)
    sim.reset(ResetScope.ALL)
    assert names(sim) == names(reference)
    assert sim.getTime() == 0.0
    np.testing.assert_array_equal(sim.getActualConfig(0), reference.getActualConfig(0))
    np.testing.assert_array_equal(sim.getActualVelocity(0), reference.getActualVelocity(0))
    sim.simulate(0.2)
    reference.simulate(0.2)
    np.testing.assert_allclose(sim.getActualConfig(0), reference.getActualConfig(0),
                               rtol=0, atol=1e-12)


def test_spawned_alone_keeps_time_and_motion():
    sim = moved(fresh())
    sim.spawn(str(BLOCK_URDF), t=[0.0, 2.0, 1.0])
    sim.delete("ground")
    t, q = sim.getTime(), sim.getActualConfig(0)
    sim.reset(ResetScope.SPAWNED)
    assert names(sim) == ["ground", "pendulum"]
    assert sim.getTime() == t
    np.testing.assert_array_equal(sim.getActualConfig(0), q)


def test_state_alone_keeps_the_time():
    reference = fresh()
    sim = moved(fresh())
    t = sim.getTime()
    sim.reset(ResetScope.STATE)
    assert sim.getTime() == t
    np.testing.assert_array_equal(sim.getActualConfig(0), reference.getActualConfig(0))
    np.testing.assert_array_equal(sim.getActualVelocity(0), reference.getActualVelocity(0))


def test_time_alone_keeps_poses_and_velocities_and_holds_the_robot_there():
    sim = fresh(WORLD)
    sim.simulate(0.2)
    world = sim.getWorld()
    objects = [sim.body(world.rigidObject(i)) for i in range(world.numRigidObjects())]
    poses = [(b.getObjectTransform(), b.getVelocity()) for b in objects]
    robots = [(sim.getActualConfig(r), sim.getActualVelocity(r))
              for r in range(world.numRobots())]
    sim.reset(ResetScope.TIME)
    assert sim.getTime() == 0.0
    for i, ((R, t), (w, v)) in enumerate(poses):
        body = sim.body(world.rigidObject(i))
        np.testing.assert_array_equal(body.getObjectTransform()[1], t)
        np.testing.assert_array_equal(body.getVelocity()[1], v)
    for r, (q, v) in enumerate(robots):
        np.testing.assert_array_equal(sim.getActualConfig(r), q)
        np.testing.assert_array_equal(sim.controller(r).getCommandedConfig(), q)


@pytest.mark.parametrize("scope", [0, 8, 255, -1])
def test_unknown_scopes_are_refused_naming_the_valid_ones(scope):
    with pytest.raises(ValueError, match=r"TIME \(1\), STATE \(2\), SPAWNED \(4\)"):
        check_scope(scope)
    sim = fresh()
    before = sim.getState()
    with pytest.raises(ValueError):
        sim.reset(scope)
    assert sim.getState() == before
