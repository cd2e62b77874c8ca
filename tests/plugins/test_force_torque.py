"""force_torque: the wrench through a joint of a robot holding still equals what Pinocchio's RNEA
gives for the same configuration (the weight of the distal subtree and its moment) and, with a
box resting on the turntable, the closed-form load of the plate; a swinging pendulum against
RNEA at its measured motion; direction, noise, rate, reset and config errors."""
from __future__ import annotations

import numpy as np
import pinocchio
import pytest
from plugin_helpers import (CARRIAGE_MASS, CARRIAGE_ORIGIN, DT, G, PENDULUM_WORLD, PLATE_MASS,
                            PLATE_OFFSET, REPO, FakeRos, add_plugin, box_on_plate, run,
                            simulator, stamp, vector, write_turntable_world)
from geometry_msgs.msg import WrenchStamped

from sim_node.plugins.force_torque import ForceTorqueSensor

ARM_URDF = REPO / "data" / "robots" / "arm7" / "arm7.urdf"
PENDULUM_URDF = REPO / "data" / "robots" / "pendulum" / "pendulum.urdf"
# the default world's arm gains and "ready" pose (data/worlds/default.yaml)
ARM_WORLD = f"""simulation: {{physics_dt: 0.001}}
robots:
  - name: arm
    urdf: {ARM_URDF}
    namespace: arm
    fixed_base: true
    pose: {{position: [0.0, 0.0, 0.5], orientation: [0.0, 0.0, 0.0, 1.0]}}
    initial_config: {{joint1: 0.3, joint2: 0.5, joint3: 0.2, joint4: -1.5, joint5: 0.4,
                     joint6: 1.14, joint7: 0.0, finger_joint1: 0.04}}
    controller:
      kp: {{joint1: 400.0, joint2: 2000.0, joint3: 400.0, joint4: 1000.0, joint5: 100.0,
           joint6: 100.0, joint7: 50.0, finger_joint1: 500.0}}
      ki: {{joint1: 100.0, joint2: 2000.0, joint3: 400.0, joint4: 1000.0, joint5: 100.0,
           joint6: 100.0, joint7: 50.0, finger_joint1: 0.0}}
      kd: {{joint1: 5.0, joint2: 60.0, joint3: 2.5, joint4: 20.0, joint5: 0.8,
           joint6: 2.0, joint7: 0.3, finger_joint1: 5.0}}
    self_collision: false
"""


def _rnea_wrench(urdf, joint_names, q, dq, ddq, joint) -> np.ndarray:
    """Pinocchio's (force, torque) from the parent onto the child of `joint`, in the joint
    frame (= the child link frame), at joint positions q, velocities dq, accelerations ddq
    (dicts by joint name; missing: 0); gravity (0, 0, -9.81)."""
    model = pinocchio.buildModelFromUrdf(str(urdf))
    model.gravity.linear = np.array([0.0, 0.0, -G])
    data = model.createData()
    qp, vp, ap = pinocchio.neutral(model), np.zeros(model.nv), np.zeros(model.nv)
    for name in joint_names:
        j = model.joints[model.getJointId(name)]
        if j.nq == 2:                               # continuous: (cos q, sin q)
            qp[j.idx_q:j.idx_q + 2] = np.cos(q[name]), np.sin(q[name])
        else:
            qp[j.idx_q] = q[name]
        vp[j.idx_v], ap[j.idx_v] = dq.get(name, 0.0), ddq.get(name, 0.0)
    pinocchio.rnea(model, data, qp, vp, ap)
    f = data.f[model.getJointId(joint)]
    return np.concatenate([f.linear, f.angular])


@pytest.mark.parametrize("joint", ["joint2", "joint4", "joint6"])
def test_a_robot_holding_still_measures_the_weight_of_the_distal_subtree(tmp_path, joint):
    path = tmp_path / "arm.yaml"
    path.write_text(ARM_WORLD)
    ros = FakeRos()
    sim = simulator(path, ros)
    add_plugin(sim, ForceTorqueSensor, 0, {"joint": joint, "rate": 0.0}, ros)
    run(sim, 3.0)                                   # the PID's integral removes the sag
    names = sim.getWorld().robot(0).getJointNames()
    assert np.abs(sim.getActualVelocity(0)).max() < 2e-3
    sim.simulate(DT)
    q = dict(zip(names, sim.getActualConfig(0)))
    message = ros.messages("arm/wrench")[-1]
    expected = _rnea_wrench(ARM_URDF, names, q, {}, {}, joint)
    measured = np.concatenate([vector(message.wrench.force), vector(message.wrench.torque)])
    # the arm still creeps (< 2e-3 rad/s) as the integral settles: 0.05 N, N m of dynamics
    np.testing.assert_allclose(measured, expected, atol=0.05)
    assert message.header.frame_id == f"arm/link{joint[-1]}"
    assert np.linalg.norm(measured[:3]) > 5.0       # a real load


