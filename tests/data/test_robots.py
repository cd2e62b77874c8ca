"""Independent checks of the robots, meshes and worlds shipped in ``data/``.

These do not use sim_node's own loaders: URDFs are read with lxml and Pinocchio, meshes with
trimesh, mass properties are recomputed here (closed-form primitives written out below, trimesh
for meshes) from each link's collision geometry at the density stated in the link's comment.
"""
from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

etree = pytest.importorskip("lxml.etree")
trimesh = pytest.importorskip("trimesh")
yaml = pytest.importorskip("yaml")
try:
    import pinocchio as pin
except ImportError:  # optional test dependency
    pin = None
needs_pin = pytest.mark.skipif(pin is None, reason="pinocchio (pin) not installed")

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
ROBOTS = DATA / "robots"
WORLDS = DATA / "worlds"
GENERATOR = REPO / "tools" / "generate_robots.py"

# name: (urdf, floating base, root link, (nq, nv) plain, (nq, nv) with mimic joints, mass range)
SPECS = {
    "arm7": (ROBOTS / "arm7/arm7.urdf", False, "world", (9, 9), (8, 8), (15.0, 20.0)),
    "quadruped": (ROBOTS / "quadruped/quadruped.urdf", True, "trunk", (19, 18), (19, 18),
                  (11.0, 13.0)),
    # continuous joints are (cos, sin) in Pinocchio: nq = 2 per joint, nv = 1
    "pendulum": (ROBOTS / "pendulum/pendulum.urdf", False, "world", (2, 1), (2, 1),
                 (1.0 - 1e-9, 1.0 + 1e-9)),
    "diff_drive": (ROBOTS / "diff_drive/diff_drive.urdf", True, "base_link", (11, 8), (11, 8),
                   (10.0, 12.5)),
}
URDFS = {k: v[0] for k, v in SPECS.items()}
WORLD_FILES = sorted(WORLDS.glob("*.yaml"))
LEGS = ("FL", "FR", "HL", "HR")


# ------------------------------------------------------------------------------------------------
# helpers (written independently of tools/generate_robots.py)
# ------------------------------------------------------------------------------------------------


def parse(path):
    return etree.parse(str(path)).getroot()


def floats(text, n=None):
    v = [float(x) for x in text.split()]
    assert n is None or len(v) == n
    return np.array(v)


def rot_rpy(rpy):
    r, p, y = rpy
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return rz @ ry @ rx


def origin_of(elem):
    o = elem.find("origin")
    xyz = floats(o.get("xyz", "0 0 0"), 3) if o is not None else np.zeros(3)
    rpy = floats(o.get("rpy", "0 0 0"), 3) if o is not None else np.zeros(3)
    return xyz, rpy


def resolve(uri: str, urdf: Path) -> Path:
    if uri.startswith("package://"):
        pkg, _, rest = uri[len("package://"):].partition("/")
        assert pkg == "sim_node", uri
        return REPO / rest
    if uri.startswith("file://"):
        return Path(uri[len("file://"):])
    return urdf.parent / uri


def load_mesh(geom_mesh, urdf):
    path = resolve(geom_mesh.get("filename"), urdf)
    assert path.is_file(), f"missing mesh {path}"
    mesh = trimesh.load(str(path), force="mesh")
    assert len(mesh.faces) > 0
    scale = geom_mesh.get("scale")
    if scale is not None:
        mesh.apply_transform(np.diag(np.append(floats(scale, 3), 1.0)))
    return mesh, path


def solid_props(geom, urdf):
    """(volume, com, inertia about com per unit density) of a collision <geometry>, in the
    geometry frame."""
    (g,) = list(geom)
    if g.tag == "box":
        a, b, c = floats(g.get("size"), 3)
        v = a * b * c
        return v, np.zeros(3), v / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    if g.tag == "cylinder":
        r, h = float(g.get("radius")), float(g.get("length"))
        v = math.pi * r * r * h
        return v, np.zeros(3), v * np.diag([(3 * r * r + h * h) / 12] * 2 + [r * r / 2])
    if g.tag == "sphere":
        r = float(g.get("radius"))
        v = 4 / 3 * math.pi * r ** 3
        return v, np.zeros(3), v * 0.4 * r * r * np.eye(3)
    if g.tag == "mesh":
        mesh, path = load_mesh(g, urdf)
        assert mesh.is_watertight and mesh.is_winding_consistent, f"{path} is not a closed solid"
        assert mesh.volume > 0, f"{path} has inward winding"
        mp = mesh.mass_properties  # default density 1
        return float(mp["volume"]), np.array(mp["center_mass"]), np.array(mp["inertia"])
    raise AssertionError(f"unexpected geometry {g.tag}")


def link_collision_props(link, urdf):
    """Uniform-density solid made of the link's collision elements (disjoint by construction)."""
    parts = []
    for col in link.findall("collision"):
        xyz, rpy = origin_of(col)
        R = rot_rpy(rpy)
        v, c, i = solid_props(col.find("geometry"), urdf)
        parts.append((v, R @ c + xyz, R @ i @ R.T))
    vol = sum(p[0] for p in parts)
    com = sum(p[0] * p[1] for p in parts) / vol
    inertia = sum(i + v * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com))
                  for v, c, i in parts)
    return vol, com, inertia


