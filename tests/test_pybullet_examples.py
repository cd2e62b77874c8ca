"""bullet3's PyBullet example scripts, ported in examples/pybullet/, run on sim_node.pybullet and
print what the same script prints under the real PyBullet 3.2.7 (its import put back to
`pybullet`), within what each comparison states:

- exact (1e-9, or 1e-6 where PyBullet computes in float32): kinematics, math helpers, ids,
  joint info, camera matrices, geometry queries on fixed shapes;
- closed form: free fall without damping, a velocity cap;
- physics within a stated tolerance where the outcome is set by geometry or a controller
  (a cube resting on a plane, a stack, a tracking controller), not by the solver's details;
- "runs to the end and prints finite numbers" where the physics differs by design (contacts,
  motors' implicit constraint forces, the solver) — said per test.

Both run in subprocesses (PYBULLET_EXAMPLE_STEPS unset: each script's own bound); PyBullet
prints its C warnings (b3Warning ...) into the same stdout, so values are found by the words the
ports print before them, not by line.
"""
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "pybullet"
# modules the scripts import from beside them; they take the client as an argument
HELPERS = ("pdControllerExplicit.py", "pdControllerStable.py", "panda_sim.py")
pytestmark = pytest.mark.slow       # two subprocesses per script

SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py") if p.name not in HELPERS)

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|\bnan\b|\binf\b")
IMPORT = re.compile(r"^(\s*)import sim_node\.pybullet as (\w+)", re.M)


def as_pybullet(source: str) -> str:
    """The script as bullet3 wrote it for PyBullet: its sim_node import put back."""
    return IMPORT.sub(r"\1import pybullet as \2", source)


