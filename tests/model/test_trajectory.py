"""sim_node.model.trajectory against klampt.model.trajectory 0.10.1 (the same calls run here and
in a klampt subprocess on seeded milestones, compared to 1e-12), against closed forms where
Klamp't 0.10.1 is wrong (insert, remesh, Hermite acceleration, SO3 angular velocity), and
hostile input."""
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from klampt_reference import run_klampt
from sim_node.math import se3, so3, vectorops
from sim_node.math.geodesic import CartesianSpace
from sim_node.model import trajectory as trajectory_module
from sim_node.model.trajectory import (GeodesicHermiteTrajectory, HermiteTrajectory,
                                       RobotTrajectory,
                                       SE3HermiteTrajectory, SE3Trajectory,
                                       SO3HermiteTrajectory, SO3Trajectory, Trajectory)

# The calls, run verbatim on both sides with T bound to each library's trajectory module.
EXERCISE = '''
def flat(x):
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in flat(item)]
    return [float(x)]

def make(T, kind, times, milestones):
    if kind == "linear":
        return T.Trajectory(times, milestones)
    if kind == "so3":
        return T.SO3Trajectory(times, milestones)
    if kind == "se3":
        return T.SE3Trajectory(times, milestones)
    if kind == "hermite":
        n = len(milestones[0]) // 2
        return T.HermiteTrajectory(times, [m[:n] for m in milestones], [m[n:] for m in milestones])

def exercise(T, cases):
    out = []
    for kind, times, milestones, probes, dt in cases:
        traj = make(T, kind, times, milestones)
        r = {}
        r["eval"] = [flat(traj.eval(t)) for t in probes]
        r["loop"] = [flat(traj.eval(t, "loop")) for t in probes]
        r["segment"] = [flat(traj.getSegment(t)) for t in probes]
        if kind != "so3" and kind != "se3":
            r["deriv"] = [flat(traj.deriv(t)) for t in probes]
        r["span"] = [traj.startTime(), traj.endTime(), traj.duration()]
        d = traj.discretize(dt)
        r["discretize"] = [d.times, flat(d.milestones)]
        for t in probes[1:4]:
            a, b = traj.split(t)
            r["split%g" % t] = [a.times, flat(a.milestones), b.times, flat(b.milestones)]
            r["before%g" % t] = flat(traj.before(t).milestones)
        if kind != "hermite":
            r["length"] = traj.length()
        else:
            r["eval_state"] = [flat(traj.eval_state(t)) for t in probes]
        tail = make(T, kind, [traj.endTime() + x for x in (0.0, 0.5, 1.25)],
                    [milestones[-1], milestones[0], milestones[1]])
        c = traj.concat(tail)
        r["concat"] = [c.times, flat(c.milestones)]
        c = traj.concat(make(T, kind, [0.0, 1.0], [milestones[1], milestones[0]]), relative=True,
                        jumpPolicy="jump")
        r["concat_jump"] = [c.times, flat(c.milestones)]
        c = traj.concat(make(T, kind, [0.0, 1.0], [milestones[1], milestones[0]]), relative=True,
                        jumpPolicy="blend")
        r["concat_blend"] = [c.times, flat(c.milestones)]
        if kind == "linear":
            r["extract"] = flat(traj.extractDofs([2, 0]).milestones)
        out.append(r)
    return out
'''


def random_rotation(rng):
    q = rng.normal(size=4)
    return so3.from_quaternion((q / np.linalg.norm(q)).tolist())


