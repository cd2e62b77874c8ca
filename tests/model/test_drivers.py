"""RobotModelDriver and the driver conversions against Klamp't 0.10.1 (in a subprocess) on robots
nobody here wrote: pybullet_data's kuka_iiwa and franka_panda (mimic fingers) and
example-robot-data's romeo (hands of mimic joints, one with multiplier -1)."""
import importlib.metadata
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import sim_node
from klampt_reference import run_klampt

KLAMPT_DRIVERS = """
w = WorldModel()
assert w.loadRobot(URDF)
r = w.robot(0)
out = []
for i in range(r.numDrivers()):
    d = r.driver(i)
    out.append(dict(name=d.getName(), type=d.getType(),
                    links=[r.link(k).getName() for k in d.getAffectedLinks()],
                    link=r.link(d.getAffectedLink()).getName(), coeffs=d.getAffineCoeffs(),
                    limits=d.getLimits(), vlimits=d.getVelocityLimits(),
                    tlimits=d.getTorqueLimits()))
emit(out)
"""


def _pybullet_urdf(*parts) -> str:
    pybullet_data = pytest.importorskip("pybullet_data")
    return os.path.join(pybullet_data.getDataPath(), *parts)


def _erd_urdf(*parts) -> str:
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    robots = Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))
    return str(robots.joinpath(*parts))


def _load(urdf):
    world = sim_node.WorldModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return world.loadRobot(urdf)


def _ours(robot):
    out = []
    for i in range(robot.numDrivers()):
        d = robot.driver(i)
        out.append(dict(name=d.getName(), type=d.getType(),
                        links=[robot.link(k).getName() for k in d.getAffectedLinks()],
                        link=robot.link(d.getAffectedLink()).getName(),
                        coeffs=d.getAffineCoeffs(), limits=d.getLimits(),
                        vlimits=d.getVelocityLimits(), tlimits=d.getTorqueLimits()))
    return out


def _check_driver(mine, theirs, all_followers=True):
    assert mine["type"] == theirs["type"], mine["name"]
    assert mine["link"] == theirs["link"] == mine["links"][0] == theirs["links"][0]
    if theirs["type"] == "affine":
        mine_c = dict(zip(mine["links"], zip(*mine["coeffs"])))
        theirs_c = dict(zip(theirs["links"], zip(*theirs["coeffs"])))
        if all_followers:
            assert set(mine_c) == set(theirs_c), mine["name"]
        assert {k: mine_c[k] for k in theirs_c} == pytest.approx(theirs_c), mine["name"]
    else:
        assert mine["links"] == theirs["links"] and mine["coeffs"] == ([], [])
    np.testing.assert_allclose(mine["limits"], theirs["limits"], atol=1e-9)
    if theirs["type"] == "affine":
        # Klamp't 0.10.1 reports [v, v] for affine drivers (its minimum has the wrong sign)
        assert mine["vlimits"] == [-theirs["vlimits"][1], theirs["vlimits"][1]]
    else:
        np.testing.assert_allclose(mine["vlimits"], theirs["vlimits"], atol=1e-9)
    np.testing.assert_allclose(mine["tlimits"], theirs["tlimits"], atol=1e-9)


@pytest.mark.parametrize("which", ["kuka_iiwa", "franka_panda"])
def test_driver_lists_of_arms_match_klampt(which, tmp_path):
    urdf = _pybullet_urdf(which, "model.urdf" if which == "kuka_iiwa" else "panda.urdf")
    reference = run_klampt(f"URDF = {urdf!r}\n" + KLAMPT_DRIVERS, tmp_path)
    ours = _ours(_load(urdf))
    assert [d["name"] for d in ours] == [d["name"] for d in reference]     # same order too
    for mine, theirs in zip(ours, reference):
        _check_driver(mine, theirs)
    if which == "franka_panda":
        fingers = [d for d in ours if d["type"] == "affine"]
        assert [d["links"] for d in fingers] == [["panda_leftfinger", "panda_rightfinger"]]
        assert fingers[0]["coeffs"] == ([1.0, 1.0], [0.0, 0.0])


def test_romeo_drivers_match_klampt_where_klampt_reads_the_mimics(tmp_path):
    # romeo's hands: LHand / RHand drive 11 mimic joints each (LThumb1 mirrored, -1). Klamp't
    # 0.10.1 attaches a follower only when its link comes after the master's in its link order
    # ("Couldn't load mimic joint" otherwise) and leaves the others as independent drivers; we
    # attach every follower. Everything else must agree.
    urdf = _erd_urdf("romeo_description", "urdf", "romeo.urdf")
    listed = run_klampt(f"URDF = {urdf!r}\n" + KLAMPT_DRIVERS, tmp_path)
    reference = {d["name"]: d for d in listed}
    robot = _load(urdf)
    ours = {d["name"]: d for d in _ours(robot)}
    # Klamp't's order (its link order: depth first, children by joint name), not q order
    assert list(ours) == [d["name"] for d in listed if d["name"] in ours]
    qi, _ = robot.getDriverIndices()
    assert list(qi) != sorted(qi)
    followers = {robot.link(k).getName() for d in robot.getDrivers()
                 for k in d.getAffectedLinks()[1:]}
    assert set(ours) <= set(reference)
    assert set(reference) - set(ours) <= followers     # Klamp't's extra drivers: our followers
    assert len(followers) == 22
    for name, mine in ours.items():
        _check_driver(mine, reference[name], all_followers=False)
    hands = [d for d in ours.values() if d["type"] == "affine"]
    assert len(hands) == 2 and all(len(d["links"]) == 12 for d in hands)
    assert all(-1.0 in reference[d["name"]]["coeffs"][0] for d in hands)   # the mirrored thumb