def urdf_inertial(link):
    """(mass, com, inertia about com in link axes) from <inertial>."""
    inert = link.find("inertial")
    xyz, rpy = origin_of(inert)
    m = float(inert.find("mass").get("value"))
    a = {k: float(inert.find("inertia").get(k)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    i = np.array([[a["ixx"], a["ixy"], a["ixz"]], [a["ixy"], a["iyy"], a["iyz"]],
                  [a["ixz"], a["iyz"], a["izz"]]])
    R = rot_rpy(rpy)
    return m, xyz, R @ i @ R.T


def stated_density(link):
    for c in link.iter(etree.Comment):
        mm = re.search(r"density ([0-9.eE+-]+) kg/m\^3", c.text)
        if mm:
            return float(mm.group(1))
    raise AssertionError(f"link {link.get('name')} states no density")


def root_link(robot):
    children = {j.find("child").get("link") for j in robot.findall("joint")}
    roots = [l.get("name") for l in robot.findall("link") if l.get("name") not in children]
    assert len(roots) == 1, roots
    return roots[0]


def movable_joints(robot):
    return [j for j in robot.findall("joint") if j.get("type") != "fixed"]


def geometry_points(geom, urdf, xyz, rpy):
    """Points whose bounding box is the geometry's bounding box (in the link frame)."""
    (g,) = list(geom)
    R = rot_rpy(rpy)
    if g.tag == "mesh":
        p = load_mesh(g, urdf)[0].vertices
    elif g.tag == "box":
        h = floats(g.get("size"), 3) / 2
        p = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * h
    elif g.tag == "cylinder":
        r, h = float(g.get("radius")), float(g.get("length"))
        a = np.linspace(0, 2 * math.pi, 73)
        ring = np.stack([r * np.cos(a), r * np.sin(a), np.zeros_like(a)], 1)
        p = np.vstack([ring + [0, 0, -h / 2], ring + [0, 0, h / 2]])
    elif g.tag == "sphere":
        r = float(g.get("radius"))
        return np.vstack([xyz + r * np.eye(3), xyz - r * np.eye(3)])
    else:
        raise AssertionError(g.tag)
    return p @ R.T + xyz


def load_world(path):
    with open(path) as f:
        return yaml.safe_load(f)


def world_ref(ref: str, world: Path) -> Path:
    if ref.startswith("package://"):
        pkg, _, rest = ref[len("package://"):].partition("/")
        if pkg == "example-robot-data":     # the benchmark's TALOS (data/worlds/talos.yaml)
            from urdf_corpus import example_robot_data_root
            root = example_robot_data_root()
            if root is None:
                pytest.skip("example-robot-data is not installed")
            return root / rest
        assert pkg == "sim_node", ref
        return REPO / rest
    return world.parent / ref


def quat_to_rot(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def build_pin(name, mimic=False):
    urdf, floating = SPECS[name][0], SPECS[name][1]
    if floating:
        return pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer(), mimic)
    return pin.buildModelFromUrdf(str(urdf), mimic)


def standing_doc():
    """The standing configuration documented in the quadruped URDF's header comment."""
    text = (ROBOTS / "quadruped/quadruped.urdf").read_text()
    m = re.search(r"STANDING CONFIGURATION: hip_abd = ([-0-9.]+), hip_flex = ([-0-9.]+), "
                  r"knee = ([-0-9.]+)", text)
    h = re.search(r"trunk\s+origin\s+at\s+z\s+=\s+([0-9.]+)\s+m\s+\(touchdown\s+height\)", text)
    assert m and h, "standing configuration not documented"
    return dict(zip(("hip_abd", "hip_flex", "knee"), map(float, m.groups()))), float(h.group(1))


# ------------------------------------------------------------------------------------------------
# URDF structure
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SPECS))
def test_root_link_and_limits(name):
    """Root link as specified; every movable joint has limits (effort, velocity) and dynamics."""
    robot = parse(URDFS[name])
    assert root_link(robot) == SPECS[name][2]
    for j in movable_joints(robot):
        lim, dyn = j.find("limit"), j.find("dynamics")
        assert lim is not None and dyn is not None, j.get("name")
        assert float(lim.get("effort")) > 0 and float(lim.get("velocity")) > 0
        if j.get("type") in ("revolute", "prismatic"):
            assert float(lim.get("lower")) < float(lim.get("upper"))
        else:
            assert j.get("type") == "continuous"
        assert float(dyn.get("damping")) >= 0 and float(dyn.get("friction")) >= 0
        axis = floats(j.find("axis").get("xyz"), 3)
        assert abs(np.linalg.norm(axis) - 1) < 1e-12


def test_arm_joints():
    robot = parse(URDFS["arm7"])
    joints = {j.get("name"): j for j in robot.findall("joint")}
    for k in range(1, 8):
        assert joints[f"joint{k}"].get("type") == "revolute"
    assert joints["finger_joint1"].get("type") == "prismatic"
    assert joints["finger_joint1"].find("mimic") is None
    f2 = joints["finger_joint2"]
    assert f2.get("type") == "prismatic" and f2.find("mimic").get("joint") == "finger_joint1"
    assert len(movable_joints(robot)) == 9
    assert "tool0" in {l.get("name") for l in robot.findall("link")}
    assert joints["tool0_joint"].get("type") == "fixed"
    # consecutive revolute axes alternate (z, y, z, y, ...) in world axes at q = 0
    R, axes = np.eye(3), []
    for k in range(1, 8):
        R = R @ rot_rpy(origin_of(joints[f"joint{k}"])[1])
        axes.append(R @ floats(joints[f"joint{k}"].find("axis").get("xyz"), 3))
    for a, b in zip(axes, axes[1:]):
        assert abs(a @ b) < 1e-12