def cases():
    rng = np.random.default_rng(5)
    out = []
    for kind in ("linear", "so3", "se3", "hermite"):
        for k in range(6):
            n = int(rng.integers(3 if k == 5 else 2, 7))
            times = np.cumsum(rng.uniform(0.1, 1.5, size=n)).tolist()
            if k == 5:
                times[2] = times[1]          # a jump: two milestones at one time
            if kind == "linear":
                milestones = rng.normal(size=(n, 4)).tolist()
            elif kind == "so3":
                milestones = [random_rotation(rng) for _ in range(n)]
            elif kind == "se3":
                milestones = [random_rotation(rng) + rng.normal(size=3).tolist()
                              for _ in range(n)]
            else:
                milestones = rng.normal(size=(n, 6)).tolist()
            span = times[-1] - times[0]
            probes = ([times[0] - 0.5, times[0], times[1]] + sorted(
                rng.uniform(times[0] - 0.1 * span, times[-1] + 0.3 * span, size=12).tolist())
                + [times[-1], times[-1] + 2.0] + times[1:-1])
            out.append((kind, times, milestones, probes, float(rng.uniform(0.05, 0.4))))
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("traj") / "cases.json"
    cs = cases()
    path.write_text(json.dumps(cs))
    ref = run_klampt(EXERCISE + f"""
from klampt.model import trajectory as T
emit(exercise(T, json.load(open({str(path)!r}))))
""", path.parent)
    return cs, ref


def same(a, b, tol=1e-12):
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b))
    return abs(a - b) <= tol * max(1.0, abs(b))


def test_eval_deriv_discretize_split_concat_match_klampt(reference):
    cs, ref = reference
    namespace = {}
    exec(EXERCISE, namespace)
    ours = namespace["exercise"](trajectory_module, cs)
    failures = []
    for (kind, *_), o, r in zip(cs, ours, ref):
        assert o.keys() == r.keys()
        for key in o:
            if not same(o[key], r[key]):
                failures.append(f"{kind} {key}: ours {o[key]!r:.200} klampt {r[key]!r:.200}")
    assert len(cs) == 24
    assert not failures, "\n".join(failures[:10])


def test_so3_angular_velocity_is_the_world_one_klampt_rotates_it(reference, tmp_path):
    """Klamp't 0.10.1's deriv_angvel returns R(t) w for the world angular velocity w (its
    SO3Space.difference applies R_b to the error vector); ours returns w, checked against
    finite differences of eval, and equal to R(t)^T times Klamp't's."""
    rng = np.random.default_rng(2)
    R = [random_rotation(rng) for _ in range(4)]
    times = [0.0, 0.7, 1.5, 2.0]
    probes = [0.2, 0.9, 1.1, 1.9]
    ref = run_klampt(f"""
from klampt.model import trajectory as T
traj = T.SO3Trajectory({times!r}, {R!r})
emit([traj.deriv_angvel(t) for t in {probes!r}])
""", tmp_path)
    traj = SO3Trajectory(times, R)
    h = 1e-6
    for t, k in zip(probes, ref):
        w = traj.deriv_angvel(t)
        Ra, Rb = traj.eval(t - h), traj.eval(t + h)
        dR = [(b - a) / (2 * h) for a, b in zip(Ra, Rb)]
        w_fd = so3.deskew(so3.mul(dR, so3.inv(traj.eval(t))))
        assert w == pytest.approx(w_fd, abs=1e-8)
        assert w == pytest.approx(so3.apply(so3.inv(traj.eval(t)), k), abs=1e-12)
        assert traj.deriv(t) == pytest.approx(so3.cross_product(w), abs=1e-15)


def test_se3_trajectory_accepts_pairs_and_matrices_and_moves_points():
    R1, R2 = so3.from_rpy([0.1, 0.2, 0.3]), so3.from_rpy([-0.5, 0.4, 2.0])
    traj = SE3Trajectory([0.0, 2.0], [(R1, [0.0, 0, 0]), (np.array(so3.matrix(R2)), [2.0, 0, 0])])
    assert traj.milestones[1] == pytest.approx(R2 + [2.0, 0, 0], abs=1e-15)
    R, t = traj.eval(1.0)
    assert R == pytest.approx(so3.interpolate(R1, R2, 0.5), abs=1e-15) and t == [1.0, 0.0, 0.0]
    screw = traj.deriv_screw(1.0)
    assert screw[:3] == pytest.approx(vectorops.mul(so3.error(R2, R1), 0.5), abs=1e-12)
    assert screw[3:] == [1.0, 0.0, 0.0]
    p = traj.getPositionTrajectory([0.0, 0.0, 1.0])
    assert p.milestones[1] == pytest.approx(se3.apply((R2, [2.0, 0, 0]), [0, 0, 1.0]))
    assert isinstance(traj.getRotationTrajectory(), SO3Trajectory)
    traj.preTransform((so3.identity(), [0.0, 0.0, 5.0]))
    assert traj.eval(0.0)[1] == [0.0, 0.0, 5.0]