def test_the_contact_of_a_box_on_the_plate_adds_its_weight(tmp_path):
    # static: the spin joint carries plate + carriage + box; moment about the joint origin
    # (0, 0, 0.5): (0, -g sum m_i x_i, 0) for centres of mass (or the box's contact) at x_i
    box = 0.4
    ros = FakeRos()
    sim = simulator(write_turntable_world(tmp_path, objects=box_on_plate(box, x=0.3)), ros)
    add_plugin(sim, ForceTorqueSensor, 0, {"joint": "spin", "rate": 0.0}, ros)
    run(sim, 1.0)
    message = ros.messages("turntable/wrench")[-1]
    moment = PLATE_MASS * PLATE_OFFSET + CARRIAGE_MASS * CARRIAGE_ORIGIN[0] + box * 0.3
    np.testing.assert_allclose(vector(message.wrench.force),
                               [0.0, 0.0, (PLATE_MASS + CARRIAGE_MASS + box) * G], atol=2e-3)
    np.testing.assert_allclose(vector(message.wrench.torque), [0.0, -G * moment, 0.0],
                               atol=2e-3)
    assert ros.types["turntable/wrench"] is WrenchStamped


PENDULUM_MASS, PENDULUM_COM = 1.0, 0.441535433071         # pendulum.urdf: kg, m below the pivot
PENDULUM_INERTIA = np.diag([0.0170399652799, 0.0170399652799, 0.000798031496063])


def _pendulum_momentum(q: float, dq: float):
    """(R_y(q), linear momentum, angular momentum about the pivot) in world axes, closed form."""
    c, s = np.cos(q), np.sin(q)
    R = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    r = R @ [0.0, 0.0, -PENDULUM_COM]
    w = np.array([0.0, dq, 0.0])
    v = np.cross(w, r)
    return R, r, PENDULUM_MASS * v, PENDULUM_MASS * np.cross(r, v) + R @ PENDULUM_INERTIA @ R.T @ w


def test_a_swinging_pendulum_measures_the_momentum_change_of_its_link():
    # free swing from 1.2 rad: F = dP/dt - m g, T_pivot = dL/dt - r x m g over each step, in the
    # link's axes, from the URDF's mass, centre of mass and inertia
    ros = FakeRos()
    sim = simulator(PENDULUM_WORLD, ros)
    add_plugin(sim, ForceTorqueSensor, 0, {"joint": "joint1", "rate": 0.0}, ros)
    sim.controller(0).setJointCommands(["joint1"], "torque", tfeedforward=[0.0])
    sim.setActualConfig(0, [1.2])
    states = []
    for _ in range(400):
        states.append((sim.getActualConfig(0)[0], sim.getActualVelocity(0)[0]))
        sim.simulate(DT)
    messages = ros.messages("pendulum/wrench")
    assert len(messages) == len(states)
    weight = np.array([0.0, 0.0, -G * PENDULUM_MASS])
    for k in range(1, len(states)):
        _, _, P0, L0 = _pendulum_momentum(*states[k - 1])
        R, r, P1, L1 = _pendulum_momentum(*states[k])
        force = (P1 - P0) / DT - weight
        torque = (L1 - L0) / DT - np.cross(r, weight)
        np.testing.assert_allclose(vector(messages[k].wrench.force), R.T @ force, atol=1e-9)
        np.testing.assert_allclose(vector(messages[k].wrench.torque), R.T @ torque, atol=1e-9)
    # and the physics: nothing about the free joint's axis, RNEA's centripetal load
    q, dq = states[-1]
    ddq = (dq - states[-2][1]) / DT
    expected = _rnea_wrench(PENDULUM_URDF, ["joint1"], {"joint1": q}, {"joint1": dq},
                            {"joint1": ddq}, "joint1")
    measured = np.concatenate([vector(messages[-1].wrench.force),
                               vector(messages[-1].wrench.torque)])
    assert abs(dq) > 3.0
    # the step's difference is centred half a step back and turns by dq dt over it:
    # O(m l (dq ddq + dq^3) dt)
    np.testing.assert_allclose(measured, expected, atol=PENDULUM_MASS * PENDULUM_COM * DT
                               * (abs(dq * ddq) + abs(dq) ** 3) + 1e-3)


