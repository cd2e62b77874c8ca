"""sim_node.gym.vector: N copies in one world stepped by one Simulator.simulate per step equal N
single environments bit for bit (same seeds, same actions), autoreset included; the vector
environment's own contract (spaces, seeds, errors)."""
import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node.gym  # noqa: F401
from sim_node.gym.cartpole import CartPoleTask
from sim_node.gym.vector import TaskVectorEnv


def _actions(space, n, steps, seed):
    rng = np.random.default_rng(seed)
    if isinstance(space, gymnasium.spaces.Discrete):
        return rng.integers(0, space.n, (steps, n))
    return rng.uniform(space.low, space.high, (steps, n, *space.shape))


def _single(env_id, seed, actions, limit, options):
    # one copy's record: per step (obs after the step or after the autoreset, the final obs,
    # reward, terminated, truncated), as the vector environment reports them (SAME_STEP)
    env = gymnasium.make(env_id, max_episode_steps=limit, **options)
    obs, _ = env.reset(seed=seed)
    record = [obs]
    for a in actions:
        obs, reward, terminated, truncated, _ = env.step(a)
        final = obs
        if terminated or truncated:
            obs, _ = env.reset()
        record.append((obs, final if terminated or truncated else None, reward, terminated,
                       truncated))
    return record


@pytest.mark.parametrize("env_id, n, steps, limit, options, workers", [
    ("sim_node/CartPole-v0", 4, 120, 500, {}, 1),
    ("sim_node/CartPole-v0", 3, 60, 20, {"continuous": True}, 1),
    ("sim_node/CartPole-v0", 5, 80, 30, {}, 2),
    ("sim_node/PandaReach-v0", 3, 70, 30, {}, 1),
    ("sim_node/PandaReach-v0", 3, 40, 15, {}, 2),
])
def test_vector_equals_single_environments_bit_for_bit(env_id, n, steps, limit, options,
                                                       workers):
    envs = gymnasium.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point",
                              max_episode_steps=limit, workers=workers, **options)
    assert isinstance(envs.unwrapped, TaskVectorEnv)
    actions = _actions(envs.single_action_space, n, steps, seed=11)
    obs, _ = envs.reset(seed=100)
    records = [_single(env_id, 100 + i, actions[:, i], limit, options) for i in range(n)]
    assert np.array_equal(obs, np.array([r[0] for r in records]))
    ends = 0
    for t in range(steps):
        obs, reward, terminated, truncated, infos = envs.step(actions[t])
        for i, record in enumerate(records):
            single_obs, final, single_reward, single_term, single_trunc = record[t + 1]
            assert obs[i].tobytes() == single_obs.tobytes(), (t, i)
            assert reward[i] == single_reward and terminated[i] == single_term \
                and truncated[i] == single_trunc, (t, i)
            if final is not None:
                ends += 1
                assert infos["_final_obs"][i]
                assert infos["final_obs"][i].tobytes() == final.tobytes()
    assert ends > 0, "the rollout never exercised an autoreset"


def test_ant_vector_equals_single_until_contact_then_within_the_solver_tolerance():
    # the ants stand 5 m apart (sim_node/gym/ant.py): rounding differs with the position in the
    # world (1e-14 before any contact), and the contact solve's stopping rule is scene-wide, so
    # from the first touchdown on the copies agree with single environments to the solver's
    # tolerance only (measured: ~1e-5 at touchdown), then diverge as any contact-rich system
    # fed the same actions does
    n = 3
    envs = gymnasium.make_vec("sim_node/Ant-v0", num_envs=n,
                              vectorization_mode="vector_entry_point")
    singles = [gymnasium.make("sim_node/Ant-v0") for _ in range(n)]
    obs, _ = envs.reset(seed=100)
    single = np.array([env.reset(seed=100 + i)[0] for i, env in enumerate(singles)])
    assert np.array_equal(obs, single)
    sim, world = envs.unwrapped.task.sim, envs.unwrapped.task.world
    sim.enableContactFeedbackAll()
    ground = world.terrain("ground").getID()
    touched, differences = None, []
    for t, a in enumerate(_actions(envs.single_action_space, n, 12, seed=2)):
        obs, reward, terminated, _, _ = envs.step(a)
        single = [env.step(a[i]) for i, env in enumerate(singles)]
        differences.append(np.abs(obs - np.array([s[0] for s in single])).max())
        if touched is None and any(sim.hadContact(world.robot(i).getID(), ground)
                                   for i in range(n)):
            touched = t
        assert list(terminated) == [s[2] for s in single]
    assert touched is not None and touched >= 1
    assert max(differences[:touched]) <= 1e-12, differences
    assert max(differences) <= 1e-3, differences

