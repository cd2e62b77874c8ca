"""The contact solver (engine/solver.pyx) on rows no DOF can move: a one-DOF body's contact has
a degenerate Delassus block (the friction direction across its axis, the torsion, and the normal
when the axis lies in the contact plane). Such rows take no impulse; before, the tangential
2 x 2 step divided 0 by 0, the NaN impulses failed every step (STATUS_UNSTABLE) and the whole
scene froze (kuka_setup.py's wsg50 fingers, bullet3's kuka_with_cube scene)."""
from __future__ import annotations

import numpy as np
import pytest

import sim_node
from sim_node.sim.simulator import STATUS_NORMAL

G = 9.81
H = 1.0 / 240.0
MASS = 1.0
HALF = 0.05                     # [m] half side of the box


def slider_world(tmp_path, axis: str, z: float, ground: bool = True):
    """A 1 kg box on a prismatic joint along `axis` from the world, its centre at height z, over
    a ground plane z = 0 (frictional, rigid)."""
    (tmp_path / "slider.urdf").write_text(f"""<robot name="slider"><link name="world"/>
<joint name="slide" type="prismatic"><parent link="world"/><child link="box"/>
  <origin xyz="0 0 {z}"/><axis xyz="{axis}"/><limit lower="-1" upper="1" effort="100" velocity="10"/>
</joint>
<link name="box"><inertial><mass value="{MASS}"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  <collision><geometry><box size="{2 * HALF} {2 * HALF} {2 * HALF}"/></geometry></collision>
</link></robot>""")
    (tmp_path / "ground.urdf").write_text(
        '<robot name="ground"><link name="ground"><collision><geometry><plane normal="0 0 1"/>'
        '</geometry></collision></link></robot>')
    world = sim_node.WorldModel()
    plane = world.loadRobot(str(tmp_path / "ground.urdf")) if ground else None
    robot = world.loadRobot(str(tmp_path / "slider.urdf"))
    sim = sim_node.Simulator(world)
    sim.setGravity([0.0, 0.0, -G])
    sim.setSimStep(H)
    return sim, robot, plane


def run(sim, robot, force: float, steps: int) -> np.ndarray:
    """Push with `force` [N] along the axis for `steps` steps; the joint's (q, v) afterwards.
    Every step must succeed."""
    sim.controller(robot).setTorqueCommand([force])
    for k in range(steps):
        sim.simulate(H)
        assert sim.getStatus() == STATUS_NORMAL, f"step {k}: {sim.getStatusString()}"
    sim.updateWorld()
    return np.array([robot.getConfig()[0], robot.getVelocity()[0]])


def test_a_vertical_slider_rests_on_the_ground_and_the_ground_carries_its_weight(tmp_path):
    """Axis along the normal: both friction rows and the torsion are degenerate. Pushed up by
    3 N, the 1 kg box rests on the plane (inside its boundary layer); the plane carries
    m g - 3 N."""
    force = 3.0
    sim, robot, plane = slider_world(tmp_path, "0 0 1", HALF + 1e-3)
    sim.enableContactFeedback(robot.link(1).getID(), plane.link(0).getID())
    q, v = run(sim, robot, force, 240)
    assert abs(v) < 1e-6
    assert -1e-3 < q < 5e-3            # within the boundary layer: resting, not pushed away
    np.testing.assert_allclose(sim.contactForce(robot.link(1).getID(), plane.link(0).getID()),
                               [0.0, 0.0, MASS * G - force], atol=1e-6)


@pytest.mark.parametrize("axis", ["1 0 0", "0.6 0.8 0"])
def test_a_slider_along_the_ground_moves_as_without_it(tmp_path, axis):
    """Axis in the contact plane: the normal rows are degenerate (the joint, not the ground,
    carries the weight), so no normal impulse and no friction: the box slides exactly as with
    no ground at all, x_n = a h^2 n (n + 1) / 2 under a = F / m (semi-implicit Euler)."""
    force, steps = 3.0, 120
    sim, robot, _ = slider_world(tmp_path, axis, HALF - 1e-4)
    q, v = run(sim, robot, force, steps)
    free_sim, free_robot, _ = slider_world(tmp_path, axis, HALF - 1e-4, ground=False)
    q_free, v_free = run(free_sim, free_robot, force, steps)
    assert q > 0.05
    np.testing.assert_allclose([q, v], [q_free, v_free], rtol=1e-12, atol=1e-15)


def test_a_slanted_slider_leaning_on_the_ground_stays_put(tmp_path):
    """Axis (1, 0, 1)/√2 into the ground: one friction direction moves (x), the other (y) and
    the torsion do not. Gravity pulls the box along the axis into the plane; normal force and
    friction hold it: it settles within the normal rows' regularisation yield (micrometres)
    and stays there."""
    sim, robot, _ = slider_world(tmp_path, "1 0 1", HALF + 5e-4)
    q, v = run(sim, robot, 0.0, 240)
    assert abs(q) < 1e-5 and abs(v) < 1e-9
    q_later, v_later = run(sim, robot, 0.0, 240)
    assert abs(q_later - q) < 1e-9 and abs(v_later) < 1e-9
