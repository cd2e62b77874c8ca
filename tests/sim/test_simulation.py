"""SimpleSimulator and the Klamp't emulators: the order and rates of the plugin phases, errors
that disable a plugin, the default sensor and actuator against direct controller calls, hooks,
controllers, state round trips and plugins named by world files."""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node.sim.plugin import make_context, parse_config
from sim_node.sim.simulation import (ActuatorEmulator, DefaultActuatorEmulator,
                                     DefaultSensorEmulator, SensorEmulator, SimpleSimulator)

REPO = Path(__file__).resolve().parents[2]
PENDULUM_URDF = REPO / "data" / "robots" / "pendulum" / "pendulum.urdf"
CONTROL_DT = 0.01


def pendulum_world():
    world = sim_node.WorldModel()
    world.readFile(REPO / "data" / "worlds" / "pendulum.yaml")
    return world


def world_from_yaml(tmp_path, text):
    path = tmp_path / "world.yaml"
    path.write_text(text)
    world = sim_node.WorldModel()
    world.readFile(path)
    return world


def configured(sim, plugin, robot, name, **config):
    """plugin configured as a world file would (entry-point name, config mapping)."""
    plugin.configure(make_context(sim, name, robot, config.get("seed")),
                     parse_config(type(plugin), config, name))
    return plugin


class RecordingSensor(SensorEmulator):
    def __init__(self, log, tag):
        self.log, self.tag = log, tag

    def reset(self, scope):
        self.log.append(("reset", self.tag, scope))

    def update(self, t=None):
        self.log.append(("update", self.tag, t))
        return {self.tag: t}


class RecordingActuator(ActuatorEmulator):
    def __init__(self, log, tag):
        self.log, self.tag = log, tag

    def reset(self, scope):
        self.log.append(("reset", self.tag, scope))

    def process(self, commands, dt):
        self.log.append(("process", self.tag, dt, dict(commands)))

    def substep(self, dt):
        self.log.append(("substep", self.tag, dt))


class RecordingBlock:
    """A Klamp't ControllerBlock: records its readings, returns fixed commands."""

    def __init__(self, log, commands=None):
        self.log, self.commands = log, commands or {}

    def output_and_advance(self, **readings):
        self.log.append(("controller", readings))
        return dict(self.commands)


class CommandBlock:
    """A ControllerBlock whose commands are a function of the readings."""

    def __init__(self, law):
        self.law = law

    def output_and_advance(self, **readings):
        return self.law(readings)


def test_one_control_step_runs_sensors_controller_actuators_then_hooks_and_substeps():
    sim = SimpleSimulator(pendulum_world())
    log = []
    sim.addEmulator(None, RecordingSensor(log, "world"))
    sim.addEmulator(0, RecordingSensor(log, "s1"))
    sim.addEmulator(0, RecordingSensor(log, "s2"))
    sim.addEmulator(0, RecordingActuator(log, "a1"))
    sim.addHook("time", lambda t: log.append(("hook", t)))
    sim.setController(0, RecordingBlock(log))
    assert [e[:3] for e in log] == [("reset", tag, "all") for tag in ("world", "s1", "s2", "a1")]
    log.clear()
    sim.setSimStep(0.001)
    dt = 0.0105
    n = math.ceil(dt / 0.001)          # 11 substeps of dt / 11
    sim.simulate(dt)
    kinds = [e[0] for e in log]
    assert kinds == ["update"] * 3 + ["controller", "process"] + ["hook", "substep"] * n
    assert [e[1] for e in log[:3]] == ["s1", "s2", "world"]     # robot 0 in order, world last
    readings = log[3][1]
    assert readings["s1"] == readings["s2"] == 0.0 and "world" not in readings
    assert "q" in readings                   # the world file's default sensor runs first
    assert log[4] == ("process", "a1", dt, {})
    h = dt / n
    assert [e[2] for e in log[6::2]] == [h] * n
    np.testing.assert_allclose([e[1] for e in log[5::2]], h * np.arange(n), rtol=0, atol=1e-15)
    assert sim.getTime() == pytest.approx(dt, abs=1e-15)


