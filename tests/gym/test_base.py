"""sim_node.gym.base: hostile actions are refused before anything moves, with an error naming
the action and what is valid; the pybullet_data lookup; the look-at camera frame."""
import importlib.util

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node.gym  # noqa: F401
from sim_node.gym import base

_ENVS = {}


def _env(env_id, **options):
    key = (env_id, tuple(sorted(options.items())))
    if key not in _ENVS:
        env = gymnasium.make(env_id, **options).unwrapped
        env.reset(seed=0)
        _ENVS[key] = env
    return _ENVS[key]


def _refused(env, action):
    state = env.task.sim.getState()
    with pytest.raises(ValueError) as error:
        env.step(action)
    assert env.task.sim.getState() == state, "a refused action changed the simulation"
    return str(error.value)


@pytest.mark.parametrize("action", [2, -1, 0.5, np.nan, "left", None, [0, 1], np.array([1]),
                                    1e300, 1.0, np.float64(0.0)])
def test_discrete_cartpole_refuses(action):
    message = _refused(_env("sim_node/CartPole-v0"), action)
    assert message.startswith("sim_node/CartPole-v0 step: action")
    assert "Discrete(2)" in message and "[0, 1]" in message


def test_valid_discrete_actions_of_any_integer_kind():
    env = _env("sim_node/CartPole-v0")
    for action in (0, 1, np.int64(1), np.int32(0), np.array(1), True):
        env.step(action)
        env.reset(seed=0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.integers(-10, 10)), min_size=0, max_size=9))
def test_box_actions_outside_the_space_are_refused_by_index(values):
    env = _env("sim_node/PandaReach-v0")
    array = np.array(values, dtype=float)
    inside = array.shape == (7,) and bool(np.all((array >= -1) & (array <= 1)))
    if inside:
        env.step(array)
        return
    message = _refused(env, array)
    assert "sim_node/PandaReach-v0 step: action" in message
    assert "(7,)" in message and "[-1, 1]" in message
    if array.shape == (7,):       # the first offending entry is named with its value
        k = int(np.flatnonzero(~((array >= -1) & (array <= 1)))[0])
        assert f"action[{k}] = {float(array[k])!r}" in message


def test_nan_in_the_continuous_cartpole_is_named():
    message = _refused(_env("sim_node/CartPole-v0", continuous=True), np.array([np.nan]))
    assert "action[0] = nan" in message


def test_missing_pybullet_data_says_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pybullet_data" else real(name, *a))
    with pytest.raises(FileNotFoundError, match=r"pip install pybullet==3\.2\.7"):
        base.pybullet_data_file("cartpole.urdf")
    monkeypatch.undo()
    with pytest.raises(FileNotFoundError, match="no_such.urdf is missing"):
        base.pybullet_data_file("no_such.urdf")


def test_look_at_is_an_optical_frame_looking_at_the_target():
    R, t = base.look_at((1.0, -2.0, 1.5), (0.0, 0.0, 0.5))
    assert np.allclose(R.T @ R, np.eye(3)) and np.linalg.det(R) == pytest.approx(1.0)
    forward = np.array([-1.0, 2.0, -1.0]) / np.sqrt(6.0)
    assert np.allclose(R[:, 2], forward)             # z forward
    assert R[2, 1] < 0                                # y down (world z up)
    assert abs(R[2, 0]) < 1e-12                       # x level
