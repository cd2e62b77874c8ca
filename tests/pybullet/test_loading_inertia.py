"""loadURDF's masses and inertias (sim_node.pybullet.loading_inertia) against the real
PyBullet 3.2.7: every URDF of pybullet_data, hand-made links for each rule, Bullet's Jacobi
principal axes, its hull grid, and the simulation using the result."""
import itertools
import math
import os

import numpy as np
import pybullet as pb
import pytest
from core_reference import DATA, ours, quiet, reference, same_rotation
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sim_node.pybullet as p
from sim_node.pybullet.loading_inertia import HULL_GRID, hull_box, principal_axes

FROM_FILE = pb.URDF_USE_INERTIA_FROM_FILE
ALL_URDFS = sorted(os.path.relpath(os.path.join(root, f), DATA)
                   for root, _, files in os.walk(DATA) for f in files if f.endswith(".urdf"))
# pybullet_data files PyBullet 3.2.7 itself refuses (a missing mesh, a deformable body, a .cdf
# collision), and the one sim_node refuses: random_urdfs/168's vertices are all NaN (Bullet
# keeps an empty hull of it; sim_node's engine cannot simulate a shape without points)
PYBULLET_REFUSES = {"kuka_iiwa/model_for_sdf.urdf", "torus_deform.urdf",
                    "toys/concave_box.urdf"}
SIM_NODE_REFUSES = {"random_urdfs/168/168.urdf"}


def _dynamics(module, cid, uid):
    """(mass, local inertia diagonal, inertial position, inertial orientation) of every link."""
    out = []
    for link in range(-1, module.getNumJoints(uid, physicsClientId=cid)):
        info = module.getDynamicsInfo(uid, link, physicsClientId=cid)
        out.append((info[0], info[2], info[3], info[4]))
    return out


def _differences(mine, theirs) -> list:
    """What differs between two _dynamics tables (masses and inertias to 1e-6 relative)."""
    if len(mine) != len(theirs):
        return [f"{len(mine)} links vs {len(theirs)}"]
    out = []
    for link, (a, b) in enumerate(zip(mine, theirs), start=-1):
        if not math.isclose(a[0], b[0], rel_tol=1e-6):
            out.append(f"link {link} mass {a[0]} vs {b[0]}")
        if not np.allclose(a[1], b[1], rtol=1e-6, atol=1e-12):
            out.append(f"link {link} inertia {a[1]} vs {b[1]}")
        if not np.allclose(a[2], b[2], rtol=1e-6, atol=1e-9):
            out.append(f"link {link} inertial position {a[2]} vs {b[2]}")
        if not same_rotation(a[3], b[3], 1e-6):
            out.append(f"link {link} inertial orientation {a[3]} vs {b[3]}")
    return out


def _compare_files(files, variants):
    """{(file, variant): differences} over files x variants (loadURDF keyword dicts), and the
    sets of (file, variant) each side refuses."""
    differ, refused_ours, refused_theirs, agree = {}, set(), set(), 0
    with ours() as a, reference() as b:
        for name, (key, kwargs) in itertools.product(files, variants.items()):
            pb.resetSimulation(physicsClientId=b)
            try:
                ub = pb.loadURDF(name, physicsClientId=b, **kwargs)
            except pb.error:
                refused_theirs.add(name)
                continue
            p.resetSimulation(physicsClientId=a)
            try:
                ua = quiet(p.loadURDF, name, physicsClientId=a, **kwargs)
            except p.error:
                refused_ours.add(name)
                continue
            found = _differences(_dynamics(p, a, ua), _dynamics(pb, b, ub))
            if found:
                differ[name, key] = found
            else:
                agree += 1
    return agree, differ, refused_ours, refused_theirs


