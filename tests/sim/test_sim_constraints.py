"""User constraints through the Simulator (sim_node.model.constraints, engine
pipeline/user_constraints.pyx) checked against closed-form physics: a physical pendulum made of
a box on a POINT2POINT pivot, a FIXED hold, a prismatic slide, a gear between two wheels, force
bounds, a four-bar linkage closed by a POINT2POINT, state save / restore, rebuilds, bad input."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scene_helpers import REPO, world_from_yaml
from transforms3d.quaternions import quat2mat

import sim_node
from sim_node.model.constraints import Constraint

DT = 1e-3
G = 9.81


def box_world(tmp_path, boxes, gravity=True):
    """A world of boxes (name, half sizes, mass, position) without terrain."""
    text = "" if gravity else "simulation: {gravity: [0, 0, 0]}\n"
    text += "rigid_objects:\n"
    for name, half, mass, position in boxes:
        size = [2 * h for h in half]
        text += f"""  - name: {name}
    geometry: {{box: {size}}}
    mass: {mass}
    pose: {{position: {list(position)}}}
"""
    return world_from_yaml(text, tmp_path)


def simulator(world):
    sim = sim_node.Simulator(world)
    sim.setSimStep(DT)
    return sim


def com(sim, i=0):
    return sim.engine.free_state[i, 0:3].copy()


def pose(sim, i=0):
    s = sim.engine.free_state[i]
    return quat2mat([s[6], s[3], s[4], s[5]]), s[0:3].copy()


def test_box_on_a_point2point_pivot_swings_with_the_physical_pendulum_period_within_1_percent(tmp_path):
    # a 0.1 x 0.1 x 0.4 m, 2 kg box hanging from a pivot 0.2 m above its centre (its top face):
    # T = 2 pi sqrt(I_pivot / (m g l)), I_pivot = m (a^2 + c^2) / 12 + m l^2 about x
    a, c, m, l = 0.1, 0.4, 2.0, 0.2
    world = box_world(tmp_path, [("bob", (a / 2, a / 2, c / 2), m, (0, 0, 1.0))])
    bob = world.rigidObject(0)
    world.addConstraint(Constraint("point2point", bob, None,
                                   parent_frame=(np.eye(3), np.array([0, 0, l])),
                                   child_frame=(np.eye(3), np.array([0, 0, 1.0 + l]))))
    sim = simulator(world)
    # a small swing about x: 0.05 rad
    angle = 0.05
    R = np.array([[1, 0, 0], [0, math.cos(angle), -math.sin(angle)],
                  [0, math.sin(angle), math.cos(angle)]])
    pivot = np.array([0, 0, 1.0 + l])
    state = sim.engine.free_state
    state[0, 0:3] = pivot - R @ np.array([0, 0, l])
    w, x, y, z = math.cos(angle / 2), math.sin(angle / 2), 0.0, 0.0
    state[0, 3:7] = [x, y, z, w]
    sim.engine.refresh()
    inertia = m * (a * a + c * c) / 12 + m * l * l
    period = 2 * math.pi * math.sqrt(inertia / (m * G * l))
    ys, crossings, drift = [], [], 0.0
    for k in range(int(3.2 * period / DT)):
        sim.simulate(DT)
        Rb, p = pose(sim)
        ys.append(p[1])
        drift = max(drift, np.linalg.norm(p + Rb @ [0, 0, l] - pivot))
        if len(ys) > 1 and ys[-2] < 0 <= ys[-1]:
            # upward zero crossings of y, interpolated
            crossings.append((k - 1 + ys[-2] / (ys[-2] - ys[-1])) * DT)
    assert len(crossings) >= 3
    measured = np.diff(crossings).mean()
    assert measured == pytest.approx(period, rel=0.01), (measured, period)
    assert drift < 1e-3


def test_a_fixed_constraint_holds_a_box_in_the_air_drifting_less_than_1_mm_in_10_s(tmp_path):
    world = box_world(tmp_path, [("box", (0.1, 0.1, 0.1), 3.0, (0.3, -0.2, 1.5))])
    box = world.rigidObject(0)
    # held by a frame 0.25 m off its centre: gravity makes a moment about it
    anchor = np.array([0.25, 0.0, 0.0])
    world.addConstraint(Constraint("fixed", box, None,
                                   parent_frame=(np.eye(3), anchor),
                                   child_frame=(np.eye(3), np.array([0.55, -0.2, 1.5]))))
    sim = simulator(world)
    R0, p0 = pose(sim)
    worst, worst_angle = 0.0, 0.0
    for _ in range(100):
        sim.simulate(0.1)
        R, p = pose(sim)
        worst = max(worst, np.linalg.norm(p - p0))
        worst_angle = max(worst_angle, np.linalg.norm(R - R0))
    assert worst < 1e-3
    assert worst_angle < 1e-3
    # the constraint carries the weight and its moment about the anchor (force on the box)
    forces = sim.getConstraintForces(0)
    np.testing.assert_allclose(forces[:3], [0, 0, 3.0 * G], atol=0.05)
    # torque about the anchor point balancing m g x the lever -0.25 x
    np.testing.assert_allclose(forces[3:], np.cross([-0.25, 0, 0], [0, 0, -3.0 * G]) * -1,
                               atol=0.05)


def test_a_prismatic_constraint_lets_a_box_slide_only_along_its_axis_at_g_sin_theta(tmp_path):
    # axis tilted 30 degrees down from +x in the x-z plane: a frictionless slide, a = g sin 30
    theta = math.radians(30)
    axis = np.array([math.cos(theta), 0, -math.sin(theta)])
    world = box_world(tmp_path, [("slider", (0.05, 0.05, 0.05), 1.0, (0, 0, 2.0))])
    box = world.rigidObject(0)
    world.addConstraint(Constraint("prismatic", box, None, axis=axis,
                                   child_frame=(np.eye(3), np.array([0, 0, 2.0]))))
    sim = simulator(world)
    T = 0.5
    sim.simulate(T)
    R, p = pose(sim)
    s = (p - [0, 0, 2.0]) @ axis
    assert s == pytest.approx(0.5 * G * math.sin(theta) * T * T, rel=0.01)
    across = (p - [0, 0, 2.0]) - s * axis
    assert np.linalg.norm(across) < 1e-4
    assert np.linalg.norm(R - np.eye(3)) < 1e-4


def wheels_urdf(tmp_path):
    """Two wheels on revolute joints about y on a fixed base: inertias 0.01 and 0.04 kg m^2."""
    def wheel(name, x, izz):
        return f"""
  <link name="{name}">
    <inertial><mass value="1"/><inertia ixx="{izz}" iyy="{izz}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="{name}_joint" type="continuous">
    <parent link="base"/><child link="{name}"/><origin xyz="{x} 0 0"/><axis xyz="0 1 0"/>
  </joint>"""
    text = f"""<?xml version="1.0"?>