def test_hermite_acceleration_is_the_cubics_second_derivative():
    """Klamp't 0.10.1's eval_accel evaluates the segment backwards (difference_state gets the
    end first): for x(0) = 0, x'(0) = 0, x(1) = 1, x'(1) = 2 it gives -6.8 at 0.3 where the
    cubic x = u^3 has 6 u = 1.8."""
    traj = HermiteTrajectory([0.0, 1.0], [[0.0], [1.0]], [[0.0], [3.0]])
    for u in (0.1, 0.3, 0.8):
        assert traj.eval(u) == pytest.approx([u ** 3], abs=1e-15)
        assert traj.deriv(u) == pytest.approx([3 * u ** 2], abs=1e-15)
        assert traj.eval_accel(u) == pytest.approx([6 * u], abs=1e-14)


def test_hermite_spline_through_waypoints_is_c1_and_interpolates():
    rng = np.random.default_rng(4)
    times = np.cumsum(rng.uniform(0.2, 1.0, size=6)).tolist()
    waypoints = Trajectory(times, rng.normal(size=(6, 3)).tolist())
    h = HermiteTrajectory()
    h.makeSpline(waypoints)
    for t, m in zip(times, waypoints.milestones):
        assert h.eval(t) == pytest.approx(m, abs=1e-12)
    for t in times[1:-1]:
        assert h.deriv(t - 1e-9) == pytest.approx(h.deriv(t + 1e-9), abs=1e-6)
    fine = h.discretize(1e-3).length()
    assert fine <= h.length() and h.length() < 2 * fine      # a bound, and not a loose one
    bez = HermiteTrajectory()
    bez.makeBezier([0.0, 1.0], [[0.0], [1.0], [2.0], [3.0]])       # a straight line
    assert bez.eval(0.25) == pytest.approx([0.75]) and bez.deriv(0.6) == pytest.approx([3.0])


def test_bezier_on_a_geodesic_equals_the_cubic_bezier_in_a_vector_space():
    """GeodesicHermiteTrajectory.makeBezier in R^2 is the closed-form cubic Bezier curve
    B(u) = (1-u)^3 a + 3u(1-u)^2 b + 3u^2(1-u) c + u^3 d on each segment, and a kink between
    segments doubles its knot (Hermite makeBezier does the same)."""
    pts = [[0.0, 0.0], [1.0, 2.0], [2.0, 2.0], [3.0, 0.0], [5.0, -1.0], [6.0, 0.0], [7.0, 2.0]]
    times = [0.0, 1.0, 3.0]
    geo = GeodesicHermiteTrajectory(CartesianSpace(2))
    geo.makeBezier(times, pts)
    flat = HermiteTrajectory()
    flat.makeBezier(times, pts)
    assert len(geo.times) == len(flat.times) == 4        # (3,0)-(2,2) vs (5,-1)-(3,0): a kink
    for seg, (t0, t1) in enumerate(zip(times, times[1:])):
        a, b, c, d = (np.array(p) for p in pts[3 * seg:3 * seg + 4])
        for u in (0.1, 0.5, 0.9):
            expected = ((1 - u) ** 3 * a + 3 * u * (1 - u) ** 2 * b + 3 * u * u * (1 - u) * c
                        + u ** 3 * d)
            t = t0 + u * (t1 - t0)
            assert geo.eval(t) == pytest.approx(expected.tolist(), abs=1e-12)
            assert flat.eval(t) == pytest.approx(expected.tolist(), abs=1e-12)
    with pytest.raises(ValueError, match="control points"):
        geo.makeBezier(times, pts[:-1])


