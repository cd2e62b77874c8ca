"""Nothing falls through a mesh (issue 10 §2): bodies dropped onto triangle meshes and
heightfields — flat at every resolution, degenerate, concave, curved — land anywhere (triangle
interiors, shared edges, shared vertices, at random) and come to rest on them.

Every claim is checked every step, in sim time, against closed-form geometry that does not call
the engine (mesh_floors.py): a body's support function against the planes a floor triangulates,
exact point / segment-to-triangle distances, separating axes against the solid under a surface.
"Never sinks" means the real geometries never overlap by more than the padding (2.5 mm, the
boundary layer); "rests" means: at the resting height (rigid contacts rest REST_GAP = 0.5 mm
apart) to a tenth of the padding, and slower than 1 mm/s.

SIM_NODE_HYPOTHESIS=explore draws many more examples than the CI profile.
"""
import math
import os

import mesh_floors as mf
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st
from scene_helpers import DT, quat_about, world_from_yaml
from transforms3d.quaternions import qmult

from sim_node.model.scene import build_scene

EXPLORE = os.environ.get("SIM_NODE_HYPOTHESIS") == "explore"


def examples(n):
    """The CI profile: n examples, the same on every run; explore: 20 n fresh ones."""
    return settings(max_examples=20 * n if EXPLORE else n, deadline=None, derandomize=not EXPLORE,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


SHAPES = ("sphere", "box", "capsule", "cylinder", "convex")
STILL = 1e-3                 # [m/s] (and rad/s): at rest
AT_REST_HEIGHT = 0.1 * mf.PADDING


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return tmp_path_factory.mktemp("mesh_landing")


def make_body(kind, files):
    return {"sphere": mf.sphere, "box": mf.box, "capsule": mf.capsule, "cylinder": mf.cylinder,
            "convex": lambda: mf.convex_mesh(files / "octahedron.obj")}[kind]()


def xyzw_product(a, b):
    w, x, y, z = qmult([a[3], *a[:3]], [b[3], *b[:3]])
    return [x, y, z, w]


def drop(files, floor_text, body, position, orientation, seconds):
    """Simulate the body dropped onto the floor: its pose after every step, R (n, 3, 3) and
    p (n, 3), and its final free state row (13,)."""
    world = world_from_yaml(floor_text + mf.object_yaml(body, position, orientation), files)
    scene = build_scene(world).scene
    states = np.empty((int(round(seconds / DT)), 13))
    for k in range(len(states)):
        scene.step(DT)
        states[k] = scene.free_state[0]
    R, p = mf.poses(states)
    return R, p, states[-1]


def speed(row, extent=0.1):
    """Largest speed of a point within `extent` of the centre [m/s]."""
    return float(np.linalg.norm(row[7:10]) + np.linalg.norm(row[10:13]) * extent)


# ---------------------------------------------------------------------------------------------
# Flat meshes and heightfields in z = 0, [-1, 1]^2

def flat_floor(name, rng):
    """(vertices, faces) of the named flat floor (z = 0), or ('heightfield', heights)."""
    if name.startswith("heightfield"):
        nx, ny = {"heightfield 2x2": (2, 2), "heightfield 9x12": (9, 12),
                  "heightfield 61x61": (61, 61)}[name]
        return "heightfield", np.zeros((ny, nx))
    v, f = mf.grid(6)
    return {
        "two triangles": lambda: mf.two_triangles(),
        "grid 2": lambda: mf.grid(2),
        "grid 7": lambda: mf.grid(7),
        "grid 25": lambda: mf.grid(25),
        "grid 60": lambda: mf.grid(60),
        "alternating grid 8": lambda: mf.grid(8, alternate=True),
        "random triangulation": lambda: mf.random_triangulation(rng),
        "slivers 1e-12": lambda: mf.with_slivers(1e-12),
        "slivers 1e-6": lambda: mf.with_slivers(1e-6),
        "non-manifold fins": lambda: mf.with_fins(),
        "unmerged, double-sided": lambda: mf.unmerged(v, f, rng),
        "flipped winding": lambda: (v, mf.flipped(f, rng)),
    }[name]()


FLAT_FLOORS = ("two triangles", "grid 2", "grid 7", "grid 25", "grid 60", "alternating grid 8",
               "random triangulation", "slivers 1e-12", "slivers 1e-6", "non-manifold fins",
               "unmerged, double-sided", "flipped winding", "heightfield 2x2", "heightfield 9x12",
               "heightfield 61x61")
LANDINGS = ("vertex", "edge midpoint", "on an edge", "triangle interior", "anywhere")
REACH = 0.7                  # landing points within [-REACH, REACH]^2: the body stays on the floor


def heightfield_mesh(heights, size=(2.0, 2.0)):
    """The triangles of a heightfield centred on the origin, as the engine cuts its cells."""
    from sim_node.engine.heightfield import grid_triangles

    ny, nx = heights.shape
    X, Y = np.meshgrid(np.linspace(-size[0] / 2, size[0] / 2, nx),
                       np.linspace(-size[1] / 2, size[1] / 2, ny))
    return np.column_stack([X.ravel(), Y.ravel(), heights.ravel()]), grid_triangles(nx, ny)


def landing_point(kind, vertices, faces, rng):
    """A point (x, y) of the floor's top surface of the given kind, within REACH."""
    top = [f for f in faces if np.all(np.abs(vertices[f][:, 2]) < 1e-9)]      # not the fins
    for _ in range(200):
        face = vertices[top[rng.integers(len(top))]]
        if kind == "vertex":
            xy = face[rng.integers(3), :2]
        elif kind in ("edge midpoint", "on an edge"):
            k = rng.integers(3)
            t = 0.5 if kind == "edge midpoint" else rng.random()
            xy = face[k, :2] + t * (face[(k + 1) % 3, :2] - face[k, :2])
        elif kind == "triangle interior":
            w = rng.dirichlet([1.0, 1.0, 1.0])
            xy = w @ face[:, :2]
        else:
            xy = rng.uniform(-REACH, REACH, 2)
        if np.abs(xy).max() <= REACH:
            return xy
    return np.zeros(2)          # (two triangles: no vertex within reach; the diagonal's middle)


@examples(40)
@example(floor="slivers 1e-12", shape="capsule", landing="anywhere", lying=True, yaw=0.0,
         seed=131)    # beside a T-junction: its boundary vertex tilted the contact (fixed)
@given(floor=st.sampled_from(FLAT_FLOORS), shape=st.sampled_from(SHAPES),
       landing=st.sampled_from(LANDINGS), lying=st.booleans(), yaw=st.floats(0.0, math.pi),
       seed=st.integers(0, 2 ** 32 - 1))
def test_a_body_landing_anywhere_on_a_flat_mesh_or_heightfield_comes_to_rest_on_it(
        files, floor, shape, landing, lying, yaw, seed):
    # Claim: wherever it lands, the body's lowest point never goes below the floor plane by
    # more than the padding (every step) and after 1.5 s it rests at its resting height.
    rng = np.random.default_rng(seed)
    body = make_body(shape, files)
    built = flat_floor(floor, rng)
    if isinstance(built[0], str):                           # ("heightfield", heights)
        text = mf.heightfield_yaml(built[1], (2.0, 2.0), files / "floor.npy")
        vertices, faces = heightfield_mesh(built[1])
    else:
        vertices, faces = built
        text = mf.floor_yaml(vertices, faces, files / "floor.stl")
    xy = landing_point(landing, np.asarray(vertices, float), np.asarray(faces), rng)
    q = quat_about((0, 0, 1), yaw)
    height = body.rest_height
    if lying and shape in ("capsule", "cylinder"):          # on its side, axis horizontal
        q = xyzw_product(q, quat_about((1, 0, 0), math.pi / 2))
        height = body.radius if shape == "capsule" else 0.04
    R, p, row = drop(files, text, body, (xy[0], xy[1], height + 0.3), q, 1.5)
    lowest = body.lowest(R, p)
    assert lowest.min() >= -mf.PADDING, f"sank {-lowest.min() * 1e3:.2f} mm into {floor}"
    assert abs(lowest[-1] - mf.REST_GAP) <= AT_REST_HEIGHT, f"rests {lowest[-1] * 1e3:.3f} mm above"
    assert speed(row) < STILL


@pytest.mark.parametrize("hole", [0.02, 0.035, 0.045])
def test_a_ball_over_a_hole_narrower_than_it_rests_on_the_rim_at_the_closed_form_height(files, hole):
    # Claim: the open mesh's inner boundary edges hold the ball (r 5 cm) where it touches the
    # four rim edges: centre at sqrt(r^2 - a^2) plus the rest gap along the tilted normals
    r = 0.05
    v, f = mf.square_hole(hole)
    ball = mf.sphere(r)
    R, p, row = drop(files, mf.floor_yaml(v, f, files / "hole.stl"), ball, (0.0, 0.0, 0.3),
                     (0, 0, 0, 1), 1.0)
    heights = p[:, 2]
    touching = math.sqrt(r * r - hole * hole)
    expected = math.sqrt((r + mf.REST_GAP) ** 2 - hole * hole)
    assert heights.min() >= touching - mf.PADDING
    assert row[2] == pytest.approx(expected, abs=1e-5)
    assert speed(row) < STILL


@pytest.mark.parametrize("xy", [(0.2, 0.2), (0.2, 0.25), (0.23, 0.17)],
                         ids=["vertex", "grid line", "face"])
def test_a_small_ball_thrown_at_100_m_per_s_onto_a_mesh_floor_stops_on_top(files, xy):
    # Claim: the step's sweep margin finds the floor before the ball (r 1 cm) crosses it, on a
    # vertex, an edge or a face: it never sinks more than the padding and comes to rest on top
    v, f = mf.grid(10)
    world = world_from_yaml(mf.floor_yaml(v, f, files / "grid.stl")
                            + mf.object_yaml(mf.sphere(0.01), (xy[0], xy[1], 0.5)), files)
    scene = build_scene(world).scene
    scene.free_state[0, 7:10] = [0.0, 0.0, -100.0]          # straight down onto xy
    lowest = np.inf
    for _ in range(300):
        scene.step(DT)
        lowest = min(lowest, scene.free_state[0, 2] - 0.01)
    assert lowest >= -mf.PADDING
    assert scene.free_state[0, 2] - 0.01 == pytest.approx(mf.REST_GAP, abs=AT_REST_HEIGHT)
    assert speed(scene.free_state[0]) < STILL


# ---------------------------------------------------------------------------------------------
# Concave and curved floors

GROOVE_CELLS = (2, 6, 20)       # even: the crease lies on a grid line


@examples(12)
@given(shape=st.sampled_from(SHAPES), slope_deg=st.floats(20.0, 35.0),
       cells=st.sampled_from(GROOVE_CELLS), x=st.floats(-0.3, 0.3), on_crease=st.booleans(),
       yaw=st.floats(0.0, math.pi))
def test_in_a_v_groove_a_body_never_sinks_into_either_face_and_comes_to_rest(
        files, shape, slope_deg, cells, x, on_crease, yaw):
    # Claim: the body never overlaps either plane of the groove by more than the padding (its
    # support function against each plane, every step); round bodies (a sphere, a capsule or
    # cylinder lying along the groove) roll down, lose their energy at the crease and rest in
    # it, at the closed-form height (r + gap) / cos(slope) above it, within 8 s; boxes and
    # polyhedra touch the faces after 3 s (that they come to rest there without gaining energy:
    # test_a_polyhedron_on_several_faces_comes_to_rest_and_contact_never_gives_it_energy).
    slope = math.radians(slope_deg)
    body = make_body(shape, files)
    v, f = mf.v_groove(slope, cells)
    normals = [np.array([-math.sin(slope), 0.0, math.cos(slope)]),
               np.array([math.sin(slope), 0.0, math.cos(slope)])]
    x = 0.0 if on_crease else x
    round_body = shape in ("sphere", "capsule", "cylinder")
    if round_body:
        q = (0, 0, 0, 1) if shape == "sphere" else quat_about((1, 0, 0), math.pi / 2)
        r = body.radius if body.radius else 0.04
    else:
        q = quat_about((0, 0, 1), yaw)
        r = body.rest_height
    position = (x, 0.1, abs(x) * math.tan(slope) + r / math.cos(slope) + 0.1)
    R, p, row = drop(files, mf.floor_yaml(v, f, files / "groove.stl"), body, position, q,
                     8.0 if round_body else 3.0)
    clearance = np.minimum(*(body.lowest(R, p, n) for n in normals))
    assert clearance.min() >= -mf.PADDING, f"sank {-clearance.min() * 1e3:.2f} mm into a face"
    if round_body:
        assert row[2] == pytest.approx((r + mf.REST_GAP) / math.cos(slope), abs=AT_REST_HEIGHT)
        assert abs(row[0]) < AT_REST_HEIGHT
        assert speed(row) < STILL
    else:
        assert abs(clearance[-1] - mf.REST_GAP) <= AT_REST_HEIGHT


def test_a_ball_rolling_in_a_triangulated_groove_follows_the_two_planes_it_triangulates(files):
    # Claim: over 5 s of rolling across the crease and settling in it, a ball in a 20-degree
    # V-groove of 72 triangles moves as in the groove made of the two half-spaces it
    # triangulates (one terrain of two planes: the same body pair, independent contact code),
    # to 0.1 mm
    import sim_node
    from sim_node.model import geometry as geo
    from sim_node.model.urdf import GeometryElement, Origin

    slope = math.radians(20)
    v, f = mf.v_groove(slope)
    start = (-0.2, 0.1, 0.2 * math.tan(slope) + 0.3)
    ball = mf.sphere()

    def path(world):
        scene = build_scene(world).scene
        out = []
        for _ in range(5000):
            scene.step(DT)
            out.append(scene.free_state[0, :3].copy())
        return np.array(out)

    meshed = world_from_yaml(mf.floor_yaml(v, f, files / "groove.stl")
                             + mf.object_yaml(ball, start), files)
    planes = world_from_yaml(mf.object_yaml(ball, start), files, name="ball.yaml")
    planes.add(sim_node.TerrainModel("groove", tuple(
        GeometryElement(Origin(), geo.Plane((sign * math.sin(slope), 0.0, math.cos(slope)), 0.0))
        for sign in (-1.0, 1.0))))
    mesh_path, plane_path = path(meshed), path(planes)
    assert np.abs(mesh_path - plane_path).max() < 1e-4
    assert abs(mesh_path[-1, 0]) < 1e-4                    # and at rest in the crease


@examples(10)
@given(shape=st.sampled_from(SHAPES), x=st.floats(-0.85, 0.85), edge=st.booleans(),
       yaw=st.floats(0.0, math.pi))
def test_on_a_staircase_a_body_never_sinks_into_a_step_and_ends_on_a_tread(files, shape, x, edge,
                                                                             yaw):
    # Claim: on a valley of 5 cm steps (convex edges on top of vertical risers, concave corners
    # at their feet), the body never overlaps the solid steps by more than the padding (exact
    # separation from each step's column, every step) and after 3 s lies on a tread: polyhedra
    # at rest touching it; round bodies (which may roll on between the risers: nothing slows a
    # rolling ball) at a tread's height plus their radius.
    rise, tread, count = 0.05, 0.3, 3
    v, f, profile = mf.steps_valley(rise, tread, count)
    body = make_body(shape, files)
    edges = [tread / 2 + k * tread for k in range(count)]
    if edge:                                 # land on a convex step edge (or its mirror)
        x = math.copysign(edges[int(abs(x) * 3) % count], x)
    columns = [(-tread / 2, tread / 2, 0.0)] + [
        (sign * e, sign * (e + tread), (k + 1) * rise) for k, e in enumerate(edges) for sign in (1, -1)]
    columns = [(min(a, b), max(a, b), top) for a, b, top in columns]
    round_body = shape in ("sphere", "capsule", "cylinder")
    q = quat_about((1, 0, 0), math.pi / 2) if shape in ("capsule", "cylinder") else quat_about((0, 0, 1), yaw)
    r = body.radius if body.radius else (0.04 if round_body else body.rest_height)
    ground = max(top for a, b, top in columns if a - 0.1 <= x <= b + 0.1)
    R, p, row = drop(files, mf.floor_yaml(v, f, files / "steps.stl"), body,
                     (x, 0.0, ground + r + 0.1), q, 3.0)
    clearance = mf.column_clearance(body, R, p, columns)
    assert clearance.min() >= -mf.PADDING, f"sank {-clearance.min() * 1e3:.2f} mm into a step"
    if round_body:
        heights = np.array([0.0] + [(k + 1) * rise for k in range(count)])
        assert np.abs(row[2] - r - mf.REST_GAP - heights).min() <= AT_REST_HEIGHT
    else:
        assert abs(clearance[-1] - mf.REST_GAP) <= AT_REST_HEIGHT
        assert speed(row) < STILL


def bumpy_heights(n):
    X, Y = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n))
    return 0.04 * np.sin(3 * X + 1) * np.cos(2 * Y) + 0.02 * np.sin(5 * Y)


