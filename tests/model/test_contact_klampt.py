"""sim_node.model.contact against Klamp't 0.10.1 on 250 random contact sets and 40 arm poses,
all computed by one Klamp't subprocess (tests/klampt_reference.py): the same verdicts except
where Klamp't is provably wrong (each such case is certified here, counted and printed), the
same support polygons, forces that satisfy the same equilibrium, and the same optimal torques.

Random sets have kFriction > 0: Klamp't 0.10.1 drops the cone of a frictionless contact
altogether (test_klampt_leaves_frictionless_forces_unconstrained pins that difference)."""
import json
import math

import numpy as np
import pytest
from klampt_reference import run_klampt
from scipy.optimize import nnls
from scipy.spatial.transform import Rotation

import sim_node
from sim_node.model import contact_lp
from sim_node.model.contact import (ContactPoint, Hold, com_equilibrium, equilibrium_torques,
                                    force_closure, read_hold, support_polygon, write_hold)

GRAVITY = np.array([0.0, 0.0, -1.0])


def unit(v):
    return np.asarray(v, dtype=float) / np.linalg.norm(v)


def random_sets(seed=13, count=250):
    """Thirds: feet on uneven ground under gravity, feet under a random force, contacts round a
    ball with inward normals (grips: force closure, squeezing, unbounded polygons)."""
    rng = np.random.default_rng(seed)
    sets = []
    for i in range(count):
        kind = i % 3
        rows = []
        for _ in range(int(rng.integers(1, 7))):
            if kind == 2:
                p = unit(rng.normal(size=3))
                n, x = unit(-p + 0.25 * rng.normal(size=3)), p * rng.uniform(0.5, 1.5)
            else:
                n = unit([*(0.4 * rng.normal(size=2)), 1.0])
                x = np.array([*rng.uniform(-1, 1, 2), rng.uniform(-0.3, 0.3)])
            rows.append([*x, *n, float(rng.uniform(0.05, 1.2))])
        com = [*rng.uniform(-1, 1, 2), float(rng.uniform(0.2, 1.5))]
        fext = [0.0, 0.0, -1.0] if kind == 0 else rng.normal(size=3).tolist()
        sets.append({"contacts": rows, "com": com, "fext": fext})
    return sets


ARM_URDF = """<robot name="arm3"><link name="world"/>
<joint name="fix" type="fixed"><parent link="world"/><child link="base"/></joint>
<link name="base"><inertial><mass value="5"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0"
 ixz="0" iyz="0"/></inertial></link>
""" + "".join(
    f"""<link name="l{i}"><inertial><origin xyz="0.25 0 0"/><mass value="{m}"/><inertia ixx="0.01"
 iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j{i}" type="revolute"><parent link="{p}"/><child link="l{i}"/>
 <origin xyz="{o}"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="{e}" velocity="2"/>
</joint>""" for i, (m, e, p, o) in enumerate(
        [(2.0, 50.0, "base", "0 0 0.3"), (1.5, 30.0, "l1", "0.5 0 0"),
         (1.0, 10.0, "l2", "0.5 0 0")],
        1)) + "</robot>"


def arm_cases(seed=5, count=40):
    """Poses of the arm with its tip, and sometimes its middle link, on surfaces."""
    rng = np.random.default_rng(seed)
    robot = sim_node.WorldModel().loadRobot(ARM_URDF)
    cases = []
    for _ in range(count):
        q = rng.uniform(-1.5, 1.5, 3).tolist()
        robot.setConfig(q)
        holds = []
        for name, local in (("l3", [0.5, 0, 0]), ("l2", [0.25, 0, 0]))[:int(rng.integers(1, 3))]:
            x = robot.link(name).getWorldPosition(local)
            n = unit([rng.normal() * 0.5, 0.0, 1.0])
            holds.append([name, [[*x, *n, float(rng.uniform(0.1, 1.0))]]])
        cases.append({"q": q, "holds": holds})
    return cases


