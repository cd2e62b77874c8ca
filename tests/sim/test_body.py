"""SimBody (seed 002, "playing God"): placement and velocity, applied forces over one simulate()
call, kinematic bodies, enabling, surface and padding, what cannot be moved."""
import math

import numpy as np
import pytest
from scene_helpers import REPO, ground, quat_about, world_from_yaml
from transforms3d.euler import euler2mat

import sim_node

G = 9.81


def objects_world(tmp_path, extra=""):
    return world_from_yaml(ground() + """rigid_objects:
  - name: brick
    geometry: {box: [0.4, 0.2, 0.1]}
    mass: 3.0
    pose: {position: [0, 0, 2.0]}
  - name: ball
    geometry: {sphere: 0.05}
    mass: 0.5
    pose: {position: [1.0, 0, 0.0505]}
""" + extra, tmp_path)


def test_forces_act_over_the_next_simulate_call_only(tmp_path):
    world = objects_world(tmp_path)
    sim = sim_node.Simulator(world)
    sim.setGravity((0, 0, 0))
    brick = sim.body(world.rigidObject("brick"))
    # box 0.4 x 0.2 x 0.1, 3 kg: Iz = m (a^2 + b^2) / 12
    Iz = 3.0 * (0.4 ** 2 + 0.2 ** 2) / 12
    com = brick.getTransform()[1]
    brick.applyForceAtPoint([0, 6.0, 0], com + [0.2, 0, 0])     # torque +1.2 N m about z
    sim.simulate(0.01)
    w, v = brick.getVelocity()
    assert np.allclose(v, [0, 6.0 / 3.0 * 0.01, 0], atol=1e-12)
    assert np.allclose(w, [0, 0, 1.2 / Iz * 0.01], atol=1e-12)
    sim.simulate(0.01)                               # no force any more: constant velocities
    assert np.allclose(brick.getVelocity()[1], v, atol=1e-12)
    assert brick.getVelocity()[0][2] == pytest.approx(w[2], rel=1e-12)


def test_local_points_and_wrenches_use_the_centre_of_mass_frame(tmp_path):
    world = objects_world(tmp_path)
    brick = world.rigidObject("brick")
    brick.setMass(sim_node.Mass(3.0, com=(0.1, 0.0, 0.0), inertia=[0.05, 0.05, 0.05]))
    R = euler2mat(0, 0, 0.5)
    brick.setTransform(R, [0, 0, 2.0])
    sim = sim_node.Simulator(world)
    sim.setGravity((0, 0, 0))
    body = sim.body(brick)
    R_b, com = body.getTransform()
    R_o, origin = body.getObjectTransform()
    assert np.allclose(R_b, R) and np.allclose(R_o, R)
    assert np.allclose(origin, [0, 0, 2.0]) and np.allclose(com, [0, 0, 2.0] + R @ [0.1, 0, 0])
    body.applyForceAtLocalPoint([0, 0, 3.0], [0, 0.1, 0])      # lever R (0, 0.1, 0)
    body.applyWrench([3.0, 0, 0], [0, 0, 0.05])
    sim.simulate(0.01)
    w, v = body.getVelocity()
    torque = np.cross(R @ [0, 0.1, 0], [0, 0, 3.0]) + [0, 0, 0.05]
    assert np.allclose(v, np.array([3.0, 0, 3.0]) / 3.0 * 0.01, atol=1e-12)
    assert np.allclose(w, torque / 0.05 * 0.01, atol=1e-12)


def test_a_force_on_a_robot_link_drives_its_joint(tmp_path):
    world = sim_node.WorldModel()
    world.readFile(REPO / "data" / "worlds" / "pendulum.yaml")
    sim = sim_node.Simulator(world)
    sim.setGravity((0, 0, 0))
    c = sim.controller(0)
    c.setTorqueCommand([0.0])
    link = sim.body(world.robot(0).link("link1"))
    # a horizontal force at the bob (0.5 m below the pivot at z = 1): torque about +y
    link.applyForceAtPoint([2.0, 0, 0], [0, 0, 0.5])
    sim.simulate(0.001)
    inertia = 0.0170399652799 + 0.441535433071 ** 2          # about the pivot
    tau_y = np.cross([0, 0, -0.5], [2.0, 0, 0])[1]
    # implicit joint damping 0.01: I (w - 0) = dt tau - dt b w
    assert c.getSensedVelocity()[0] == pytest.approx(tau_y * 0.001 / (inertia + 0.001 * 0.01))
    w, v = link.getVelocity()
    com = link.getTransform()[1]
    assert np.allclose(v, np.cross(w, com - [0, 0, 1.0]))   # the com turns about the pivot