def test_arm_mesh_formats_and_uris():
    """All three mesh formats appear; collision meshes are binary STL, referenced both through
    package:// URIs and paths relative to the URDF."""
    robot = parse(URDFS["arm7"])
    vis = [m.get("filename") for m in robot.iterfind("link/visual/geometry/mesh")]
    col = [m.get("filename") for m in robot.iterfind("link/collision/geometry/mesh")]
    assert {Path(f).suffix for f in vis} == {".stl", ".dae", ".obj"}
    assert {Path(f).suffix for f in col} == {".stl"}
    assert any(f.startswith("package://sim_node/") for f in col)
    assert any("://" not in f for f in col)
    for f in col:
        data = resolve(f, URDFS["arm7"]).read_bytes()
        assert not data.startswith(b"solid")
        assert len(data) == 84 + 50 * int.from_bytes(data[80:84], "little")  # binary STL


def test_quadruped_structure():
    robot = parse(URDFS["quadruped"])
    names = {j.get("name") for j in movable_joints(robot)}
    assert names == {f"{leg}_{j}" for leg in LEGS for j in ("hip_abd", "hip_flex", "knee")}
    tags = {list(g)[0].tag for g in robot.iterfind("link/collision/geometry")}
    assert tags == {"box", "cylinder", "sphere"}
    (trunk,) = [l for l in robot.findall("link") if l.get("name") == "trunk"]
    assert np.allclose(floats(trunk.find("collision/geometry/box").get("size")), [0.4, 0.2, 0.1])
    for leg in LEGS:
        foot = [l for l in robot.findall("link") if l.get("name") == f"{leg}_foot"][0]
        assert foot.find("collision/geometry/sphere") is not None


def test_pendulum_and_diff_drive_structure():
    pend = parse(URDFS["pendulum"])
    (j,) = movable_joints(pend)
    assert j.get("type") == "continuous"
    axis = floats(j.find("axis").get("xyz"), 3)
    assert abs(axis[2]) < 1e-12  # horizontal
    dd = parse(URDFS["diff_drive"])
    js = {j.get("name"): j.get("type") for j in movable_joints(dd)}
    assert js == {"left_wheel_joint": "continuous", "right_wheel_joint": "continuous"}
    caster = [j for j in dd.findall("joint") if j.find("child").get("link") == "caster"][0]
    assert caster.get("type") == "fixed"
    assert dd.find("link[@name='caster']/collision/geometry/sphere") is not None
    chassis = [l for l in dd.findall("link") if l.get("name") == "base_link"][0]
    assert 9.0 <= float(chassis.find("inertial/mass").get("value")) <= 11.0


# ------------------------------------------------------------------------------------------------
# mass properties
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SPECS))
def test_inertias_physical(name):
    """Positive mass, positive definite inertia satisfying the triangle inequalities."""
    robot = parse(URDFS[name])
    for link in robot.findall("link"):
        if link.find("inertial") is None:
            assert link.find("collision") is None, f"{link.get('name')}: geometry but no mass"
            continue
        m, _, inertia = urdf_inertial(link)
        assert m > 0
        assert np.allclose(inertia, inertia.T)
        ev = np.linalg.eigvalsh(inertia)
        assert ev.min() > 0, link.get("name")
        a, b, c = ev
        tol = 1e-12 * c
        assert a + b >= c - tol and a + c >= b - tol and b + c >= a - tol, link.get("name")


@pytest.mark.parametrize("name", sorted(SPECS))
def test_inertials_match_collision_geometry(name):
    """Each link's <inertial> is the mass property of its collision solid at the stated density
    (to 1e-6 relative)."""
    urdf = URDFS[name]
    robot = parse(urdf)
    checked = 0
    for link in robot.findall("link"):
        if link.find("inertial") is None:
            continue
        assert link.find("collision") is not None, link.get("name")
        rho = stated_density(link)
        vol, com, inertia = link_collision_props(link, urdf)
        m, c, i = urdf_inertial(link)
        size = np.cbrt(vol)
        label = f"{name}/{link.get('name')}"
        assert m == pytest.approx(rho * vol, rel=1e-6), label
        assert np.linalg.norm(c - com) <= 1e-6 * max(np.linalg.norm(com), size), label
        assert np.linalg.norm(i - rho * inertia) <= 1e-6 * np.linalg.norm(rho * inertia), label
        checked += 1
    assert checked >= 1