SETS = random_sets()
ARMS = arm_cases()

BODY = """
from klampt import robotsim
from klampt.io import loader
from klampt.model import contact as kc
from klampt.model import ik as kik
with open(DATA) as f:
    data = json.load(f)
out = {"sets": [], "arms": [], "holds": []}
for s in data["sets"]:
    c = np.array(s["contacts"], dtype=float)
    r = {"fc": bool(robotsim.force_closure(c)),
         "any": bool(robotsim.com_equilibrium(c, s["fext"], None)),
         "forces": robotsim.com_equilibrium(c, s["fext"], s["com"])}
    try:
        r["sp"] = robotsim.support_polygon(c)
    except Exception as e:
        r["sp"] = "error: " + str(e)
    out["sets"].append(r)
world = WorldModel()
robot = world.loadRobot(ARM3)
index = {robot.link(i).getName(): i for i in range(robot.numLinks())}
for case in data["arms"]:
    q = robot.getConfig()
    for name, v in zip(("l1", "l2", "l3"), case["q"]):
        q[index[name]] = v
    robot.setConfig(q)
    holds = []
    for name, rows in case["holds"]:
        h = kc.Hold()
        h.link = index[name]
        h.contacts = [kc.ContactPoint(r[0:3], r[3:6], r[6]) for r in rows]
        holds.append(h)
    res = {"gravity": robot.getGravityForces([0, 0, -9.8])}
    for norm in (0, 1):
        sol = kc.equilibrium_torques(robot, holds, (0, 0, -9.8), norm=norm)
        res[str(norm)] = None if sol is None else [list(sol[0]), [list(f) for f in sol[1]]]
    res["index"] = [index[n] for n in ("l1", "l2", "l3")]
    out["arms"].append(res)
for fixed_rotation in (False, True):
    h = kc.Hold()
    h.link = 4
    h.contacts = [kc.ContactPoint([0.1, -0.2, 0.0], [0.0, 0.6, 0.8], 0.5),
                  kc.ContactPoint([0.3, -0.2, 0.05], [0.0, 0.0, 1.0], 0.7)]
    obj = kik.IKObjective()
    if fixed_rotation:
        from klampt.math import so3
        obj.setFixedTransform(4, so3.from_moment([0.1, 0.2, 0.3]), [0.4, 0.5, 0.6])
    else:
        obj.setFixedPoint(4, [0.01, 0.02, 0.03], [0.1, -0.2, 0.0])
    h.ikConstraint = obj
    out["holds"].append(loader.write_Hold(h))
out["ours_read"] = []
for text in data["our_holds"]:
    h = loader.read_Hold(text)
    out["ours_read"].append({"link": h.link, "contacts": [c.tolist() for c in h.contacts],
                             "position": h.ikConstraint.getPosition(),
                             "rot_dims": h.ikConstraint.numRotDims(),
                             "rotation": h.ikConstraint.getRotation()})
slope = np.array([[0.0, 0.0, 0.0, np.sin(0.3), 0.0, np.cos(0.3), 0.0]])
out["frictionless"] = robotsim.com_equilibrium(slope, [0, 0, -1], [0, 0, 1])
emit(out)
"""


def our_holds():
    """Two holds in our text: a point hold and a fixed-frame hold (Klamp't's reader takes
    those two kinds)."""
    holds = []
    for fixed in (False, True):
        h = Hold()
        h.link = 6
        h.contacts = [ContactPoint([0.5, 0.25, -0.125], [0.0, 0.8, 0.6], 0.3)]
        if fixed:
            h.setupFixedIKConstraint([0.01, 0.02, 0.03], Rotation.from_rotvec([0.3, -0.2, 0.1])
                                     .as_matrix())
        else:
            h.setupPointIKConstraint([0.01, 0.02, 0.03])
        holds.append(h)
    return holds