def run(name: str, cwd: Path, backend: str, timeout: float = 900.0) -> str:
    """Run examples/pybullet/<name> in `cwd` with backend "sim_node" or "pybullet"; its stdout."""
    cwd.mkdir(parents=True, exist_ok=True)
    for helper in HELPERS:
        shutil.copy(EXAMPLES / helper, cwd / helper)
    source = (EXAMPLES / name).read_text()
    assert IMPORT.search(source), f"{name} does not import sim_node.pybullet"
    if backend == "pybullet":
        pytest.importorskip("pybullet")
        source = as_pybullet(source)
    (cwd / name).write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "PYBULLET_EXAMPLE_STEPS"}
    done = subprocess.run([sys.executable, "-u", name], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert done.returncode == 0, (f"{name} under {backend} failed (rc {done.returncode}):\n"
                                  f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return done.stdout


@pytest.fixture
def both(tmp_path):
    """run_both(name) -> (sim_node's stdout, PyBullet's stdout)."""
    def run_both(name: str):
        return run(name, tmp_path / "sim_node", "sim_node"), run(name, tmp_path / "pybullet",
                                                                  "pybullet")
    return run_both


def values(text: str, key: str) -> list:
    """Every occurrence of `key` in `text`: the numbers right after it (a [...] or (...) group,
    or one number), as a list of floats per occurrence."""
    found = []
    pattern = re.escape(key) + r"\s*=?\s*(\[[^\]]*\]|\([^()]*(?:\([^()]*\)[^()]*)*\)|\S+)"
    for match in re.finditer(pattern, text):
        found.append([float(x) for x in NUMBER.findall(match.group(1))])
    return found


def last(text: str, key: str) -> np.ndarray:
    found = values(text, key)
    assert found, f"no '{key}' in:\n{text[-2000:]}"
    return np.array(found[-1])


def assert_finite(*arrays):
    for array in arrays:
        assert np.all(np.isfinite(array)), array


def test_every_script_is_ported_with_a_header_and_a_bound():
    assert len(SCRIPTS) >= 20
    for name in SCRIPTS:
        source = (EXAMPLES / name).read_text()
        assert "zlib licence (LICENSE.bullet3)" in source and "Altered for sim_node" in source
        assert "p.GUI)" not in source and "SHARED_MEMORY)" not in source, name
        assert not re.search(r"^\s*while\s*\(?\s*(1|True|p\.isConnected\(\))", source, re.M), name
        assert "time.sleep(" not in source.replace("#time.sleep(", ""), name


def test_as_pybullet_puts_the_import_back():
    ported = "import os\nimport sim_node.pybullet as p\n  import sim_node.pybullet as bullet\n"
    assert as_pybullet(ported) == "import os\nimport pybullet as p\n  import pybullet as bullet\n"


# --- exact ------------------------------------------------------------------------------------

def test_rollPitchYaw_sets_the_same_poses(both):
    """Kinematics and math only: exact (the link frame to 1e-6, PyBullet's float32)."""
    ours, ref = both("rollPitchYaw.py")
    assert last(ours, "slider ids").tolist() == last(ref, "slider ids").tolist() == [-1] * 6
    for key, tol in (("base position", 1e-12), ("orientation", 1e-12), ("euler", 1e-9),
                     ("matrix", 1e-9), ("link 0 frame", 1e-6)):
        mine, theirs = values(ours, key), values(ref, key)
        assert len(mine) == len(theirs) == 4, key
        np.testing.assert_allclose(mine, theirs, atol=tol, err_msg=key)


def test_getClosestPoints_measures_the_same_distances(both):
    """Sphere-box distances from free shapes and from bodies (no simulation), the box's
    corners and edges rounded by Bullet's 1 mm margin: 1e-6 (measured 1e-14; Bullet's GJK
    converges on a sphere and a box)."""
    ours, ref = both("getClosestPoints.py")
    for key in ("distance=", "ptA=", "ptB="):
        mine, theirs = values(ours, key), values(ref, key)
        assert len(mine) == len(theirs) == 9, key
        np.testing.assert_allclose(mine, theirs, atol=1e-6, err_msg=key)


def test_jacobian_maps_joint_velocities_to_the_link_velocity(both):
    """Within each run, J(q) qdot equals getLinkState's CoM velocity (1e-9 relative); the
    velocities themselves follow one step of each engine's position motors (differ by design)."""
    ours, ref = both("jacobian.py")
    for text in (ours, ref):
        from_link_state, from_jacobian = values(text, "getLinkState:"), values(text, "q_dot:")
        assert len(from_link_state) == len(from_jacobian) == 2, text     # linear, angular
        np.testing.assert_allclose(from_link_state, from_jacobian, rtol=1e-9, atol=1e-9)
        assert_finite(from_link_state)


def test_sceneAabb_reports_the_same_boxes(both):
    """getAABB of the plane and the sphere (no gravity: nothing moves): exact up to Bullet's
    0.001 contact margin."""
    ours, ref = both("sceneAabb.py")
    for key in ("sceneAABBMin=", "sceneAABBMax=", "sphere aabb"):
        np.testing.assert_allclose(last(ours, key), last(ref, key), atol=2e-3, err_msg=key)


def test_testrender_np_renders_the_same_view(both):
    """View matrices exact (1e-6: PyBullet's float32); the image's size exact; what the camera
    sees (pixels of the robot and the plane, the nearest depth) within 10 % / 1e-3."""
    ours, ref = both("testrender_np.py")
    assert values(ours, "width =") == values(ref, "width =")
    assert values(ours, "height =") == values(ref, "height =")
    np.testing.assert_allclose(values(ours, "view"), values(ref, "view"), atol=1e-6)
    for key, rtol in (("robot pixels", 0.10), ("plane pixels", 0.02)):
        np.testing.assert_allclose(values(ours, key), values(ref, key), rtol=rtol, err_msg=key)
    np.testing.assert_allclose(values(ours, "min depth"), values(ref, "min depth"), atol=1e-3)


def test_mimicJointConstraint_gears_tie_the_wheels(both):
    """getJointInfo exact; the gears make |v| equal on all four wheel joints with PyBullet's
    signs, while driven (1e-2 of PyBullet's) and coasting after release (1e-3 of each other)."""
    ours, ref = both("mimicJointConstraint.py")
    info = re.compile(r"^\(\d+, b'.*$", re.M)
    mine, theirs = info.findall(ours), info.findall(ref)
    assert len(mine) == len(theirs) == 5
    for line_ours, line_ref in zip(mine, theirs):
        assert re.sub(NUMBER, "#", line_ours) == re.sub(NUMBER, "#", line_ref)
        np.testing.assert_allclose([float(x) for x in NUMBER.findall(line_ours)],
                                   [float(x) for x in NUMBER.findall(line_ref)], atol=1e-6)
    driven_ours, driven_ref = last(ours, "driven: joint velocities"), last(ref,
                                                                         "driven: joint velocities")
    np.testing.assert_allclose(driven_ours, driven_ref, atol=1e-2)
    coast_ours, coast_ref = last(ours, "released: joint velocities"), last(
        ref, "released: joint velocities")
    assert np.all(np.sign(coast_ours) == np.sign(coast_ref))
    np.testing.assert_allclose(np.abs(coast_ours), np.abs(coast_ours[0]), rtol=1e-3)
    assert last(ours, "constraints").tolist() == [3]


# --- closed form ------------------------------------------------------------------------------

def test_video_sync_mp4_falls_freely_and_records(both, tmp_path):
    """No damping, g = 10: v = -10 t exactly (semi-implicit Euler gives it at every step);
    sim_node writes the video a DIRECT PyBullet cannot."""
    ours, ref = both("video_sync_mp4.py")
    expected = [-10.0 * (i + 1) / 240.0 for i in range(59, 240, 60)]
    np.testing.assert_allclose([v[0] for v in values(ours, "r2d2 vel=")], expected, atol=1e-9)
    np.testing.assert_allclose([v[0] for v in values(ref, "r2d2 vel=")], expected, atol=1e-9)
    assert last(ours, "video log id")[0] >= 0
    video = tmp_path / "sim_node" / "test.mp4"
    assert video.exists() and video.stat().st_size > 1000


def test_motorMaxVelocity_caps_the_cart_speed(both):
    """POSITION_CONTROL toward 1000 with maxVelocity 0.5: the cart moves at 0.5 m/s (1e-3), so
    x = 0.5 t (within 0.01 m of PyBullet's)."""
    ours, ref = both("motorMaxVelocity.py")
    mine, theirs = values(ours, "position="), values(ref, "position=")
    assert len(mine) == len(theirs) == 8
    np.testing.assert_allclose([v[0] for v in values(ours, "velocity=")], 0.5, atol=1e-3)
    np.testing.assert_allclose(mine, theirs, atol=1e-2)


def test_inverse_dynamics_torques_track_the_trajectory(both):
    """calculateInverseDynamics as feed-forward torque: the joints follow the desired
    trajectory (max error < 1e-3 rad; PyBullet's: 6e-5) and the last torques agree to 30 %:
    PyBullet derives the links' inertias from their collision shapes (no
    URDF_USE_INERTIA_FROM_FILE here), sim_node takes the file's (measured: 13 % and 23 %
    apart on the two joints)."""
    ours, ref = both("inverse_dynamics.py")
    for joint in (0, 1):
        assert last(ours, f"joint {joint} max |q - desired|")[0] < 1e-3
        np.testing.assert_allclose(last(ours, f"joint {joint} final torque"),
                                   last(ref, f"joint {joint} final torque"), rtol=0.3)


# --- physics within tolerances ----------------------------------------------------------------

def test_collisionFilter_cube_rests_on_the_plane(both):
    """Group/mask 0 disables the cube's collisions, the pair filter re-enables them with the
    plane: it rests on it (z = 0.5 within 1 cm, as PyBullet's)."""
    ours, ref = both("collisionFilter.py")
    np.testing.assert_allclose(last(ours, "cube position"), last(ref, "cube position"), atol=1e-2)
    assert "cube-plane contacts True" in ours


def test_constraint_drags_the_cube_to_the_pivot(both):
    """The fixed constraint moved by changeConstraint (maxForce 50) holds the cube at the pivot
    as PyBullet's (1e-6 m and rad: the cube has PyBullet's inertia, its collision box's times
    inertia_scaling, not the file's); constraint ids as PyBullet's (they start at 1)."""
    ours, ref = both("constraint.py")
    assert ours.split()[:2] == ref.split()[:2] == ["1", "1"]
    np.testing.assert_allclose(last(ours, "cube position"), last(ref, "cube position"), atol=1e-6)
    np.testing.assert_allclose(last(ours, "euler"), last(ref, "euler"), atol=1e-6)
    assert last(ours, "constraints after removeConstraint").tolist() == [0]


@pytest.mark.xfail(strict=True, reason="the script switches PyBullet to its Dantzig LCP solver "
                   "for a 100 kg cube on nine 0.1 kg cubes (mass ratio 1000); sim_node's "
                   "iterative contact solver has no direct LCP (not in issue 14): the stack falls "
                   "(it stands without the heavy cube)")
def test_switchConstraintSolver_stack_stands(both):
    """Ten 5 cm cubes stacked (the top one 100 kg): each within 5 mm of PyBullet's."""
    ours, ref = both("switchConstraintSolver.py")
    assert last(ours, "top cube mass").tolist() == [100.0]
    for cube in range(1, 11):
        np.testing.assert_allclose(last(ours, f"cube {cube} position"),
                                   last(ref, f"cube {cube} position"), atol=5e-3)


def test_inverse_kinematics_reaches_the_circle(both):
    """IK with null space and orientation on the kuka: the IK pose puts the end effector within
    1 cm of the target pointing down; tracking by position motors (gain 0.03) within 5 cm of
    PyBullet's trail."""
    ours, ref = both("inverse_kinematics.py")
    target = last(ours, "target")
    np.testing.assert_allclose(last(ours, "ik end effector"), target, atol=1e-2)
    down = last(ours, "orientation")
    assert abs(abs(down[1]) - 1.0) < 1e-2, down           # 180 degrees about y
    np.testing.assert_allclose(values(ours, "end effector"), values(ref, "end effector"),
                               atol=5e-2)


def test_inverse_kinematics_husky_kuka(both):
    """The husky's joint info exact; the kuka fixed on it by a constraint; iterated IK with
    resetJointState puts the end effector within 1e-2 of the target (PyBullet's: 5e-5)."""
    ours, ref = both("inverse_kinematics_husky_kuka.py")
    rows = re.compile(r"\((\d+), b'(\w+)', (\d+), (-?\d+), (-?\d+), ")
    assert rows.findall(ours) == rows.findall(ref)
    np.testing.assert_allclose(last(ours, "end effector"), last(ours, "target"), atol=1e-2)
    husky, kuka = last(ours, "husky base"), last(ours, "kuka base")
    np.testing.assert_allclose(kuka - husky, last(ref, "kuka base") - last(ref, "husky base"),
                               atol=2e-2)
    assert last(ours, "info").tolist()[:5] == last(ref, "info").tolist()[:5]


def test_loadpanda_follows_the_ik_target(both):
    """Panda IK (5 iterations a step, Y up) and position motors: the end effector within 10 cm
    of the target, as PyBullet's is (6 cm)."""
    ours, ref = both("loadpanda.py")
    np.testing.assert_allclose(last(ours, "target"), last(ref, "target"), atol=1e-12)
    np.testing.assert_allclose(last(ours, "end effector"), last(ours, "target"), atol=0.1)


def test_mini_cheetah_stands(both):
    """Position motors at 0 hold the legs: base height within 2 cm of PyBullet's, joints at 0
    within 0.05 rad."""
    ours, ref = both("mini_cheetah_test.py")
    np.testing.assert_allclose(last(ours, "base position"), last(ref, "base position"), atol=2e-2)
    np.testing.assert_allclose(last(ours, "joint positions"), 0.0, atol=5e-2)


@pytest.mark.xfail(strict=True, reason=(
    "GAP: the weak-motor (force 1) collapse bifurcates: PyBullet's legs fold the other way "
    "(hip joint at +1.57 rad, ours -1.57) and its torso joint ends at -2.04 m after 1 s, ours at "
    "-1.81 m, with the link damping (0.04) on both sides; with it off on both, -1.79 m and "
    "-1.81 m. The damping is PyBullet's (test_control's free cube, pendulum, r2d2 tumbling); the "
    "landing's contacts decide the fold"))
def test_biped2d_falls_onto_its_feet(both):
    """The planar biped on its world-fixed base: the base exact, the torso's height joint within
    0.1 m of PyBullet's after 1 s; the rest of the joints finite (weak
    motors: differ by design). Its planar joints leave the feet's sideways friction and torsion
    rows without a DOF: the solver divided 0 by 0 there and froze the biped at landing."""
    ours, ref = both("biped2d_pybullet.py")
    np.testing.assert_allclose(last(ours, "base position"), last(ref, "base position"), atol=1e-9)
    mine, theirs = last(ours, "joint positions"), last(ref, "joint positions")
    assert mine.shape == theirs.shape == (9,)
    assert_finite(mine)
    assert abs(mine[1] - theirs[1]) < 0.1


def test_experimentalCcdSphereRadius_spheres_land_on_the_terrain(both):
    """125 small spheres dropped on a concave terrain mesh: no contacts before the first step;
    after 1.5 s every one lies on the terrain (its gap to it in the boundary layer: 0.5 mm apart
    to a tenth of the 2.5 mm padding) and the lowest and highest within 5 cm of PyBullet's
    (sim_node has no rolling resistance: its balls roll on where PyBullet's stop)."""
    ours, ref = both("experimentalCcdSphereRadius.py")
    assert values(ours, "num points=")[0] == [0.0]
    assert last(ours, "spheres").tolist()[0] == 125
    for key in ("lowest z", "highest z"):
        np.testing.assert_allclose(last(ours, key), last(ref, key), atol=5e-2, err_msg=key)
    for key in ("smallest", "largest"):
        np.testing.assert_allclose(last(ours, key), 0.0005, atol=0.00025, err_msg=key)


def test_kuka_setup_loads_the_same_scene(both):
    """25 bodies from URDF and SDF, the same ids, names and joint counts as PyBullet's; the
    2 constraints; every body within 0.1 m of PyBullet's after 1 s (objects settle on tables:
    contacts differ by design; most stay within 1 cm, the duck falling onto the sphere lands
    5 cm from PyBullet's). The scene froze before: samurai.urdf's concave monastery collided as
    its convex hull with everything inside it, and the solver failed on the one-DOF fingers."""
    ours, ref = both("kuka_setup.py")
    body = re.compile(r"^(\d+) \((b'[^']*'), (b'[^']*')\) (\d+) (\[[^\]]*\])", re.M)
    mine, theirs = body.findall(ours), body.findall(ref)
    assert [row[:4] for row in mine] == [row[:4] for row in theirs]
    assert len(mine) == 25
    assert last(ours, "constraints").tolist() == last(ref, "constraints").tolist() == [2]
    for row_ours, row_ref in zip(mine, theirs):
        np.testing.assert_allclose([float(x) for x in NUMBER.findall(row_ours[4])],
                                   [float(x) for x in NUMBER.findall(row_ref[4])], atol=0.1,
                                   err_msg=row_ours[:4])


def test_testMJCF_loads_the_humanoid(both):
    """loadMJCF: the same bodies, names and joint count; the camera sees it (pixels on a body
    within 10 % of PyBullet's); the humanoid's base within 5 cm after 5 steps (PyBullet puts a
    floating base's centre of mass at the body's pos, sim_node its frame, as MuJoCo: README
    "SDF and MJCF")."""
    ours, ref = both("testMJCF.py")
    info = re.compile(r"^(\d+) (\(b'[^)]*\)) joints (\d+)", re.M)
    assert info.findall(ours) == info.findall(ref)
    np.testing.assert_allclose(values(ours, "pixels on a body"), values(ref, "pixels on a body"),
                               rtol=0.1)
    np.testing.assert_allclose(last(ours, "1 base"), last(ref, "1 base"), atol=5e-2)


# --- runs to the end, finite ------------------------------------------------------------------

def test_snake_crawls_without_exploding(both):
    """createMultiBody with 36 links, anisotropic friction, a travelling wave of position
    motors. With useMaximalCoordinates PyBullet turns the links into separate bodies and
    reports 0 joints (its snake lies still); sim_node keeps the 36 joints (maximal coordinates
    are a Bullet solver option it does not have). Only: runs, head finite and above the
    ground."""
    ours, ref = both("snake.py")
    assert last(ref, "joints").tolist() == [0]
    assert last(ours, "joints").tolist() in ([0], [36])
    head = last(ours, "head position")
    assert_finite(head)
    assert 0.0 < head[2] < 1.5


@pytest.mark.xfail(strict=True, reason=(
    'loadPlugin: plugins (pdControlPlugin) are not in issue 14'))
def test_pdControl_brings_the_cartpoles_to_the_target(both):
    """Four controllers on four cartpoles; stable PD and the position motor reach the target
    (cart 2, pole 0) within 1e-2 as PyBullet's do; the explicit PDs are finite."""
    ours, ref = both("pdControl.py")
    for key in ("position constraint joint positions", "stablePD joint positions"):
        np.testing.assert_allclose(last(ours, key), [2.0, 0.0], atol=1e-2, err_msg=key)
    assert_finite(last(ours, "explicit PD joint positions"))


def test_profileTiming_writes_the_timings(both):
    """STATE_LOGGING_PROFILE_TIMINGS and submitProfileTiming: a log id and a json file."""
    ours, ref = both("profileTiming.py")
    assert "json written True" in ours
    assert last(ours, "log id")[0] >= 0