@examples(8)
@example(shape="box", terrain="bowl", x=0.0, y=0.0, yaw=1.0)   # rocked on a diagonal (fixed:
@example(shape="box", terrain="bowl", x=-0.027, y=0.068, yaw=0.47)   # clustering kept 2 corners)
@given(shape=st.sampled_from(SHAPES), terrain=st.sampled_from(["bowl", "heightfield 21",
                                                                "heightfield 41"]),
       x=st.floats(-0.2, 0.2), y=st.floats(-0.2, 0.2), yaw=st.floats(0.0, math.pi))
def test_on_a_bowl_or_a_bumpy_heightfield_a_body_never_sinks_and_stays_on_the_surface(
        files, shape, terrain, x, y, yaw):
    # Claim: dropped onto a triangulated spherical bowl or a bumpy heightfield, the body never
    # overlaps the solid under the surface by more than the padding (exact distances for the
    # sphere and capsule, separating axes against each triangle's prism for polyhedra and the
    # prism around the cylinder, every step) and after 1.5 s touches it; polyhedra are at rest.
    body = make_body(shape, files)
    if terrain == "bowl":
        v, f = mf.spherical_bowl()
        text = mf.floor_yaml(v, f, files / "bowl.stl")
    else:
        heights = bumpy_heights(int(terrain.split()[1]))
        text = mf.heightfield_yaml(heights, (2.0, 2.0), files / "bumps.npy")
        v, f = heightfield_mesh(heights)
    triangles = np.asarray(v, float)[np.asarray(f)]
    q = quat_about((0, 0, 1), yaw)
    start = (x, y, mf.mesh_height(v, f, (x, y)) + body.rest_height + 0.1)
    R, p, row = drop(files, text, body, start, q, 1.5)
    clearance = mf.terrain_clearance(body, R, p, triangles)
    assert clearance.min() >= -mf.PADDING, f"sank {-clearance.min() * 1e3:.2f} mm"
    assert clearance[-1] <= mf.PADDING                     # touching, not fallen through
    if shape in ("box", "convex"):
        assert speed(row) < STILL


