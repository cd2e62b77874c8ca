"""sim_node/CartPole-v0: gymnasium's checker, seeded determinism, the cart-pole's equations of
motion in closed form from cartpole.urdf's own masses and lengths, the task's rules."""
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import gymnasium
import numpy as np
import pybullet_data
import pytest
import scipy.linalg
from gymnasium.utils import seeding
from gymnasium.utils.env_checker import check_env

import sim_node.gym  # noqa: F401 (registers the ids)
from sim_node.gym import cartpole

URDF = Path(pybullet_data.getDataPath()) / "cartpole.urdf"


def _urdf_values():
    # cart mass M, pole mass m, pole COM distance from the hinge l, pole inertia about its COM
    # around the hinge axis (y) I_c: read from the file, not from sim_node
    root = ET.parse(URDF).getroot()
    links = {link.get("name"): link for link in root.iter("link")}
    M = float(links["cart"].find("inertial/mass").get("value"))
    pole = links["pole"].find("inertial")
    m = float(pole.find("mass").get("value"))
    l = float(pole.find("origin").get("xyz").split()[2])
    I_c = float(pole.find("inertia").get("iyy"))
    return M, m, l, I_c


def _closed_form(theta, g):
    """(x_ddot, theta_ddot) of the cart-pole at rest at angle theta, no force: from the
    Lagrangian with the pole's COM at (x + l sin th, l cos th),
    [[M + m, m l cos th], [m l cos th, I_c + m l^2]] [x'', th''] = [0, m g l sin th].
    (For a uniform rod on a fixed cart this is the textbook th'' = 3 g sin th / (2 L); the
    URDF's pole is no uniform rod: I_c = 1 kg m^2 against m L^2 / 12 = 0.0083.)"""
    M, m, l, I_c = _urdf_values()
    A = np.array([[M + m, m * l * math.cos(theta)], [m * l * math.cos(theta), I_c + m * l * l]])
    return np.linalg.solve(A, [0.0, m * g * l * math.sin(theta)])


def test_passes_gymnasium_env_checker():
    for continuous in (False, True):
        env = gymnasium.make("sim_node/CartPole-v0", continuous=continuous,
                             render_mode="rgb_array").unwrapped
        check_env(env)