@pytest.mark.slow
def test_every_pybullet_data_urdf_has_pybullets_masses_and_inertias():
    # 1095 files x (default, URDF_USE_INERTIA_FROM_FILE): mass, local inertia diagonal (1e-6
    # relative) and inertial frame of every link equal PyBullet's
    variants = {"default": {}, "from file": {"flags": FROM_FILE}}
    agree, differ, refused_ours, refused_theirs = _compare_files(ALL_URDFS, variants)
    assert differ == {}
    assert refused_theirs == PYBULLET_REFUSES
    assert refused_ours == SIM_NODE_REFUSES
    both = len(ALL_URDFS) - len(PYBULLET_REFUSES) - len(SIM_NODE_REFUSES)
    assert agree == 2 * both and both > 1000


@pytest.mark.slow
def test_global_scaling_and_fixed_bases_give_pybullets_masses_and_inertias():
    # the robots and objects (not the 1000 random_urdfs): globalScaling scales the shapes (not
    # their 1 mm margins) and the inertial origins, not the file's tensor; useFixedBase makes
    # the base massless
    files = [f for f in ALL_URDFS if not f.startswith("random_urdfs/")]
    variants = {"s=0.5, fixed": {"globalScaling": 0.5, "useFixedBase": 1},
                "s=2, from file": {"globalScaling": 2.0, "flags": FROM_FILE}}
    agree, differ, refused_ours, refused_theirs = _compare_files(files, variants)
    assert differ == {}
    assert refused_theirs == PYBULLET_REFUSES and not refused_ours
    assert agree == 2 * (len(files) - len(PYBULLET_REFUSES))


# -- one rule at a time, on hand-made links ----------------------------------------------------
INERTIAL = ('<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="2"/>'
            '<inertia ixx="1" iyy="2" izz="2.5" ixy="{ixy}" ixz="0.2" iyz="0.3"/></inertial>')
GEOMETRY = {
    "box": '<box size="0.2 0.4 0.6"/>',
    "sphere": '<sphere radius="0.3"/>',
    "cylinder": '<cylinder radius="0.2" length="0.6"/>',
    "capsule": '<capsule radius="0.2" length="0.6"/>',
    "obj": f'<mesh filename="{DATA}/cube.obj" scale="0.5 1 2"/>',
    "obj of 5 hulls": f'<mesh filename="{DATA}/random_urdfs/472/472.obj" scale="0.02 0.03 0.04"/>',
    "stl": f'<mesh filename="{DATA}/l_finger_collision.stl"/>',
    "dae in inches": f'<mesh filename="{DATA}/racecar/meshes/cone.dae"/>',
}
PLACEMENT = {"at the inertial frame": ('0 0 0', '0 0 0'), "offset": ('0.1 0 0', '0 0 0'),
             "turned": ('0 0 0', '0.3 0.2 0.1')}
_count = itertools.count()


def _link(tmp_path, body, robot_extra=""):
    # PyBullet caches files by name: a new name for every document
    path = tmp_path / f"link{next(_count)}.urdf"
    path.write_text(f'<robot name="t">{body}{robot_extra}</robot>')
    return str(path)


def _both(path, **kwargs):
    with ours() as a, reference() as b:
        ua = quiet(p.loadURDF, path, physicsClientId=a, **kwargs)
        ub = pb.loadURDF(path, physicsClientId=b, **kwargs)
        return _dynamics(p, a, ua), _dynamics(pb, b, ub)


@pytest.mark.parametrize("geometry, placement, concave", [
    (g, where, concave) for g, where, concave in itertools.product(GEOMETRY, PLACEMENT,
                                                                  (False, True))
    if not concave or g.startswith(("obj", "stl", "dae"))])       # (concave: meshes only)
