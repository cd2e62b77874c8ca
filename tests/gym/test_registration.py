"""sim_node.gym's registration: the ids, their time limits and vector entry points, and the
vector environment under gymnasium's own checks and vector wrappers."""
import gymnasium
import numpy as np
import pytest
from gymnasium.utils import env_checker
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import sim_node.gym
from sim_node.gym.vector import TaskVectorEnv

LIMITS = {"sim_node/CartPole-v0": 500, "sim_node/PandaReach-v0": 50, "sim_node/Ant-v0": 1000}


def test_ids_are_registered_with_their_time_limits():
    assert set(sim_node.gym.ENV_IDS) == set(LIMITS)
    for env_id, limit in LIMITS.items():
        spec = gymnasium.spec(env_id)
        assert spec.max_episode_steps == limit
        env = gymnasium.make(env_id)
        assert env.spec.max_episode_steps == limit


@pytest.mark.parametrize("env_id", sorted(LIMITS))
def test_make_vec_uses_the_one_world_vector_env_and_passes_the_vector_checks(env_id):
    # gymnasium's env_checker has no vector checker; these of its checks are written for
    # vector environments too (array returns), the others assume a single environment
    envs = gymnasium.make_vec(env_id, num_envs=3)
    assert isinstance(envs.unwrapped, TaskVectorEnv)
    assert envs.unwrapped.max_episode_steps == LIMITS[env_id]
    env_checker.check_reset_seed_determinism(envs)
    env_checker.check_reset_return_type(envs)
    env_checker.check_reset_options(envs)


def test_gymnasiums_episode_statistics_wrapper_reads_the_autoresets():
    # CartPole's reward is 1 per step: every episode's return equals its length, and the
    # wrapper (which follows the SAME_STEP autoreset mode) sees every episode end
    envs = RecordEpisodeStatistics(gymnasium.make_vec("sim_node/CartPole-v0", num_envs=4),
                                  buffer_length=1000)
    envs.reset(seed=0)
    ends = 0
    for action in np.random.default_rng(0).integers(0, 2, (200, 4)):
        _, _, terminated, truncated, infos = envs.step(action)
        if "episode" in infos:
            done = infos["_episode"]
            assert np.array_equal(done, terminated | truncated)
            assert np.array_equal(infos["episode"]["r"][done], infos["episode"]["l"][done])
            ends += int(done.sum())
    assert ends == len(envs.length_queue) >= 5
    assert np.array_equal(np.array(envs.return_queue), np.array(envs.length_queue))