@needs_pin
@pytest.mark.parametrize("name", sorted(SPECS))
def test_pinocchio_dimensions_and_mass(name):
    _, _, _, plain, mimic, (lo, hi) = SPECS[name]
    model = build_pin(name)
    assert (model.nq, model.nv) == plain
    mm = build_pin(name, mimic=True)
    assert (mm.nq, mm.nv) == mimic
    total = sum(inertia.mass for inertia in model.inertias)
    assert lo <= total <= hi
    # URDF-level total agrees with Pinocchio's (fixed links merged into their parents)
    urdf_total = sum(float(l.find("inertial/mass").get("value"))
                     for l in parse(URDFS[name]).findall("link") if l.find("inertial") is not None)
    assert total == pytest.approx(urdf_total, rel=1e-12)


# ------------------------------------------------------------------------------------------------
# meshes
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SPECS))
def test_meshes_exist_and_load(name):
    urdf = URDFS[name]
    for m in parse(urdf).iterfind("link/*/geometry/mesh"):
        mesh, path = load_mesh(m, urdf)
        assert 12 <= len(mesh.faces) <= 5000, path
        assert path.stat().st_size < 200_000, path


@pytest.mark.parametrize("name", sorted(SPECS))
def test_visual_matches_collision(name):
    """Visual and collision geometry of each link have the same bounding box (within 2 mm)."""
    urdf = URDFS[name]
    for link in parse(urdf).findall("link"):
        boxes = []
        for tag in ("visual", "collision"):
            pts = [geometry_points(e.find("geometry"), urdf, *origin_of(e))
                   for e in link.findall(tag)]
            if not pts:
                break
            pts = np.vstack(pts)
            boxes.append((pts.min(0), pts.max(0)))
        if len(boxes) == 2:
            assert np.allclose(boxes[0][0], boxes[1][0], atol=2e-3), link.get("name")
            assert np.allclose(boxes[0][1], boxes[1][1], atol=2e-3), link.get("name")


def test_table_mesh():
    mesh = trimesh.load(str(DATA / "meshes/table.stl"), force="mesh")
    lo, hi = mesh.bounds
    assert lo[2] == pytest.approx(0.0, abs=1e-6) and hi[2] == pytest.approx(0.75, abs=1e-6)
    # top surface: the faces at z = 0.75 cover the table-top rectangle
    top = mesh.triangles_center[:, 2] > 0.75 - 1e-6
    assert mesh.area_faces[top].sum() == pytest.approx((hi[0] - lo[0]) * (hi[1] - lo[1]), rel=1e-6)
    # 5 closed parts (top + 4 legs), each a topological sphere: Euler characteristic 2 each
    assert mesh.is_watertight and mesh.is_winding_consistent and mesh.volume > 0
    assert mesh.euler_number == 10


@needs_pin
@pytest.mark.parametrize("name", sorted(SPECS))
def test_pinocchio_loads_geometry(name, tmp_path):
    """Pinocchio (coal/assimp) loads every visual and collision geometry, package:// URIs through
    a package directory named sim_node, relative paths through the URDF's directory."""
    (tmp_path / "sim_node").symlink_to(REPO, target_is_directory=True)
    urdf = URDFS[name]
    model = build_pin(name)
    dirs = [str(tmp_path), str(urdf.parent)]
    robot = parse(urdf)
    for gtype, tag in ((pin.GeometryType.COLLISION, "collision"),
                       (pin.GeometryType.VISUAL, "visual")):
        geom = pin.buildGeomFromUrdf(model, str(urdf), gtype, None, dirs)
        assert geom.ngeoms == len(robot.findall(f"link/{tag}"))


@needs_pin
def test_collada_and_obj_agree_with_stl_in_pinocchio(tmp_path):
    """The COLLADA (Z_UP) and OBJ visuals load in coal with the same extent as the STL."""
    (tmp_path / "sim_node").symlink_to(REPO, target_is_directory=True)
    urdf = URDFS["arm7"]
    model = build_pin("arm7")
    dirs = [str(tmp_path), str(urdf.parent)]
    geoms = {}
    for gtype in (pin.GeometryType.COLLISION, pin.GeometryType.VISUAL):
        for obj in pin.buildGeomFromUrdf(model, str(urdf), gtype, None, dirs).geometryObjects:
            g = obj.geometry
            v = np.array(g.vertices()) * obj.meshScale
            geoms.setdefault(obj.name, []).append((Path(obj.meshPath).suffix, v.min(0), v.max(0)))
    formats = set()
    for (_, lo0, hi0), (fmt, lo1, hi1) in geoms.values():
        formats.add(fmt)
        assert np.allclose(lo0, lo1, atol=1e-5) and np.allclose(hi0, hi1, atol=1e-5), fmt
    assert {".dae", ".obj", ".stl"} <= formats


def _named_config(model, values, base=None):
    q = pin.neutral(model)
    if base is not None:
        q[:7] = base
    for jname, val in values.items():
        jid = model.getJointId(jname)
        if model.joints[jid].nq == 2:  # continuous joint: (cos, sin)
            q[model.joints[jid].idx_q:model.joints[jid].idx_q + 2] = [math.cos(val), math.sin(val)]
        else:
            q[model.joints[jid].idx_q] = val
    return q