# ---------------------------------------------------------------------------------------------
# Polyhedra on several faces at once: they come to rest, and contact never gives them energy

SUPPORTS = ("bowl", "heightfield 21", "groove mesh", "groove, one terrain of two planes",
            "groove, two plane terrains")
GAINED_LIFT = 2e-6           # [m] the energy contact may give a body at rest: lifting it this high
RETURNED = 1e-3              # the share of the energy contact takes that it may give back


def groove_normals(slope):
    return [(-math.sin(slope), 0.0, math.cos(slope)), (math.sin(slope), 0.0, math.cos(slope))]


def support_world(files, support, body, x, y, yaw, slope, cells):
    """The world of `body` (yawed) dropped onto the support with its centre over (x, y), its
    lowest point 10 cm above the surface there (a groove's faces rise by `slope` on either side
    of the crease along y; a mesh groove has `cells` grid cells across)."""
    import sim_node
    from sim_node.model import geometry as geo
    from sim_node.model.urdf import GeometryElement, Origin

    q = quat_about((0, 0, 1), yaw)
    if support in ("bowl", "heightfield 21"):
        if support == "bowl":
            v, f = mf.spherical_bowl()
            text = mf.floor_yaml(v, f, files / "bowl.stl")
        else:
            heights = bumpy_heights(21)
            text = mf.heightfield_yaml(heights, (2.0, 2.0), files / "bumps.npy")
            v, f = heightfield_mesh(heights)
        start = (x, y, mf.mesh_height(v, f, (x, y)) + body.rest_height + 0.1)
        return world_from_yaml(text + mf.object_yaml(body, start, q), files)
    normals = groove_normals(slope)
    start = (x, y, abs(x) * math.tan(slope) + body.rest_height / math.cos(slope) + 0.1)
    text = {"groove mesh": lambda: mf.floor_yaml(*mf.v_groove(slope, cells), files / "groove.stl"),
            "groove, two plane terrains": lambda: mf.planes_yaml(normals)}.get(support, str)()
    world = world_from_yaml(text + mf.object_yaml(body, start, q), files)
    if support == "groove, one terrain of two planes":
        world.add(sim_node.TerrainModel("groove", tuple(
            GeometryElement(Origin(), geo.Plane(n, 0.0)) for n in normals)))
    return world