<robot name="wheels">
  <link name="base">
    <inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>{wheel("small", 0.0, 0.01)}{wheel("large", 1.0, 0.04)}
</robot>"""
    path = tmp_path / "wheels.urdf"
    path.write_text(text)
    return path


@pytest.mark.parametrize("ratio", [-2.0, 0.5])
def test_a_gear_couples_two_wheels_at_its_ratio_and_shares_a_torque_as_the_closed_form(tmp_path, ratio):
    # qd_a + ratio qd_b = 0; a torque tau on wheel a: qdd_a = tau / (I_a + I_b / ratio^2)
    world = sim_node.WorldModel()
    robot = world.loadRobot(str(wheels_urdf(tmp_path)), fixed_base=True)
    world.addConstraint(Constraint("gear", robot.link("small"), robot.link("large"),
                                   gear_ratio=ratio, erp=0.0))
    sim = simulator(world)
    sim.controller(0).setTorque([0.1, 0.0])
    T = 1.0
    sim.simulate(T)
    qd = sim.getActualVelocity(0)
    assert qd[0] + ratio * qd[1] == pytest.approx(0.0, abs=1e-6)
    expected = 0.1 / (0.01 + 0.04 / ratio ** 2) * T
    assert qd[0] == pytest.approx(expected, rel=0.01)


def test_max_force_bounds_the_force_a_weight_too_heavy_falls_a_light_one_is_held(tmp_path):
    world = box_world(tmp_path, [("light", (0.05,) * 3, 1.0, (0, 0, 1.0)),
                                 ("heavy", (0.05,) * 3, 10.0, (1, 0, 1.0))])
    for i, x in enumerate((0, 1)):
        world.addConstraint(Constraint("point2point", world.rigidObject(i), None, max_force=50.0,
                                       child_frame=(np.eye(3), np.array([x, 0, 1.0]))))
    sim = simulator(world)
    sim.simulate(1.0)
    assert abs(com(sim, 0)[2] - 1.0) < 1e-3
    # the heavy one: m a = m g - 50 N, a = 9.81 - 5
    fall = 1.0 - com(sim, 1)[2]
    assert fall == pytest.approx(0.5 * (G - 5.0) * 1.0, rel=0.02)
    assert np.abs(sim.getConstraintForces(1)).max() <= 50.0 + 1e-9


FOUR_BAR = """<?xml version="1.0"?>
<robot name="fourbar">
  <link name="ground"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="crank"><inertial><origin xyz="0 0 0.1"/><mass value="0.2"/><inertia ixx="0.001" iyy="0.001" izz="0.0001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="coupler"><inertial><origin xyz="0.2 0 0"/><mass value="0.2"/><inertia ixx="0.0001" iyy="0.003" izz="0.003" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="rocker"><inertial><origin xyz="0 0 0.15"/><mass value="0.2"/><inertia ixx="0.002" iyy="0.002" izz="0.0001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="crank_joint" type="continuous"><parent link="ground"/><child link="crank"/><origin xyz="0 0 0"/><axis xyz="0 1 0"/></joint>
  <joint name="coupler_joint" type="continuous"><parent link="crank"/><child link="coupler"/><origin xyz="0 0 0.2"/><axis xyz="0 1 0"/></joint>
  <joint name="rocker_joint" type="continuous"><parent link="ground"/><child link="rocker"/><origin xyz="0.4 0 0"/><axis xyz="0 1 0"/></joint>