def test_insert_keeps_time_order():
    """Klamp't 0.10.1 inserts a mid-segment milestone before the segment's start (times become
    [0.5, 0, 1, 2])."""
    traj = Trajectory([0.0, 1.0, 2.0], [[0.0], [1.0], [4.0]])
    assert traj.insert(0.5) == 1
    assert traj.times == [0.0, 0.5, 1.0, 2.0] and traj.milestones[1] == [0.5]
    assert traj.insert(1.0) == 2 and traj.insert(-1.0) == 0 and traj.insert(3.0) == 5
    traj.checkValid()


@given(st.lists(st.floats(-5, 5), min_size=2, max_size=8),
       st.lists(st.floats(-1, 4), min_size=1, max_size=6), st.floats(1e-6, 1e-1))
def test_remesh_follows_the_path_and_hits_every_new_time(values, newtimes, tol):
    """Klamp't 0.10.1's remesh drops the last milestone (Trajectory([0, 1, 2], [[0], [1], [4]])
    .remesh([0.5]) ends at t = 1); ours keeps the path within tol."""
    times = [float(i) for i in range(len(values))]
    traj = Trajectory(times, [[v] for v in values])
    path, index = traj.remesh(newtimes, tol)
    path.checkValid()
    assert [path.times[i] for i in index] == newtimes
    for t in np.linspace(-1.5, len(values) + 1.0, 97).tolist() + times:
        assert path.eval(t)[0] == pytest.approx(traj.eval(t)[0], abs=tol * 1.0001 + 1e-12)


def test_stack_and_extract_dofs():
    a = Trajectory([0.0, 1.0], [[0.0], [1.0]])
    b = Trajectory([0.0, 0.5, 2.0], [[5.0, 6.0], [5.0, 7.0], [5.0, 9.0]])
    s = Trajectory()
    s.stackDofs([a, b])
    assert s.times == [0.0, 0.5, 1.0, 2.0]
    assert s.milestones == [[0.0, 5.0, 6.0], [0.5, 5.0, 7.0], [1.0, 5.0, 23 / 3], [1.0, 5.0, 9.0]]
    assert s.extractDofs([2]).milestones == [[6.0], [7.0], [23 / 3], [9.0]]


def test_save_and_load_round_trip(tmp_path):
    traj = Trajectory([0.0, 0.25, 1.0], [[1.0, 2.0], [3.0, -1e-17], [0.1, 0.2]])
    traj.save(tmp_path / "t.txt")
    back = Trajectory()
    back.load(tmp_path / "t.txt")
    assert back.times == traj.times and back.milestones == traj.milestones
    (tmp_path / "bad.txt").write_text("0 2 1.0\n")
    with pytest.raises(ValueError, match="bad.txt:1"):
        back.load(tmp_path / "bad.txt")


# -- hostile input ---------------------------------------------------------------------------
@pytest.mark.parametrize("times, milestones, message", [
    ([0.0, 1.0, 0.5], [[0.0]] * 3, r"non-decreasing, but times\[2\] = 0.5 < times\[1\]"),
    ([0.0, math.nan], [[0.0]] * 2, r"times\[1\]: a time must be finite"),
    ([0.0, math.inf], [[0.0]] * 2, r"times\[1\]: a time must be finite"),
    ([0.0, 1.0], [[0.0, 1.0], [0.0]], r"milestones\[1\] has 1 entries, expected 2"),
    ([0.0, 1.0], [[0.0], [math.nan]], r"milestones\[1\]: contains NaN or infinity"),
    ([0.0, 1.0], [[0.0], [-math.inf]], r"milestones\[1\]: contains NaN or infinity"),
    ([0.0, 1.0, 2.0], [[0.0], [1.0]], "3 times but 2 milestones"),
    ([0.0, 1.0], [[0.0], "ab"], r"milestones\[1\]: must be a sequence of numbers"),
    (["x"], [[0.0]], r"times\[0\]: a time must be a number"),
])
def test_bad_timing_or_milestones_are_a_clear_value_error(times, milestones, message):
    with pytest.raises(ValueError, match=message):
        Trajectory(times, milestones)