def test_set_value_moves_the_mimic_follower_by_its_coefficients():
    robot = _load(_erd_urdf("romeo_description", "urdf", "romeo.urdf"))
    affine = next(robot.driver(i) for i in range(robot.numDrivers())
                  if robot.driver(i).getType() == "affine")
    lo, hi = affine.getLimits()
    value = 0.3 * lo + 0.7 * hi
    affine.setValue(value)
    assert affine.getValue() == value
    scales, offsets = affine.getAffineCoeffs()
    # each affected link turns about its joint axis by scale * value + offset: compare the
    # child link's rotation relative to its parent with the URDF joint's rotation
    for link_index, scale, offset in zip(affine.getAffectedLinks(), scales, offsets):
        link = robot.link(link_index)
        joint = robot.urdf.joints[link.getParentJoint()]
        R_parent, _ = robot.link(link.getParent()).getTransform()
        R_child, _ = link.getTransform()
        R_rel = joint.origin.R.T @ R_parent.T @ R_child      # the joint's own rotation
        angle = scale * value + offset
        axis = np.asarray(joint.axis, dtype=float)
        K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
        expected = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K
        np.testing.assert_allclose(R_rel, expected, atol=1e-9)


def test_config_and_velocity_conversions_round_trip_on_a_floating_base(tmp_path):
    urdf = _pybullet_urdf("franka_panda", "panda.urdf")
    robot = _load(urdf)
    assert robot.isFloatingBase()          # (its base link has mass: floating by our rule)
    rng = np.random.default_rng(3)
    lower, upper = robot.getJointLimits()
    q = robot.getConfig()
    qi, vi = robot.getDriverIndices()
    q[qi] = rng.uniform(lower[qi], upper[qi])
    robot.setConfig(q)
    values = robot.configToDrivers(q)
    np.testing.assert_array_equal(values, q[qi])
    np.testing.assert_array_equal(robot.configFromDrivers(values), q)
    np.testing.assert_array_equal(robot.driversToConfig(values), q)
    v = rng.normal(size=robot.model.nv)
    robot.setVelocity(v)
    np.testing.assert_array_equal(robot.velocityToDrivers(v), v[vi])
    np.testing.assert_array_equal(robot.velocityFromDrivers(v[vi]), v)
    assert robot.driver(0).getVelocity() == v[vi[0]]
    robot.driver(0).setVelocity(0.25)
    assert robot.getVelocity()[vi[0]] == 0.25


def test_config_from_drivers_keeps_entries_without_a_driver_as_klampt(tmp_path):
    # Klamp't's configFromDrivers starts from the robot's current configuration
    urdf = _pybullet_urdf("kuka_iiwa", "model.urdf")
    reference = run_klampt(f"""
w = WorldModel(); w.loadRobot({urdf!r}); r = w.robot(0)
q = r.getConfig(); q[0] = 0.7; q[6] = 0.2; r.setConfig(q)
emit([r.configFromDrivers([0.1] * r.numDrivers()), r.configToDrivers(q)])
""", tmp_path)
    robot = _load(urdf)
    q = robot.getConfig()
    qi, _ = robot.getDriverIndices()
    q[qi[0]] = 0.2
    robot.setConfig(q)
    np.testing.assert_allclose(robot.configToDrivers(q), reference[1])
    np.testing.assert_allclose(robot.configFromDrivers([0.1] * robot.numDrivers())[qi],
                               reference[0][6:])


def test_driver_lookup_by_link_or_joint_name_and_clear_errors():
    robot = _load(_pybullet_urdf("kuka_iiwa", "model.urdf"))
    assert robot.driver("lbr_iiwa_link_3").getJointName() == "lbr_iiwa_joint_3"
    assert robot.driver("lbr_iiwa_joint_3").getName() == "lbr_iiwa_link_3"
    assert robot.getDriversDict()["lbr_iiwa_link_1"].getIndex() == 0
    with pytest.raises(KeyError, match="no driver 'nope'.*lbr_iiwa_link_1"):
        robot.driver("nope")
    with pytest.raises(IndexError, match=r"driver index 7 out of range \[0, 7\)"):
        robot.driver(7)
    with pytest.raises(ValueError, match="expected 7 driver values"):
        robot.configFromDrivers([0.0] * 3)
    with pytest.raises(ValueError, match="must be finite"):
        robot.driver(0).setValue(float("nan"))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.text(max_size=3), st.none()), min_size=0, max_size=9))
def test_hostile_driver_vectors_are_refused_with_value_errors(values):
    robot = _ARM
    try:
        out = robot.configFromDrivers(values)
    except ValueError as error:
        assert "configFromDrivers" in str(error)
        return
    assert out.shape == (robot.model.nq,) and np.all(np.isfinite(out))


_ARM = sim_node.WorldModel().loadRobot("""<robot name="arm">
  <link name="base"/>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><axis xyz="0 1 0"/>
  </joint>
</robot>""", fixed_base=True)


def test_continuous_joint_driver_is_unbounded():
    assert _ARM.numDrivers() == 2
    assert _ARM.driver("l2").getLimits() == [-math.inf, math.inf]
    assert _ARM.driver("l1").getTorqueLimits() == [-10.0, 10.0]