def _self_clearance_config(case):
    if case == "arm7-zero":
        return "arm7", {"finger_joint1": 0.04, "finger_joint2": 0.04}
    if case == "arm7-ready":
        _, _, arm = _world_robot("default.yaml", "arm")
        return "arm7", dict(arm["initial_config"],
                            finger_joint2=arm["initial_config"]["finger_joint1"])
    if case == "quadruped-stand":
        stand, _ = standing_doc()
        return "quadruped", {f"{leg}_{j}": v for leg in LEGS for j, v in stand.items()}
    return case.split("-")[0], {}


@needs_pin
@pytest.mark.parametrize("case", ["arm7-zero", "arm7-ready", "quadruped-zero", "quadruped-stand",
                                  "diff_drive-zero"])
def test_no_self_contact_between_non_adjacent_links(case, tmp_path):
    """At the reference configurations, collision geometries of links that are not joined by a
    joint stay more than two default paddings (5 mm) apart (coal distances)."""
    name, config = _self_clearance_config(case)
    (tmp_path / "sim_node").symlink_to(REPO, target_is_directory=True)
    urdf = URDFS[name]
    model = build_pin(name)
    geom = pin.buildGeomFromUrdf(model, str(urdf), pin.GeometryType.COLLISION, None,
                                 [str(tmp_path), str(urdf.parent)])
    objs = geom.geometryObjects
    for i in range(len(objs)):
        for k in range(i + 1, len(objs)):
            a, b = objs[i].parentJoint, objs[k].parentJoint
            if a != b and model.parents[a] != b and model.parents[b] != a:
                geom.addCollisionPair(pin.CollisionPair(i, k))
    assert geom.collisionPairs
    q = _named_config(model, config, [0, 0, 1, 0, 0, 0, 1] if SPECS[name][1] else None)
    data, gdata = model.createData(), geom.createData()
    pin.computeDistances(model, data, geom, gdata, q)
    for pair, res in zip(geom.collisionPairs, gdata.distanceResults):
        a, b = objs[pair.first].name, objs[pair.second].name
        assert res.min_distance > 0.005, f"{a} - {b}: {res.min_distance:.4f} m"


# ------------------------------------------------------------------------------------------------
# kinematics: the quadruped's standing configuration, the default world
# ------------------------------------------------------------------------------------------------


@needs_pin
def test_quadruped_standing_configuration():
    """In the documented standing configuration with the trunk at the documented height, all four
    feet touch the ground, straight below their hips and below the trunk (about 0.3 m up)."""
    stand, height = standing_doc()
    assert 0.27 <= height <= 0.33
    model = build_pin("quadruped")
    data = model.createData()
    q = pin.neutral(model)
    q[:7] = [0, 0, height, 0, 0, 0, 1]
    for jid in range(2, model.njoints):
        q[model.joints[jid].idx_q] = stand[model.names[jid].split("_", 1)[1]]
    pin.framesForwardKinematics(model, data, q)
    robot = parse(URDFS["quadruped"])
    trunk_bottom = height - floats(robot.find("link[@name='trunk']/collision/geometry/box")
                                   .get("size"))[2] / 2
    for leg in LEGS:
        r = float(robot.find(f"link[@name='{leg}_foot']/collision/geometry/sphere").get("radius"))
        foot = data.oMf[model.getFrameId(f"{leg}_foot")].translation
        hip = data.oMf[model.getFrameId(f"{leg}_thigh")].translation
        assert foot[2] - r == pytest.approx(0.0, abs=2e-6), leg  # touching the ground
        assert foot[2] + r < trunk_bottom - 0.1
        assert np.linalg.norm(foot[:2] - hip[:2]) < 1e-3, leg
        assert abs(foot[0]) < 0.2  # within the trunk's length


def test_quadruped_world_matches_documentation():
    stand, height = standing_doc()
    world = load_world(WORLDS / "quadruped.yaml")
    (rob,) = world["robots"]
    for leg in LEGS:
        for j, v in stand.items():
            assert rob["initial_config"][f"{leg}_{j}"] == pytest.approx(v)
    assert rob["pose"]["position"][2] == pytest.approx(height + 0.05, abs=1e-6)
    assert rob["pose"]["orientation"] == [0.0, 0.0, 0.0, 1.0]


def _world_robot(world_name, robot_name):
    path = WORLDS / world_name
    world = load_world(path)
    (rob,) = [r for r in world["robots"] if r["name"] == robot_name]
    return path, world, rob


def _gain(controller, key, joint):
    g = controller.get(key, 0.0)
    return float(g.get(joint, 0.0)) if isinstance(g, dict) else float(g)