def test_process_runs_once_per_control_step_and_substep_ceil_dt_over_simstep_times():
    sim = SimpleSimulator(pendulum_world())
    log = []
    sim.addEmulator(0, RecordingActuator(log, "a"))
    sim.setSimStep(0.002)
    for dt, n in ((0.01, 5), (0.011, 6), (0.001, 1)):
        log.clear()
        sim.simulate(dt)
        assert [e[0] for e in log] == ["process"] + ["substep"] * n
        assert all(e[2] == dt / n for e in log[1:])


def test_a_sensor_with_a_period_updates_on_its_sim_time_grid_and_holds_its_readings():
    sim = SimpleSimulator(pendulum_world())
    log = []
    sim.addEmulator(0, configured(sim, RecordingSensor(log, "rated"), 0, "rated", period=0.03))
    seen = []
    sim.setController(0, CommandBlock(lambda r: seen.append(r["rated"])))
    for _ in range(10):
        sim.simulate(CONTROL_DT)
    updates = [e[2] for e in log if e[0] == "update"]
    np.testing.assert_allclose(updates, [0.0, 0.03, 0.06, 0.09], atol=1e-12)
    np.testing.assert_allclose(seen, np.repeat([0.0, 0.03, 0.06, 0.09], [3, 3, 3, 1]),
                               atol=1e-12)


def test_a_raising_sensor_is_disabled_and_the_simulation_goes_on(caplog):
    class BreaksOnSecondUpdate(SensorEmulator):
        def reset(self, scope):
            self.count = 0

        def update(self, t=None):
            self.count += 1
            if self.count == 2:
                raise RuntimeError("encoder unplugged")
            return {"extra": self.count}

    sim = SimpleSimulator(pendulum_world())
    broken = BreaksOnSecondUpdate()
    sim.addEmulator(0, broken)
    log = []
    sim.setController(0, RecordingBlock(log))
    with caplog.at_level(logging.ERROR):
        for _ in range(5):
            sim.simulate(CONTROL_DT)
    assert broken.enabled is False
    assert broken.error == "update: RuntimeError: encoder unplugged"
    assert "encoder unplugged" in caplog.text
    assert sim.getTime() == pytest.approx(5 * CONTROL_DT, abs=1e-12)
    assert [("extra" in readings) for _, readings in log] == [True] + [False] * 4
    assert all("q" in readings for _, readings in log)     # the default sensor goes on


def test_a_raising_substep_disables_the_actuator_and_physics_goes_on():
    class BadSubstep(ActuatorEmulator):
        def reset(self, scope):
            pass

        def substep(self, dt):
            raise ValueError("motor driver fault")

    reference = sim_node.Simulator(pendulum_world())
    sim = SimpleSimulator(pendulum_world())
    bad = BadSubstep()
    sim.addEmulator(0, bad)
    for s in (reference, sim):
        s.controller(0).setTorqueCommand([3.0])
    for _ in range(3):
        sim.simulate(CONTROL_DT)
        reference.simulate(CONTROL_DT)
    assert not bad.enabled and "motor driver fault" in bad.error
    np.testing.assert_array_equal(sim.getActualConfig(0), reference.getActualConfig(0))


def test_a_sensor_returning_no_dict_is_disabled():
    class NoDict(SensorEmulator):
        def reset(self, scope):
            pass

        def update(self, t=None):
            return [1.0]

    sim = SimpleSimulator(pendulum_world())
    plugin = NoDict()
    sim.addEmulator(0, plugin)
    sim.simulate(CONTROL_DT)
    assert not plugin.enabled
    assert plugin.error == "update: TypeError: update() must return a dict of readings, got list"


COMMANDS = {
    # name: (commands of the emulator at time t, the same as direct controller calls)
    "pid": (lambda t: {"qcmd": [0.4 * math.sin(5 * t)], "dqcmd": [2.0 * math.cos(5 * t)]},
            lambda c, t: c.setPIDCommand([0.4 * math.sin(5 * t)], [2.0 * math.cos(5 * t)])),
    "pid feed-forward": (lambda t: {"qcmd": [0.3], "torquecmd": [1.5 + t]},
                         lambda c, t: c.setPIDCommand([0.3], None, [1.5 + t])),
    "torque": (lambda t: {"torquecmd": [2.0 * math.sin(3 * t)]},
               lambda c, t: c.setTorqueCommand([2.0 * math.sin(3 * t)])),
    "velocity": (lambda t: {"dqcmd": [0.8], "tcmd": 0.05} if t < 0.2 else {},
                 lambda c, t: c.setVelocity([0.8], 0.05) if t < 0.2 else None),
}