@pytest.mark.parametrize("make, message", [
    (lambda: SO3Trajectory([0.0], [[1.0, 0.0, 0.0]]), r"milestones\[0\]: a rotation is a 3x3"),
    (lambda: SE3Trajectory([0.0], [([1.0] * 9, [0.0, 1.0])]), "translation must be 3 numbers"),
    (lambda: SE3Trajectory([0.0], [[0.0] * 11]), r"milestones\[0\] has 11 entries, expected 12"),
    (lambda: HermiteTrajectory([0.0], [[0.0, 1.0, 2.0]]), "even count"),
    (lambda: Trajectory([0.0, 1.0], [[0.0], [1.0]]).eval(math.nan), "finite"),
    (lambda: Trajectory([0.0, 1.0], [[0.0], [1.0]]).eval(0.5, "forever"), "'halt' or 'loop'"),
    (lambda: Trajectory().eval(0.0), "empty"),
    (lambda: Trajectory([0.0, 1.0], [[0.0], [1.0]]).discretize(0.0), "dt must be a positive finite number"),
    (lambda: Trajectory([0.0, 1.0], [[0.0], [1.0]]).concat(Trajectory([0.5], [[0.0]])),
     "before this trajectory's end"),
    (lambda: Trajectory([0.0, 1.0], [[0.0], [1.0]]).concat(Trajectory([1.0], [[0.0]])),
     "differs from this last one"),
    (lambda: Trajectory([0.0], [[0.0]]).concat(SO3Trajectory()), "one class"),
    (lambda: Trajectory([0.0, 1.0], [[0.0], [1.0]]).extractDofs([3]), "out of range"),
])
def test_misuse_is_a_clear_value_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_check_valid_catches_in_place_edits():
    traj = Trajectory([0.0, 1.0], [[0.0], [1.0]])
    traj.times.append(0.5)
    traj.milestones.append([2.0])
    with pytest.raises(ValueError, match="non-decreasing"):
        traj.checkValid()


# -- RobotTrajectory on r2d2 against klampt ------------------------------------------------
ROBOT_SCRIPT = """
from klampt.model.trajectory import RobotTrajectory
traj = RobotTrajectory(r, data["times"], [config(*m) for m in data["milestones"]])
out = {"eval": [], "deriv": [], "length": traj.length()}
for t in data["probes"]:
    r.setConfig(traj.eval(t))
    out["eval"].append(poses())
for t in data["starts"]:
    d = traj.deriv(t)
    out["deriv"].append([d[0:3], {r.link(i).getName(): d[i] for i in range(6, r.numLinks())}])
disc = traj.discretize(data["dt"])
out["discretize"] = [disc.times]
for m in disc.milestones:
    r.setConfig(m)
    out["discretize"].append(poses())
front, back = traj.split(data["split"])
out["split"] = [front.times, back.times]
for m in (front.milestones[-1], back.milestones[0]):
    r.setConfig(m)
    out["split"].append(poses())
head = traj.getLinkTrajectory("head")
out["head"] = [head.times, head.milestones]
emit(out)
"""


@pytest.fixture(scope="module")
def robot_reference(tmp_path_factory):
    from r2d2_klampt import KLAMPT_PRELUDE, R2D2, klampt_config, r2d2, random_config
    robot = r2d2()
    rng = np.random.default_rng(23)
    milestones = [random_config(robot, rng) for _ in range(5)]
    times = np.cumsum(rng.uniform(0.3, 1.0, size=5)).tolist()
    probes = sorted(rng.uniform(times[0] - 0.2, times[-1] + 0.2, size=25).tolist())
    data = {"links": [link.getName() for link in robot.links()], "times": times,
            "milestones": [klampt_config(robot, m) for m in milestones], "probes": probes,
            "starts": times[:-1], "dt": 0.15, "split": float(rng.uniform(times[1], times[3]))}
    path = tmp_path_factory.mktemp("robot_traj") / "data.json"
    path.write_text(json.dumps(data))
    ref = run_klampt(f"URDF = {R2D2!r}\nDATA = {str(path)!r}\n" + KLAMPT_PRELUDE + ROBOT_SCRIPT,
                     path.parent)
    return robot, RobotTrajectory(robot, times, milestones), data, ref