@needs_pin
def test_default_world_arm_placement():
    """The arm on the table clears the table top in its initial configuration and every object
    lies on the table within its reach; the mobile base stands on the ground beside the table."""
    path, world, rob = _world_robot("default.yaml", "arm")
    urdf = world_ref(rob["urdf"], path)
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    q = pin.neutral(model)
    for jname, val in rob["initial_config"].items():
        q[model.joints[model.getJointId(jname)].idx_q] = val
    finger = rob["initial_config"]["finger_joint1"]
    q[model.joints[model.getJointId("finger_joint2")].idx_q] = finger  # the mimic joint
    pin.framesForwardKinematics(model, data, q)
    R0, p0 = quat_to_rot(rob["pose"]["orientation"]), np.array(rob["pose"]["position"])
    (table_entry,) = [t for t in world["terrains"] if t["name"] == "table"]
    table = trimesh.load(str(world_ref(table_entry["geometry"]["mesh"], path)), force="mesh")
    top = table.bounds[1][2]
    assert p0[2] == pytest.approx(top)
    robot = parse(urdf)
    for link in robot.findall("link"):
        for col in link.findall("collision"):
            pts = geometry_points(col.find("geometry"), urdf, *origin_of(col))
            M = data.oMf[model.getFrameId(link.get("name"))]
            world_pts = (pts @ M.rotation.T + M.translation) @ R0.T + p0
            clearance = 0.0 if link.get("name") == "base_link" else 0.02
            assert world_pts[:, 2].min() >= top + clearance - 1e-6, link.get("name")
    shoulder = R0 @ data.oMf[model.getFrameId("link2")].translation + p0
    tcp = R0 @ data.oMf[model.getFrameId("tcp")].translation + p0
    straight = model.createData()  # q = 0: the arm stretched straight up
    pin.framesForwardKinematics(model, straight, pin.neutral(model))
    reach = np.linalg.norm(straight.oMf[model.getFrameId("tcp")].translation
                           - straight.oMf[model.getFrameId("link2")].translation)
    assert reach == pytest.approx(0.985, abs=0.05)
    assert tcp[2] > top + 0.1
    (tlo, thi) = table.bounds
    for obj in world["rigid_objects"]:
        pos = np.array(obj["pose"]["position"])
        assert tlo[0] + 0.1 < pos[0] < thi[0] - 0.1 and tlo[1] + 0.1 < pos[1] < thi[1] - 0.1
        g = obj["geometry"]
        R = quat_to_rot(obj["pose"]["orientation"])
        if "box" in g:
            half = np.abs(R) @ (np.array(g["box"]) / 2)
            bottom = pos[2] - half[2]
        elif "sphere" in g:
            bottom = pos[2] - g["sphere"]
        elif "cylinder" in g:
            r, h = g["cylinder"]
            bottom = pos[2] - (abs(R[2, 2]) * h / 2 + math.sqrt(max(0, 1 - R[2, 2] ** 2)) * r)
        else:
            r, h = g["capsule"]
            bottom = pos[2] - (abs(R[2, 2]) * h / 2 + r)
        assert top < bottom <= top + 0.006, obj["name"]
        # within the arm's reach
        assert np.linalg.norm(pos - shoulder) < 0.9 * reach, obj["name"]
    _, _, base = _world_robot("default.yaml", "mobile_base")
    dd = parse(world_ref(base["urdf"], path))
    wheel_r = float(dd.find("link[@name='left_wheel']/collision/geometry/cylinder").get("radius"))
    pos = np.array(base["pose"]["position"])
    assert 0.0 < pos[2] - wheel_r <= 0.006
    assert abs(pos[1]) > thi[1] + 0.3  # beside the table, clear of it


def _simulate_pid(model, q0, target, kp, ki, kd, effort, damping, dt, T, vlim=None):
    """Semi-implicit Euler with PID torques (clipped to effort) and viscous joint damping."""
    data = model.createData()
    q, v, integ = q0.copy(), np.zeros(model.nv), np.zeros(model.nv)
    vmax = 0.0
    for _ in range(int(round(T / dt))):
        e = target - q
        integ += e * dt
        tau = np.clip(kp * e + ki * integ - kd * v, -effort, effort) - damping * v
        v = v + dt * pin.aba(model, data, q, v, tau)
        q = q + dt * v
        assert np.all(np.isfinite(q))
        vmax = max(vmax, np.abs(v).max())
    return q, v, vmax


@needs_pin
def test_default_world_arm_gains_hold_pose():
    """The arm's PID gains hold the initial pose against gravity (Pinocchio ABA, explicit PID at
    the world's physics_dt): < 0.03 rad transient sag, < 2 mrad after 3 s, at rest."""
    path, world, rob = _world_robot("default.yaml", "arm")
    urdf = world_ref(rob["urdf"], path)
    model = pin.buildModelFromUrdf(str(urdf))  # finger_joint2 as its own joint with f1's gains
    names = [model.names[j] for j in range(1, model.njoints)]
    ctrl = rob["controller"]
    src = {n: ("finger_joint1" if n == "finger_joint2" else n) for n in names}
    kp, ki, kd = (np.array([_gain(ctrl, k, src[n]) for n in names]) for k in ("kp", "ki", "kd"))
    robot = parse(urdf)
    joints = {j.get("name"): j for j in robot.findall("joint")}
    effort = np.array([float(joints[n].find("limit").get("effort")) for n in names])
    damping = np.array([float(joints[n].find("dynamics").get("damping")) for n in names])
    q0 = np.array([rob["initial_config"].get(src[n], 0.0) for n in names])
    dt = world["simulation"]["physics_dt"]
    q, v, _ = _simulate_pid(model, q0, q0, kp, ki, kd, effort, damping, dt, 0.3)
    assert np.abs(q - q0).max() < 0.03
    q, v, _ = _simulate_pid(model, q0, q0, kp, ki, kd, effort, damping, dt, 3.0)
    assert np.abs(q - q0).max() < 2e-3 and np.abs(v).max() < 1e-2