class _Counting:
    """A task's engine kernel (sim_node.engine.stepper.RobotStep) that counts its step calls."""

    def __init__(self, kernel, calls):
        self._kernel, self._calls = kernel, calls

    def __getattr__(self, name):
        attribute = getattr(self._kernel, name)
        if name.startswith("step"):
            return lambda *args: (self._calls.append(self), attribute(*args))[1]
        return attribute


def test_workers_step_their_worlds_once_each():
    envs = TaskVectorEnv(CartPoleTask, 5, workers=2)
    assert [part.copies for part in envs.task.parts] == [3, 2]
    envs.reset(seed=0)
    calls = []
    for part in envs.task.parts:
        part.kernel = _Counting(part.kernel, calls)
    envs.step(np.ones(5, dtype=int))
    assert sorted(map(id, calls)) == sorted(id(part.kernel) for part in envs.task.parts)
    assert [part.sim.getTime() for part in envs.task.parts] == [pytest.approx(0.02)] * 2
    envs.close()


def test_one_engine_call_per_step():
    envs = TaskVectorEnv(CartPoleTask, 16)
    envs.reset(seed=0)
    calls = []
    envs.task.kernel = _Counting(envs.task.kernel, calls)
    for _ in range(5):
        envs.step(np.ones(16, dtype=int))
    assert len(calls) == 5
    assert envs.task.sim.getTime() == pytest.approx(0.1)


def test_vector_contract():
    envs = TaskVectorEnv(CartPoleTask, 5)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert envs.observation_space.shape == (5, 4)
    assert envs.action_space == gymnasium.spaces.MultiDiscrete([2] * 5)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(5, dtype=int))
    obs, _ = envs.reset(seed=[1, 2, 3, 4, 5])
    assert obs in envs.observation_space
    again, _ = envs.reset(seed=1)
    assert np.array_equal(obs, again)
    with pytest.raises(ValueError, match="list of 5 seeds"):
        envs.reset(seed=[1, 2])
    with pytest.raises(ValueError, match=r"actions\[3\] = 2 \(copy 3\)"):
        envs.step(np.array([0, 1, 0, 2, 1]))
    with pytest.raises(ValueError, match=r"shape \(5,\)"):
        envs.step(np.zeros(4, dtype=int))
    with pytest.raises(ValueError, match="copies must be an int >= 1"):
        TaskVectorEnv(CartPoleTask, 0)
    with pytest.raises(ValueError, match="Task subclass"):
        TaskVectorEnv(object, 2)
    with pytest.raises(ValueError, match=r"workers must be an int in \[1, num_envs\]"):
        TaskVectorEnv(CartPoleTask, 2, workers=3)


_CONTINUOUS = {}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.integers(-3, 3)), min_size=3, max_size=5))
def test_hostile_batched_actions_are_refused_before_anything_moves(values):
    if not _CONTINUOUS:
        _CONTINUOUS["envs"] = TaskVectorEnv(CartPoleTask, 4, continuous=True)
        _CONTINUOUS["envs"].reset(seed=0)
    envs = _CONTINUOUS["envs"]
    actions = np.array(values, dtype=float).reshape(-1, 1)
    state = envs.task.sim.getState()
    if actions.shape == (4, 1) and np.all((actions >= -1) & (actions <= 1)):
        envs.step(actions)
        return
    with pytest.raises(ValueError) as error:
        envs.step(actions)
    assert envs.task.sim.getState() == state
    message = str(error.value)
    if actions.shape == (4, 1):
        k = int(np.flatnonzero(~((actions[:, 0] >= -1) & (actions[:, 0] <= 1)))[0])
        assert f"actions[{k}, 0] = {float(actions[k, 0])!r} (copy {k})" in message
    else:
        assert "shape (4, 1)" in message