@pytest.fixture(scope="module")
def klampt(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("klampt_contact")
    arm = tmp / "arm3.urdf"
    arm.write_text(ARM_URDF)
    data = tmp / "contact_cases.json"     # (too long for the script's command line)
    data.write_text(json.dumps({"sets": SETS, "arms": ARMS,
                                "our_holds": [write_hold(h) for h in our_holds()]}))
    body = f"DATA = {str(data)!r}\nARM3 = {str(arm)!r}\n" + BODY
    return run_klampt(body, tmp, timeout=900)


def closure_residual(contacts):
    """Largest distance of a +-axis wrench from the contacts' wrench cone (NNLS): 0 iff force
    closure. Independent of both implementations' LPs."""
    G = contact_lp.wrench_matrix(contacts)
    return max(nnls(G, s * e)[1] for e in np.eye(6) for s in (1.0, -1.0))


def test_force_closure_agrees_except_klampts_false_closures(klampt):
    agree, klampt_wrong = 0, []
    for i, (s, ref) in enumerate(zip(SETS, klampt["sets"])):
        ours = force_closure(s["contacts"])
        if ours == ref["fc"]:
            agree += 1
            continue
        # Klamp't tests 7 fixed wrench directions, a necessary condition only: when it says
        # closure and we do not, an axis wrench must be out of reach
        assert ref["fc"] and not ours, i
        assert closure_residual(np.array(s["contacts"])) > 1e-3, i
        klampt_wrong.append(i)
    print(f"force closure: {agree} of {len(SETS)} agree ({sum(r['fc'] for r in klampt['sets'])} "
          f"closures by Klamp't); Klamp't's false closures (certified): {klampt_wrong}")
    assert agree >= 200


def friction_sensitive(contacts, fext, com):
    """Does the verdict flip when every kFriction moves by 1e-6 relative? (within tolerance)"""
    verdicts = set()
    for scale in (1 - 1e-6, 1 + 1e-6):
        c = contacts.copy()
        c[:, 6] *= scale
        verdicts.add(contact_lp.com_equilibrium_forces(c, fext, com) is None)
    return len(verdicts) > 1


def assert_equilibrium(contacts, forces, fext, com, tol):
    forces = np.asarray(forces, dtype=float)
    np.testing.assert_allclose(forces.sum(axis=0) + fext, 0.0, atol=tol)
    np.testing.assert_allclose(np.cross(contacts[:, 0:3] - com, forces).sum(axis=0), 0.0, atol=tol)
    for row, f in zip(contacts, forces):
        fn = f @ row[3:6]
        assert fn >= -tol and np.linalg.norm(f - fn * row[3:6]) <= row[6] * fn * 1.0001 + tol


def test_com_equilibrium_verdicts_and_forces_agree(klampt):
    boundary, feasible = [], 0
    for i, (s, ref) in enumerate(zip(SETS, klampt["sets"])):
        contacts, fext, com = np.array(s["contacts"]), np.array(s["fext"]), np.array(s["com"])
        assert com_equilibrium(contacts, fext) == ref["any"], i
        ours = com_equilibrium(contacts, fext, com)
        if (ours is None) != (ref["forces"] is None):
            assert friction_sensitive(contacts, fext, com), i
            boundary.append(i)
            continue
        if ours is None:
            continue
        feasible += 1
        # both satisfy the equilibrium in the same cones; both minimise the total normal force
        assert_equilibrium(contacts, ours, fext, com, 1e-7)
        assert_equilibrium(contacts, ref["forces"], fext, com, 1e-6)
        normal = [sum(np.dot(f, r[3:6]) for f, r in zip(forces, contacts))
                  for forces in (ours, ref["forces"])]
        assert normal[0] == pytest.approx(normal[1], rel=1e-6, abs=1e-9), i
    print(f"COM equilibrium: {feasible} feasible sets with equal total normal force; "
          f"verdicts within 1e-6 of the friction boundary that differ: {boundary}")


def polygon_vertices(planes, tol=1e-7):
    """Vertices of a bounded half-plane intersection: the feasible pairwise intersections
    ((0, 2) when empty)."""
    P = np.array(planes, dtype=float).reshape(-1, 3)
    points = []
    for i in range(len(P)):
        for j in range(i + 1, len(P)):
            A = P[[i, j], 0:2]
            if abs(np.linalg.det(A)) > 1e-12:
                x = np.linalg.solve(A, P[[i, j], 2])
                if np.all(P[:, 0:2] @ x <= P[:, 2] + tol):
                    points.append(x)
    return np.array(points).reshape(-1, 2)


def bounded(planes):
    """The normals leave no gap of pi or more (else the intersection is unbounded or empty)."""
    P = np.array(planes, dtype=float).reshape(-1, 3)
    if len(P) < 3 or planes == [[0, 0, -1]]:
        return False
    angles = np.sort(np.arctan2(P[:, 1], P[:, 0]))
    gaps = np.diff(np.concatenate([angles, angles[:1] + 2 * math.pi]))
    return bool(gaps.max() < math.pi - 1e-9)


def planes_match(ours, theirs):
    return len(ours) == len(theirs) and all(
        any(np.allclose(p, q, atol=1e-6) for q in theirs) for p in ours)


def test_support_polygons_equal_klampts_where_bounded(klampt):
    directions = [np.array([math.cos(a), math.sin(a)]) for a in np.linspace(0, 2 * math.pi, 48,
                                                                             endpoint=False)]
    count_bounded, same_planes, unbounded, klampt_differs = 0, [], 0, []
    for i, (s, ref) in enumerate(zip(SETS, klampt["sets"])):
        contacts = np.array(s["contacts"])
        ours, theirs = support_polygon(contacts), ref["sp"]
        if ours == [[0, 0, -1]] or bounded(ours):
            # bounded or empty: the same point set as Klamp't's (support values over their
            # vertices), and as a rule the same half-planes
            count_bounded += 1
            assert theirs == [[0, 0, -1]] if ours == [[0, 0, -1]] else bounded(theirs), i
            ours_v, theirs_v = polygon_vertices(ours), polygon_vertices(theirs)
            for d in directions:
                if len(ours_v):
                    assert (ours_v @ d).max() == pytest.approx((theirs_v @ d).max(), abs=1e-6), i
            if planes_match(ours, theirs):
                same_planes.append(i)
            continue
        # unbounded (contacts that squeeze with a moment): ours must tell the supported COMs
        # from the rest, by the equilibrium LP, near and far
        unbounded += 1
        rng = np.random.default_rng(i)
        P = np.array(ours, dtype=float).reshape(-1, 3)
        for xy in [rng.uniform(-4, 4, 2) for _ in range(16)] + [rng.uniform(-50, 50, 2)]:
            margin = np.min(P[:, 2] - P[:, 0:2] @ xy) if len(P) else math.inf
            if abs(margin) > 1e-6:
                supported = contact_lp.com_equilibrium_forces(contacts, GRAVITY, [*xy, 0.5])
                assert (margin > 0) == (supported is not None), (i, xy)
        if not (isinstance(theirs, list) and planes_match(ours, theirs)):
            klampt_differs.append(i)
    print(f"support polygons: {count_bounded} bounded or empty, all equal to Klamp't's as point "
          "sets, "
          f"{len(same_planes)} also as half-plane lists; {unbounded} unbounded (checked by the "
          f"equilibrium LP), Klamp't's half-planes differ for {klampt_differs}")
    assert count_bounded >= 200 and len(same_planes) >= count_bounded - 10


def test_equilibrium_torques_agree_with_klampt(klampt):
    robot = sim_node.WorldModel().loadRobot(ARM_URDF)
    w = np.array([50.0, 30.0, 10.0])
    identical = 0
    for case, ref in zip(ARMS, klampt["arms"]):
        robot.setConfig(case["q"])
        np.testing.assert_allclose(robot.getGravityForces((0, 0, -9.8)),
                                   np.array(ref["gravity"])[ref["index"]], atol=1e-9)
        holds = []
        for name, rows in case["holds"]:
            h = Hold()
            h.link = robot.link(name).getIndex()
            h.contacts = [ContactPoint(r[0:3], r[3:6], r[6]) for r in rows]
            holds.append(h)
        for norm, p in ((0, np.inf), (1, 1)):
            ours = equilibrium_torques(robot, holds, (0, 0, -9.8), norm=norm)
            theirs = ref[str(norm)]
            assert (ours is None) == (theirs is None)
            if ours is None:
                continue
            t_theirs = np.array(theirs[0])[ref["index"]]
            assert np.linalg.norm(np.array(ours[0]) / w, p) == pytest.approx(
                np.linalg.norm(t_theirs / w, p), rel=1e-6, abs=1e-9)
            identical += np.allclose(ours[0], t_theirs, atol=1e-6)
    print(f"equilibrium torques: {len(ARMS)} poses x 2 norms, equal optimal norms; identical "
          f"torques in {identical}")


def test_klampt_leaves_frictionless_forces_unconstrained(klampt):
    """Klamp't 0.10.1 builds a frictionless contact's cone from degenerate planes and accepts
    any force there: a foot on a 17 degree slope without friction cannot stand, yet Klamp't
    returns the vertical force [0, 0, 1] for it — off the normal, so no frictionless force."""
    slope = [[0.0, 0.0, 0.0, math.sin(0.3), 0.0, math.cos(0.3), 0.0]]
    (force,) = klampt["frictionless"]
    np.testing.assert_allclose(force, [0, 0, 1], atol=1e-9)
    assert np.linalg.norm(np.cross(force, slope[0][3:6])) > 0.29     # tangential: sin(0.3)
    assert com_equilibrium(slope, (0, 0, -1), [0, 0, 1]) is None
    assert support_polygon(slope) == [[0, 0, -1]]


def test_holds_written_by_klampt_read_back(klampt):
    pytest.importorskip("sim_node.model.ik")
    point, transform = (read_hold(text) for text in klampt["holds"])
    assert point.link == transform.link == 4
    np.testing.assert_allclose([c.tolist() for c in point.contacts],
                               [[0.1, -0.2, 0.0, 0.0, 0.6, 0.8, 0.5],
                                [0.3, -0.2, 0.05, 0.0, 0.0, 1.0, 0.7]])
    local, world = point.ikConstraint.getPosition()
    np.testing.assert_allclose(local, [0.01, 0.02, 0.03])
    np.testing.assert_allclose(world, [0.1, -0.2, 0.0])
    assert point.ikConstraint.numRotDims() == 0 and transform.ikConstraint.numRotDims() == 3
    R, t = transform.ikConstraint.getTransform()
    np.testing.assert_allclose(np.array(R).reshape(3, 3).T,
                               Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(t, [0.4, 0.5, 0.6], atol=1e-12)
    assert read_hold(write_hold(point)).ikConstraint.getPosition()[1] == pytest.approx(world)


def test_klampt_reads_the_holds_we_write(klampt):
    for ours, theirs in zip(our_holds(), klampt["ours_read"]):
        assert theirs["link"] == 6
        np.testing.assert_allclose(theirs["contacts"], [c.tolist() for c in ours.contacts])
        assert theirs["rot_dims"] == ours.ikConstraint.numRotDims()
        if theirs["rot_dims"] == 0:
            for got, want in zip(theirs["position"], ours.ikConstraint.getPosition()):
                np.testing.assert_allclose(got, want, atol=1e-12)
        else:    # Klamp't keeps a fixed frame as (R, t): compare the frames
            np.testing.assert_allclose(theirs["rotation"], ours.ikConstraint.getRotation(),
                                       atol=1e-12)
            R = np.array(theirs["rotation"]).reshape(3, 3).T
            local, world = (np.array(v) for v in theirs["position"])
            np.testing.assert_allclose(world - R @ local, ours.ikConstraint.getTransform()[1],
                                       atol=1e-12)