@examples(10)
@example(support="bowl", shape="box", x=0.0, y=0.0, yaw=1.0, slope_deg=20.0, cells=6)
@given(support=st.sampled_from(SUPPORTS), shape=st.sampled_from(("box", "convex")),
       x=st.floats(-0.2, 0.2), y=st.floats(-0.2, 0.2), yaw=st.floats(0.0, math.pi),
       slope_deg=st.floats(5.0, 35.0), cells=st.sampled_from(GROOVE_CELLS))
def test_a_polyhedron_on_several_faces_comes_to_rest_and_contact_never_gives_it_energy(
        files, support, shape, x, y, yaw, slope_deg, cells):
    # Claim: a box or a convex polyhedron dropped 10 cm (restitution 0) into a triangulated
    # bowl, onto a bumpy heightfield, or into a V-groove from a shallow crease (5 degrees) to
    # 35-degree faces — a mesh, one terrain of two planes, two plane terrains — rests on
    # several non-coplanar faces: from its first touch on, the energy it gains over all steps
    # together (kinetic + potential, from its state and inertia) is less than 0.1 % of the
    # energy contact takes from it (the boundary layer pushing a body that sank in during the
    # impact out to the rest gap; a box that rocked in the bowl for ever gained 0.015 J in 3 s
    # of the 0.93 J it lost), and it comes to rest: slower than 1 mm/s for half a second in a row
    # within 5 s, and at rest it gains less than lifting it 2 um would take. (It may leave the
    # rest later when that was an unstable balance: an octahedron at rest on an edge across a
    # 5-degree groove tipped over after 3 s, its speed growing from 1e-11 m/s, losing energy.)
    body = make_body(shape, files)
    world = support_world(files, support, body, x, y, yaw, math.radians(slope_deg), cells)
    mass = world.rigidObject("body").getMass()
    scene = build_scene(world).scene
    states = np.empty((int(round(5.0 / DT)), 13))
    touching = np.zeros(len(states), bool)
    for k in range(len(states)):
        scene.step(DT)
        states[k] = scene.free_state[0]
        touching[k] = bool((scene.contact_arrays()["depth"] >= 0.0).any())
    assert touching.any()
    energy = mf.mechanical_energy(states[np.argmax(touching):], mass.getMass(),
                                  mass.getInertia().reshape(3, 3))
    steps = np.diff(energy)
    gained, lost = steps[steps > 0].sum(), -steps[steps < 0].sum()
    assert gained < RETURNED * lost, f"gained {gained:.3g} J, lost {lost:.3g} J"
    still = np.array([speed(row) < STILL for row in states])
    window = int(round(0.5 / DT))
    runs = np.convolve(still, np.ones(window, int), "valid") == window
    assert runs.any(), f"never at rest for 0.5 s; last speed {speed(states[-1]):.3g}"
    at_rest = np.flatnonzero(still[np.argmax(touching) + 1:])        # steps[i]: state i -> i + 1
    assert steps[at_rest][steps[at_rest] > 0].sum() < mass.getMass() * 9.81 * GAINED_LIFT


