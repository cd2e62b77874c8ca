"""RobotModel.interpolate / interpolateDeriv / distance (sim_node.model.config_space):

* against klampt 0.10.1 on pybullet_data's r2d2 (floating base, five continuous joints, a
  prismatic and two revolute ones): the link poses of interpolated configurations (1e-12),
  the distances (1e-12), interpolateDeriv's joint rates (1e-12) and the link velocities it
  gives against the derivative of Klamp't's geodesic, on 60 seeded random pairs;
* the geodesic's defining properties on a robot with spherical, planar and floating joints,
  which Klamp't's URDF reader does not have: endpoints, d(a, x(u)) = u d(a, b), and the
  derivative against finite differences of the link poses;
* hostile input.
"""
import json
import math

import numpy as np
import pytest

import sim_node
from klampt_reference import run_klampt
from r2d2_klampt import (KLAMPT_PRELUDE, R2D2, klampt_config, link_poses, r2d2,
                         random_config)
from sim_node.math import so3

KLAMPT_SCRIPT = KLAMPT_PRELUDE + """
out = []
for a, b, u in data["pairs"]:
    a, b = config(*a), config(*b)
    x = r.interpolate(a, b, u)
    r.setConfig(x)
    item = {"poses": poses(), "distance": r.distance(a, b)}
    d = r.interpolateDeriv(a, b)
    item["deriv_base_linear"] = d[0:3]
    item["deriv_joints"] = {r.link(i).getName(): d[i] for i in range(6, r.numLinks())}
    # the world twist of each link along Klamp't's own geodesic, by central differences
    h = 1e-6
    r.setConfig(r.interpolate(a, b, -h))
    before = poses()
    r.setConfig(r.interpolate(a, b, h))
    after = poses()
    r.setConfig(a)
    item["fd_velocities"] = [
        so3.deskew(so3.mul([(q - p) / (2 * h) for p, q in zip(p0[:9], p1[:9])],
                           so3.inv(list(l.getTransform()[0]))))
        + [(q - p) / (2 * h) for p, q in zip(p0[9:], p1[9:])]
        for p0, p1, l in zip(before, after, links)]
    out.append(item)
emit(out)
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    robot = r2d2()
    rng = np.random.default_rng(17)
    pairs = []
    for k in range(60):
        a, b = random_config(robot, rng), random_config(robot, rng)
        if k % 3 == 0:      # nearby pairs too, and continuous joints wrapping through +-pi
            b = robot.interpolate(a, b, 0.1)
        pairs.append((a, b, float(rng.uniform(-0.2, 1.2))))
    path = tmp_path_factory.mktemp("r2d2") / "pairs.json"
    path.write_text(json.dumps({
        "links": [link.getName() for link in robot.links()],
        "pairs": [(klampt_config(robot, a), klampt_config(robot, b), u) for a, b, u in pairs]}))
    ref = run_klampt(f"URDF = {R2D2!r}\nDATA = {str(path)!r}\n" + KLAMPT_SCRIPT, path.parent)
    return robot, pairs, ref


def test_interpolated_link_poses_match_klampt_on_r2d2(reference):
    robot, pairs, ref = reference
    worst = 0.0
    for (a, b, u), item in zip(pairs, ref):
        ours = link_poses(robot, robot.interpolate(a, b, u))
        worst = max(worst, np.abs(np.array(ours) - np.array(item["poses"])).max())
    assert len(pairs) == 60 and worst < 1e-12


def test_distance_matches_klampt_on_r2d2(reference):
    robot, pairs, ref = reference
    ours = [robot.distance(a, b) for a, b, _ in pairs]
    assert np.allclose(ours, [item["distance"] for item in ref], rtol=1e-12, atol=1e-12)
    assert min(ours) > 0


def test_interpolate_deriv_matches_klampt_on_r2d2(reference):
    """Joint rates and the base's linear rate equal Klamp't's interpolateDeriv; the link
    velocities equal the derivative of Klamp't's geodesic (finite differences of its link
    poses, 1e-6 steps). Klamp't 0.10.1's own interpolateDeriv gets the floating base's Euler
    rates wrong: its angular velocity is not that of its interpolate (off by 0.4 rad/s in the
    first pair here)."""
    robot, pairs, ref = reference
    by_child = {j.child: name for name, j in robot.urdf.joints.items()}
    worst_rates, worst_twists = 0.0, 0.0
    for (a, b, _), item in zip(pairs, ref):
        v = robot.interpolateDeriv(a, b)
        assert v.shape == (robot.model.nv,)
        for link, rate in item["deriv_joints"].items():
            if by_child[link] in robot.getJointNames():
                ours = v[robot.jointIndices(by_child[link])[1]]
                worst_rates = max(worst_rates, abs(ours - rate))
        robot.setConfig(a)
        R_base = robot.link(0).getTransform()[0]
        worst_rates = max(worst_rates, np.abs(R_base @ v[0:3] - item["deriv_base_linear"]).max())
        twists = [link.getJacobian() @ v for link in robot.links()]
        worst_twists = max(worst_twists, np.abs(np.array(twists)
                                                - np.array(item["fd_velocities"])).max())
    assert worst_rates < 1e-12
    assert worst_twists < 1e-6


# -- the geodesic's properties on joints Klamp't's URDF reader lacks ---------------------
JOINTS_URDF = """<robot name="joints">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="c"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="d"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ball" type="spherical"><parent link="base"/><child link="a"/><origin xyz="0 0 1" rpy="0.1 0.2 0.3"/></joint>
  <joint name="slide" type="planar"><parent link="a"/><child link="b"/><origin xyz="0.5 0 0"/><axis xyz="0 1 1"/></joint>
  <joint name="free" type="floating"><parent link="b"/><child link="c"/><origin xyz="0 0.3 0" rpy="1 0 0"/></joint>
  <joint name="spin" type="continuous"><parent link="c"/><child link="d"/><origin xyz="0.2 0 0"/><axis xyz="1 0 0"/></joint>
