"""Access paths (sim_node.sim.access): items of a WorldModel and a Simulator by name."""
import math
import os

import numpy as np
import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sim_node  # noqa: E402
from sim_node.sim import access  # noqa: E402

from scene_helpers import pendulum_box_world_text, world_from_yaml  # noqa: E402



@pytest.fixture
def world(tmp_path):
    return world_from_yaml(pendulum_box_world_text(), tmp_path)


def test_robot_config_and_velocity_round_trip_through_the_model(world):
    access.set_item(world, "robots[0].config", [0.7])
    access.set_item(world, "robots[0].velocity", np.array([-1.5]))
    assert np.array_equal(world.robot(0).getConfig(), [0.7])
    assert np.array_equal(access.get_item(world, "robots[0].velocity"), [-1.5])
    assert access.get_item(world, "robots[0].config[0]") == 0.7
    assert isinstance(access.get_item(world, "robots[0].config[0]"), float)


def test_robot_and_robots_and_names_address_the_same_robot(world):
    world.robot(0).setConfig([0.3])
    for path in ("robots[0].config[0]", "robot[0].config[0]", "robots['pendulum'].config[0]",
                 'robot["pendulum"].config[0]'):
        assert access.get_item(world, path) == 0.3
    assert access.get_item(world, "robots[0].name") == "pendulum"
    assert access.get_item(world, "terrains['ground'].name") == "ground"


def test_setting_an_element_sets_the_whole_vector_through_the_setter(world):
    robot = world.robot(0)
    calls = []
    original = robot.setConfig
    robot.setConfig = lambda q: (calls.append(np.array(q)), original(q))
    access.set_item(world, "robots[0].config[0]", -2.0)
    assert len(calls) == 1 and np.array_equal(calls[0], [-2.0])
    assert np.array_equal(robot.getConfig(), [-2.0])


def test_an_element_that_fails_validation_changes_nothing(world):
    with pytest.raises(ValueError, match="NaN or infinity"):
        access.set_item(world, "robots[0].config[0]", math.nan)
    assert np.array_equal(world.robot(0).getConfig(), [0.25])
    with pytest.raises(ValueError, match=r"shape \(\)"):
        access.set_item(world, "robots[0].config[0]", [1.0, 2.0])
    with pytest.raises(ValueError, match="expected numbers"):
        access.set_item(world, "robots[0].config[0]", "up")
    assert np.array_equal(world.robot(0).getConfig(), [0.25])


def test_rigid_object_transform_is_an_R_t_pair_with_a_12_number_flat_form(world):
    obj = world.rigidObject(0)
    R, t = obj.getTransform()
    got = access.get_item(world, "rigidObjects[0].transform")
    assert np.array_equal(got[0], R) and np.array_equal(got[1], t)
    flat = access.flatten(got)
    assert flat == R.ravel().tolist() + t.tolist()        # R row-major, then t
    assert flat[1] == R[0, 1] and flat[3] == R[1, 0]
    R2 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    access.set_item(world, "rigidObjects['box'].transform", list(R2.ravel()) + [2.0, 3.0, 4.0])
    R_set, t_set = obj.getTransform()
    assert np.array_equal(R_set, R2) and np.array_equal(t_set, [2.0, 3.0, 4.0])
    access.set_item(world, "rigidObject[0].transform[1][2]", 0.5)
    assert np.array_equal(obj.getTransform()[1], [2.0, 3.0, 0.5])
    assert access.get_item(world, "rigidObjects[0].transform[0][1][0]") == 1.0


def test_rigid_object_velocity_pair_and_flat_form(world):
    access.set_item(world, "rigidObjects[0].velocity", ([0.0, 0.0, 1.0], [0.5, 0.0, 0.0]))
    w, v = world.rigidObject(0).getVelocity()
    assert np.array_equal(w, [0, 0, 1]) and np.array_equal(v, [0.5, 0, 0])
    access.set_item(world, "rigidObjects[0].velocity", [1, 2, 3, 4, 5, 6])
    assert access.flatten(access.get_item(world, "rigidObjects[0].velocity")) == [1, 2, 3, 4, 5, 6]
    access.set_item(world, "rigidObjects[0].velocity[1][0]", -1.0)
    assert np.array_equal(world.rigidObject(0).getVelocity()[1], [-1, 5, 6])