</robot>
"""


def four_bar(tmp_path):
    # ground 0.4, crank 0.2, coupler 0.4, rocker 0.3 in the x-z plane; the coupler's end (0.4 m
    # along its x) joins the rocker's top (0.3 m along its z) by a POINT2POINT: the loop
    # closes at q = (0, 0, 0) only if the rocker's top is at (0.4, 0, 0.2) + ... so start from a
    # closed configuration found by the constraint itself (below)
    path = tmp_path / "fourbar.urdf"
    path.write_text(FOUR_BAR)
    world = sim_node.WorldModel()
    robot = world.loadRobot(str(path), fixed_base=True)
    return world, robot


def loop_error(sim, robot):
    Rc, pc = sim.link_transform(0, robot.link("coupler").getIndex())
    Rr, pr = sim.link_transform(0, robot.link("rocker").getIndex())
    return np.linalg.norm((pc + Rc @ [0.4, 0, 0]) - (pr + Rr @ [0, 0, 0.3]))


def test_a_four_bar_linkage_closed_by_a_point2point_moves_with_one_dof_and_keeps_its_loop_closed(tmp_path):
    world, robot = four_bar(tmp_path)
    # closed at crank 0: the coupler end must reach the rocker top; with crank vertical (tip at
    # (0, 0, 0.2)), coupler 0.4 long, rocker 0.3 long pivoting at (0.4, 0, 0): solve the angles
    crank_tip = np.array([0.0, 0.2])                    # (x, z)
    pivot = np.array([0.4, 0.0])
    d = np.linalg.norm(pivot - crank_tip)
    # triangle crank_tip - joint - pivot with sides 0.4 (coupler), 0.3 (rocker)
    a = (0.4 ** 2 - 0.3 ** 2 + d ** 2) / (2 * d)
    h = math.sqrt(0.4 ** 2 - a ** 2)
    u = (pivot - crank_tip) / d
    joint = crank_tip + a * u + h * np.array([-u[1], u[0]])
    # rotation about +y by q maps x -> (cos q, -sin q) in (x, z), z -> (sin q, cos q)
    coupler_dir = (joint - crank_tip) / 0.4
    q_coupler = math.atan2(-coupler_dir[1], coupler_dir[0])
    rocker_dir = (joint - pivot) / 0.3
    q_rocker = math.atan2(rocker_dir[0], rocker_dir[1])
    robot.setConfig([0.0, q_coupler, q_rocker])
    world.addConstraint(Constraint("point2point", robot.link("coupler"), robot.link("rocker"),
                                   parent_frame=(np.eye(3), np.array([0.4, 0, 0])),
                                   child_frame=(np.eye(3), np.array([0, 0, 0.3]))))
    sim = simulator(world)
    assert loop_error(sim, robot) < 1e-9
    # passive joints, a kick on the crank: the linkage swings under gravity
    sim.controller(0).setTorque(np.zeros(3))
    sim.setActualVelocity(0, np.array([2.0, 0.0, 0.0]))
    sim.simulate(0.002)      # the constraint makes the velocities consistent
    worst = 0.0
    qs = []
    for _ in range(2000):
        sim.simulate(DT)
        worst = max(worst, loop_error(sim, robot))
        qs.append(sim.getActualConfig(0).copy())
    assert worst < 1e-3
    qs = np.array(qs)
    assert np.ptp(qs[:, 0]) > 0.3          # it moved
    # one DOF: the coupler and rocker angles are functions of the crank angle: the closed-form
    # loop closure from each crank angle gives them back to 2 mrad
    for q in qs[::100]:
        tip = np.array([0.2 * math.sin(q[0]), 0.2 * math.cos(q[0])])
        joint_coupler = tip + 0.4 * np.array([math.cos(q[0] + q[1]), -math.sin(q[0] + q[1])])
        joint_rocker = pivot + 0.3 * np.array([math.sin(q[2]), math.cos(q[2])])
        assert np.linalg.norm(joint_coupler - joint_rocker) < 2e-3


def test_get_state_set_state_continues_bit_for_bit_with_constraints(tmp_path):
    world = box_world(tmp_path, [("a", (0.05,) * 3, 1.0, (0, 0, 1.0)),
                                 ("b", (0.05, 0.05, 0.2), 2.0, (0.0, 0.0, 0.6))])
    a, b = world.rigidObject(0), world.rigidObject(1)
    world.addConstraint(Constraint("point2point", a, None,
                                   parent_frame=(np.eye(3), np.array([0.05, 0, 0.05])),
                                   child_frame=(np.eye(3), np.array([0.05, 0, 1.05]))))
    world.addConstraint(Constraint("fixed", b, a, parent_frame=(np.eye(3), np.array([0, 0, 0.2])),
                                   child_frame=(np.eye(3), np.array([0, 0, -0.2])), max_force=200))
    sim = simulator(world)
    sim.engine.free_state[0, 7] = 0.5
    sim.simulate(0.3)
    saved = sim.getState()
    sim.simulate(0.4)
    first = sim.engine.free_state.copy()
    forces = sim.getConstraintForces(1)
    sim.setState(saved)
    sim.simulate(0.4)
    assert np.array_equal(sim.engine.free_state, first)
    assert np.array_equal(sim.getConstraintForces(1), forces)
    # the warm starts are part of the state: without them the continuation differs
    assert np.abs(sim.engine.constraint_impulses()).max() > 0


def test_constraints_survive_rebuilds_and_go_with_a_removed_body(tmp_path):
    world = box_world(tmp_path, [("a", (0.05,) * 3, 1.0, (0, 0, 1.0)),
                                 ("b", (0.05,) * 3, 1.0, (1, 0, 1.0))])
    sim = simulator(world)
    a, b = world.rigidObject(0), world.rigidObject(1)
    uid_a = sim.addConstraint(Constraint("point2point", a, None,
                                         child_frame=(np.eye(3), np.array([0, 0, 1.0]))))
    uid_b = sim.addConstraint(Constraint("point2point", b, None,
                                         child_frame=(np.eye(3), np.array([1, 0, 1.0]))))
    sim.simulate(0.1)
    sim.removeEntity(a)
    assert [c.uid for c in world.constraints()] == [uid_b]
    with pytest.raises(ValueError, match="no constraint"):
        sim.getConstraint(uid_a)
    sim.simulate(0.5)
    assert abs(sim.engine.free_state[0, 2] - 1.0) < 1e-3     # b still hangs
    extra = sim_node.RigidObjectModel("c", b.getCollisionGeometry(), b.getMass(),
                                      t=np.array([2.0, 0, 1.0]))
    sim.addEntity(extra)
    sim.simulate(0.5)
    assert abs(sim.engine.free_state[0, 2] - 1.0) < 1e-3     # b still hangs after the add
    assert sim.engine.free_state[1, 2] < 0.0                 # c falls
    sim.removeConstraint(uid_b)
    sim.simulate(0.3)
    assert sim.engine.free_state[0, 2] < 0.8


def test_change_constraint_moves_the_pivot_and_the_body_follows(tmp_path):
    world = box_world(tmp_path, [("a", (0.05,) * 3, 1.0, (0, 0, 1.0))], gravity=False)
    sim = simulator(world)
    uid = sim.addConstraint(Constraint("fixed", world.rigidObject(0), None,
                                       child_frame=(np.eye(3), np.array([0, 0, 1.0]))))
    sim.changeConstraint(uid, child_frame=(np.eye(3), np.array([0.1, 0, 1.0])))
    sim.simulate(1.0)
    np.testing.assert_allclose(com(sim), [0.1, 0, 1.0], atol=1e-4)
    with pytest.raises(ValueError, match="erp"):
        sim.changeConstraint(uid, erp=2.0)
    with pytest.raises(ValueError, match="cannot change"):
        sim.changeConstraint(uid, kind="gear")
    assert sim.getConstraint(uid).erp == 0.2


def test_no_constraints_keep_the_state_layout_and_the_steps_bits(tmp_path):
    # a world without constraints steps exactly as one whose constraints were all removed
    world = box_world(tmp_path, [("a", (0.05,) * 3, 1.0, (0, 0, 1.0))])
    plain = simulator(world)
    other = simulator(box_world(tmp_path / ".." , [("a", (0.05,) * 3, 1.0, (0, 0, 1.0))]))
    uid = other.addConstraint(Constraint("point2point", other.getWorld().rigidObject(0), None,
                                         child_frame=(np.eye(3), np.array([0, 0, 1.0]))))
    other.removeConstraint(uid)
    assert len(plain.getState()) == len(other.getState())
    plain.simulate(0.2)
    other.simulate(0.2)
    assert np.array_equal(plain.engine.free_state, other.engine.free_state)


finite = st.floats(-1e3, 1e3)
hostile = st.one_of(st.just(float("nan")), st.just(float("inf")), st.just(-float("inf")))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["fixed", "point2point", "gear", "prismatic", "revolute", ""]),
       field=st.sampled_from(["parent_frame", "child_frame", "axis", "max_force", "erp",
                              "gear_ratio", "none"]),
       bad=hostile)
def test_hostile_constraints_raise_and_add_nothing(tmp_path, kind, field, bad):
    world = box_world(tmp_path, [("a", (0.05,) * 3, 1.0, (0, 0, 1.0))])
    sim = simulator(world)
    before = sim.getState()
    fields = {}
    if field == "parent_frame":
        fields[field] = (np.eye(3), np.array([0, bad, 0]))
    elif field == "child_frame":
        fields[field] = (np.eye(3) * bad, np.zeros(3))
    elif field == "axis":
        fields[field] = np.array([bad, 0, 0])
    elif field != "none":
        fields[field] = bad
    valid = kind in ("fixed", "point2point", "prismatic") and field in ("none", "max_force") \
        and not (field == "max_force" and not bad > 0)
    if valid:
        return      # (inf max_force is allowed: unbounded)
    with pytest.raises(ValueError):
        sim.addConstraint(Constraint(kind, world.rigidObject(0), None, **fields))
    assert world.constraints() == []
    assert sim.engine.nconstraint == 0
    assert sim.getState() == before


def test_unknown_ids_and_foreign_entities_raise(tmp_path):
    world = box_world(tmp_path, [("a", (0.05,) * 3, 1.0, (0, 0, 1.0))])
    other = box_world(tmp_path, [("z", (0.05,) * 3, 1.0, (0, 0, 1.0))])
    sim = simulator(world)
    with pytest.raises(ValueError, match="no constraint with unique id 3"):
        sim.removeConstraint(3)
    with pytest.raises(ValueError, match="no constraint"):
        sim.getConstraintForces(0)
    with pytest.raises(ValueError, match="not in this world"):
        sim.addConstraint(Constraint("fixed", other.rigidObject(0), None))
    with pytest.raises(ValueError, match="same body"):
        sim.addConstraint(Constraint("fixed", world.rigidObject(0), world.rigidObject(0)))
    with pytest.raises(ValueError, match="gear"):
        sim.addConstraint(Constraint("gear", world.rigidObject(0), None))
    assert world.constraints() == []


def minitaur_loop_links(robot):
    """bullet3's minitaur.py: per leg, the knee links closed by a POINT2POINT from the R knee
    ([0, 0.005, 0.2] in its inertial frame) to the L knee ([0, 0.01, 0.2] in its)."""
    st = robot.structure
    by_joint = {st.link_joint[l]: l for l in range(len(st.link_names))}
    legs = []
    for leg in ("front_left", "back_left", "front_right", "back_right"):
        legs.append((robot.link(by_joint[f"knee_{leg}R_link"]),
                     robot.link(by_joint[f"knee_{leg}L_link"])))
    return legs


def inertial_frame(link):
    # (minitaur's inertial origins have no rotation)
    return np.eye(3), np.asarray(link.getMass().getCom())


def test_minitaur_closed_by_point2point_knees_stands_with_loop_errors_below_2_mm(tmp_path):
    import pybullet_data
    world = world_from_yaml("""terrains:
  - name: ground
    geometry: {plane: {normal: [0, 0, 1], offset: 0.0}}