def test_robot_trajectory_on_a_floating_base_with_continuous_joints_matches_klampt(
        robot_reference):
    from r2d2_klampt import link_poses
    robot, traj, data, ref = robot_reference
    assert all(isinstance(m, list) and len(m) == 15 for m in traj.milestones)
    for t, poses in zip(data["probes"], ref["eval"]):
        assert np.abs(np.array(link_poses(robot, traj.eval(t))) - poses).max() < 1e-12
    assert traj.length() == pytest.approx(ref["length"], rel=1e-12)
    disc = traj.discretize(data["dt"])
    assert disc.times == pytest.approx(ref["discretize"][0], abs=1e-15)
    for m, poses in zip(disc.milestones, ref["discretize"][1:]):
        assert np.abs(np.array(link_poses(robot, m)) - poses).max() < 1e-12
    front, back = traj.split(data["split"])
    assert [front.times, back.times] == ref["split"][:2]
    for m, poses in zip((front.milestones[-1], back.milestones[0]), ref["split"][2:]):
        assert np.abs(np.array(link_poses(robot, m)) - poses).max() < 1e-12
    head = traj.getLinkTrajectory("head")
    assert isinstance(head, SE3Trajectory) and head.times == ref["head"][0]
    assert np.abs(np.array(head.milestones) - ref["head"][1]).max() < 1e-12


def test_robot_trajectory_velocity_is_the_segment_rate_in_v_layout(robot_reference):
    """deriv has nv entries (setVelocity's layout). At a segment's start the joint rates and
    the base's linear rate (in world axes) equal Klamp't's; inside a segment the link twists
    equal finite differences of eval (Klamp't 0.10.1 returns the start's rate all along the
    segment, and its floating-base Euler rates are off: see test_config_space)."""
    from r2d2_klampt import link_poses
    robot, traj, data, ref = robot_reference
    by_child = {j.child: name for name, j in robot.urdf.joints.items()}
    for t, (base_linear, joints) in zip(data["starts"], ref["deriv"]):
        v = traj.deriv(t)
        assert len(v) == robot.model.nv
        robot.setConfig(traj.eval(t))
        assert robot.link(0).getTransform()[0] @ v[0:3] == pytest.approx(base_linear, abs=1e-12)
        for link, rate in joints.items():
            if by_child[link] in robot.getJointNames():
                assert v[robot.jointIndices(by_child[link])[1]] == pytest.approx(rate, abs=1e-12)
    h = 1e-6
    for t in data["probes"][3:-3]:
        robot.setConfig(traj.eval(t))
        twists = np.array([link.getJacobian() @ traj.deriv(t) for link in robot.links()])
        p0, p1 = link_poses(robot, traj.eval(t - h)), link_poses(robot, traj.eval(t + h))
        robot.setConfig(traj.eval(t))
        for twist, a, b, link in zip(twists, p0, p1, robot.links()):
            R = link.getTransform()[0]
            w = so3.deskew(so3.mul(((b[:9] - a[:9]) / (2 * h)).tolist(), so3.inv(R.T.reshape(9).tolist())))
            assert twist[:3] == pytest.approx(w, abs=1e-6)
            assert twist[3:] == pytest.approx((b[9:] - a[9:]) / (2 * h), abs=1e-6)
    assert traj.deriv(data["times"][0] - 1.0) == [0.0] * robot.model.nv


def test_robot_trajectory_refuses_wrong_milestones(robot_reference):
    robot = robot_reference[0]
    with pytest.raises(ValueError, match=r"milestones\[1\] has 14 entries, expected 15"):
        RobotTrajectory(robot, [0.0, 1.0], [robot.getConfig(), robot.getConfig()[:-1]])
    with pytest.raises(ValueError, match="needs a RobotModel"):
        RobotTrajectory([0.0, 1.0], [[0.0], [1.0]])


hostile_numbers = st.one_of(st.floats(-1e6, 1e6), st.sampled_from([math.nan, math.inf, -math.inf]))


