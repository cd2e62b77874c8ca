"""gymnasium environments on the sim_node engine (issue 14).

    import gymnasium, sim_node.gym
    env = gymnasium.make("sim_node/CartPole-v0")                    # or PandaReach-v0, Ant-v0
    envs = gymnasium.make_vec("sim_node/CartPole-v0", num_envs=64,
                              vectorization_mode="vector_entry_point")   # one engine, 64 copies

Importing this package registers the ids; the environments are built on the Simulator API
(sim_node.gym.base says how a task runs on N copies in one world).
"""
import gymnasium

from sim_node.gym.vector import TaskVectorEnv

__all__ = ["ENV_IDS", "TaskVectorEnv"]

# id -> (module, env class, task class, max_episode_steps)
_ENVS = {
    "sim_node/CartPole-v0": ("cartpole", "CartPoleEnv", "CartPoleTask", 500),
    "sim_node/PandaReach-v0": ("panda_reach", "PandaReachEnv", "PandaReachTask", 50),
    "sim_node/Ant-v0": ("ant", "AntEnv", "AntTask", 1000),
}
ENV_IDS = tuple(_ENVS)

for _id, (_module, _env, _task, _steps) in _ENVS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(id=_id, entry_point=f"sim_node.gym.{_module}:{_env}",
                           vector_entry_point=f"sim_node.gym.vector:{_module}_vector",
                           max_episode_steps=_steps)