def test_a_kinematic_body_moves_with_its_set_velocity_and_pushes_others(tmp_path):
    world = objects_world(tmp_path)
    sim = sim_node.Simulator(world)
    brick, ball = sim.body(world.rigidObject("brick")), sim.body(world.rigidObject("ball"))
    brick.enableDynamics(False)
    assert not brick.isDynamicsEnabled()
    brick.setTransform(np.eye(3), [0.0, 0, 0.06])            # resting height 0.05 + rest gap
    brick.setVelocity([0, 0, 0], [1.0, 0, 0])
    sim.simulate(0.5)
    # no gravity, no contact force moves it: exactly x = v t
    assert np.allclose(brick.getTransform()[1], [0.5, 0, 0.06], atol=1e-12)
    sim.simulate(0.6)
    assert ball.getTransform()[1][0] > 1.2                   # pushed ahead of the brick
    brick.enableDynamics(True)
    brick.setVelocity([0, 0, 0], [0, 0, 0])
    sim.simulate(0.5)
    assert brick.getTransform()[1][2] == pytest.approx(0.05 + 0.0005, abs=2e-4)   # fell, rests


def test_a_disabled_body_stays_put_and_touches_nothing(tmp_path):
    world = objects_world(tmp_path)
    sim = sim_node.Simulator(world)
    brick = sim.body(world.rigidObject("brick"))
    sim.simulate(0.2)
    brick.enable(False)
    assert not brick.isEnabled()
    where = brick.getTransform()[1]
    sim.simulate(0.5)
    assert np.array_equal(brick.getTransform()[1], where)
    brick.enable(True)
    sim.simulate(0.3)
    assert brick.getVelocity()[1][2] == pytest.approx(-G * 0.3, rel=1e-9)
    ground_body = sim.body(world.terrain(0))
    ground_body.enable(False)
    sim.simulate(2.0)
    assert brick.getTransform()[1][2] < -1.0                  # fell through the disabled ground


def test_padding_and_surface_changes_act_on_contact(tmp_path):
    world = objects_world(tmp_path)
    sim = sim_node.Simulator(world)
    ball = sim.body(world.rigidObject("ball"))
    assert ball.getCollisionPadding() == pytest.approx(0.0025)
    ball.setCollisionPadding(0.02)
    sim.simulate(1.0)
    # rigid contacts rest 10 % of the summed layers apart: 0.1 (0.02 + 0.0025)
    assert ball.getTransform()[1][2] == pytest.approx(0.05 + 0.1 * 0.0225, abs=1e-4)
    surface = ball.getSurface()
    assert surface.kFriction == pytest.approx(0.5) and math.isinf(surface.kStiffness)
    surface.kRestitution = 0.9
    ball.setSurface(surface)
    assert ball.getSurface().kRestitution == 0.9
    with pytest.raises(ValueError, match="padding"):
        ball.setCollisionPadding(-1.0)
    with pytest.raises(TypeError, match="SurfaceParameters"):
        ball.setSurface({"kFriction": 1.0})
    # found by the service fuzz: kStiffness = kDamping = 0 (the pair's blend too) made the
    # compliant layer's k dt + c zero: NaN impulses at every step
    surface.kStiffness, surface.kDamping = 0.0, 0.0
    with pytest.raises(ValueError, match=r"kStiffness 0.0 must be inf \(rigid\) or within"):
        ball.setSurface(surface)
    surface.kStiffness, surface.kDamping = 1e4, 5e300
    with pytest.raises(ValueError, match=r"kDamping 5e\+300 must be inf"):
        ball.setSurface(surface)
    assert ball.getSurface().kRestitution == 0.9 and math.isinf(ball.getSurface().kStiffness)


def test_floating_base_root_link_can_be_placed_and_pushed():
    world = sim_node.WorldModel()
    world.readFile(REPO / "data" / "worlds" / "quadruped.yaml")
    sim = sim_node.Simulator(world)
    robot = world.robot(0)
    base = sim.body(robot.link(0))
    R = euler2mat(0, 0, 0.3)
    base.setObjectTransform(R, [0.2, 0.1, 1.0])
    q = sim.getActualConfig(0)
    assert np.allclose(q[0:3], [0.2, 0.1, 1.0])
    assert np.allclose(np.abs(q[3:7]), np.abs(quat_about((0, 0, 1), 0.3)))
    base.setVelocity([0, 0, 0.5], [1.0, 0, 0])
    w, v = base.getVelocity()
    assert np.allclose(w, [0, 0, 0.5]) and np.allclose(v, [1.0, 0, 0])
    with pytest.raises(ValueError, match="joints place it"):
        sim.body(robot.link(3)).setTransform(np.eye(3), [0, 0, 1])