# ---------------------------------------------------------------------------------------------
# A moving triangle mesh on a static one

@pytest.mark.parametrize("floor", ["two triangles", "grid 7", "heightfield 9x12"])
@pytest.mark.parametrize("xy", [(0.0, 0.0), (0.3, 0.3), (2 / 7, -1 / 7)],
                         ids=["diagonal", "diagonal-2", "vertex"])
def test_a_concave_mesh_dropped_on_a_mesh_floor_rests_flat_on_it(files, floor, xy):
    # Claim: a moving concave mesh (an open tray: floor and four walls, collided as its
    # triangles) dropped onto mesh and heightfield floors rests flat at its resting height
    # wherever its corners and the floor's edges meet
    import trimesh

    parts = [trimesh.creation.box((0.3, 0.3, 0.02), trimesh.transformations.translation_matrix((0, 0, 0.01)))]
    for cx, cy, ex, ey in ((0.14, 0, 0.02, 0.3), (-0.14, 0, 0.02, 0.3), (0, 0.14, 0.3, 0.02),
                           (0, -0.14, 0.3, 0.02)):
        parts.append(trimesh.creation.box((ex, ey, 0.1), trimesh.transformations.translation_matrix((cx, cy, 0.05))))
    trimesh.util.concatenate(parts).export(files / "tray.stl")
    built = flat_floor(floor, np.random.default_rng(0))
    text = (mf.heightfield_yaml(built[1], (2.0, 2.0), files / "floor.npy") if isinstance(built[0], str)
            else mf.floor_yaml(*built, files / "floor.stl"))
    text += f"""rigid_objects:
  - name: tray
    geometry: {{mesh: {files / 'tray.stl'}, concave: true}}
    mass: 1.0
    pose: {{position: [{xy[0]}, {xy[1]}, 0.2], orientation: [0.0, 0.0, 0.2, 0.98]}}
"""
    world = world_from_yaml(text, files)
    tray = world.rigidObject("tray")
    corners = trimesh.load(files / "tray.stl").vertices - tray.getMass().getCom()   # about the com
    scene = build_scene(world).scene
    lowest = []
    for _ in range(1500):
        scene.step(DT)
        R, p = mf.poses(scene.free_state[0])
        lowest.append(np.min(corners @ R[0, 2] + p[0, 2]))
    lowest = np.array(lowest)
    assert lowest.min() >= -mf.PADDING
    assert abs(lowest[-1] - mf.REST_GAP) <= AT_REST_HEIGHT
    assert R[0, 2, 2] > 1 - 1e-6                                       # flat
    assert speed(scene.free_state[0]) < STILL


