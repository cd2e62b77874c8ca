"""IK objectives in Klamp't's JSON form: a round trip keeps the residual, the fields are
Klamp't's (klampt.io.loader writes the same object in a subprocess), and bad content is refused
naming the field."""
import json

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import sim_node
from sim_node.model import ik
from sim_node.plan.ik_json import JSONError, from_json, to_json

ARM = """<robot name="arm3">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.5"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0.5 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def arm():
    return sim_node.WorldModel().loadRobot(ARM, fixed_base=True)


def residual(robot, obj, q):
    robot.setConfig(q)
    solver = ik.IKSolver(robot)
    solver.add(obj)
    return np.asarray(solver.getResidual())


def objectives(robot):
    c = robot.link("c").getIndex()
    fixed = ik.IKObjective()
    fixed.setLinks(c, -1)
    fixed.setFixedPosConstraint([0.1, 0, 0], [0.3, 0.2, 0.6])
    fixed.setFixedRotConstraint(Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix())
    planar = ik.IKObjective()
    planar.setLinks(c, -1)
    planar.setPlanarPosConstraint([0, 0, 0], [0, 0, 1], 0.4)
    axis = ik.IKObjective()
    axis.setLinks(c, -1)
    axis.setFixedPosConstraint([0, 0, 0], [0.4, 0, 0.5])
    axis.setAxialRotConstraint([1, 0, 0], [0, 1, 0])
    linear = ik.IKObjective()
    linear.setLinks(c, -1)
    linear.setLinearPosConstraint([0, 0, 0], [0, 0, 0.5], [1, 0, 0])
    return {"fixed": fixed, "planar": planar, "axis": axis, "linear": linear}


@pytest.mark.parametrize("kind", ["fixed", "planar", "axis", "linear"])
def test_round_trip_keeps_the_residual_at_random_configs(kind):
    robot = arm()
    obj = objectives(robot)[kind]
    data = json.loads(json.dumps(to_json(obj)))
    back = from_json(data, robot.numLinks())
    again = to_json(back)
    assert again.keys() == data.keys()
    for key, value in data.items():
        if isinstance(value, list):
            np.testing.assert_allclose(again[key], value, atol=1e-12)
        else:
            assert again[key] == value
    for q in np.random.default_rng(0).uniform(-2, 2, size=(5, 3)):
        np.testing.assert_allclose(residual(robot, back, q), residual(robot, obj, q),
                                   atol=1e-12)


def test_fields_are_klampts():
    robot = arm()
    data = to_json(objectives(robot)["fixed"])
    assert data["type"] == "IKObjective" and data["link"] == robot.link("c").getIndex()
    assert data["posConstraint"] == "fixed" and data["rotConstraint"] == "fixed"
    assert data["localPosition"] == [0.1, 0, 0] and data["endPosition"] == [0.3, 0.2, 0.6]
    np.testing.assert_allclose(data["endRotation"], [0.1, 0.2, 0.3], atol=1e-12)  # moment
    assert "destLink" not in data                       # the world, as Klamp't leaves it out


@pytest.mark.parametrize("data, message", [
    ([], "expected an object"),
    ({"link": 1, "posConstraint": "fixed", "localPosition": [0, 0, 0],
      "endPosition": [0, 0, 0], "bogus": 1}, r"unknown keys \['bogus'\]"),
    ({"link": 9, "posConstraint": "fixed"}, r"link: link 9 out of range \[0, 4\)"),
    ({"link": True, "posConstraint": "fixed"}, "a link index"),
    ({"link": 1, "destLink": -2, "posConstraint": "fixed"}, r"destLink: link -2 out of range"),
    ({"link": 1, "posConstraint": "sphere"}, "posConstraint: 'sphere'"),
    ({"link": 1, "posConstraint": "fixed", "localPosition": [0, 0], "endPosition": [0, 0, 0]},
     "localPosition: expected 3 finite numbers"),
    ({"link": 1, "posConstraint": "fixed", "localPosition": [0, 0, float("nan")],
      "endPosition": [0, 0, 0]}, "localPosition: expected 3 finite numbers"),
    ({"link": 1, "posConstraint": "planar", "localPosition": [0, 0, 0],
      "endPosition": [0, 0, 0], "direction": [0, 0, 0]}, "direction: a direction must be"),
    ({"link": 1, "rotConstraint": "twoaxis"}, "rotConstraint: 'twoaxis'"),
    ({"link": 1}, "constrains nothing"),
])
def test_bad_objects_are_refused_naming_the_field(data, message):
    with pytest.raises(JSONError, match=message):
        from_json(data, 4)


def test_klampt_writes_the_same_object(tmp_path):
    from klampt_reference import run_klampt
    out = run_klampt("""
        from klampt.model import ik
        from klampt.io import loader
        w = WorldModel(); w.loadElement(ARM); robot = w.robot(0)
        from klampt.math import so3
        point = ik.objective(robot.link(1), local=[0.1, 0, 0], world=[0.3, 0.2, 0.6])
        pose = ik.objective(robot.link(1), R=so3.from_moment([0.1, 0.2, 0.3]), t=[0.3, 0.2, 0.6])
        emit([loader.to_json(point, 'IKObjective'), loader.to_json(pose, 'IKObjective')])
    """, tmp_path)
    robot = sim_node.WorldModel().loadRobot(str(tmp_path / "arm.urdf"), fixed_base=True)
    point = ik.objective(robot.link(1), local=[0.1, 0, 0], world=[0.3, 0.2, 0.6])
    assert to_json(point) == out[0]
    R9 = Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix().T.reshape(9).tolist()  # Klamp't's
    pose = to_json(ik.objective(robot.link(1), R=R9, t=[0.3, 0.2, 0.6]))
    assert pose.keys() == out[1].keys()
    for key in pose:
        if isinstance(pose[key], list):
            np.testing.assert_allclose(pose[key], out[1][key], atol=1e-12)
        else:
            assert pose[key] == out[1][key]