@given(st.lists(hostile_numbers, max_size=6), st.integers(1, 3), st.data())
def test_any_input_builds_a_valid_trajectory_or_is_a_value_error(times, width, data):
    milestones = data.draw(st.lists(st.lists(hostile_numbers, min_size=width, max_size=width + 1),
                                    min_size=max(0, len(times) - 1), max_size=len(times) + 1))
    valid = (len(times) == len(milestones)
             and all(math.isfinite(x) for x in times + sum(milestones, []))
             and all(a <= b for a, b in zip(times, times[1:]))
             and len({len(m) for m in milestones}) <= 1)
    if not valid:
        with pytest.raises(ValueError):
            Trajectory(times, milestones)
        return
    traj = Trajectory(times, milestones)
    if not times:
        return
    traj.checkValid()
    for t in data.draw(st.lists(st.floats(-2e6, 2e6), max_size=4)):
        x, v = traj.eval(t), traj.deriv(t)
        assert len(x) == len(v) == len(milestones[0])
        assert all(math.isfinite(e) for e in x)
        lo = [min(m[i] for m in milestones) for i in range(len(x))]
        hi = [max(m[i] for m in milestones) for i in range(len(x))]
        assert all(a - 1e-6 <= e <= b + 1e-6 for a, e, b in zip(lo, x, hi))


# -- Hermite curves on geodesic spaces -------------------------------------------------------
def test_geodesic_hermite_on_a_line_is_the_cubic_hermite():
    from sim_node.math.geodesic import CartesianSpace
    from sim_node.model.trajectory import GeodesicHermiteTrajectory
    rng = np.random.default_rng(8)
    times = np.cumsum(rng.uniform(0.2, 1.0, size=5)).tolist()
    points, velocities = rng.normal(size=(5, 3)).tolist(), rng.normal(size=(5, 3)).tolist()
    geo = GeodesicHermiteTrajectory(CartesianSpace(3), times, points, velocities)
    cubic = HermiteTrajectory(times, points, velocities)
    for t in np.linspace(times[0] - 0.1, times[-1] + 0.1, 41):
        assert geo.eval(t) == pytest.approx(cubic.eval(t), abs=1e-12)
        assert geo.deriv(t) == pytest.approx(cubic.deriv(t), abs=1e-7)
    assert geo.length() == pytest.approx(cubic.length(), rel=1e-12)


def test_so3_hermite_passes_its_knots_with_its_angular_velocities():
    rng = np.random.default_rng(9)
    times = [0.0, 0.5, 1.3, 2.0]
    R = [random_rotation(rng) for _ in times]
    w = [rng.normal(size=3).tolist() for _ in times]
    traj = SO3HermiteTrajectory(times, R, [so3.cross_product(x) for x in w])
    for t, Rk, wk in zip(times[1:-1], R[1:-1], w[1:-1]):
        assert traj.eval(t) == pytest.approx(Rk, abs=1e-14)
        assert traj.deriv_angvel(t) == pytest.approx(wk, abs=1e-7)
    h = 1e-6
    for t in (0.2, 0.9, 1.7):       # the velocity is the curve's: finite differences of eval
        dR = [(b - a) / (2 * h) for a, b in zip(traj.eval(t - h), traj.eval(t + h))]
        w_fd = so3.deskew(so3.mul(dR, so3.inv(traj.eval(t))))
        assert traj.deriv_angvel(t) == pytest.approx(w_fd, abs=1e-7)
    assert isinstance(traj.discretize(0.1), SO3Trajectory)


HERMITE_SCRIPT = """
from klampt.model import trajectory as T
from klampt.math import so3
from klampt.math.geodesic import SE3Space
out = {}
for name, make, waypoint in (("so3", T.SO3HermiteTrajectory, T.SO3Trajectory),
                             ("se3", T.SE3HermiteTrajectory, T.SE3Trajectory)):
    traj = make()
    traj.makeSpline(waypoint(data[name]["times"], data[name]["milestones"]))
    probes = data[name]["probes"]
    evals = [traj.eval(t) for t in probes]
    out[name] = {"milestones": traj.milestones,
                 "eval": [list(e[0]) + list(e[1]) if name == "se3" else e for e in evals],
                 "deriv": [traj.deriv(t) for t in probes]}
a, b = data["se3"]["milestones"][:2]
out["se3_round_trip"] = SE3Space().integrate(b, SE3Space().difference(a, b))
emit(out)
"""


