"""The plugin lifecycle pieces: config parsing, entry-point discovery, guarded calls, seeded
contexts."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import sim_node
from sim_node.sim.plugin import (ACTUATOR_GROUP, SENSOR_GROUP, Plugin, PluginConfig,
                                 available_plugins, call_guarded, derive_seed,
                                 load_plugin_class, make_context, parse_config, reseed)
from sim_node.sim.simulation import DefaultActuatorEmulator, DefaultSensorEmulator

REPO = Path(__file__).resolve().parents[2]


class Configured(Plugin):
    @dataclass(frozen=True, kw_only=True)
    class Config(PluginConfig):
        gain: float
        count: int = 3
        verbose: bool = False
        label: str = "x"
        offsets: tuple[float, ...] = (0.0,)
        limit: float | None = None

        def __post_init__(self):
            if self.gain < 0:
                raise ValueError(f"gain must be >= 0, got {self.gain}")

    def reset(self, scope):
        pass


class Failing(Plugin):
    def reset(self, scope):
        pass

    def update(self, t=None):
        raise RuntimeError(f"sensor broke at t={t}")


def test_config_values_are_converted_to_the_declared_types():
    config = parse_config(Configured, {"gain": 2, "count": 5, "verbose": True, "label": "a",
                                       "offsets": [1, 2.5], "limit": None, "seed": 9}, "here")
    assert config == Configured.Config(gain=2.0, count=5, verbose=True, label="a",
                                       offsets=(1.0, 2.5), limit=None, seed=9)
    assert type(config.gain) is float and type(config.offsets) is tuple


def test_config_defaults_fill_keys_not_given():
    assert parse_config(Configured, {"gain": 1.5}, "here") == Configured.Config(gain=1.5)
    assert parse_config(DefaultSensorEmulator, None, "here") == DefaultSensorEmulator.Config()


def test_unknown_config_key_names_the_place_the_key_and_the_valid_keys():
    with pytest.raises(ValueError) as info:
        parse_config(Configured, {"gain": 1.0, "gian": 2.0}, "robot 'arm' plugins[1]")
    message = str(info.value)
    assert "robot 'arm' plugins[1]" in message and "gian" in message
    assert "valid keys: count, gain, label, limit, offsets, seed, verbose" in message


@pytest.mark.parametrize("key, value, expected", [
    ("count", True, "int"),             # a bool is not an int
    ("count", 2.5, "int"),
    ("gain", "fast", "float"),
    ("gain", float("nan"), "float"),
    ("verbose", 1, "bool"),
    ("label", 3, "str"),
    ("offsets", [1.0, "a"], "list of float"),
    ("offsets", 1.0, "list of float"),
    ("seed", 1.5, "int or null"),
    ("count", None, "int"),             # not optional
])
def test_config_value_of_the_wrong_type_names_the_key_and_the_type(key, value, expected):
    mapping = {"gain": 1.0, key: value}
    with pytest.raises(ValueError) as info:
        parse_config(Configured, mapping, "where")
    message = str(info.value)
    assert message.startswith("where: ") and f"'{key}'" in message
    assert f"must be {expected}, got {value!r}" in message


def test_missing_required_config_key_is_named():
    with pytest.raises(ValueError, match=r"where: plugin Configured needs config key 'gain' "
                                         r"\(float\)"):
        parse_config(Configured, {}, "where")


def test_config_checks_of_the_dataclass_are_reported_with_the_place():
    with pytest.raises(ValueError, match=r"where: bad config for plugin Configured: gain must "
                                         r"be >= 0"):
        parse_config(Configured, {"gain": -1.0}, "where")


def test_config_must_be_a_mapping():
    with pytest.raises(ValueError, match="where: the config of plugin Configured must be a "
                                         "mapping, got list"):
        parse_config(Configured, [1, 2], "where")


def test_unsupported_config_field_type_is_a_plugin_error():
    class Odd(Plugin):
        @dataclass(frozen=True)
        class Config:
            table: dict

        def reset(self, scope):
            pass

    with pytest.raises(TypeError, match="Config.table: unsupported type"):
        parse_config(Odd, {}, "where")


def test_entry_points_register_the_default_emulators():
    assert "default" in available_plugins(SENSOR_GROUP)
    assert "default" in available_plugins(ACTUATOR_GROUP)
    assert load_plugin_class(SENSOR_GROUP, "default") is DefaultSensorEmulator
    assert load_plugin_class(ACTUATOR_GROUP, "default") is DefaultActuatorEmulator


def test_unknown_plugin_name_lists_the_available_names():
    with pytest.raises(LookupError) as info:
        load_plugin_class(SENSOR_GROUP, "sonar")
    assert "no plugin named 'sonar' in sim_node.sensors" in str(info.value)
    assert "default" in str(info.value).split("available: ")[1]


def test_unknown_plugin_group_lists_the_groups():
    with pytest.raises(ValueError, match="unknown plugin group 'sim_node.motors'; groups: "
                                         "sim_node.sensors, sim_node.actuators"):
        load_plugin_class("sim_node.motors", "default")


def test_reset_is_required_of_every_plugin():
    class NoReset(Plugin):
        pass

    with pytest.raises(TypeError, match="reset"):
        NoReset()


def test_stateless_plugin_rejects_a_state():
    plugin = Configured()
    assert plugin.get_state() == {}
    plugin.set_state({})
    with pytest.raises(ValueError, match="Configured is stateless"):
        plugin.set_state({"x": 1})


def test_a_raising_plugin_method_disables_the_plugin_records_and_logs_the_error(caplog):
    plugin = Failing()
    with caplog.at_level(logging.ERROR):
        assert call_guarded(plugin, plugin.update, 0.25) is None
    assert plugin.enabled is False
    assert plugin.error == "update: RuntimeError: sensor broke at t=0.25"
    assert "sensor broke at t=0.25" in caplog.text and "disabled" in caplog.text
    assert plugin.calls == 1
    assert call_guarded(plugin, plugin.update, 0.5) is None      # no longer called
    assert plugin.calls == 1


def test_guarded_calls_are_counted_and_timed():
    plugin = Configured()
    for _ in range(3):
        assert call_guarded(plugin, plugin.update, 0.0) == {}
    assert plugin.enabled and plugin.error is None
    assert plugin.calls == 3 and plugin.total_time > 0.0
    assert Configured.calls == 0          # counters are per instance


def test_derived_seed_is_the_same_in_another_process_and_differs_per_robot_and_ordinal():
    seeds = [derive_seed("imu", "arm"), derive_seed("imu", "base"), derive_seed("imu", "arm", 1),
             derive_seed("imu", None)]
    assert len(set(seeds)) == 4
    code = ("from sim_node.sim.plugin import derive_seed; print(derive_seed('imu', 'arm'), "
            "derive_seed('imu', None))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONHASHSEED="12345")).stdout.split()
    assert [int(s) for s in out] == [seeds[0], seeds[3]]


def test_context_generator_draws_the_seeded_stream_and_reseed_restarts_it():
    world = sim_node.WorldModel()
    world.readFile(REPO / "data" / "worlds" / "pendulum.yaml")
    sim = sim_node.Simulator(world)
    ctx = make_context(sim, "noise", 0, seed=42)
    assert ctx.robot == 0 and ctx.controller is sim.controller(0) and ctx.name == "noise"
    assert ctx.create_publisher is None and ctx.create_subscription is None
    assert ctx.logger.name == "sim_node.plugins.pendulum.noise"
    first = ctx.rng.normal(size=5)
    np.testing.assert_array_equal(first, np.random.default_rng(42).normal(size=5))
    reseed(ctx)
    np.testing.assert_array_equal(ctx.rng.normal(size=5), first)
    derived = make_context(sim, "noise", 0)
    assert derived.seed == derive_seed("noise", "pendulum")
    world_ctx = make_context(sim, "noise", None)
    assert world_ctx.controller is None and world_ctx.seed == derive_seed("noise", None)


# every float setting of the shipped plugins that is a rate, a noise level, a limit or a time:
# NaN and negative values are refused, the key named (world files reach these through YAML)
_NON_NEGATIVE = ("rate", "period", "noise", "std", "threshold", "debounce", "timeout", "radius",
                 "separation")
_REQUIRED = {"imu": {"link": "base"}, "contact_sensor": {"link": "base"},
             "force_torque": {"joint": "j"}, "diff_drive": {"left_joint": "l", "right_joint": "r"},
             "lidar": {"link": "base"}, "camera": {"link": "base"}}


def _shipped_float_keys():
    import dataclasses
    import typing

    cases = []
    for group in (SENSOR_GROUP, ACTUATOR_GROUP):
        for name in available_plugins(group):
            cls = load_plugin_class(group, name)
            if not cls.__module__.startswith("sim_node.plugins"):
                continue
            hints = typing.get_type_hints(cls.Config)
            for field in dataclasses.fields(cls.Config):
                if hints[field.name] is float and any(w in field.name for w in _NON_NEGATIVE):
                    cases.append((group, name, field.name))
    return cases


@pytest.mark.parametrize("group, name, key", _shipped_float_keys())
@pytest.mark.parametrize("value", [float("nan"), -1.0, float("inf")])
def test_shipped_plugins_refuse_nan_negative_and_infinite_rates_noise_and_limits(group, name,
                                                                                  key, value):
    cls = load_plugin_class(group, name)
    mapping = dict(_REQUIRED.get(name, {}), **{key: value})
    with pytest.raises(ValueError, match=rf"'{name}'.*\b{key}\b"):
        parse_config(cls, mapping, f"robot 'r' plugins[0] ('{name}')")


def test_the_shipped_float_settings_are_all_covered():
    keys = {key for _, _, key in _shipped_float_keys()}
    assert {"rate", "accelerometer_noise", "gyro_bias_std", "force_noise", "debounce",
            "force_threshold", "cmd_timeout", "wheel_radius", "position_noise"} <= keys


@pytest.mark.parametrize("bias", [[float("nan"), 0.0, 0.0], [0.0, float("inf"), 0.0]])
def test_non_finite_list_settings_are_refused_with_the_key_named(bias):
    cls = load_plugin_class(SENSOR_GROUP, "imu")
    with pytest.raises(ValueError, match="config key 'gyro_bias'"):
        parse_config(cls, {"link": "base", "gyro_bias": bias}, "imu")


@pytest.mark.parametrize("seed", [-1, 2 ** 64])
def test_a_seed_outside_the_generators_range_is_refused_with_the_key_named(seed):
    with pytest.raises(ValueError, match=r"config key 'seed' .* \[0, 2\^64\)"):
        parse_config(Configured, {"gain": 1.0, "seed": seed}, "here")
