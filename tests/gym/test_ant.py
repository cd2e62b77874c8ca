"""sim_node/Ant-v0: gymnasium's checker, determinism, the ant's build against pybullet_data's
mjcf/ant.xml read independently here (masses of uniform solids of the file's density, joint
placement), and its physics: it stands on its four feet and walks when its legs swing."""
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import gymnasium
import numpy as np
import pybullet_data
import pytest
from gymnasium.utils.env_checker import check_env

import sim_node.gym  # noqa: F401
from sim_node.gym import ant

ANT_XML = Path(pybullet_data.getDataPath()) / "mjcf" / "ant.xml"


def _xml_masses():
    # every geom of ant.xml as a uniform solid of the default density (inertiafromgeom)
    root = ET.parse(ANT_XML).getroot()
    density = float(root.find("default/geom").get("density"))
    total = 0.0
    for geom in root.find("worldbody").iter("geom"):
        r = float(geom.get("size").split()[0])
        if geom.get("type") == "sphere":
            total += density * 4.0 / 3.0 * math.pi * r ** 3
        else:
            a, b = np.array([float(x) for x in geom.get("fromto").split()]).reshape(2, 3)
            total += density * (math.pi * r * r * np.linalg.norm(b - a)
                                + 4.0 / 3.0 * math.pi * r ** 3)
    return total


def test_passes_gymnasium_env_checker():
    check_env(gymnasium.make("sim_node/Ant-v0", render_mode="rgb_array").unwrapped)


def test_mass_is_the_mjcf_files_by_density():
    env = gymnasium.make("sim_node/Ant-v0").unwrapped
    robot = env.task.world.robot(0)
    mass = sum(robot.link(k).getMass().getMass() for k in range(robot.numLinks()))
    assert mass == pytest.approx(_xml_masses(), rel=1e-12)


def test_joints_as_in_the_mjcf_file():
    root = ET.parse(ANT_XML).getroot()
    robot = gymnasium.make("sim_node/Ant-v0").unwrapped.task.world.robot(0)
    lower, upper = robot.getJointLimits()
    names = robot.getJointNames()        # (the floating base has no name here)
    assert names == [f"{kind}_{k}" for k in range(1, 5) for kind in ("hip", "ankle")]
    for joint in root.find("worldbody").iter("joint"):
        lo, hi = (math.radians(float(x)) for x in joint.get("range").split())
        k = 7 + names.index(joint.get("name"))
        assert (lower[k], upper[k]) == pytest.approx((lo, hi), abs=1e-15)


def test_same_seed_same_observations_bit_for_bit():
    def rollout(env):
        rng = np.random.default_rng(5)
        out = [env.reset(seed=9)[0]]
        for _ in range(80):
            obs, _, terminated, truncated, _ = env.step(rng.uniform(-1, 1, 8))
            out.append(obs)
            if terminated or truncated:
                out.append(env.reset()[0])
        return np.array(out).tobytes()

    env = gymnasium.make("sim_node/Ant-v0")
    first = rollout(env)
    assert rollout(env) == first
    assert rollout(gymnasium.make("sim_node/Ant-v0")) == first


def test_stands_on_its_feet_without_torques():
    env = gymnasium.make("sim_node/Ant-v0").unwrapped
    obs, _ = env.reset(seed=0)
    sim, world = env.task.sim, env.task.world
    sim.enableContactFeedbackAll()
    robot, ground = world.robot(0), world.terrain("ground")
    env.step(np.zeros(8))
    assert not sim.hadContact(robot.getID(), ground.getID())     # reset: the feet just above
    for _ in range(100):                                            # 2 s
        obs, reward, terminated, _, _ = env.step(np.zeros(8))
        assert not terminated
    feet = [robot.link(f"foot_{k}").getID() for k in range(1, 5)]
    assert all(sim.inContact(f, ground.getID()) for f in feet)
    assert not sim.inContact(robot.link("torso").getID(), ground.getID())
    assert 0.25 < obs[0] < 0.62                        # torso height
    assert np.linalg.norm(obs[5:11]) < 1e-2             # at rest
    assert reward == pytest.approx(1.0, abs=1e-2)       # healthy, not moving, no control


def test_swinging_legs_move_the_torso():
    env = gymnasium.make("sim_node/Ant-v0")
    obs, _ = env.reset(seed=1)
    start = env.unwrapped.task.sim.getActualConfig(0)[:2]
    for t in range(150):
        phase = 2 * math.pi * 1.5 * t * ant.SUBSTEPS * ant.PHYSICS_DT
        action = np.tile([math.sin(phase), math.cos(phase)], 4)
        obs, _, terminated, _, _ = env.step(action)
        assert not terminated
    moved = env.unwrapped.task.sim.getActualConfig(0)[:2] - start
    assert np.linalg.norm(moved) > 0.05