def test_rgb_array_render():
    env = gymnasium.make("sim_node/CartPole-v0", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8
    # the blue cart (0, 0, 0.8) is in the picture
    blue = (frame[..., 2] > 150) & (frame[..., 0] < 50) & (frame[..., 1] < 50)
    assert blue.sum() > 100


def _rollout(env, seed, steps, actions_seed=1):
    actions = np.random.default_rng(actions_seed).integers(0, 2, steps)
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for a in actions:
        obs, reward, terminated, truncated, _ = env.step(int(a))
        out.append(obs)
        if terminated or truncated:
            obs, _ = env.reset()
            out.append(obs)
    return np.array(out)


def test_same_seed_same_observations_bit_for_bit():
    a = _rollout(gymnasium.make("sim_node/CartPole-v0"), 7, 300)
    b = _rollout(gymnasium.make("sim_node/CartPole-v0"), 7, 300)
    assert a.tobytes() == b.tobytes()
    # the same environment again after a history of its own
    env = gymnasium.make("sim_node/CartPole-v0")
    _rollout(env, 3, 50)
    assert _rollout(env, 7, 300).tobytes() == a.tobytes()
    assert _rollout(gymnasium.make("sim_node/CartPole-v0"), 8, 300).tobytes() != a.tobytes()


@pytest.mark.parametrize("theta", [0.05, 0.2, -0.7, 1.3, 2.8])
def test_pole_falls_with_the_closed_form_acceleration(theta):
    env = gymnasium.make("sim_node/CartPole-v0", continuous=True).unwrapped
    env.reset(seed=0)
    task = env.task
    task.sim.engine.robot_q[0][:] = (0.0, theta)
    task.sim.engine.robot_v[0][:] = 0.0
    task.sim.engine.refresh()
    h = cartpole.DT / cartpole.SUBSTEPS
    task.sim.engine.robot_tau_ff[0][0] = 0.0             # no push
    task.sim.simulate(h)                    # one physics substep from rest
    v = task.sim.engine.robot_v[0]
    x_ddot, theta_ddot = _closed_form(theta, cartpole.GRAVITY)
    # semi-implicit Euler: v1 = v0 + h a(q0)
    assert v[1] / h == pytest.approx(theta_ddot, rel=1e-9, abs=1e-12)
    assert v[0] / h == pytest.approx(x_ddot, rel=1e-9, abs=1e-12)
    assert np.sign(theta_ddot) == np.sign(math.sin(theta))


def test_push_accelerates_the_cart_by_f_over_the_total_mass():
    # pole upright at rest: the 10 N push gives the cart x'' = F (I_p) / ((M + m) I_p - (m l)^2)
    env = gymnasium.make("sim_node/CartPole-v0").unwrapped
    env.reset(seed=0)
    task = env.task
    task.sim.engine.robot_q[0][:] = 0.0
    task.sim.engine.robot_v[0][:] = 0.0
    M, m, l, I_c = _urdf_values()
    I_p = I_c + m * l * l
    h = cartpole.DT / cartpole.SUBSTEPS
    task.sim.engine.robot_tau_ff[0][0] = cartpole.FORCE      # action 1
    task.sim.simulate(h)
    expected = cartpole.FORCE * I_p / ((M + m) * I_p - (m * l) ** 2)
    assert task.sim.engine.robot_v[0][0] / h == pytest.approx(expected, rel=1e-9)
    assert task.sim.engine.robot_v[0][1] / h == pytest.approx(
        -m * l * cartpole.FORCE / ((M + m) * I_p - (m * l) ** 2), rel=1e-9)


def test_episode_rules():
    env = gymnasium.make("sim_node/CartPole-v0")
    obs, _ = env.reset(seed=5)
    assert np.all(np.abs(obs) <= cartpole.INITIAL_RANGE)
    total, steps = 0.0, 0
    while True:     # always pushing right: the pole falls back past 12 degrees
        obs, reward, terminated, truncated, _ = env.step(1)
        total += reward
        steps += 1
        if terminated or truncated:
            break
    assert terminated and not truncated
    assert abs(obs[2]) > math.radians(12) or abs(obs[0]) > 2.4
    assert total == steps and 5 < steps < 100
    assert env.spec.max_episode_steps == 500


def test_lqr_from_the_closed_form_model_balances_until_truncation():
    # an LQR designed on the cart-pole linearised from the URDF's masses (the closed form
    # above) keeps the simulated pole up for the whole episode: the simulation is the model
    M, m, l, I_c = _urdf_values()
    I_p, g = I_c + m * l * l, cartpole.GRAVITY
    det = (M + m) * I_p - (m * l) ** 2
    A = np.zeros((4, 4))
    A[0, 1] = A[2, 3] = 1.0
    A[1, 2], A[3, 2] = -(m * l) ** 2 * g / det, (M + m) * m * g * l / det
    B = cartpole.FORCE * np.array([[0.0], [I_p / det], [0.0], [-m * l / det]])
    P = scipy.linalg.solve_continuous_are(A, B, np.diag([1.0, 1.0, 10.0, 1.0]), np.eye(1))
    K = B.T @ P
    env = gymnasium.make("sim_node/CartPole-v0", continuous=True)
    obs, _ = env.reset(seed=1)
    for step in range(1, 501):
        obs, _, terminated, truncated, _ = env.step(np.clip(-K @ obs, -1.0, 1.0))
        assert not terminated, step
    assert truncated and np.all(np.abs(obs) < 0.05)


@pytest.mark.parametrize("continuous", [False, True])
def test_the_one_call_step_equals_the_task_stepped_through_the_simulator_bit_for_bit(continuous):
    # the environment steps through sim_node.engine.stepper.RobotStep; the reference is the
    # task's definition done through the Simulator API on a second copy: the cart's force
    # written, Simulator.simulate(DT), (x, x_dot, theta, theta_dot) read, the bounds checked;
    # over episodes of random actions of every accepted kind
    env = gymnasium.make("sim_node/CartPole-v0", continuous=continuous).unwrapped
    reference = cartpole.CartPoleTask(1, continuous=continuous)
    sim = reference.sim
    rng = np.random.default_rng(3)
    ended = 0
    for episode in range(4):
        obs, _ = env.reset(seed=episode)
        reference.reset_copies([0], [seeding.np_random(episode)[0]])
        q, v = sim.engine.robot_q[0], sim.engine.robot_v[0]
        assert obs.tolist() == [q[0], v[0], q[1], v[1]]
        for step in range(cartpole.MAX_EPISODE_STEPS):
            if continuous:
                action = rng.uniform(-1.0, 1.0, 1)
                force = cartpole.FORCE * action[0]
            else:
                action = [0, 1, np.int64(1), True][int(rng.integers(0, 4))]
                force = cartpole.FORCE if action else -cartpole.FORCE
            obs, reward, terminated, truncated, info = env.step(action)
            sim.engine.robot_tau_ff[0][0] = force
            sim.simulate(cartpole.DT)
            assert obs.tolist() == [q[0], v[0], q[1], v[1]]
            assert reward == 1.0 and not truncated and info == {}
            assert type(terminated) is bool
            assert terminated == (abs(q[0]) > 2.4 or abs(q[1]) > math.radians(12))
            if terminated:
                ended += 1
                break
    assert ended >= 1


def test_the_vector_step_writes_each_copys_force():
    # copies given different actions move apart; each equals a single copy given its action
    vector = cartpole.CartPoleTask(3)
    singles = [cartpole.CartPoleTask(1) for _ in range(3)]
    vector.reset_copies(range(3), [np.random.default_rng(7 + k) for k in range(3)])
    for k, single in enumerate(singles):
        single.reset_copies([0], [np.random.default_rng(7 + k)])
    actions = np.array([0, 1, 1])
    for _ in range(5):
        obs, reward, terminated, _ = vector.step(actions)
        for k, single in enumerate(singles):
            one, _, end, _ = single.step(actions[k:k + 1])
            assert obs[k].tobytes() == one[0].tobytes() and terminated[k] == end[0]
    assert obs[1, 1] > 0.0 > obs[0, 1] and reward.tolist() == [1.0] * 3