@pytest.mark.parametrize("kind", COMMANDS)
def test_default_actuator_commands_give_the_trajectory_of_direct_controller_calls(kind):
    through_emulator, direct = COMMANDS[kind]
    sim = SimpleSimulator(pendulum_world())
    sim.setController(0, CommandBlock(lambda r: through_emulator(r["t"])))
    reference = sim_node.Simulator(pendulum_world())
    for _ in range(60):
        direct(reference.controller(0), reference.getTime())
        sim.simulate(CONTROL_DT)
        reference.simulate(CONTROL_DT)
        np.testing.assert_array_equal(sim.getActualConfig(0), reference.getActualConfig(0))
        np.testing.assert_array_equal(sim.getActualVelocity(0), reference.getActualVelocity(0))
    assert abs(sim.getActualConfig(0)[0]) > 0.01          # the commands moved the pendulum


def test_default_sensor_readings_are_the_controllers_sensed_and_commanded_values():
    sim = SimpleSimulator(pendulum_world())
    controller = sim.controller(0)
    checked = []

    def law(readings):
        assert readings["t"] == sim.getTime() and readings["dt"] == controller.getRate()
        np.testing.assert_array_equal(readings["q"], sim.getActualConfig(0))
        np.testing.assert_array_equal(readings["dq"], sim.getActualVelocity(0))
        np.testing.assert_array_equal(readings["qcmd"], controller.getCommandedConfig())
        np.testing.assert_array_equal(readings["dqcmd"], controller.getCommandedVelocity())
        checked.append(readings["qcmd"][0])
        t = readings["t"]
        return {"qcmd": [0.5 * math.sin(4 * t)], "dqcmd": [2.0 * math.cos(4 * t)]}

    sim.setController(0, CommandBlock(law))
    for _ in range(20):
        sim.simulate(CONTROL_DT)
    np.testing.assert_allclose(checked[1:], 0.5 * np.sin(4 * CONTROL_DT * np.arange(19)),
                               atol=1e-12)            # the commanded target of the last step
    assert abs(sim.getActualVelocity(0)[0]) > 0.1


def test_klampt_constructors_make_configured_default_emulators():
    sim = SimpleSimulator(sim_node.WorldModel())         # an empty world: no default emulators
    assert sim.getPlugins() == []
    sim = SimpleSimulator(pendulum_world())
    sensor = DefaultSensorEmulator(sim, sim.controller(0))
    assert sensor.ctx.robot == 0 and sensor.ctx.name == "default"
    readings = sensor.update()                         # Klamp't's update() without arguments
    assert readings["t"] == 0.0 and readings["q"].tolist() == [0.0]
    actuator = DefaultActuatorEmulator(sim, sim.controller(0))
    commands = {"qcmd": [0.25], "other": 1}
    actuator.process(commands, CONTROL_DT)
    assert commands == {"other": 1}
    assert sim.controller(0).getCommandedConfig().tolist() == [0.25]
    sim.addEmulator("pendulum", sensor)
    with pytest.raises(ValueError, match="already added"):
        sim.addEmulator(0, sensor)
    with pytest.raises(ValueError, match="configured for another simulator or robot"):
        SimpleSimulator(pendulum_world()).addEmulator(0, actuator)
    with pytest.raises(TypeError, match="needs a Simulator and one of its SimRobotControllers"):
        DefaultSensorEmulator(sim, None)
    with pytest.raises(TypeError, match="expected a SensorEmulator or ActuatorEmulator"):
        sim.addEmulator(0, object())


def test_a_bad_default_command_is_rejected_whole_and_the_previous_command_holds(caplog):
    sim = SimpleSimulator(pendulum_world())
    actuator = sim.getPlugins()[1]
    assert isinstance(actuator, DefaultActuatorEmulator)
    sim.controller(0).setPIDCommand([0.2])
    for bad in ({"qcmd": [0.1, 0.2]},                     # one joint
                {"qcmd": [float("nan")]},
                {"tcmd": 0.1},                              # a duration without dqcmd
                {"dqcmd": [1.0]},                           # a velocity without duration
                {"qcmd": [0.1], "tcmd": 0.1}):
        caplog.clear()
        commands = dict(bad)
        with caplog.at_level(logging.WARNING):
            actuator.process(commands, CONTROL_DT)
        assert commands == {} and "rejected" in caplog.text
        assert sim.controller(0).getCommandedConfig().tolist() == [0.2]
    assert actuator.enabled
    actuator.process({"qcmd": [0.7]}, CONTROL_DT)
    assert sim.controller(0).getCommandedConfig().tolist() == [0.7]