def test_terrains_are_static(tmp_path):
    world = objects_world(tmp_path)
    sim = sim_node.Simulator(world)
    floor = sim.body(world.terrain(0))
    assert not floor.isDynamicsEnabled()
    for call, message in [(lambda: floor.setTransform(np.eye(3), [0, 0, 1]), "terrain is static"),
                          (lambda: floor.enableDynamics(True), "terrain"),
                          (lambda: floor.applyWrench([1, 0, 0], [0, 0, 0]), "terrain")]:
        with pytest.raises(ValueError, match=message):
            call()
    w, v = floor.getVelocity()
    assert not w.any() and not v.any()


@pytest.mark.parametrize("call, message", [
    (lambda b: b.setTransform(np.eye(3) * 2, [0, 0, 0]), "not a rotation"),
    (lambda b: b.setTransform(np.eye(3), [0, math.nan, 0]), "finite"),
    (lambda b: b.setVelocity([0, 0], [0, 0, 0]), r"expected shape \(3,\)"),
    (lambda b: b.applyForceAtPoint([math.inf, 0, 0], [0, 0, 0]), "finite"),
])
def test_bad_body_requests_raise_and_change_nothing(tmp_path, call, message):
    world = objects_world(tmp_path)
    sim = sim_node.Simulator(world)
    body = sim.body(world.rigidObject("brick"))
    before = sim.getState()
    with pytest.raises(ValueError, match=message):
        call(body)
    sim.simulate(0.01)
    other = sim_node.Simulator(world)
    other.simulate(0.01)
    assert sim.getState() == other.getState() and before == sim_node.Simulator(world).getState()


def test_many_kinematic_objects_step_normally(tmp_path):
    world = objects_world(tmp_path, extra="""  - name: cube
    geometry: {box: [0.1, 0.1, 0.1]}
    mass: 1.0
    pose: {position: [-1.0, 0, 1.0]}
""")
    sim = sim_node.Simulator(world)
    for i in range(world.numRigidObjects()):
        sim.body(world.rigidObject(i)).enableDynamics(False)
    for _ in range(50):
        sim.simulate(0.01)
        assert sim.getStatusString() == "normal"
    assert sim.body(world.rigidObject("cube")).getTransform()[1][2] == 1.0


@pytest.mark.parametrize("call, message", [
    # the measured abuses: 2,000 m/s, a 1e308 pose and force
    (lambda b: b.setVelocity([0, 0, 0], [2000.0, 0, 0]),
     r"setVelocity linear: component 0 = 2000.0 is beyond the bound \|value\| <= 1000 m/s"),
    (lambda b: b.setVelocity([0, 0, 2e4], [0, 0, 0]),
     r"setVelocity angular: component 2 = 20000.0 is beyond the bound \|value\| <= 10000 rad/s"),
    (lambda b: b.setObjectTransform(np.eye(3), [1e308, 0, 0]),
     r"setObjectTransform translation: component 0 = 1e\+308 is beyond the bound"),
    (lambda b: b.setTransform(np.eye(3), [0, 0, -2e4]), r"setTransform translation"),
    (lambda b: b.applyWrench([0, 0, 1e308], [0, 0, 0]),
     r"applyWrench force: component 2 = 1e\+308 is beyond the bound \|value\| <= 1e\+09 N"),
    (lambda b: b.applyWrench([0, 0, 0], [2e9, 0, 0]), r"applyWrench torque.*1e\+09 N m"),
    (lambda b: b.applyForceAtPoint([1, 0, 0], [0, 1e5, 0]), r"applyForceAtPoint point"),
    (lambda b: b.setCollisionPadding(0.2), r"padding must be a length in \[0, 0.1\] m"),
])
def test_absurd_values_are_refused_with_the_field_named_and_change_nothing(tmp_path, call,
                                                                          message):
    world = objects_world(tmp_path)
    sim = sim_node.Simulator(world)
    body = sim.body(world.rigidObject("brick"))
    with pytest.raises(ValueError, match=message):
        call(body)
    sim.simulate(0.01)
    other = sim_node.Simulator(world)
    other.simulate(0.01)
    assert sim.getState() == other.getState()


def test_values_at_the_bounds_are_accepted(tmp_path):
    world = objects_world(tmp_path)
    sim = sim_node.Simulator(world)
    body = sim.body(world.rigidObject("ball"))
    body.setVelocity([0, 0, 1e4], [1e3, 0, 0])
    body.applyWrench([1e9, 0, 0], [0, 0, 1e9])
    w, v = body.getVelocity()
    assert w[2] == 1e4 and v[0] == 1e3
