"""contact_sensor: a box dropped onto the ground (and one bouncing) — the raw state against the
Simulator's own contact queries at every step, the debounced state against a reference
debounce of that raw state, the published contacts against Simulator.getContacts, a robot
link's bumper, the rate, reset, config errors and error isolation."""
from __future__ import annotations

import numpy as np
import pytest
from plugin_helpers import (DT, GROUND, FakeRos, add_plugin, box_on_plate, run, simulator,
                            stamp, vector, write_turntable_world)
from std_msgs.msg import Bool

from sim_node.msg import Contacts
from sim_node.plugins.contact_sensor import ContactSensor


def _drop_world(tmp_path, restitution=0.0, height=0.1):
    path = tmp_path / "drop.yaml"
    path.write_text(f"""simulation: {{physics_dt: 0.001}}
rigid_objects:
  - name: box
    geometry: {{box: [0.1, 0.1, 0.1]}}
    mass: 0.5
    pose: {{position: [0.0, 0.0, {0.05 + height}], orientation: [0.0, 0.0, 0.0, 1.0]}}
    surface: {{kRestitution: {restitution}, kFriction: 0.8}}
""" + GROUND.replace("kRestitution: 0.0", f"kRestitution: {restitution}"))
    return path


def _dropping(tmp_path, restitution=0.0, **config):
    ros = FakeRos()
    sim = simulator(_drop_world(tmp_path, restitution), ros)
    sensor = add_plugin(sim, ContactSensor, None, {"rigid_object": "box", "rate": 0.0,
                                                   **config}, ros)
    world = sim.getWorld()
    return sim, ros, sensor, world.rigidObject("box").getID(), world.terrain("ground").getID()


def _record(sim, ids, seconds):
    # the Simulator's view after each step: (time, touching, contacts rows, forces)
    out = []
    for _ in range(int(round(seconds / DT))):
        sim.simulate(DT)
        out.append((sim.getTime(), sim.inContact(*ids), sim.getContacts(*ids),
                    sim.getContactForces(*ids)))
    return out


def test_raw_contact_switches_at_the_step_the_engine_reports_it(tmp_path):
    sim, ros, _, *ids = _dropping(tmp_path, debounce=0.0)
    truth = _record(sim, ids, 0.4)
    sim.simulate(DT)                        # publishes what the last recorded step found
    messages = ros.messages("bumper")[1:]   # message k + 1: the contacts of step k
    pressed = [m.data for m in ros.messages("bumper/pressed")[1:]]
    assert ros.types["bumper"] is Contacts and ros.types["bumper/pressed"] is Bool
    assert len(messages) == len(truth)
    touching = [t for _, t, _, _ in truth]
    first = touching.index(True)
    # free fall of 0.1 m (less the boundary layers): sqrt(2 h / g) = 0.143 s
    assert 0.12 < truth[first][0] < 0.15
    for message, flag, (t, inside, rows, forces) in zip(messages, pressed, truth):
        assert stamp(message) == pytest.approx(t, abs=1e-9)
        assert flag == inside                   # debounce 0: the raw state
        assert len(message.contacts) == len(rows)
        for contact, row, force in zip(message.contacts, rows, forces):
            assert (contact.entity1, contact.link1, contact.entity2) == ("box", "", "ground")
            np.testing.assert_allclose(vector(contact.position), row[:3], atol=1e-12)
            np.testing.assert_allclose(vector(contact.normal), row[3:6], atol=1e-12)
            np.testing.assert_allclose(vector(contact.force), force, atol=1e-9)
    # resting: the normal forces carry the box's weight
    total = sum(vector(c.force) for c in messages[-1].contacts)
    np.testing.assert_allclose(total, [0.0, 0.0, 0.5 * 9.81], atol=1e-3)


def _reference_debounce(times, raw, debounce):
    # what a debounce of `debounce` seconds makes of a raw sequence sampled at `times`
    state, since, out = False, None, []
    for t, r in zip(times, raw):
        if r == state:
            since = None
        else:
            since = t if since is None else since
            if t - since >= debounce - 1e-9:
                state, since = r, None
        out.append(state)
    return out