def test_a_links_shape_inertia_is_pybullets(tmp_path, geometry, placement, concave):
    # the lone shape at the inertial frame (each shape's own rule), off it or turned (the
    # compound's bounding box); concave="yes" makes meshes concave triangle meshes (no inertia
    # alone); the inertial frame itself turned and offset
    xyz, rpy = PLACEMENT[placement]
    attribute = ' concave="yes"' if concave else ""
    collision = (f'<collision{attribute}><origin xyz="{xyz}" rpy="{rpy}"/>'
                 f'<geometry>{GEOMETRY[geometry]}</geometry></collision>')
    for inertial in (INERTIAL.format(xyz="0 0 0", rpy="0 0 0", ixy=0),
                     INERTIAL.format(xyz="0.05 -0.1 0.2", rpy="0.5 0 -0.4", ixy=0.1)):
        mine, theirs = _both(_link(tmp_path, f'<link name="b">{inertial}{collision}</link>'))
        assert _differences(mine, theirs) == []
        if placement == "at the inertial frame" and inertial.startswith('<inertial><origin '
                                                                        'xyz="0 0 0"'):
            if concave:
                assert mine[0][1] == (0.0, 0.0, 0.0)
            elif geometry == "sphere":
                assert mine[0][1] == pytest.approx((0.4 * 2 * 0.09,) * 3, rel=1e-12)
            elif geometry == "box":
                assert mine[0][1] == pytest.approx((2 / 12 * 0.52, 2 / 12 * 0.4, 2 / 12 * 0.2),
                                                   rel=1e-12)


def test_several_shapes_no_shape_no_inertial_a_world_link_and_inertia_scaling(tmp_path):
    inertial = INERTIAL.format(xyz="0 0 0", rpy="0 0 0", ixy=0)
    box = '<collision><geometry><box size="0.2 0.4 0.6"/></geometry></collision>'
    ball = ('<collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.1"/></geometry>'
            '</collision>')
    scaling = '<contact><inertia_scaling value="3"/></contact>'
    cases = {
        "box and ball": f'<link name="b">{inertial}{box}{ball}</link>',
        "no collision": f'<link name="b">{inertial}</link>',      # the compound's margin only
        "no inertial": f'<link name="b">{box}</link>',            # 1 kg
        "scaled": f'<link name="b">{scaling}{inertial}{box}</link>',
        "world": ('<link name="world"/><link name="arm">' + inertial + box + '</link>'
                  '<joint name="j" type="revolute"><parent link="world"/><child link="arm"/>'
                  '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                  '</joint>'),
        "massless": ('<link name="b"><inertial><mass value="0"/><inertia ixx="1" iyy="2" '
                     f'izz="2.5" ixy="0" ixz="0" iyz="0"/></inertial>{box}</link>'),
    }
    for name, body in cases.items():
        for flags in (0, FROM_FILE):
            mine, theirs = _both(_link(tmp_path, body), flags=flags)
            assert _differences(mine, theirs) == [], (name, flags)
            if name == "no inertial":
                assert mine[0][0] == 1.0
            if name == "world":
                assert mine[0][:2] == (0.0, (0.0, 0.0, 0.0))
    # inertia_scaling multiplies the computed inertia and the file's
    plain = _both(_link(tmp_path, cases["box and ball"].replace(ball, "")))[0][0][1]
    assert np.allclose(_both(_link(tmp_path, cases["scaled"]))[0][0][1], 3 * np.array(plain))


def test_the_files_tensor_is_turned_to_bullets_principal_axes_or_zeroed(tmp_path):
    box = '<collision><geometry><box size="0.2 0.4 0.6"/></geometry></collision>'
    tensors = ['ixx="1" iyy="2" izz="2.5" ixy="0.1" ixz="0.2" iyz="0.3"',
               'ixx="0.3" iyy="0.1" izz="0.25" ixy="-0.05" ixz="0" iyz="0.02"',
               'ixx="1" iyy="1" izz="0" ixy="0" ixz="0" iyz="0"',          # a rod: kept
               'ixx="5" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"',          # "bad": zero
               'ixx="1" iyy="1" izz="1" ixy="2" ixz="0" iyz="0"']          # negative: zero
    for tensor in tensors:
        body = (f'<link name="b"><inertial><origin rpy="0.2 0.1 0"/><mass value="2"/>'
                f'<inertia {tensor}/></inertial>{box}</link>')
        mine, theirs = _both(_link(tmp_path, body), flags=FROM_FILE)
        assert _differences(mine, theirs) == [], tensor
    assert mine[0][1] == (0.0, 0.0, 0.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6))