@needs_pin
def test_pendulum_world_pid_reaches_target():
    """The seed's PID (kP 20, kI 8, kD 5) brings the pendulum from near-upright to 0 within the
    effort and velocity limits in the Monte Carlo duration (5 s)."""
    path, world, rob = _world_robot("pendulum.yaml", "pendulum")
    ctrl = rob["controller"]
    assert (ctrl["kp"], ctrl["ki"], ctrl["kd"]) == (20.0, 8.0, 5.0)
    urdf = world_ref(rob["urdf"], path)
    lim = parse(urdf).find("joint/limit")
    model = pin.buildModelFromUrdf(str(urdf))
    # integrate the angle directly (the model's continuous joint is (cos, sin))
    data = model.createData()
    dt = world["simulation"]["physics_dt"]
    for theta0 in (-3.1, -1.0, 2.0, 3.1):
        th, w, integ, wmax = theta0, 0.0, 0.0, 0.0
        for _ in range(int(5.0 / dt)):
            integ += -th * dt
            tau = np.clip(20.0 * -th + 8.0 * integ - 5.0 * w, -float(lim.get("effort")),
                          float(lim.get("effort")))
            qc = np.array([math.cos(th), math.sin(th)])
            w += dt * pin.aba(model, data, qc, np.array([w]), np.array([tau]))[0]
            th += dt * w
            wmax = max(wmax, abs(w))
        assert abs(th) < 0.05 and wmax < float(lim.get("velocity")), theta0


@needs_pin
@pytest.mark.slow
def test_quadruped_world_pd_holds_stance():
    """Dropped from 5 cm above touchdown onto penalty-contact ground (a crude stand-in for the
    engine), the world's PD gains keep the quadruped standing: trunk level and within 2 cm of
    the touchdown height, joints within 0.1 rad of the stance."""
    stand, height = standing_doc()
    path, world, rob = _world_robot("quadruped.yaml", "quadruped")
    model = build_pin("quadruped")
    data = model.createData()
    names = [model.names[j] for j in range(2, model.njoints)]
    ctrl = rob["controller"]
    kp, kd = (np.array([_gain(ctrl, k, n) for n in names]) for k in ("kp", "kd"))
    joints = {j.get("name"): j for j in parse(URDFS["quadruped"]).findall("joint")}
    effort = np.array([float(joints[n].find("limit").get("effort")) for n in names])
    target = np.array([rob["initial_config"][n] for n in names])
    q = np.concatenate([rob["pose"]["position"], rob["pose"]["orientation"], target])
    v = np.zeros(model.nv)
    feet = [model.getFrameId(f"{leg}_foot") for leg in LEGS]
    dt, K, C, mu, r = 5e-4, 2e4, 100.0, 0.9, 0.02
    for _ in range(int(2.0 / dt)):
        tau = np.zeros(model.nv)
        tau[6:] = np.clip(kp * (target - q[7:]) - kd * v[6:], -effort, effort)
        pin.computeJointJacobians(model, data, q)
        pin.framesForwardKinematics(model, data, q)
        for f in feet:
            pen = r - data.oMf[f].translation[2]
            if pen > 0:
                J = pin.getFrameJacobian(model, data, f, pin.LOCAL_WORLD_ALIGNED)[:3]
                pv = J @ v
                fn = max(K * pen - C * pv[2], 0.0)
                ft = -mu * fn * pv[:2] / math.sqrt(pv[:2] @ pv[:2] + 1e-4)
                tau += J.T @ np.array([ft[0], ft[1], fn])
        v = v + dt * pin.aba(model, data, q, v, tau)
        q = pin.integrate(model, q, v * dt)
    assert height - 0.02 < q[2] < height + 0.005
    up = quat_to_rot(q[3:7])[:, 2]
    assert up[2] > math.cos(0.05)
    assert np.abs(q[7:] - target).max() < 0.1


# ------------------------------------------------------------------------------------------------
# world files: schema and references
# ------------------------------------------------------------------------------------------------

TOP_KEYS = {"simulation", "robots", "rigid_objects", "terrains"}
SIM_KEYS = {"physics_dt", "gravity", "padding", "max_contacts"}
ROBOT_KEYS = {"name", "urdf", "namespace", "fixed_base", "pose", "initial_config", "controller",
              "surface", "self_collision", "plugins"}
OBJECT_KEYS = {"name", "geometry", "mass", "pose", "surface", "urdf"}
TERRAIN_KEYS = {"name", "geometry", "pose", "surface"}
POSE_KEYS = {"position", "orientation"}
SURFACE_KEYS = {"kRestitution", "kFriction", "kStiffness", "kDamping", "padding"}
CONTROLLER_KEYS = {"kp", "ki", "kd"}
GEOMETRY_KEYS = {"box", "sphere", "cylinder", "capsule", "mesh", "plane"}


def _check_keys(d, allowed, where):
    assert isinstance(d, dict), where
    unknown = set(d) - allowed
    assert not unknown, f"{where}: unknown keys {sorted(unknown)}"


def _check_pose(pose, where):
    _check_keys(pose, POSE_KEYS, where)
    if "position" in pose:
        assert len(pose["position"]) == 3
    if "orientation" in pose:
        assert len(pose["orientation"]) == 4
        assert np.linalg.norm(pose["orientation"]) == pytest.approx(1.0, abs=1e-9)