def _turntable_sensors(tmp_path, *configs):
    ros = FakeRos()
    sim = simulator(write_turntable_world(tmp_path, objects=box_on_plate(0.4, x=0.3)), ros)
    sensors = [add_plugin(sim, ForceTorqueSensor, 0, {"joint": "spin", **c}, ros)
               for c in configs]
    return sim, ros, sensors


def test_child_to_parent_is_the_opposite_and_the_rate_is_a_sim_time_grid(tmp_path):
    sim, ros, _ = _turntable_sensors(tmp_path, {"rate": 0.0},
                                     {"rate": 50.0, "measure_direction": "child_to_parent",
                                      "topic": "reaction", "frame_id": "ft"})
    sim.controller(0).setJointCommands(["spin"], "torque", tfeedforward=[1.0])
    run(sim, 0.2)
    every = {round(stamp(m), 6): m for m in ros.messages("turntable/wrench")}
    slow = ros.messages("turntable/reaction")
    np.testing.assert_allclose([stamp(m) for m in slow], np.arange(10) * 0.02, atol=1e-9)
    for message in slow:
        reference = every[round(stamp(message), 6)]
        assert message.header.frame_id == "ft"
        np.testing.assert_array_equal(vector(message.wrench.force),
                                      -vector(reference.wrench.force))
        np.testing.assert_array_equal(vector(message.wrench.torque),
                                      -vector(reference.wrench.torque))
    # the spin joint transmits the driving torque (no joint friction): 1 N m about z
    assert vector(every[0.1].wrench.torque)[2] == pytest.approx(1.0, abs=1e-3)


def test_noise_is_seeded_with_the_configured_std(tmp_path):
    sim, ros, _ = _turntable_sensors(tmp_path, {"force_noise": 0.5, "torque_noise": 0.1,
                                                "seed": 3, "rate": 0.0})
    run(sim, 0.5)                                   # settled: the box rests from 0.05 s on
    sim_ros = ros
    run(sim, 2.0)
    messages = sim_ros.messages("turntable/wrench")[-2000:]
    force = np.array([vector(m.wrench.force) for m in messages])
    torque = np.array([vector(m.wrench.torque) for m in messages])
    n = len(messages)
    for samples, std in ((force, 0.5), (torque, 0.1)):
        np.testing.assert_allclose(samples.std(axis=0, ddof=1), std,
                                   atol=5 * std / np.sqrt(2 * (n - 1)))
    np.testing.assert_allclose(force.mean(axis=0), [0.0, 0.0, 2.9 * G],
                               atol=5 * 0.5 / np.sqrt(n))


def test_reset_forgets_the_last_sample(tmp_path):
    sim, ros, [sensor] = _turntable_sensors(tmp_path, {"rate": 100.0})
    sim.controller(0).setJointCommands(["spin"], "torque", tfeedforward=[1.0])
    run(sim, 0.05)
    first = ros.messages("turntable/wrench")
    sim.reset()
    assert sensor.get_state()["previous"] is None and sensor.get_state()["readings"] == {}
    sim.controller(0).setJointCommands(["spin"], "torque", tfeedforward=[1.0])
    run(sim, 0.05)
    second = ros.messages("turntable/wrench")[len(first):]
    assert [stamp(m) for m in second] == [stamp(m) for m in first]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(vector(a.wrench.force), vector(b.wrench.force))


@pytest.mark.parametrize("config, problem", [
    ("{joint: spin, offset: 1.0}", "unknown config key(s) offset for plugin "
     "ForceTorqueSensor; valid keys: force_noise, frame_id, joint, measure_direction, period, "
     "rate, seed, topic, torque_noise"),
    ("{joint: spin, measure_direction: up}",
     "measure_direction must be one of parent_to_child, child_to_parent, got 'up'"),
    ("{joint: spin, torque_noise: -0.1}", "torque_noise must be a standard deviation >= 0"),
])
def test_bad_config_is_rejected_naming_the_problem(tmp_path, config, problem):
    path = write_turntable_world(tmp_path, f"      - {{name: force_torque, config: {config}}}\n")
    with pytest.raises(ValueError) as error:
        simulator(path)
    assert problem in str(error.value)


def test_an_unknown_joint_disables_the_sensor_naming_the_joints(tmp_path):
    path = write_turntable_world(tmp_path, "      - {name: force_torque, config: {joint: x}}\n")
    sim = simulator(path)
    [sensor] = sim.getPlugins()
    assert not sensor.enabled
    assert "has no joint 'x'; joints: spin, slide, imu_mount" in sensor.error