</robot>"""


def joints_robot():
    return sim_node.WorldModel().loadRobot(JOINTS_URDF, fixed_base=False)


def random_joint_config(robot, rng):
    q = rng.normal(size=robot.model.nq) * 2
    for k in robot.structure.quaternions:
        q[k:k + 4] /= np.linalg.norm(q[k:k + 4])
    return q


def pose_derivative(robot, q_of_u, u, h=1e-6):
    """Finite-difference world twists [w; v] of every link along the path q(u)."""
    before, after = link_poses(robot, q_of_u(u - h)), link_poses(robot, q_of_u(u + h))
    mid = link_poses(robot, q_of_u(u))
    out = []
    for p0, p1, pm in zip(before, after, mid):
        dR = (p1[:9] - p0[:9]) / (2 * h)
        w = so3.deskew(so3.mul(dR.tolist(), so3.inv(pm[:9].tolist())))
        out.append(np.concatenate([w, (p1[9:] - p0[9:]) / (2 * h)]))
    return np.array(out)


@pytest.mark.parametrize("seed", range(8))
def test_geodesic_properties_with_spherical_planar_floating_and_continuous_joints(seed):
    robot = joints_robot()
    assert robot.model.nq == 7 + 4 + 3 + 7 + 1 and robot.model.nv == 6 + 3 + 3 + 6 + 1
    rng = np.random.default_rng(seed)
    a, b = random_joint_config(robot, rng), random_joint_config(robot, rng)
    assert np.array_equal(robot.interpolate(a, b, 0.0), a)
    assert np.allclose(link_poses(robot, robot.interpolate(a, b, 1.0)), link_poses(robot, b),
                       atol=1e-12)
    d = robot.distance(a, b)
    assert robot.distance(b, a) == pytest.approx(d, rel=1e-12)
    for u in (0.25, 0.6, 0.9):
        x = robot.interpolate(a, b, u)
        assert robot.distance(a, x) == pytest.approx(u * d, rel=1e-10)
        assert robot.distance(x, b) == pytest.approx((1 - u) * d, rel=1e-10)
        v = robot.interpolateDeriv(a, b, u)
        robot.setConfig(x)
        twists = np.array([link.getJacobian() @ v for link in robot.links()])
        fd = pose_derivative(robot, lambda s: robot.interpolate(a, b, s), u)
        assert np.abs(twists - fd).max() < 1e-6 * max(1.0, np.abs(fd).max())


def test_continuous_joints_take_the_shorter_way_and_distance_wraps():
    robot = r2d2()
    a, b = robot.getConfig(), robot.getConfig()
    k = robot.jointIndices("head_swivel")[0]
    a[k], b[k] = 3.0, -3.0 + 4 * math.pi       # 0.283 rad apart through pi
    mid = robot.interpolate(a, b, 0.5)
    assert mid[k] == pytest.approx(math.pi, abs=1e-12)
    assert robot.distance(a, b) == pytest.approx(2 * math.pi - 6.0, abs=1e-12)
    assert robot.interpolateDeriv(a, b)[robot.jointIndices("head_swivel")[1]] == pytest.approx(
        2 * math.pi - 6.0, abs=1e-12)
    g = robot.jointIndices("gripper_extension")[0]      # bounded: straight
    a[g], b[g] = -0.3, 0.0
    assert robot.interpolate(a, b, 0.5)[g] == pytest.approx(-0.15)


def test_base_rotation_takes_the_shorter_way_for_either_quaternion_sign():
    robot = r2d2()
    a, b = robot.getConfig(), robot.getConfig()
    b[3:7] = [0.0, 0.0, -math.sin(0.4), -math.cos(0.4)]     # 0.8 rad about z, as -q
    mid = robot.interpolate(a, b, 0.5)
    assert abs(mid[3:7] @ [0.0, 0.0, math.sin(0.2), math.cos(0.2)]) == pytest.approx(1.0)
    assert robot.distance(a, b) == pytest.approx(0.8, abs=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda r, q: r.interpolate(q[:-1], q, 0.5), r"interpolate: a: expected 15 values"),
    (lambda r, q: r.interpolate(q, np.append(q, 0.0), 0.5), r"b: expected 15 values"),
    (lambda r, q: r.distance(q, np.where(np.arange(15) == 8, np.nan, q)), "NaN or infinity"),
    (lambda r, q: r.interpolate(q, q, math.nan), "u must be finite"),
    (lambda r, q: r.interpolate(q, q, "half"), "u must be a number"),
    (lambda r, q: r.interpolateDeriv(q, np.where(np.arange(15) < 7, 0.0, q)),
     "quaternion is zero"),
])
def test_bad_configurations_are_a_clear_value_error(call, message):
    robot = r2d2()
    with pytest.raises(ValueError, match=message):
        call(robot, robot.getConfig())
