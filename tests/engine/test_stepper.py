"""RobotStep (engine/stepper.pyx): one call = the torques written, Scene.step's substeps taken,
the observation read and the bounds checked. Its reference is the same work done through the
Scene's Python face on a second copy of the scene: bit for bit."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
import pipeline_cases as cases  # noqa: E402

from sim_node.engine.stepper import RobotStep  # noqa: E402

H, SUBSTEPS = 0.002, 3


def _pair(case, tmp_path):
    a, _, _ = cases.build(case, tmp_path / "a")
    b, _, _ = cases.build(case, tmp_path / "b")
    return a, b


@pytest.mark.parametrize("case", ["arm", "quadruped"])   # quadruped: contacts on the ground
def test_step_dof_and_step_choice_equal_the_scene_stepped_from_python(case, tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    ours, reference = _pair(case, tmp_path)
    nq, nv = reference.robot_q[0].size, reference.robot_v[0].size
    observe = np.arange(nq + nv)[::-1]                  # every entry, reordered
    bound = np.full(nq, np.inf)
    table = np.random.default_rng(1).uniform(-2.0, 2.0, (3, nv))
    step = RobotStep(ours, 0, H * SUBSTEPS, SUBSTEPS, observe, bound, table)
    rng = np.random.default_rng(0)
    for k in range(60):
        if k % 2:
            choice = int(rng.integers(0, 3))
            obs, ended = step.step_choice(choice if k % 4 == 1 else np.int64(choice))
            reference.robot_tau_ff[0][:] = table[choice]
        else:
            dof, tau = int(rng.integers(0, nv)), float(rng.uniform(-3.0, 3.0))
            obs, ended = step.step_dof(dof, tau)
            reference.robot_tau_ff[0][dof] = tau
        reference.clear_status()
        status = reference.step(H, SUBSTEPS)
        state = np.concatenate((reference.robot_q[0], reference.robot_v[0]))
        assert obs.tobytes() == state[observe].tobytes()
        assert ours.robot_q[0].tobytes() == reference.robot_q[0].tobytes()
        assert ours.time == reference.time and step.status == status
        assert ended is False


def test_the_episode_ends_when_a_coordinate_leaves_its_bound(tmp_path):
    (tmp_path / "a").mkdir()
    scene, _, _ = cases.build("arm", tmp_path / "a")
    nq, nv = scene.robot_q[0].size, scene.robot_v[0].size
    scene.set_commands(0, 1, tau_ff=np.zeros(nv))       # torque mode, no torque: it falls
    bound = np.full(nq, np.inf)
    bound[1] = abs(scene.robot_q[0][1]) + 0.05
    step = RobotStep(scene, 0, 0.01, 2, [1], bound, np.zeros((1, nv)))
    for _ in range(300):
        obs, ended = step.step_choice(0)
        assert ended == bool(abs(scene.robot_q[0][1]) > bound[1])
        assert obs[0] == scene.robot_q[0][1]
        if ended:
            break
    assert ended


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.booleans(), st.floats(allow_nan=True), st.text(max_size=2), st.none(),
                 st.integers(min_value=-2**70, max_value=2**70).filter(lambda k: not 0 <= k < 2),
                 st.just(np.int32(1)), st.just(np.array(1)), st.just([0])))
def test_anything_but_an_int_in_range_is_left_to_the_caller_and_changes_nothing(action):
    import sim_node
    from sim_node.model.scene import build_scene

    world = sim_node.WorldModel()
    world.readFile(str(cases.REPO / "data" / "worlds" / "arm.yaml"))
    scene = build_scene(world).scene
    nv = scene.robot_v[0].size
    step = RobotStep(scene, 0, 0.01, 1, [0], np.full(scene.robot_q[0].size, np.inf),
                     np.ones((2, nv)))
    before = (scene.time, scene.robot_q[0].tobytes(), scene.robot_tau_ff[0].tobytes())
    assert step.step_choice(action) is None
    assert before == (scene.time, scene.robot_q[0].tobytes(), scene.robot_tau_ff[0].tobytes())


def test_bad_arguments_are_refused_with_what_is_valid(tmp_path):
    (tmp_path / "a").mkdir()
    scene, _, _ = cases.build("arm", tmp_path / "a")
    nq, nv = scene.robot_q[0].size, scene.robot_v[0].size
    bound = np.full(nq, np.inf)
    with pytest.raises(ValueError, match=r"robots must be indices in \[0, 1\), got 3"):
        RobotStep(scene, 3, 0.01, 1, [0], bound)
    with pytest.raises(ValueError, match="dt must be a positive time"):
        RobotStep(scene, 0, float("nan"), 1, [0], bound)
    with pytest.raises(ValueError, match="observe indices must be in"):
        RobotStep(scene, 0, 0.01, 1, [nq + nv], bound)
    with pytest.raises(ValueError, match=f"bound must be {nq} numbers"):
        RobotStep(scene, 0, 0.01, 1, [0], [np.nan] * nq)
    with pytest.raises(ValueError, match="table must be finite torques"):
        RobotStep(scene, 0, 0.01, 1, [0], bound, np.full((2, nv), np.inf))
    step = RobotStep(scene, 0, 0.01, 1, [0], bound)
    with pytest.raises(ValueError, match="tau must be finite"):
        step.step_dof(0, float("nan"))
    with pytest.raises(ValueError, match=r"dof must be in \[0"):
        step.step_dof(nv, 1.0)


def _arms(count):
    # `count` copies of the arm7 robot in one scene, apart along y, with the world file's
    # physics settings
    import sim_node
    from sim_node.model.scene import build_scene

    world = sim_node.WorldModel()
    urdf = str(cases.REPO / "data" / "robots" / "arm7" / "arm7.urdf")
    for k in range(count):
        robot = world.loadRobot(urdf, fixed_base=True)
        q = np.asarray(robot.getConfig(), float)
        robot.setConfig(q + np.linspace(-0.3, 0.3, q.size) * (k + 1) * 0.5)
    return build_scene(world).scene


def test_step_choices_and_dofs_equal_each_robot_written_from_python():
    ours, reference = _arms(3), _arms(3)
    nq, nv = reference.robot_q[0].size, reference.robot_v[0].size
    for scene in (ours, reference):
        for r in range(3):
            scene.set_commands(r, 1, tau_ff=np.zeros(nv))
    table = np.random.default_rng(2).uniform(-5.0, 5.0, (4, nv))
    step = RobotStep(ours, [2, 0, 1], 0.004, 4, [1, nq + 1], np.full(nq, 0.9), table)
    rng = np.random.default_rng(4)
    for k in range(40):
        if k % 2:
            actions = rng.integers(0, 4, 3)
            obs, ended = step.step_choices(actions)
            for i, r in enumerate((2, 0, 1)):
                reference.robot_tau_ff[r][:] = table[actions[i]]
        else:
            taus = rng.uniform(-2.0, 2.0, 3)
            obs, ended = step.step_dofs(3, taus)
            for i, r in enumerate((2, 0, 1)):
                reference.robot_tau_ff[r][3] = taus[i]
        reference.step(0.001, 4)
        for i, r in enumerate((2, 0, 1)):
            q, v = reference.robot_q[r], reference.robot_v[r]
            assert obs[i].tolist() == [q[1], v[1]]
            assert ended[i] == bool((np.abs(q) > 0.9).any())
    assert ended.dtype == bool and ended.shape == (3,) and obs.shape == (3, 2)
    assert step.observe().tobytes() == obs.tobytes()


def test_several_robots_must_be_copies_and_take_batched_calls():
    import sim_node
    from sim_node.model.scene import build_scene

    world = sim_node.WorldModel()
    world.readFile(str(cases.REPO / "data" / "worlds" / "arm.yaml"))
    world.loadRobot(str(next((cases.REPO / "data" / "robots" / "pendulum").glob("*.urdf"))),
                    fixed_base=True)
    scene = build_scene(world).scene
    nq = scene.robot_q[0].size
    with pytest.raises(ValueError, match="the robots must be copies"):
        RobotStep(scene, [0, 1], 0.01, 1, [0], np.full(nq, np.inf))
    nv = scene.robot_v[0].size
    step = RobotStep(_arms(2), [0, 1], 0.01, 1, [0], np.full(nq, np.inf), np.zeros((2, nv)))
    with pytest.raises(ValueError, match="steps one robot; this one has 2"):
        step.step_choice(0)
    with pytest.raises(ValueError, match=r"actions\[1\] = 2 is not in \[0, 2\)"):
        step.step_choices(np.array([0, 2]))
    with pytest.raises(ValueError, match="3 actions for 2 robots"):
        step.step_choices(np.array([0, 1, 1]))
    with pytest.raises(ValueError, match=r"taus\[0\] = inf is not finite"):
        step.step_dofs(0, np.array([np.inf, 0.0]))