def test_commands_no_actuator_handles_stay_in_the_dict_and_are_reported_once(caplog):
    sim = SimpleSimulator(pendulum_world())
    log = []
    sim.addEmulator(0, RecordingActuator(log, "after_default"))
    sim.setController(0, RecordingBlock([], {"qcmd": [0.1], "gripper": 0.5}))
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            sim.simulate(CONTROL_DT)
    assert [e[3] for e in log if e[0] == "process"] == [{"gripper": 0.5}] * 3
    assert caplog.text.count("'gripper'") == 1
    assert sim.controller(0).getCommandedConfig().tolist() == [0.1]


def test_hooks_get_the_objects_they_name_at_every_substep():
    world = pendulum_world()
    sim = SimpleSimulator(world)
    link = world.robot(0).link("link1")
    marker = object()
    calls = []
    sim.addHook(["time", "ground", link, world.robot(0), "pendulum", "pendulum/link1", marker],
                lambda *args: calls.append(args))
    sim.setSimStep(0.001)
    sim.simulate(0.005)
    assert len(calls) == 5
    t, ground, body, controller, by_name, link_by_name, passed = calls[0]
    assert ground is sim.body(world.terrain(0)) and body is sim.body(link)
    assert controller is sim.controller(0) and by_name is sim.controller(0)
    assert link_by_name is body and passed is marker
    np.testing.assert_allclose([c[0] for c in calls], 0.001 * np.arange(5), atol=1e-15)
    with pytest.raises(KeyError, match="no world item named 'floor'; names: 'time', 'ground'"):
        sim.addHook("floor", print)


BOX_WORLD = """
simulation: {physics_dt: 0.001, gravity: [0.0, 0.0, -9.81]}
rigid_objects:
  - name: box
    geometry: {box: [0.1, 0.1, 0.1]}
    mass: 0.5
    pose: {position: [0.0, 0.0, 1.0], orientation: [0.0, 0.0, 0.0, 1.0]}
"""


def test_a_hook_cancelling_gravity_acts_at_every_substep_and_keeps_a_free_box_at_rest(tmp_path):
    world = world_from_yaml(tmp_path, BOX_WORLD)
    sim = SimpleSimulator(world)
    weight = 0.5 * 9.81
    sim.addHook("box", lambda box: box.applyWrench([0.0, 0.0, weight], [0.0, 0.0, 0.0]))
    for _ in range(20):
        sim.simulate(CONTROL_DT)
    w, v = sim.body(world.rigidObject(0)).getVelocity()
    assert np.max(np.abs(v)) < 1e-12 and np.max(np.abs(w)) < 1e-12
    assert sim.body(world.rigidObject(0)).getTransform()[1][2] == pytest.approx(1.0, abs=1e-12)


def test_a_force_applied_before_simulate_acts_over_all_its_substeps(tmp_path):
    world = world_from_yaml(tmp_path, BOX_WORLD)
    sim = SimpleSimulator(world)
    sim.addHook([], lambda: None)           # substeps taken one by one
    body = sim.body(world.rigidObject(0))
    body.applyWrench([0.0, 0.0, 0.5 * 9.81 / 2], [0.0, 0.0, 0.0])
    sim.simulate(CONTROL_DT)                # 10 substeps, half the weight cancelled in each
    assert body.getVelocity()[1][2] == pytest.approx(-9.81 / 2 * CONTROL_DT, rel=1e-9)
    sim.simulate(CONTROL_DT)                # and no more after that call
    assert body.getVelocity()[1][2] == pytest.approx(-9.81 * (1.5 * CONTROL_DT), rel=1e-9)


