"""The engine's face (engine/api.pyx): the Scene delegates to its SceneModel and SceneData,
and `contact_arrays(out=)` refills a caller's arrays."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import pipeline_cases as cases  # noqa: E402

from sim_node.engine.scene_data import SceneData  # noqa: E402
from sim_node.engine.scene_model import SceneModel  # noqa: E402


def test_contact_arrays_refill_the_arrays_given_back_while_the_count_stays(tmp_path):
    scene, _, _ = cases.build("box_pile", tmp_path)
    scene.step(cases.DT, 300)                        # settled: the contact count holds
    first = scene.contact_arrays()
    arrays = {k: v for k, v in first.items()}
    scene.step(cases.DT)
    fresh = scene.contact_arrays()
    again = scene.contact_arrays(out=first)
    assert again is first and all(again[k] is arrays[k] for k in arrays)
    assert fresh.keys() == again.keys()
    for key in fresh:
        assert fresh[key].tobytes() == again[key].tobytes()
    # a different count: new arrays, the given ones untouched
    stale = {k: v[:-1].copy() for k, v in fresh.items()}
    other = scene.contact_arrays(out=stale)
    assert other is not stale and len(other["point"]) == scene.ncontact


def test_the_scene_is_a_model_and_a_data_it_delegates_to(tmp_path):
    scene, _, _ = cases.build("quadruped", tmp_path)
    assert isinstance(scene.model, SceneModel) and isinstance(scene.data, SceneData)
    assert scene.data.model is scene.model
    assert scene.robot_q is scene.data.robot_q and scene.free_state is scene.data.free_state
    scene.max_iterations = 7                         # settings live in the model
    assert scene.model.max_iterations == 7
    scene.set_gravity([0.0, 0.0, -1.0])
    assert np.array_equal(scene.get_gravity(), [0.0, 0.0, -1.0])
    t = scene.time
    scene.step(cases.DT)                             # state lives in the data
    assert scene.data.time == t + cases.DT


PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="1 0 0"/><mass value="1"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/></joint>
</robot>"""


def _pendulum_scene(tmp_path):
    """A hinge about z (no gravity torque), I = 1.01 kg m^2, unactuated, spun at 2 rad/s."""
    import pytest
    (tmp_path / "pendulum.urdf").write_text(PENDULUM)
    world = cases._world("simulation: {physics_dt: 0.01, gravity: [0, 0, -9.81]}\n"
                         "robots:\n  - {name: p, urdf: pendulum.urdf, fixed_base: true}\n",
                         tmp_path)
    from sim_node.model.scene import build_scene
    scene = build_scene(world).scene
    scene.robot_v[0][0] = 2.0
    return scene, pytest


def test_joint_damping_set_on_the_scene_is_implicit_in_the_next_steps(tmp_path):
    """set_joint_damping(c): each step v <- v I / (I + c dt) (the engine's implicit damping,
    closed form for a lone hinge without gravity torque); refused: NaN, < 0, inf, the DOF out
    of range; nothing changes then."""
    scene, pytest = _pendulum_scene(tmp_path)
    assert scene.get_joint_damping(0, 0) == 0.0
    scene.set_joint_damping(0, 0, 3.0)
    assert scene.get_joint_damping(0, 0) == 3.0
    dt, inertia = 0.01, 1.01
    for k in range(1, 6):
        scene.step(dt)
        assert scene.robot_v[0][0] == pytest.approx(2.0 * (inertia / (inertia + 3.0 * dt)) ** k,
                                                    rel=1e-9)
    for bad in (float("nan"), -0.1, float("inf")):
        with pytest.raises(ValueError, match="damping"):
            scene.set_joint_damping(0, 0, bad)
    with pytest.raises(IndexError):
        scene.set_joint_damping(0, 1, 1.0)
    assert scene.get_joint_damping(0, 0) == 3.0


def test_joint_limits_set_on_the_scene_stop_the_joint(tmp_path):
    """set_joint_limits on a continuous hinge spun at 2 rad/s: it stops at the upper limit;
    lower > upper, NaN, a lower limit of inf are refused and change nothing."""
    scene, pytest = _pendulum_scene(tmp_path)
    assert scene.get_joint_limits(0, 0) == (-np.inf, np.inf)
    scene.set_joint_limits(0, 0, -0.1, 0.3)
    for _ in range(50):
        scene.step(0.01)
    assert abs(scene.robot_q[0][0] - 0.3) < 1e-3 and abs(scene.robot_v[0][0]) < 1e-6
    for lower, upper in ((0.5, -0.5), (float("nan"), 1.0), (0.0, float("nan")),
                         (float("inf"), float("inf")), (-float("inf"), -float("inf"))):
        with pytest.raises(ValueError, match="lower <= upper"):
            scene.set_joint_limits(0, 0, lower, upper)
    assert scene.get_joint_limits(0, 0) == (-0.1, 0.3)
