"""The integration stage (engine/pipeline/integration.pyx, with the free-joint velocity step of
pipeline/dynamics.pyx) on floating-base robots, against closed-form physics.

Regression: a free joint stepped its body-frame linear velocity explicitly (its derivative
holds -w x v) and moved along the screw of its body twist, so every step turned the velocity
by w dt without shrinking it. A 5 mm ball made by createMultiBody (a one-link robot) rolling at
0.5 m/s spins at 100 rad/s: w dt = 0.4 at 240 Hz, +9 % speed per step; it sank through the
terrain it rolled on and flew off at hundreds of m/s (bullet3's experimentalCcdSphereRadius.py).
Its angular counterpart: a one-body robot's gyroscopic term was explicit (a box tumbling at
20 rad/s gained 13x its energy in 2 s at 240 Hz); it is now implicit, as a rigid object's.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st
from transforms3d.quaternions import quat2mat

import sim_node
from sim_node.model.scene import build_scene

G = np.array([0.0, 0.0, -9.81])
PADDING = 0.0025                    # every body's default boundary layer [m]
REST_GAP = 0.1 * 2 * PADDING        # rigid contacts rest this far apart (README)

CI = settings(max_examples=25, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])


def body_urdf(mass, com, inertia, sphere_radius=None) -> str:
    """A one-link robot (a floating base: its root is not 'world')."""
    ixx, iyy, izz = (float(x) for x in inertia)
    com = [float(x) for x in com]
    mass = float(mass)
    collision = ("" if sphere_radius is None else
                 f'<collision><geometry><sphere radius="{sphere_radius!r}"/></geometry></collision>')
    return f"""<robot name="body"><link name="base">
  <inertial><origin xyz="{com[0]!r} {com[1]!r} {com[2]!r}"/><mass value="{mass!r}"/>
    <inertia ixx="{ixx!r}" iyy="{iyy!r}" izz="{izz!r}" ixy="0" ixz="0" iyz="0"/></inertial>
  {collision}</link></robot>"""


def com_state(q, v, com_B):
    """(world com position, world com velocity, R_WB) of a floating base from its q (p, xyzw
    quaternion) and v (linear velocity of the origin, angular velocity; body axes)."""
    x, y, z, w = q[3:7]
    R = quat2mat([w, x, y, z])
    return q[:3] + R @ com_B, R @ (v[:3] + np.cross(v[3:6], com_B)), R


vectors = st.tuples(*[st.floats(-1.0, 1.0)] * 3).map(np.array)
# up to 110 rad/s: 0.46 rad in a 240 Hz step, below the engine's 0.5-per-step limit beyond which
# it retries the step in halves (and the closed forms would count the halves)
unit_ball = vectors.map(lambda x: x / max(1.0, float(np.linalg.norm(x))))


@CI
@given(com=vectors, spin=unit_ball, speed=vectors,
       inertia=st.tuples(*[st.floats(0.2, 1.0)] * 3), w_max=st.sampled_from([1.0, 50.0, 110.0]), dt=st.sampled_from([1 / 240, 1e-3]))
def test_a_spinning_floating_base_moves_its_centre_of_mass_on_the_free_fall_parabola(
        com, spin, speed, inertia, w_max, dt):
    # semi-implicit Euler on the com from its initial velocity v0, whatever the body spins at:
    # v_k = v0 + k dt g,  x_n = x0 + n dt v0 + dt^2 g n (n + 1) / 2
    com_B = 0.2 * com
    mass, steps = 2.0, 60
    # a valid inertia (triangle inequality): principal moments from three positive numbers
    a, b, c = inertia
    moments = 0.01 * np.array([b + c, a + c, a + b])
    world = sim_node.WorldModel()
    robot = world.loadRobot(body_urdf(mass, com_B, moments))
    robot.setConfig([0.1, -0.2, 1.0, 0.0, 0.0, math.sin(0.3), math.cos(0.3)])
    robot.setVelocity(np.concatenate([5.0 * speed, w_max * spin]))
    scene = build_scene(world).scene
    x0, v0, _ = com_state(np.array(scene.robot_q[0]), np.array(scene.robot_v[0]), com_B)
    scene.step(dt, steps)
    x, v, _ = com_state(np.array(scene.robot_q[0]), np.array(scene.robot_v[0]), com_B)
    np.testing.assert_allclose(v, v0 + steps * dt * G, rtol=0, atol=1e-9)
    np.testing.assert_allclose(x, x0 + steps * dt * v0 + dt * dt * G * steps * (steps + 1) / 2,
                               rtol=0, atol=1e-9)


@CI
@given(spin=unit_ball, w_max=st.sampled_from([10.0, 110.0]))
def test_a_floating_sphere_spinning_about_its_centre_keeps_its_spin_and_turns_at_that_rate(
        spin, w_max):
    # a symmetric body: w constant, R_n = R_0 exp([w]x n dt) (body axes), the com fixed
    # without gravity
    dt, steps = 1 / 240, 100
    world = sim_node.WorldModel()
    world.simulation.gravity = (0.0, 0.0, 0.0)
    robot = world.loadRobot(body_urdf(1.0, (0.0, 0.0, 0.0), (0.01, 0.01, 0.01)))
    w = w_max * spin
    robot.setVelocity(np.concatenate([np.zeros(3), w]))
    scene = build_scene(world).scene
    scene.step(dt, steps)
    q, v = np.array(scene.robot_q[0]), np.array(scene.robot_v[0])
    np.testing.assert_allclose(v, np.concatenate([np.zeros(3), w]), rtol=0, atol=1e-9)
    np.testing.assert_allclose(q[:3], 0.0, atol=1e-12)
    angle = np.linalg.norm(w) * steps * dt
    axis = w / max(np.linalg.norm(w), 1e-300)
    expected = np.concatenate([axis * math.sin(angle / 2), [math.cos(angle / 2)]])
    assert min(np.linalg.norm(q[3:7] - expected), np.linalg.norm(q[3:7] + expected)) < 1e-9


@CI
@given(com=vectors, spin=unit_ball, speed=vectors, inertia=st.tuples(*[st.floats(0.2, 1.0)] * 3),
       w_max=st.sampled_from([20.0, 110.0]))
def test_a_one_body_robot_tumbles_as_the_same_free_rigid_body_and_never_gains_energy(
        com, spin, speed, inertia, w_max):
    # a one-body robot is a rigid body: stepped as a rigid object is (gyroscopic term implicit,
    # dynamics.pyx), its world angular velocity and com the object's to rounding; its rotational
    # energy never grows (explicit, a box tumbling at 20 rad/s gained 13x in 2 s at 240 Hz)
    dt, steps = 1 / 240, 120
    a, b, c = inertia
    moments = 0.01 * np.array([b + c, a + c, a + b])
    com_B = 0.1 * com
    urdf = body_urdf(1.5, com_B, moments, sphere_radius=0.05)
    w0, v0 = w_max * spin, 2.0 * speed
    scenes = []
    for as_robot in (True, False):
        world = sim_node.WorldModel()
        world.simulation.gravity = (0.0, 0.0, 0.0)
        if as_robot:
            world.loadRobot(urdf).setVelocity(np.concatenate([v0, w0]))
        else:
            world.loadRigidObject(urdf).setVelocity(w0, v0)
        scenes.append(build_scene(world).scene)
    robot, rigid = scenes
    energy = 0.5 * w0 @ (moments * w0)
    for _ in range(steps):
        robot.step(dt, 1)
        rigid.step(dt, 1)
        w_B = np.array(robot.robot_v[0])[3:6]
        now = 0.5 * w_B @ (moments * w_B)
        assert now <= energy * (1 + 1e-12)
        energy = now
    x, _, R = com_state(np.array(robot.robot_q[0]), np.array(robot.robot_v[0]), com_B)
    state = np.array(rigid.free_state[0])
    np.testing.assert_allclose(R @ w_B, state[10:13], rtol=0, atol=1e-7 * max(w_max, 1.0))
    np.testing.assert_allclose(x, state[:3], rtol=0, atol=1e-9)


def slope_obj(path, slope: float, half: float = 1.0):
    """An open square sheet z = slope x over [-half, half]^2 (zero thickness) of four triangles
    meeting at a vertex at the origin."""
    corners = [(-half, -half), (half, -half), (half, half), (-half, half)]
    with open(path, "w") as f:
        for x, y in corners + [(0.0, 0.0)]:
            f.write(f"v {x!r} {y!r} {slope * x!r}\n")
        for a, b in ((1, 2), (2, 3), (3, 4), (4, 1)):
            f.write(f"f {a} {b} 5\n")


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(radius=st.sampled_from([0.002, 0.005, 0.02, 0.05]), angle=st.floats(0.0, 0.2),
       drop=st.floats(0.0, 0.5), speed=st.floats(0.0, 5.0),
       at=st.one_of(st.just((0.0, 0.0)), st.tuples(st.floats(-0.1, 0.1), st.floats(-0.1, 0.1))))
def test_a_small_ball_on_a_floating_base_lands_on_a_sloped_sheet_and_rolls_down_on_it(
        tmp_path, radius, angle, drop, speed, at):
    # the example's case: a ball (a one-link floating robot, as createMultiBody makes it)
    # dropped on a triangle-mesh sheet, onto its vertex or anywhere near it, fast or slow.
    # Never sinks below the sheet by more than the boundary layer; once down it rests in the
    # layer (REST_GAP from the sheet, to a tenth of the padding) and rolls without slipping
    # about its contact point, midway between ball and sheet (rho = r + REST_GAP / 2 from the
    # centre): a = g sin(angle) / (1 + I / (m rho^2)) (5/7 g sin(angle) for a large ball)
    dt = 1 / 240
    path = tmp_path / "slope.obj"
    slope = math.tan(angle)
    slope_obj(path, slope)
    normal = np.array([-math.sin(angle), 0.0, math.cos(angle)])
    mass, inertia = 1.0, 0.4 * radius * radius
    world = sim_node.WorldModel()
    world.loadTerrain(str(path))
    robot = world.loadRobot(body_urdf(mass, (0.0, 0.0, 0.0), (inertia,) * 3, radius))
    x0, y0 = at
    robot.setConfig([x0, y0, slope * x0 + (radius + 0.01 + drop) / math.cos(angle),
                     0.0, 0.0, 0.0, 1.0])
    robot.setVelocity([0.0, 0.0, -speed, 0.0, 0.0, 0.0])
    scene = build_scene(world).scene
    heights, speeds = [], []
    for _ in range(int(0.6 / dt)):
        scene.step(dt, 1)
        centre, velocity, _ = com_state(np.array(scene.robot_q[0]), np.array(scene.robot_v[0]),
                                        np.zeros(3))
        heights.append(float(normal @ centre) - radius)    # the ball's gap to the sheet's plane
        speeds.append(velocity)
    heights = np.array(heights)
    assert heights.min() > -PADDING, f"sank {-heights.min():.4f} m into the sheet"
    # down and rolling for the last 0.2 s
    np.testing.assert_allclose(heights[-48:], REST_GAP, atol=0.1 * PADDING)
    rolled = np.array(speeds[-48:])
    accel = (rolled[-1] - rolled[0]) / (47 * dt)
    rho = radius + REST_GAP / 2
    expected = 9.81 * math.sin(angle) / (1.0 + inertia / (mass * rho * rho))
    along = np.array([-math.cos(angle), 0.0, -math.sin(angle)])       # down the slope
    assert abs(accel @ along - expected) < 0.03 * expected + 1e-3
    assert np.linalg.norm(accel - (accel @ along) * along) < 0.03 * expected + 1e-3