GROUND_BOX_WORLD = """
simulation: {physics_dt: 0.001, gravity: [0.0, 0.0, -9.81]}
terrains:
  - name: ground
    geometry: {plane: {normal: [0.0, 0.0, 1.0], offset: 0.0}}
rigid_objects:
  - name: box
    geometry: {box: [0.1, 0.1, 0.1]}
    mass: 0.5
    pose: {position: [0.0, 0.0, 0.07], orientation: [0.0, 0.0, 0.0, 1.0]}
"""


def test_substeps_taken_one_by_one_match_the_engines_batched_substeps_with_contact(tmp_path):
    # the box falls 2 cm onto the ground; with a hook the substeps are taken one at a time:
    # same trajectory, and the contact feedback still covers the whole control step
    plain = sim_node.Simulator(world_from_yaml(tmp_path, GROUND_BOX_WORLD))
    hooked = SimpleSimulator(world_from_yaml(tmp_path, GROUND_BOX_WORLD))
    hooked.addHook("time", lambda t: None)
    box, ground = 1, 0
    touchdown_steps = 0
    for sim in (plain, hooked):
        sim.enableContactFeedbackAll()
    for _ in range(15):
        flags = []
        for sim in (plain, hooked):
            sim.simulate(CONTROL_DT)
            flags.append((sim.inContact(box, ground), sim.hadContact(box, ground),
                          sim.hadSeparation(box, ground), sim.getStatus(),
                          sim.meanContactForce(box, ground).tolist()))
        assert flags[0] == flags[1]
        np.testing.assert_array_equal(hooked.body(box).getTransform()[1],
                                      plain.body(box).getTransform()[1])
        touchdown_steps += flags[0][0] and flags[0][2]       # touching now, apart before
    assert touchdown_steps == 1


def test_a_motion_queue_runs_the_same_with_substeps_taken_one_by_one():
    plain = sim_node.Simulator(pendulum_world())
    hooked = SimpleSimulator(pendulum_world())
    hooked.addHook([], lambda: None)
    for sim in (plain, hooked):
        sim.controller(0).setMilestone([0.8])
        sim.controller(0).addMilestone([-0.3])
    for _ in range(100):
        plain.simulate(CONTROL_DT)
        hooked.simulate(CONTROL_DT)
        np.testing.assert_array_equal(hooked.getActualConfig(0), plain.getActualConfig(0))
    assert hooked.controller(0).remainingTime() == plain.controller(0).remainingTime()


def test_a_controller_function_at_the_control_rate_brings_the_pendulum_to_its_target():
    world = pendulum_world()
    sim = SimpleSimulator(world)
    model = world.robot(0)           # the world model serves the controller's gravity model
    target, kp, kd = 0.6, 20.0, 4.0
    calls = []

    def pd_with_gravity_compensation(controller):
        q, dq = controller.getSensedConfig(), controller.getSensedVelocity()
        model.setConfig(q)
        gravity = model.getGravityForces(sim.getGravity())     # G(q): B q'' + C + G = tau
        controller.setTorqueCommand(kp * (target - q) - kd * dq + gravity)
        calls.append(sim.getTime())

    sim.setController("pendulum", pd_with_gravity_compensation)
    for _ in range(300):
        sim.simulate(CONTROL_DT)
    assert len(calls) == 300
    assert sim.getActualConfig(0)[0] == pytest.approx(target, abs=1e-3)
    assert abs(sim.getActualVelocity(0)[0]) < 1e-3


class NoisyJointSensor(SensorEmulator):
    """The joint angle with Gaussian noise from ctx.rng."""

    @dataclass(frozen=True, kw_only=True)
    class Config(SensorEmulator.Config):
        sigma: float = 0.01

    def reset(self, scope):
        pass

    def update(self, t=None):
        q = self.ctx.controller.getSensedConfig()
        return {"q_noisy": q + self.ctx.rng.normal(0.0, self.config.sigma, size=q.shape)}


class LagTorqueActuator(ActuatorEmulator):
    """A motor with a first-order lag (time constant 20 ms) on its torque command 'lagtorque',
    integrated at every substep."""

    def reset(self, scope):
        self.target, self.output = 0.0, 0.0

    def process(self, commands, dt):
        if "lagtorque" in commands:
            self.target = float(commands.pop("lagtorque"))

    def substep(self, dt):
        self.output += (self.target - self.output) * dt / 0.02
        self.ctx.controller.setTorqueCommand([self.output])

    def get_state(self):
        return {"target": self.target, "output": self.output}

    def set_state(self, state):
        self.target, self.output = state["target"], state["output"]