def test_a_bad_transform_is_refused_and_the_old_one_kept(world):
    before = world.rigidObject(0).getTransform()
    with pytest.raises(ValueError, match="rotation"):
        access.set_item(world, "rigidObjects[0].transform", (2 * np.eye(3), [0, 0, 0]))
    with pytest.raises(ValueError, match="12 numbers"):
        access.set_item(world, "rigidObjects[0].transform", [1.0, 2.0, 3.0])
    after = world.rigidObject(0).getTransform()
    assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])


def test_simulator_items_read_the_simulation(world):
    sim = sim_node.Simulator(world)
    controller = sim.controller(0)
    controller.setPIDCommand([0.5], [0.1])
    sim.body(world.rigidObject(0)).setVelocity([0.0, 0.3, 0.0], [0.2, 0.0, 0.0])
    sim.simulate(0.05)
    assert access.get_item(sim, "time") == sim.getTime()
    pairs = {"robots[0].config": sim.getActualConfig(0),
             "robots[0].velocity": sim.getActualVelocity(0),
             "robots[0].torque": sim.getActualTorque(0),
             "robots[0].commandedConfig": controller.getCommandedConfig(),
             "robots[0].commandedVelocity": controller.getCommandedVelocity(),
             "robots[0].sensedConfig": controller.getSensedConfig(),
             "robots[0].sensedVelocity": controller.getSensedVelocity()}
    for path, expected in pairs.items():
        assert np.array_equal(access.get_item(sim, path), expected), path
    assert access.get_item(sim, "robots[0].commandedConfig[0]") == 0.5
    # the world is untouched until updateWorld, which writes the same object frame values
    R_sim, t_sim = access.get_item(sim, "rigidObjects[0].transform")
    w_sim, v_sim = access.get_item(sim, "rigidObjects[0].velocity")
    assert not np.array_equal(access.get_item(world, "rigidObjects[0].transform")[1], t_sim)
    sim.updateWorld()
    R_w, t_w = access.get_item(world, "rigidObjects[0].transform")
    w_w, v_w = access.get_item(world, "rigidObjects[0].velocity")
    for a, b in ((R_sim, R_w), (t_sim, t_w), (w_sim, w_w), (v_sim, v_w)):
        assert np.array_equal(a, b)
    assert np.array_equal(access.get_item(world, "robots[0].config"), sim.getActualConfig(0))


def test_simulator_items_are_read_only(world):
    sim = sim_node.Simulator(world)
    with pytest.raises(ValueError, match="read-only on a Simulator"):
        access.set_item(sim, "robots[0].config", [0.0])
    with pytest.raises(ValueError, match="read-only on the world"):
        access.set_item(world, "robots[0].name", "other")


def test_unknown_names_list_the_valid_ones(world):
    with pytest.raises(KeyError, match=r"unknown item 'robotz'.*'rigidObjects'.*'robots'"):
        access.get_item(world, "robotz[0].config")
    with pytest.raises(KeyError, match=r"'time'"):
        access.get_item(sim_node.Simulator(world), "tim")
    with pytest.raises(KeyError, match=r"unknown field 'configuration'.*'config', 'name', "
                                       r"'velocity'"):
        access.get_item(world, "robots[0].configuration")
    with pytest.raises(KeyError, match=r"'commandedConfig'"):
        access.get_item(sim_node.Simulator(world), "robots[0].commanded")
    with pytest.raises(KeyError, match=r"no robots entry named 'arm'; names: \['pendulum'\]"):
        access.get_item(world, "robots['arm'].config")
    with pytest.raises(IndexError, match=r"robots index 1 out of range \[0, 1\)"):
        access.get_item(world, "robots[1].config")
    with pytest.raises(IndexError, match=r"index \[1\] out of range \[0, 1\)"):
        access.get_item(world, "robots[0].config[1]")


def test_malformed_paths_say_where_they_fail(world):
    with pytest.raises(ValueError, match="at character 9"):
        access.get_item(world, "robots[0]config")
    with pytest.raises(ValueError, match="needs an index or a name and a field"):
        access.get_item(world, "robots.config")
    with pytest.raises(ValueError, match="must start with a name"):
        access.get_item(world, "[0].config")
    with pytest.raises(TypeError, match="WorldModel or a Simulator"):
        access.get_item(object(), "robots[0].config")


def test_resolver_reads_the_current_value_each_time(world):
    sim = sim_node.Simulator(world)
    read = access.resolver(sim, "robots[0].config[0]")
    first = read()
    sim.simulate(0.02)
    assert first == 0.25 and read() == sim.getActualConfig(0)[0] != first