def _check_surface(s, where):
    _check_keys(s, SURFACE_KEYS, where)
    for k, v in s.items():
        assert isinstance(v, (int, float)) and v >= 0, f"{where}.{k}"


def _check_geometry(g, world, where, terrain):
    _check_keys(g, GEOMETRY_KEYS | {"scale"}, where)
    kinds = set(g) & GEOMETRY_KEYS
    assert len(kinds) == 1, where
    (kind,) = kinds
    assert "scale" not in g or kind == "mesh"
    val = g[kind]
    if kind == "box":
        assert len(val) == 3 and min(val) > 0
    elif kind == "sphere":
        assert val > 0
    elif kind in ("cylinder", "capsule"):
        assert len(val) == 2 and min(val) > 0
    elif kind == "mesh":
        p = world_ref(val, world)
        assert p.is_file(), f"{where}: missing {p}"
        trimesh.load(str(p), force="mesh")
    else:
        assert terrain, "planes are terrains only"
        _check_keys(val, {"normal", "offset"}, where + ".plane")
        assert len(val["normal"]) == 3


@pytest.mark.parametrize("path", WORLD_FILES, ids=lambda p: p.name)
def test_world_schema_and_references(path):
    world = load_world(path)
    _check_keys(world, TOP_KEYS, path.name)
    _check_keys(world.get("simulation", {}), SIM_KEYS, "simulation")
    names = []
    for i, rob in enumerate(world.get("robots", [])):
        where = f"robots[{i}]"
        _check_keys(rob, ROBOT_KEYS, where)
        names.append(rob["name"])
        urdf = world_ref(rob["urdf"], path)
        assert urdf.is_file(), f"{where}: missing {urdf}"
        robot = parse(urdf)
        joints = {j.get("name"): j for j in movable_joints(robot)}
        independent = {n for n, j in joints.items() if j.find("mimic") is None}
        if "pose" in rob:
            _check_pose(rob["pose"], where + ".pose")
        if "surface" in rob:
            _check_surface(rob["surface"], where + ".surface")
        fixed = rob.get("fixed_base", root_link(robot) == "world")
        assert fixed == (root_link(robot) == "world"), f"{where}: fixed_base contradicts the URDF"
        for jn, val in rob.get("initial_config", {}).items():
            assert jn in independent, f"{where}: initial_config names {jn}"
            lim = joints[jn].find("limit")
            if lim.get("lower") is not None:
                assert float(lim.get("lower")) <= val <= float(lim.get("upper")), jn
        ctrl = rob.get("controller", {})
        _check_keys(ctrl, CONTROLLER_KEYS, where + ".controller")
        for k, g in ctrl.items():
            if isinstance(g, dict):
                assert set(g) <= independent, f"{where}.controller.{k}"
                assert all(x >= 0 for x in g.values())
            else:
                assert g >= 0
    for i, obj in enumerate(world.get("rigid_objects", [])):
        where = f"rigid_objects[{i}]"
        _check_keys(obj, OBJECT_KEYS, where)
        names.append(obj["name"])
        if "urdf" in obj:
            assert "geometry" not in obj and "mass" not in obj
            assert world_ref(obj["urdf"], path).is_file()
        else:
            _check_geometry(obj["geometry"], path, where + ".geometry", False)
            assert obj["mass"] > 0
        if "pose" in obj:
            _check_pose(obj["pose"], where + ".pose")
        if "surface" in obj:
            _check_surface(obj["surface"], where + ".surface")
    for i, ter in enumerate(world.get("terrains", [])):
        where = f"terrains[{i}]"
        _check_keys(ter, TERRAIN_KEYS, where)
        names.append(ter["name"])
        _check_geometry(ter["geometry"], path, where + ".geometry", True)
        if "pose" in ter:
            _check_pose(ter["pose"], where + ".pose")
        if "surface" in ter:
            _check_surface(ter["surface"], where + ".surface")
    assert len(names) == len(set(names)), "entity names must be unique"


def test_expected_worlds_exist():
    assert {p.name for p in WORLD_FILES} >= {"default.yaml", "pendulum.yaml", "quadruped.yaml"}


# ------------------------------------------------------------------------------------------------
# the generator
# ------------------------------------------------------------------------------------------------


def _generate(out: Path):
    subprocess.run([sys.executable, str(GENERATOR), "--output-dir", str(out)], check=True,
                   capture_output=True)
    return {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_generator_deterministic_and_committed_files_current(tmp_path):
    """Two runs give byte-identical files, and they are exactly the files in data/robots and
    data/meshes."""
    a = _generate(tmp_path / "a")
    b = _generate(tmp_path / "b")
    assert a == b
    # (data/meshes/bench is bench/make_bin.py's, checked by tests/sim/test_bench_worlds.py)
    committed = {p.relative_to(REPO): p.read_bytes()
                 for d in (DATA / "robots", DATA / "meshes") for p in sorted(d.rglob("*"))
                 if p.is_file() and (DATA / "meshes" / "bench") not in p.parents}
    assert set(committed) == set(a), "data/ differs from the generator's output (re-run it)"
    stale = [str(k) for k in a if committed[k] != a[k]]
    assert not stale, f"stale generated files (re-run tools/generate_robots.py): {stale}"