class IntegratingController:
    """PID on the noisy angle; its integral is its state."""

    def __init__(self):
        self.integral = 0.0

    def output_and_advance(self, q_noisy, dq, dt, **_):
        error = 0.5 - q_noisy[0]
        self.integral += error * dt
        return {"lagtorque": 15.0 * error + 3.0 * self.integral - 1.5 * dq[0]}

    def get_state(self):
        return {"integral": self.integral}

    def set_state(self, state):
        self.integral = state["integral"]


def stateful_simulation(seed=3):
    sim = SimpleSimulator(pendulum_world())
    sim.addEmulator(0, configured(sim, NoisyJointSensor(), 0, "noisy", seed=seed, period=0.02,
                                  sigma=0.02))
    sim.addEmulator(0, LagTorqueActuator())
    sim.setController(0, IntegratingController())
    return sim


def run(sim, steps):
    out = []
    for _ in range(steps):
        sim.simulate(CONTROL_DT)
        out.append(np.concatenate([sim.getActualConfig(0), sim.getActualVelocity(0)]))
    return np.array(out)


def test_set_state_continues_bit_for_bit_with_emulator_and_controller_state():
    sim = stateful_simulation()
    run(sim, 17)                         # odd: the noisy sensor holds readings of 10 ms ago
    state = sim.getState()
    lag = sim.getPlugins()[3]            # sensors: default, noisy; actuators: default, lag
    saved_output = lag.output
    first = run(sim, 30)
    assert lag.output != saved_output
    sim.setState(state)
    assert lag.output == saved_output
    np.testing.assert_array_equal(run(sim, 30), first)
    fresh = stateful_simulation()
    fresh.setState(state)
    np.testing.assert_array_equal(run(fresh, 30), first)


def test_the_noise_stream_is_part_of_the_state():
    # another seed gives another trajectory: the noise matters, so the previous test checks
    # that its generator state is restored
    a, b = stateful_simulation(seed=3), stateful_simulation(seed=4)
    assert not np.array_equal(run(a, 30), run(b, 30))


def test_reset_resets_every_plugin_and_repeats_the_run():
    sim = stateful_simulation()
    log = []
    sim.addEmulator(0, RecordingActuator(log, "rec"))
    first = run(sim, 30)
    sim.reset()
    assert sim.getTime() == 0.0 and ("reset", "rec", "all") in log[1:]
    np.testing.assert_array_equal(run(sim, 30), first)


def test_a_state_of_other_plugins_is_rejected_and_changes_nothing():
    sim = stateful_simulation()
    other = SimpleSimulator(pendulum_world())
    run(other, 5)
    state = other.getState()
    run(sim, 3)
    with pytest.raises(ValueError, match="the state is of plugins"):
        sim.setState(state)
    assert sim.getTime() == pytest.approx(0.03, abs=1e-12)


def test_a_plain_simulator_state_resets_the_plugins():
    plain = sim_node.Simulator(pendulum_world())
    plain.simulate(0.1)
    sim = stateful_simulation()
    log = []
    sim.addEmulator(0, RecordingActuator(log, "rec"))
    sim.setState(plain.getState())
    assert sim.getTime() == pytest.approx(0.1, abs=1e-12)
    assert log.count(("reset", "rec", "all")) == 2


def world_with_plugins(tmp_path, plugins):
    return world_from_yaml(tmp_path, f"""
simulation: {{physics_dt: 0.001}}
robots:
  - name: first
    urdf: {PENDULUM_URDF}
    plugins: {plugins}
  - name: second
    urdf: {PENDULUM_URDF}
    pose: {{position: [2.0, 0.0, 0.0], orientation: [0.0, 0.0, 0.0, 1.0]}}
""")


def test_world_file_plugins_are_loaded_by_entry_point_name(tmp_path):
    world = world_with_plugins(tmp_path, "[{name: default, config: {seed: 7}}]")
    sim = SimpleSimulator(world)
    plugins = sim.getPlugins()
    kinds = [(type(p), p.ctx.robot) for p in plugins]
    assert kinds == [(DefaultSensorEmulator, 0), (DefaultSensorEmulator, 1),
                     (DefaultActuatorEmulator, 0), (DefaultActuatorEmulator, 1)]
    first_sensor = plugins[0]
    assert first_sensor.ctx.name == "default" and first_sensor.config.seed == 7
    np.testing.assert_array_equal(first_sensor.ctx.rng.normal(size=3),
                                  np.random.default_rng(7).normal(size=3))
    block = RecordingBlock([], {"qcmd": [0.3]})
    sim.setController("first", block)
    sim.simulate(CONTROL_DT)
    assert block.log[0][1]["q"].tolist() == [0.0]
    assert sim.controller(0).getCommandedConfig().tolist() == [0.3]