@pytest.mark.parametrize("feet_on", ["vertices", "diagonals"])
def test_a_quadruped_dropped_onto_a_mesh_floor_with_its_feet_on_shared_features_stands_as_on_the_plane(
        files, feet_on):
    # Claim: the 12-joint quadruped (sphere feet, r 2 cm, at (+-0.19, +-0.15) m) dropped 5 cm
    # holding its pose with a joint PD stands on a mesh floor whose vertices (or cell
    # diagonals) lie exactly under its feet at the height it stands at on the plane, to 0.1 mm
    import sim_node
    from scene_helpers import REPO

    if feet_on == "vertices":
        lines = lambda c: [-1.0, -c, 0.0, c, 1.0]                                  # noqa: E731
    else:
        lines = lambda c: [-1.0, -c - 0.05, -c + 0.05, c - 0.05, c + 0.05, 1.0]   # noqa: E731
    v, f = mf.rect_grid(lines(0.19), lines(0.15))
    source = (REPO / "data" / "worlds" / "quadruped.yaml").read_text()
    plane = source[source.index("terrains:"):]
    meshed = source.replace(plane, mf.floor_yaml(v, f, files / "quad_floor.stl"))
    heights = {}
    for name, text in (("plane", source), ("mesh", meshed)):
        (files / "quadruped.yaml").write_text(text.replace("../robots/", f"{REPO}/data/robots/"))
        world = sim_node.WorldModel()
        world.readFile(files / "quadruped.yaml")
        scene = build_scene(world).scene
        robot = world.robot(0)
        gains, q0 = robot.settings["controller"], robot.getConfig()
        for joint in robot.getJointNames():
            k, q = robot.structure.joint_v_index[joint], robot.structure.joint_q_index[joint]
            scene.robot_kp[0][k] = gains["kp"][joint]
            scene.robot_kd[0][k] = gains["kd"][joint]
            scene.robot_q_des[0][k] = q0[q]
        z = []
        for _ in range(3000):
            scene.step(DT)
            z.append(scene.robot_q[0][2])
        heights[name] = np.array(z)
    assert heights["mesh"].min() > 0.25                      # never fell through
    assert abs(heights["mesh"][-1] - heights["plane"][-1]) < 1e-4
    assert np.ptp(heights["mesh"][-1000:]) < 1e-3             # steady