""", tmp_path)
    robot = world.loadRobot(f"{pybullet_data.getDataPath()}/quadruped/minitaur.urdf",
                            fixed_base=False)
    st = robot.structure
    q = robot.getConfig().copy()
    q[0:3] = [0, 0, 0.2]
    q[3:7] = [0, 0, 0, 1]
    half_pi, knee = 1.57079632679, -2.1834
    motor_dir = {"front_leftL": -1, "front_leftR": -1, "back_leftL": -1, "back_leftR": -1,
                 "front_rightL": 1, "front_rightR": 1, "back_rightL": 1, "back_rightR": 1}
    motors = []
    for name, sign in motor_dir.items():
        q[st.joint_q_index[f"motor_{name}_joint"]] = sign * half_pi
        q[st.joint_q_index[f"knee_{name}_link"]] = sign * knee
        motors.append(st.joint_v_index[f"motor_{name}_joint"] - 6)
    robot.setConfig(q)
    pivots = []
    for parent, child in minitaur_loop_links(robot):
        R_p, p_p = inertial_frame(parent)
        R_c, p_c = inertial_frame(child)
        pivot_p = p_p + R_p @ [0, 0.005, 0.2]
        pivot_c = p_c + R_c @ [0, 0.01, 0.2]
        world.addConstraint(Constraint("point2point", parent, child, max_force=500.0,
                                       parent_frame=(np.eye(3), pivot_p),
                                       child_frame=(np.eye(3), pivot_c)))
        pivots.append((parent, pivot_p, child, pivot_c))
    sim = sim_node.Simulator(world)
    sim.setSimStep(1 / 240)
    n = robot.model.nv - 6
    kp, kd = np.zeros(n), np.zeros(n)
    kp[motors], kd[motors] = 30.0, 0.5
    controller = sim.controller(0)
    controller.setPIDGains(kp, np.zeros(n), kd)
    controller.setPIDCommand(q[7:])

    def loop_errors():
        out = []
        for parent, pp, child, pc in pivots:
            Ra, pa = sim.link_transform(0, parent.getIndex())
            Rb, pb = sim.link_transform(0, child.getIndex())
            out.append(np.linalg.norm((pa + Ra @ pp) - (pb + Rb @ pc)))
        return out

    worst = 0.0
    for _ in range(200):
        sim.simulate(0.01)
        worst = max(worst, max(loop_errors()))
    base = sim.getActualConfig(0)
    assert worst < 2e-3, worst
    # standing: the base up off the ground, level
    assert base[2] > 0.1
    R = quat2mat([base[6], base[3], base[4], base[5]])
    assert R[2, 2] > 0.95


def test_reset_after_adding_a_constraint_restarts_with_the_constraint_held(tmp_path):
    world = box_world(tmp_path, [("a", (0.05,) * 3, 1.0, (0, 0, 1.0))])
    sim = simulator(world)
    sim.addConstraint(Constraint("point2point", world.rigidObject(0), None,
                                 parent_frame=(np.eye(3), np.array([0, 0, 0.2])),
                                 child_frame=(np.eye(3), np.array([0.1, 0, 1.2]))))
    sim.simulate(0.5)
    moved = com(sim)
    sim.reset()
    assert sim.getTime() == 0.0
    np.testing.assert_array_equal(com(sim), [0, 0, 1.0])
    sim.simulate(0.5)
    np.testing.assert_allclose(com(sim), moved, atol=1e-12)