def test_an_unknown_world_file_plugin_lists_the_available_ones(tmp_path):
    world = world_with_plugins(tmp_path, "[{name: sonar}]")
    with pytest.raises(LookupError) as info:
        SimpleSimulator(world)
    message = str(info.value)
    assert message.startswith("robot 'first' plugins[0] ('sonar'): no sensor or actuator plugin")
    assert re.search(r"sensors \(sim_node\.sensors\): [a-z_, ]*\bdefault\b", message)
    assert re.search(r"actuators \(sim_node\.actuators\): [a-z_, ]*\bdefault\b", message)


def test_a_name_in_both_groups_gives_each_plugin_the_config_keys_it_declares(tmp_path):
    world = world_with_plugins(tmp_path, "[{name: default, config: {period: 0.02, seed: 5}}]")
    sensor, _, actuator, _ = SimpleSimulator(world).getPlugins()
    assert sensor.config == DefaultSensorEmulator.Config(period=0.02, seed=5)
    assert actuator.config == DefaultActuatorEmulator.Config(seed=5)


@pytest.mark.parametrize("plugins, message", [
    ("[{name: default, config: {sead: 7}}]",
     r"robot 'first' plugins\[0\] \('default'\): unknown config key\(s\) sead for plugins "
     r"DefaultSensorEmulator, DefaultActuatorEmulator; valid keys: period, seed"),
    ("[{name: default, config: {period: -1.0}}]",
     r"robot 'first' plugins\[0\] \('default'\): bad config for plugin DefaultSensorEmulator: "
     r"period must be a time >= 0 \[s\], got -1.0"),
    ("[{name: default, config: {seed: 0.5}}]",
     r"robot 'first' plugins\[0\] \('default'\): config key 'seed' of plugin "
     r"DefaultSensorEmulator must be int or null, got 0.5"),
])
def test_a_bad_world_file_plugin_config_names_the_place_and_the_key(tmp_path, plugins, message):
    with pytest.raises(ValueError, match=message):
        SimpleSimulator(world_with_plugins(tmp_path, plugins))


def test_close_shuts_the_plugins_down_in_reverse_order():
    class Closing(ActuatorEmulator):
        def __init__(self, log, tag):
            self.log, self.tag = log, tag

        def reset(self, scope):
            pass

        def shutdown(self):
            self.log.append(self.tag)

    sim = SimpleSimulator(pendulum_world())
    log = []
    for tag in ("a", "b"):
        sim.addEmulator(0, Closing(log, tag))
    sim.close()
    assert log == ["b", "a"] and sim.getPlugins() == []
    sim.simulate(CONTROL_DT)


def test_robots_added_and_removed_bring_and_take_their_plugins(tmp_path):
    world = sim_node.WorldModel()
    world.readFile(REPO / "data" / "worlds" / "pendulum.yaml")
    sim = SimpleSimulator(world)
    first = sim.getPlugins()
    assert [type(p) for p in first] == [DefaultSensorEmulator, DefaultActuatorEmulator]
    second = sim_node.WorldModel().loadRobot(str(PENDULUM_URDF), name="second")
    second.world = None
    sim.addEntity(second)
    plugins = sim.getPlugins()
    assert len(plugins) == 4 and plugins[0] is first[0] and plugins[2] is first[1]
    assert [p.ctx.robot for p in plugins] == [0, 1, 0, 1]
    assert plugins[1].ctx.controller is sim.controller("second")
    sim.simulate(0.01)
    sim.removeEntity(world.robot("pendulum"))
    left = sim.getPlugins()
    assert left == [plugins[1], plugins[3]] and [p.ctx.robot for p in left] == [0, 0]
    readings = left[0].update()
    assert np.array_equal(readings["q"], sim.controller("second").getSensedConfig())