def test_a_bouncing_box_is_pressed_only_after_the_debounce_time(tmp_path):
    # restitution 0.6: contacts of 6, 13 and 31 ms, 14 ms in the air, then at rest
    sim, ros, sensor, *ids = _dropping(tmp_path, restitution=0.6, debounce=0.02)
    truth = _record(sim, ids, 1.0)
    sim.simulate(DT)
    raw = [inside for _, inside, _, _ in truth]
    times = [t for t, *_ in truth]
    pressed = [m.data for m in ros.messages("bumper/pressed")[1:]]
    assert pressed == _reference_debounce(times, raw, 0.02)
    # it bounces: short contacts that the debounce filters out, then rests
    assert sum(a != b for a, b in zip(raw, raw[1:])) >= 5
    assert sum(a != b for a, b in zip(pressed, pressed[1:])) == 1
    first, pressed_at = raw.index(True), pressed.index(True)
    assert pressed_at - first > 100                  # the first bounces did not press it
    assert all(raw[pressed_at - 20:pressed_at + 1]) and all(pressed[pressed_at:])


def test_a_robot_link_bumper_feels_a_box_put_on_it(tmp_path):
    ros = FakeRos()
    sim = simulator(write_turntable_world(tmp_path, objects=box_on_plate()), ros)
    add_plugin(sim, ContactSensor, 0, {"link": "plate", "rate": 100.0, "debounce": 0.0}, ros)
    run(sim, 0.3)
    messages = ros.messages("turntable/bumper")
    np.testing.assert_allclose([stamp(m) for m in messages], np.arange(30) * 0.01, atol=1e-9)
    last = messages[-1].contacts
    assert last and all((c.entity1, c.link1, c.entity2) == ("turntable", "plate", "weight")
                        for c in last)
    # the force on the plate: the box's weight, downwards
    np.testing.assert_allclose(sum(vector(c.force) for c in last), [0.0, 0.0, -0.4 * 9.81],
                               atol=1e-3)
    assert ros.messages("turntable/bumper/pressed")[-1].data


def test_reset_releases_and_forgets_the_last_steps_contacts(tmp_path):
    sim, ros, sensor, *ids = _dropping(tmp_path, debounce=0.01)
    run(sim, 0.4)
    assert sensor.pressed
    sim.reset()
    assert not sensor.pressed and sensor.get_state()["since"] is None
    sim.simulate(DT)
    assert ros.messages("bumper")[-1].contacts == [] and not ros.messages("bumper/pressed")[-1].data


@pytest.mark.parametrize("config, problem", [
    ("{link: plate, size: 3}", "unknown config key(s) size for plugin ContactSensor; valid "
     "keys: debounce, force_threshold, link, period, rate, rigid_object, seed, topic"),
    ("{}", "give the body as link (a link of the robot) or rigid_object"),
    ("{link: plate, rigid_object: weight}", "exactly one"),
    ("{link: plate, debounce: -0.1}", "debounce must be a time >= 0 [s], got -0.1"),
    ("{link: plate, force_threshold: -1.0}", "force_threshold must be a force >= 0 [N]"),
])
def test_bad_config_is_rejected_naming_the_problem(tmp_path, config, problem):
    path = write_turntable_world(tmp_path, f"      - {{name: contact_sensor, config: {config}}}\n")
    with pytest.raises(ValueError) as error:
        simulator(path)
    assert problem in str(error.value)


def test_a_failing_sensor_is_disabled_the_simulation_goes_on(tmp_path, monkeypatch):
    sim, ros, sensor, *ids = _dropping(tmp_path)
    run(sim, 0.01)

    def broken():
        raise RuntimeError("contact buffer gone")
    monkeypatch.setattr(sim, "getAllContacts", broken)
    run(sim, 0.3)
    assert not sensor.enabled
    assert sensor.error == "update: RuntimeError: contact buffer gone"
    assert sim.getTime() == pytest.approx(0.31)
    assert sim.inContact(*ids)                   # the box fell on regardless
