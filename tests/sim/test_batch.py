"""Batch simulation (sim_node.sim.batch): doSim against hand-written Simulator loops, batchSim /
monteCarloSim identical serially, on the process pool and on a Dask cluster, CSV output, and the
seed's Monte Carlo pendulum against an independent ODE solution."""
import csv
import io
import math
import os
import random

import numpy as np
import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sim_node  # noqa: E402
from sim_node.sim import access, batch  # noqa: E402

from scene_helpers import REPO, pendulum_box_world_text, world_from_yaml  # noqa: E402

KP, KI, KD = 20.0, 8.0, 5.0


@pytest.fixture
def world(tmp_path):
    return world_from_yaml(pendulum_box_world_text(), tmp_path)


def pid_to(sim, target=0.0):
    controller = sim.controller(0)
    controller.setPIDGains([KP], [KI], [KD])
    controller.setPIDCommand([target], [0.0])


def same(a, b) -> bool:
    """Equal bit for bit: numbers, strings, arrays, and tuples / lists / dicts of them."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, str):
        return a == b
    return np.array_equal(a, b) and np.asarray(a).dtype == np.asarray(b).dtype


def without_wall_clock(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "wall_clock_time"}


def hand_loop(world, condition, steps, dt=0.01, init=pid_to, args=()):
    """The reference: set the condition on the world, build a Simulator, simulate."""
    for path, value in condition.items():
        access.set_item(world, path, value)
    sim = sim_node.Simulator(world)
    init(sim, *args)
    for _ in range(steps):
        sim.simulate(dt)
    return sim


# -- doSim -----------------------------------------------------------------------------------
def test_doSim_ends_where_a_hand_written_simulator_loop_ends_bit_for_bit(world, tmp_path):
    condition = {"robots[0].config[0]": 1.2, "robots[0].velocity": [0.5],
                 "rigidObjects[0].velocity": ([0.0, 1.0, 0.0], [0.3, 0.0, 0.0])}
    result = batch.doSim(world, 0.5, condition, simInit=pid_to)
    sim = hand_loop(world_from_yaml(pendulum_box_world_text(), tmp_path, "reference.yaml"), condition, 50)
    body = sim.body(sim.getWorld().rigidObject(0))
    expected = {
        "robots[0].config": sim.getActualConfig(0),
        "robots[0].velocity": sim.getActualVelocity(0),
        "robots[0].commandedConfig": sim.controller(0).getCommandedConfig(),
        "robots[0].commandedVelocity": sim.controller(0).getCommandedVelocity(),
        "robots[0].torque": sim.getActualTorque(0),
        "rigidObjects[0].transform": body.getObjectTransform(),
    }
    for item, value in expected.items():
        assert same(result[item], value), item
    assert result["time"] == sim.getTime()
    assert result["status"] == "normal"
    assert set(result) == set(expected) | {"rigidObjects[0].velocity", "status", "time",
                                           "wall_clock_time"}
    # the box fell onto the ground in those 0.5 s (its half height is at most 0.112 m)
    assert result["rigidObjects[0].transform"][1][2] < 0.12


def test_doSim_puts_the_world_back_even_when_a_callback_writes_into_it(world):
    before = batch.getWorldSimState(world)

    def step(sim):
        sim.updateWorld()      # copies the simulated state into the world mid-run
    batch.doSim(world, 0.3, {"robots[0].config[0]": -1.0, "rigidObjects[0].velocity[1][2]": 2.0},
                ["robots[0].config"], simStep=step)
    assert same(batch.getWorldSimState(world), before)


def test_trace_holds_the_start_and_every_outer_step(world, tmp_path):
    result = batch.doSim(world, 0.1, {"robots[0].config[0]": 2.0},
                         ["robots[0].config", "rigidObjects[0].transform"], trace=True,
                         simInit=pid_to)
    assert len(result["robots[0].config"]) == 11 == len(result["status"])
    assert np.allclose(result["time"], np.arange(11) * 0.01, rtol=0, atol=1e-12)
    assert result["robots[0].config"][0][0] == 2.0
    assert set(result["status"]) == {"normal"}
    reference = world_from_yaml(pendulum_box_world_text(), tmp_path, "reference.yaml")
    for steps in (1, 4, 10):
        sim = hand_loop(reference, {"robots[0].config[0]": 2.0}, steps)
        assert same(result["robots[0].config"][steps], sim.getActualConfig(0))
        R, t = sim.body(sim.getWorld().rigidObject(0)).getObjectTransform()
        assert same(result["rigidObjects[0].transform"][steps], (R, t))
    assert isinstance(result["wall_clock_time"], float)


def test_simTerm_stops_the_run_early_and_the_time_says_when(world, tmp_path):
    steps = []

    def step(sim):
        steps.append(sim.getTime())

    def stop(sim):
        return sim.getTime() >= 0.25 - 1e-9
    result = batch.doSim(world, 5.0, {}, ["robots[0].config"], simInit=pid_to, simStep=step,
                         simTerm=stop)
    assert len(steps) == 25
    assert result["time"] == pytest.approx(0.25, abs=1e-12)
    sim = hand_loop(world_from_yaml(pendulum_box_world_text(), tmp_path, "reference.yaml"), {}, 25)
    assert same(result["robots[0].config"], sim.getActualConfig(0))


def test_args_reach_simInit_simStep_and_simTerm(world):
    calls = []

    def init(sim, target, label):
        calls.append(("init", target, label))
        pid_to(sim, target)

    def step(sim, target, label):
        calls.append(("step", target, label))

    def term(sim, target, label):
        calls.append(("term", target, label))
        return False
    result = batch.doSim(world, 0.03, {"args": (0.4, "x")}, ["robots[0].commandedConfig"],
                         simInit=init, simStep=step, simTerm=term)
    assert calls == [("init", 0.4, "x")] + [("term", 0.4, "x"), ("step", 0.4, "x")] * 3
    assert result["robots[0].commandedConfig"][0] == 0.4


def test_doSim_refuses_bad_arguments_and_leaves_the_world_alone(world):
    before = batch.getWorldSimState(world)
    with pytest.raises(ValueError, match="NaN"):
        batch.doSim(world, 1.0, {"robots[0].velocity": [0.5], "robots[0].config": [math.nan]})
    assert same(batch.getWorldSimState(world), before)
    with pytest.raises(TypeError, match="'args' must be a tuple"):
        batch.doSim(world, 1.0, {"args": 0.3})
    with pytest.raises(ValueError, match="simDt must be a positive"):
        batch.doSim(world, 1.0, {}, simDt=0.0)
    with pytest.raises(ValueError, match="duration must be a finite time"):
        batch.doSim(world, math.inf, {})
    with pytest.raises(KeyError, match="valid fields"):
        batch.doSim(world, 0.1, {}, ["robots[0].commanded"])
    assert same(batch.getWorldSimState(world), before)


# -- many runs -------------------------------------------------------------------------------
def monte_carlo(world, **options):
    """A seeded Monte Carlo over start angle, box velocity and the PID target (args)."""
    rng = random.Random(7)
    samplers = {"robots[0].config[0]": lambda: rng.uniform(-math.pi, math.pi),
                "rigidObjects[0].velocity[1]": lambda: [rng.uniform(-1, 1), 0.0, 0.0],
                "args": lambda: (rng.uniform(-0.5, 0.5),)}
    return batch.monteCarloSim(world, 0.3, samplers, 12, None, simInit=pid_to, progress=False,
                               **options)


def test_monteCarloSim_is_identical_serially_on_the_pool_and_on_a_dask_cluster(world):
    import distributed

    before = batch.getWorldSimState(world)
    serial = monte_carlo(world, processes=1)
    pooled = monte_carlo(world, processes=2)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster:
        on_address = monte_carlo(world, cluster=cluster.scheduler_address)
        with distributed.Client(cluster) as client:
            on_client = monte_carlo(world, cluster=client)
    assert len(serial) == 12
    for other in (pooled, on_address, on_client):
        for (condition_a, result_a), (condition_b, result_b) in zip(serial, other):
            assert same(condition_a, condition_b)
            assert same(without_wall_clock(result_a), without_wall_clock(result_b))
    assert same(batch.getWorldSimState(world), before)
    # input order, and each the result of doSim of its condition
    for condition, result in (serial[0], serial[7]):
        alone = batch.doSim(world, 0.3, condition, simInit=pid_to)
        assert same(without_wall_clock(alone), without_wall_clock(result))
    assert {result["robots[0].commandedConfig"][0] for _, result in serial} == \
        {condition["args"][0] for condition, _ in serial}


def test_batchSim_takes_a_list_of_conditions_or_a_dict_of_lists(world):
    angles = [0.1, -0.5, 2.0]
    as_dicts = batch.batchSim(world, 0.2, [{"robots[0].config[0]": a} for a in angles],
                              ["robots[0].config"], simInit=pid_to, processes=2, progress=False)
    as_lists = batch.batchSim(world, 0.2, {"robots[0].config[0]": angles}, ["robots[0].config"],
                              simInit=pid_to, processes=1, progress=False)
    assert [same(without_wall_clock(a), without_wall_clock(b))
            for a, b in zip(as_dicts, as_lists)] == [True] * 3
    assert len({float(r["robots[0].config"][0]) for r in as_lists}) == 3


def test_a_failing_run_names_itself_and_the_world_is_restored(world):
    before = batch.getWorldSimState(world)
    conditions = [{"robots[0].config[0]": 0.1}] * 5 + [{"robots[0].config[0]": math.inf}]
    for processes in (1, 2):
        with pytest.raises(ValueError, match="NaN or infinity") as failure:
            batch.batchSim(world, 0.05, conditions, ["robots[0].config"], processes=processes,
                           progress=False)
        assert "in batch run 5 of 6" in "".join(failure.value.__notes__)
        assert same(batch.getWorldSimState(world), before)
    with pytest.raises(ValueError, match=r"same number of values, got \{'a': 2, 'b': 1\}"):
        batch.batchSim(world, 0.1, {"a": [1, 2], "b": [1]}, None)
    with pytest.raises(TypeError, match="sampler of 'a' must be a zero-argument callable"):
        batch.monteCarloSim(world, 0.1, {"a": 0.5}, 3, None)
    with pytest.raises(ValueError, match="processes must be a positive integer"):
        batch.batchSim(world, 0.1, [{}], None, processes=0)


# -- CSV -------------------------------------------------------------------------------------
def parse(text: str):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def test_state_csv_parses_back_to_the_same_numbers(world):
    runs = batch.batchSim(world, 0.05, {"robots[0].config[0]": [0.3, -0.7]},
                          ["robots[0].config", "rigidObjects[0].transform", "time"],
                          processes=1, progress=False)
    out = io.StringIO()
    batch.saveStatesCSV(runs, out)
    header, rows = parse(out.getvalue())
    assert header == (["robots[0].config[0]"]
                      + [f"rigidObjects[0].transform[{i}]" for i in range(12)]
                      + ["status", "time", "wall_clock_time"])
    assert len(rows) == 2
    for run, row in zip(runs, rows):
        numbers = dict(zip(header, row))
        assert float(numbers["robots[0].config[0]"]) == run["robots[0].config"][0]
        R, t = run["rigidObjects[0].transform"]
        assert [float(numbers[f"rigidObjects[0].transform[{i}]"]) for i in range(12)] == \
            R.ravel().tolist() + t.tolist()
        assert float(numbers["time"]) == run["time"]
        assert numbers["status"] == "normal"
    single = io.StringIO()
    batch.saveStateHeaderCSV(runs[1], single)
    batch.saveStateCSV(runs[1], single)
    assert parse(single.getvalue()) == (header, rows[1:])


def test_states_with_different_items_are_refused_before_writing(world):
    out = io.StringIO()
    with pytest.raises(ValueError, match="state 1 has items"):
        batch.saveStatesCSV([{"a": 1.0, "b": [1.0, 2.0]}, {"a": 1.0, "b": [1.0]}], out)
    assert out.getvalue() == ""


def test_trajectory_csv_has_one_line_per_sample(world):
    trace = batch.doSim(world, 0.04, {"robots[0].config[0]": 1.0},
                        ["robots[0].config", "robots[0].torque"], trace=True, simInit=pid_to)
    out = io.StringIO()
    batch.saveStateTrajectoryCSV(trace, out)
    header, rows = parse(out.getvalue())
    assert header == ["iter", "robots[0].config[0]", "robots[0].torque[0]", "status", "time"]
    assert [int(row[0]) for row in rows] == [0, 1, 2, 3, 4]
    for i, row in enumerate(rows):
        assert float(row[1]) == trace["robots[0].config"][i][0]
        assert float(row[2]) == trace["robots[0].torque"][i][0]
        assert float(row[4]) == trace["time"][i]


# -- the seed's Monte Carlo physics ----------------------------------------------------------
def pendulum_reference(theta0: float, duration: float):
    """The closed-loop pendulum of pendulum.urdf solved as an ODE (scipy), independently of the
    engine: J th'' = -m g l sin th - b th' + tau, tau = clip(kP (0 - th) - kD th' + kI I, +-50),
    I' = -th with kI |I| kept within the torque limit (Klamp't's anti-windup)."""
    from scipy.integrate import solve_ivp

    m, l, I_com, b, g, limit = 1.0, 0.441535433071, 0.0170399652799, 0.01, 9.81, 50.0
    J = I_com + m * l * l          # about the pivot

    def f(t, y):
        th, w, integral = y
        tau = min(limit, max(-limit, -KP * th - KD * w + KI * integral))
        bound = limit / KI
        windup = (integral >= bound and th < 0) or (integral <= -bound and th > 0)
        return [w, (-m * g * l * math.sin(th) - b * w + tau) / J, 0.0 if windup else -th]
    return solve_ivp(f, (0.0, duration), [theta0, 0.0, 0.0], method="DOP853", rtol=1e-11,
                     atol=1e-12, dense_output=True)


def test_pid_pendulum_matches_the_ode_solution(world):
    """kP 20, kI 8, kD 5 from 1 rad and from 3 rad (torque saturated at 50 N m at first):
    the final angles of 5 s agree with the ODE to 5e-4 rad, the whole trajectory to 5e-3 rad
    (the engine's 1 ms semi-implicit steps against a 1e-11 tolerance solution)."""
    pendulum = sim_node.WorldModel()
    pendulum.readFile(REPO / "data" / "worlds" / "pendulum.yaml")
    for theta0 in (1.0, 3.0):
        trace = batch.doSim(pendulum, 5.0, {"robots[0].config[0]": theta0},
                            ["robots[0].config"], trace=True, simInit=pid_to)
        reference = pendulum_reference(theta0, 5.0)
        times = np.array(trace["time"])
        angles = np.array(trace["robots[0].config"])[:, 0]
        expected = reference.sol(times)[0]
        assert abs(angles[-1] - expected[-1]) < 5e-4
        assert np.abs(angles - expected).max() < 5e-3
        assert abs(angles[-1]) < 0.05          # near the target 0 after 5 s
