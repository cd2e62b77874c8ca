"""Every public function that takes a rotation reads it by rotation_input's rule: a Klamp't
column-major 9-list and the equivalent numpy 3x3 give the same placement (so a row-major
reading, the transpose, would fail these tests), and a wrong shape is a ValueError naming the
function's argument."""
import numpy as np
import pytest
from scene_helpers import ground, world_from_yaml

import sim_node
from sim_node.math import so3
from sim_node.model.contact import ContactPoint
from sim_node.sim.camera import Camera

R9 = so3.from_rpy([0.3, -0.7, 1.9])       # not symmetric: its transpose is another rotation
M = np.array(so3.matrix(R9))
T = [0.4, -0.2, 1.5]
BOX = """<robot name="box"><link name="box">
  <inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.2 0.3 0.4"/></geometry></collision></link></robot>"""
ARM = """<robot name="arm"><link name="base"><inertial><mass value="1"/><inertia ixx="0.1"
  iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"""


def placements(load):
    """load(R) -> (R, t) placement, for R as the 9-list, a tuple, a flat array and a matrix."""
    return [load(R) for R in (R9, tuple(R9), np.array(R9), M, M.tolist())]


def assert_same_placement(results):
    for R, t in results:
        np.testing.assert_allclose(R, M, rtol=0, atol=1e-15)
        np.testing.assert_allclose(t, T, rtol=0, atol=1e-15)


def test_world_loaders_read_the_9_list_column_major(tmp_path):
    box = tmp_path / "box.urdf"
    box.write_text(BOX)
    world = sim_node.WorldModel()
    assert_same_placement(placements(lambda R: world.loadRigidObject(str(box), R=R, t=T)
                                     .getTransform()))
    assert_same_placement(placements(lambda R: world.loadTerrain(str(box), R=R, t=T)
                                     .getTransform()))
    assert_same_placement(placements(lambda R: world.loadRobot(
        ARM, fixed_base=True, R=R, t=T).link(0).getTransform()))
    obj = world.rigidObject(0)
    assert_same_placement(placements(lambda R: (obj.setTransform(R, T), obj.getTransform())[1]))


def test_sim_bodies_read_the_9_list_column_major(tmp_path):
    world = world_from_yaml(ground() + """rigid_objects:
  - name: brick
    geometry: {box: [0.4, 0.2, 0.1]}
    mass: 3.0
    pose: {position: [0, 0, 2.0]}
""", tmp_path)
    sim = sim_node.Simulator(world)
    body = sim.body(world.rigidObject("brick"))
    assert_same_placement(placements(lambda R: (body.setObjectTransform(R, T),
                                                body.getObjectTransform())[1]))
    com_offset = body.getTransform()[1] - body.getObjectTransform()[1]
    for R in (R9, M):
        body.setTransform(R, T)
        np.testing.assert_allclose(body.getTransform()[0], M, atol=1e-15)
        np.testing.assert_allclose(body.getTransform()[1], T, atol=1e-12)
    assert np.linalg.norm(com_offset) < 1e-12       # (a centred box: both frames coincide)


def test_contact_point_transform_reads_the_9_list_column_major():
    for R in (R9, M):
        c = ContactPoint([1.0, 2.0, 3.0], [0.0, 0.0, 1.0], 0.5)
        c.transform(R, T)
        np.testing.assert_allclose(c.x, M @ [1.0, 2.0, 3.0] + T, atol=1e-14)
        np.testing.assert_allclose(c.n, M[:, 2], atol=1e-15)


def test_camera_render_reads_the_9_list_column_major(tmp_path):
    world = world_from_yaml(ground() + """rigid_objects:
  - name: brick
    geometry: {box: [0.4, 0.2, 0.1]}
    mass: 3.0
    pose: {position: [0, 0, 0.05]}
""", tmp_path)
    cam = Camera(sim_node.Simulator(world), 32, 24, fov_x=1.0)
    down = so3.from_rpy([np.pi + 0.4, 0.2, 0.3])    # looking down at a slant: depth varies
    a = cam.render(down, [0.1, 0.0, 2.0]).depth
    b = cam.render(np.array(so3.matrix(down)), [0.1, 0.0, 2.0]).depth
    c = cam.render(np.array(so3.matrix(down)).T, [0.1, 0.0, 2.0]).depth
    np.testing.assert_array_equal(a, b)
    assert np.ptp(a) > 0.1 and np.abs(a - c).max() > 0.1


def test_sensor_transform_reads_the_9_list_column_major(tmp_path):
    world = sim_node.WorldModel()
    world.loadRobot(ARM, fixed_base=True)
    sensor = sim_node.Simulator(world).controller(0).addSensor("laser", "LaserRangeSensor")
    for R in (R9, M):
        sensor.setTransform(R, T)      # (kept as Klamp't's settings text, 6 digits)
        np.testing.assert_allclose(sensor.getTransform()[0], M, rtol=0, atol=1e-6)


@pytest.mark.parametrize("bad", [[1.0] * 8, np.eye(4), [[1.0, 0.0], [0.0, 1.0]]])
def test_a_wrong_shape_is_a_value_error_naming_the_argument(bad, tmp_path):
    box = tmp_path / "box.urdf"
    box.write_text(BOX)
    world = sim_node.WorldModel()
    cases = [(lambda: world.loadRigidObject(str(box), R=bad), "R: a rotation is"),
             (lambda: world.loadRobot(ARM, R=bad), "R: a rotation is"),
             (lambda: world.loadTerrain(str(box), R=bad), "R: a rotation is"),
             (lambda: ContactPoint([0, 0, 0], [0, 0, 1.0], 0.5).transform(bad, T),
              "ContactPoint.transform: R: a rotation is")]
    obj = world.loadRigidObject(str(box))
    cases.append((lambda: obj.setTransform(bad, T), "R: a rotation is"))
    sim = sim_node.Simulator(world)
    body = sim.body(obj)
    cases += [(lambda: body.setTransform(bad, T), "setTransform: a rotation is"),
              (lambda: body.setObjectTransform(bad, T), "setObjectTransform: a rotation is"),
              (lambda: Camera(sim, 8, 8).render(bad, T), r"render: R \(the optical frame")]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_a_9_list_that_is_not_a_rotation_is_refused_with_the_rule(tmp_path):
    box = tmp_path / "box.urdf"
    box.write_text(BOX)
    with pytest.raises(ValueError, match="not a rotation matrix .* column by column"):
        sim_node.WorldModel().loadRigidObject(str(box), R=[1.0, 0, 0, 0, 1.0, 0, 0, 0, 2.0])