def test_principal_axes_diagonalise_the_tensor(values):
    a, b, c, d, e, f = values
    tensor = np.array([[a + 3, d, e], [d, b + 3, f], [e, f, c + 3]])
    basis, moments = principal_axes(tensor)
    assert np.allclose(basis @ basis.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(basis) == pytest.approx(1.0, abs=1e-12)
    # Bullet stops when the off-diagonal terms are below 1e-6 of the trace
    assert np.allclose(basis @ np.diag(moments) @ basis.T, tensor, atol=1e-5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-10.0, 10.0), min_size=3, max_size=3),
       st.lists(st.floats(0.0, 5.0), min_size=3, max_size=3))
@example(corner=[0.0, 0.0, 0.0], size=[1.5e-308, 1.0, 0.0])     # 1 / step overflowed
def test_the_hull_grid_keeps_the_box_within_one_step(corner, size):
    lo = np.array(corner)
    hi = lo + np.array(size)
    snapped_lo, snapped_hi = hull_box(lo, hi)
    step = (hi - lo) / HULL_GRID
    assert np.all(snapped_lo >= lo - 1e-12) and np.all(snapped_hi <= hi + 1e-12)
    assert np.all(snapped_lo <= lo + step + 1e-12) and np.all(snapped_hi >= hi - step - 1e-12)


# -- the simulation uses it ---------------------------------------------------------------------
def test_a_torque_spins_cube_small_as_in_pybullet():
    # cube_small.urdf writes an inertia 60x its box's: PyBullet ignores it by default, and so
    # does the simulation (one step of a torque: w = dt tau / I)
    spins = []
    with ours() as a, reference() as b:
        for module, cid in ((p, a), (pb, b)):
            uid = quiet(module.loadURDF, "cube_small.urdf", [0, 0, 1], physicsClientId=cid)
            module.applyExternalTorque(uid, -1, [0.0, 0.0, 1e-3], pb.WORLD_FRAME,
                                       physicsClientId=cid)
            module.stepSimulation(physicsClientId=cid)
            spins.append(module.getBaseVelocity(uid, physicsClientId=cid)[1][2])
            inertia = module.getDynamicsInfo(uid, -1, physicsClientId=cid)[2][2]
            assert spins[-1] == pytest.approx(1e-3 / 240 / inertia, rel=1e-9)
    assert spins[0] == pytest.approx(spins[1], rel=1e-6)


def test_a_repaired_inertia_is_simulated_but_pybullets_is_reported():
    # random_urdfs' (1, 1, 0) x 3 with URDF_USE_INERTIA_FROM_FILE: reported as PyBullet's,
    # simulated with the engine's smallest valid moment (README "Loading robot files"), and
    # changeDynamics updates what is reported
    with ours() as a:
        uid = quiet(p.loadURDF, "random_urdfs/000/000.urdf", flags=FROM_FILE,
                    physicsClientId=a)
        assert p.getDynamicsInfo(uid, -1, physicsClientId=a)[2] == (3.0, 3.0, 0.0)
        from sim_node.pybullet.client import get_client
        simulated = get_client(a).body(uid).entity.link(0).getMass().inertiaMatrix()
        assert np.linalg.eigvalsh(simulated).min() > 0
        p.changeDynamics(uid, -1, mass=0.5, physicsClientId=a)
        info = p.getDynamicsInfo(uid, -1, physicsClientId=a)
        assert (info[0], info[2]) == (0.5, (3.0, 3.0, 0.0))
        p.changeDynamics(uid, -1, localInertiaDiagonal=[1, 2, 2.5], physicsClientId=a)
        assert p.getDynamicsInfo(uid, -1, physicsClientId=a)[2] == (1.0, 2.0, 2.5)