def test_so3_and_se3_splines_match_klampt(tmp_path):
    """Splines through seeded rotations and transforms: the same knots and Lie derivatives as
    klampt 0.10.1 (1e-12, once its tangents R w are rotated back to w). SO3: the same points
    (1e-12) and velocities up to its forward differences (1e-5). SE3: Klamp't's SE3Space is
    inconsistent (integrate(b, difference(a, b)) != a: it applies the world rotation in body
    axes), so its control points are off; ours is the SO3 spline of the rotations with the
    cubic Hermite of the translations."""
    rng = np.random.default_rng(10)
    data = {}
    for name in ("so3", "se3"):
        times = np.cumsum(rng.uniform(0.3, 1.0, size=5)).tolist()
        ms = [random_rotation(rng) + (rng.normal(size=3).tolist() if name == "se3" else [])
              for _ in times]
        data[name] = {"times": times, "milestones": ms,
                      "probes": sorted(rng.uniform(times[0], times[-1], size=15).tolist())}
    (tmp_path / "data.json").write_text(json.dumps(data))
    ref = run_klampt(f"data = json.load(open({str(tmp_path / 'data.json')!r}))\n"
                     + HERMITE_SCRIPT, tmp_path)
    a = data["se3"]["milestones"][0]
    assert np.abs(np.array(ref["se3_round_trip"]) - a).max() > 1e-2     # Klamp't's SE3 defect
    splines = {}
    for name, make, waypoints in (("so3", SO3HermiteTrajectory, SO3Trajectory),
                                  ("se3", SE3HermiteTrajectory, SE3Trajectory)):
        traj = splines[name] = make()
        traj.makeSpline(waypoints(data[name]["times"], data[name]["milestones"]))
        for ours, theirs in zip(traj.milestones, ref[name]["milestones"]):
            half = len(ours) // 2
            assert ours[:half] == pytest.approx(theirs[:half], abs=1e-12)
            w_ours, w_theirs = so3.deskew(ours[half:half + 9]), so3.deskew(theirs[half:half + 9])
            assert so3.apply(ours[:9], w_ours) == pytest.approx(w_theirs, abs=1e-12)
            assert ours[half + 9:] == pytest.approx(theirs[half + 9:], abs=1e-12)
    so3_spline = splines["so3"]
    for t, e, d in zip(data["so3"]["probes"], ref["so3"]["eval"], ref["so3"]["deriv"]):
        x = so3_spline.eval(t)
        assert x == pytest.approx(e, abs=1e-12)
        assert so3.apply(x, so3_spline.deriv_angvel(t)) == pytest.approx(so3.deskew(d), abs=1e-5)
    se3_spline = splines["se3"]
    rotations = SO3HermiteTrajectory(se3_spline.times, [m[:9] for m in se3_spline.milestones],
                                     [m[12:21] for m in se3_spline.milestones])
    translations = HermiteTrajectory(se3_spline.times, [m[9:12] for m in se3_spline.milestones],
                                     [m[21:] for m in se3_spline.milestones])
    for t in data["se3"]["times"] + data["se3"]["probes"]:
        R, x = se3_spline.eval(t)
        assert R == pytest.approx(rotations.eval(t), abs=1e-12)
        assert x == pytest.approx(translations.eval(t), abs=1e-12)
        w, v = se3_spline.deriv(t)
        assert w == pytest.approx(rotations.deriv(t), abs=1e-9)
        assert v == pytest.approx(translations.deriv(t), abs=1e-7)
    for t, m in zip(data["se3"]["times"], data["se3"]["milestones"]):
        assert list(se3_spline.eval(t)[0]) + list(se3_spline.eval(t)[1]) == pytest.approx(m, abs=1e-14)
