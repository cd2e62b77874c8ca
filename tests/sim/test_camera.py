"""The headless Camera (sim_node.sim.camera) on simulated worlds: closed-form depth of planes,
footprints of a sphere and a box, segmentation values, near-plane clipping, PyBullet's matrices
and its getCameraImage (TinyRenderer) on S3's pile with the kuka arm, and hostile input."""
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scene_helpers import world_from_yaml

import sim_node
from sim_node.sim import camera as cam_mod
from sim_node.sim.camera import Camera, intrinsics_from_fov

REPO = Path(__file__).resolve().parents[2]
# optical frame looking straight down (z forward = world -z, x right = world x, y down = -y)
DOWN = np.diag([1.0, -1.0, -1.0])


def _sim(tmp_path, text):
    return sim_node.Simulator(world_from_yaml(text, tmp_path))


def _look_at(eye, target, up=(0.0, 0.0, 1.0)):
    """The optical frame (R, t) at `eye` looking at `target` (z forward, y down)."""
    eye, target = np.asarray(eye, float), np.asarray(target, float)
    z = target - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, up)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z]), eye


def _pixel_rays(K, w, h):
    u, v = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    return np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones_like(u)], -1)


GROUND = """
terrains:
  - name: ground
    geometry: {plane: {normal: [0, 0, 1], offset: 0.0}}
"""


def test_ground_seen_from_above_is_at_the_camera_height_everywhere(tmp_path):
    sim = _sim(tmp_path, GROUND)
    cam = Camera(sim, 160, 120, fov_x=1.2)
    h = 1.7
    img = cam.render(DOWN, [0.3, -0.2, h], segmentation=True)
    assert np.all(img.depth == np.float32(h))
    ground = sim.getWorld().terrain("ground").getID()
    assert np.all(img.segmentation == ground)        # terrains: link -1 -> entity + 0 << 24
    assert img.rgb.shape == (120, 160, 3) and img.rgb.dtype == np.uint8


@pytest.mark.parametrize("tilt", [0.2, 0.6])
def test_tilted_view_of_the_ground_gives_the_ray_plane_depth(tmp_path, tilt):
    # the camera at height h pitched by `tilt` from straight down: a pixel ray r (z = 1) meets
    # the ground at z-depth h / (-r_W . e_z)
    sim = _sim(tmp_path, GROUND)
    cam = Camera(sim, 80, 60, fov_x=1.0, far=100.0)
    h = 2.0
    c, s = math.cos(tilt), math.sin(tilt)
    R = DOWN @ np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    img = cam.render(R, [0.0, 0.0, h])
    down = -(_pixel_rays(cam.K, 80, 60) @ R.T)[..., 2]
    z = h / down
    np.testing.assert_allclose(img.depth, z, rtol=3e-7)


def test_sphere_covers_its_predicted_footprint(tmp_path):
    r, D = 0.25, 2.0
    sim = _sim(tmp_path, f"""
rigid_objects:
  - name: ball
    geometry: {{sphere: {r}}}
    mass: 1.0
    pose: {{position: [0, 0, {D}]}}
""")
    cam = Camera(sim, 200, 200, fov_x=0.5)
    img = cam.render(np.eye(3), [0, 0, 0], segmentation=True)   # looking along world +z
    rays = _pixel_rays(cam.K, 200, 200)
    # angle between a pixel ray and the axis vs the sphere's angular radius asin(r / D)
    cos_angle = 1.0 / np.linalg.norm(rays, axis=-1)
    limit = math.cos(math.asin(r / D))
    pixel = cam.K[0, 0] ** -1          # one pixel in angle [rad] near the axis
    inside = cos_angle > math.cos(math.asin(r / D) - 1.5 * pixel)
    outside = cos_angle < math.cos(math.asin(r / D) + 1.5 * pixel)
    ball = sim.getWorld().rigidObject("ball").getID()
    assert np.all(img.segmentation[inside] == ball)
    assert np.all(img.segmentation[outside] == -1)
    assert inside.sum() > 0.9 * (cos_angle > limit).sum()
    # the nearest point is D - r; the facets lie at most ~0.5 mm inside the surface
    # (away from the silhouette, where the rays graze the facets)
    ray_t = np.sqrt(np.maximum(r ** 2 - (D * np.sqrt(1 - cos_angle ** 2)) ** 2, 0))
    z_true = (D * cos_angle - ray_t) * cos_angle
    core = cos_angle > math.cos(0.8 * math.asin(r / D))
    err = img.depth[core] - z_true[core]
    assert np.all(err >= -1e-5) and np.all(err < 6e-4)


def test_box_face_on_covers_its_rectangle(tmp_path):
    sim = _sim(tmp_path, """
rigid_objects:
  - name: crate
    geometry: {box: [0.4, 0.2, 0.3]}
    mass: 1.0
    pose: {position: [0, 0, 0.15]}
""")
    K = np.array([[100.0, 0, 50], [0, 100.0, 40], [0, 0, 1]])
    cam = Camera(sim, 100, 80, K=K)
    img = cam.render(DOWN, [0.0, 0.0, 1.3], segmentation=True)
    # the top face (z = 0.3 m, 1 m from the camera) spans u = 50 +- 100 * 0.2, v = 40 +- 100 *
    # 0.1: pixel edges, so exactly columns 30..69 and rows 30..49; the sides hide behind it
    crate = sim.getWorld().rigidObject("crate").getID()
    expected = np.zeros((80, 100), bool)
    expected[30:50, 30:70] = True
    assert np.array_equal(img.segmentation == crate, expected)
    assert np.all(img.segmentation[~expected] == -1)
    assert np.all(img.depth[expected] == np.float32(1.0))
    assert np.all(np.isinf(img.depth[~expected]))


ARM = """<robot name="arm">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><geometry><box size="0.4 0.4 0.1"/></geometry><material name="red"/></visual>
    <collision><geometry><box size="0.4 0.4 0.1"/></geometry></collision></link>
  <link name="upper"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><origin xyz="0.3 0 0"/><geometry><box size="0.2 0.1 0.1"/></geometry>
      <material name="inline"><color rgba="0 0 1 1"/></material></visual>
    <collision><origin xyz="0.3 0 0"/><geometry><box size="0.2 0.1 0.1"/></geometry></collision></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
</robot>"""


def test_segmentation_encodes_entity_and_link_and_colours_follow_materials(tmp_path):
    world = sim_node.WorldModel()
    robot = world.loadRobot(ARM, fixed_base=True)
    sim = sim_node.Simulator(world)
    cam = Camera(sim, 120, 120, fov_x=1.0, ambient=1.0, diffuse=0.0)
    img = cam.render(DOWN, [0.0, 0.0, 1.0], segmentation=True)

    def pixel(x, y, depth):     # (row, column) of the world point (x, y) seen `depth` m below
        return (int(cam.K[1, 1] * -y / depth + cam.K[1, 2]),
                int(cam.K[0, 0] * x / depth + cam.K[0, 2]))

    base_px, upper_px = pixel(-0.1, 0.1, 0.95), pixel(0.3, 0.0, 0.85)   # their top faces
    assert img.segmentation[base_px] == robot.getID() + (1 << 24)
    assert img.segmentation[upper_px] == robot.getID() + (2 << 24)
    assert tuple(img.rgb[base_px]) == (255, 0, 0)     # the robot-level material "red"
    assert tuple(img.rgb[upper_px]) == (0, 0, 255)    # the inline colour
    assert img.depth[base_px] == np.float32(0.95) and img.depth[upper_px] == np.float32(0.85)
    # the upper link follows its joint: turned by pi/2 it lies along +y
    sim.setActualConfig(robot, [math.pi / 2])
    img = cam.render(DOWN, [0.0, 0.0, 1.0], segmentation=True)
    assert img.segmentation[upper_px] == -1
    assert img.segmentation[pixel(0.0, 0.3, 0.85)] == robot.getID() + (2 << 24)


def test_ground_crossing_the_near_plane_renders_its_far_part(tmp_path):
    # a camera 5 cm above the ground looking along it: near = 0.5 m cuts the ground below the
    # horizon; z-depth h / (-r_W . e_z) where >= near, nothing (inf) nearer
    sim = _sim(tmp_path, GROUND)
    cam = Camera(sim, 64, 64, fov_x=1.4, near=0.5, far=40.0)
    R, t = _look_at([0, 0, 0.05], [1, 0, 0.05])
    img = cam.render(R, t)
    down = -(_pixel_rays(cam.K, 64, 64) @ R.T)[..., 2]
    z = np.where(down > 0, 0.05 / np.where(down > 0, down, 1), np.inf)
    seen = (z >= 0.5) & (z <= 40.0)
    assert seen.sum() > 100
    np.testing.assert_allclose(img.depth[seen], z[seen], rtol=1e-6)
    assert np.all(np.isinf(img.depth[(z < 0.5 * 0.999) | (z > 40.0 * 1.001)]))


BLOCK = """<robot name="block"><link name="b"><inertial><mass value="1"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  <collision><geometry><box size="{side} {side} {side}"/></geometry></collision></link></robot>"""


def test_spawn_and_delete_rebuild_the_render_model(tmp_path):
    sim = _sim(tmp_path, GROUND)
    cam = Camera(sim, 40, 40, fov_x=1.0)
    before = cam.render(DOWN, [0, 0, 1.0], segmentation=True)
    assert np.all(before.depth == np.float32(1.0))
    sim.spawn(BLOCK.format(side=0.2), t=[0, 0, 0.1])
    after = cam.render(DOWN, [0, 0, 1.0], segmentation=True)
    assert after.depth[20, 20] == np.float32(0.8)
    sim.delete("block")
    again = cam.render(DOWN, [0, 0, 1.0], segmentation=True)
    assert np.array_equal(again.depth, before.depth)
    # as many entities as before, another one: rebuilt all the same
    sim.spawn(BLOCK.format(side=0.4), t=[0, 0, 0.2])
    assert cam.render(DOWN, [0, 0, 1.0]).depth[20, 20] == np.float32(0.6)


def test_snapshot_renders_the_moment_it_was_taken(tmp_path):
    sim = _sim(tmp_path, GROUND + """
rigid_objects:
  - name: ball
    geometry: {sphere: 0.1}
    mass: 1.0
    pose: {position: [0, 0, 1.0]}
""")
    cam = Camera(sim, 40, 40, fov_x=1.0)
    snap = cam.snapshot()
    sim.simulate(0.2)                            # the ball falls ~0.2 m
    then = cam.render(DOWN, [0, 0, 2.0], snapshot=snap)
    now = cam.render(DOWN, [0, 0, 2.0])
    assert then.depth[20, 20] == pytest.approx(0.9, abs=3e-3)    # a pixel off the pole
    assert now.depth[20, 20] > then.depth[20, 20] + 0.1


# -- hostile input -----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    (dict(width=0), "width"), (dict(height=-3), "height"), (dict(width=20000), "width"),
    (dict(width=8192, height=8192), "pixels"), (dict(width=1.5), "int"),
    (dict(fov_x=0.0), "fov_x"), (dict(fov_x=math.pi), "fov_x"), (dict(fov_x=float("nan")), "fov_x"),
    (dict(near=1.0, far=1.0), "near"), (dict(near=0.0), "near"), (dict(far=float("inf")), "far"),
    (dict(K=np.eye(3) * [1, 1, 0]), "K"), (dict(K=[[1, 0.1, 0], [0, 1, 0], [0, 0, 1]]), "skew"),
])
def test_bad_camera_settings_say_what_is_valid(tmp_path, kwargs, message):
    sim = _sim(tmp_path, GROUND)
    with pytest.raises(ValueError, match=message):
        Camera(sim, **kwargs)


def test_bad_poses_are_refused(tmp_path):
    cam = Camera(_sim(tmp_path, GROUND), 8, 8)
    with pytest.raises(ValueError, match="NaN"):
        cam.render(np.eye(3), [0, np.nan, 0])
    with pytest.raises(ValueError, match="rotation"):
        cam.render(np.eye(3) * 2, [0, 0, 0])
    with pytest.raises(ValueError, match="3x3"):
        cam.render(np.eye(4), [0, 0, 0])
    with pytest.raises(ValueError, match="threads"):
        cam.render(np.eye(3), [0, 0, 0], threads=0)


@settings(max_examples=40, deadline=None)
@given(eye=st.tuples(*[st.floats(-5, 5)] * 3), target=st.tuples(*[st.floats(-5, 5)] * 3),
       near=st.floats(1e-3, 1.0), span=st.floats(0.01, 100.0))
def test_random_views_give_depth_in_near_far_or_inf(box_pile_sim, eye, target, near, span):
    if np.linalg.norm(np.subtract(target, eye)) < 1e-3 \
            or np.linalg.norm(np.cross(np.subtract(target, eye), [0, 0, 1])) < 1e-6:
        return
    cam = Camera(box_pile_sim, 48, 32, fov_x=1.3, near=near, far=near + span)
    img = cam.render(*_look_at(eye, target), segmentation=True)
    d = img.depth
    assert not np.any(np.isnan(d))
    finite = np.isfinite(d)
    assert np.all(d[finite] >= np.float32(near) * (1 - 1e-6))
    assert np.all(d[finite] <= np.float32(near + span) * (1 + 1e-6))
    assert np.all(np.isinf(d[~finite]) & (d[~finite] > 0))
    assert np.array_equal(finite, img.segmentation >= 0)


@pytest.fixture(scope="module")
def box_pile_sim():
    world = sim_node.WorldModel()
    world.readFile(str(REPO / "data/worlds/box_pile.yaml"))
    return sim_node.Simulator(world)


# -- PyBullet's conventions --------------------------------------------------------------------
pybullet = pytest.importorskip("pybullet")


@pytest.mark.parametrize("eye, target, up", [((1, 2, 3), (0, 0, 0), (0, 0, 1)),
                                             ((-0.5, 0.2, 0.1), (3, -1, 2), (0, 1, 0))])
def test_view_matrix_is_pybullets(eye, target, up):
    np.testing.assert_allclose(cam_mod.view_matrix(eye, target, up),
                               pybullet.computeViewMatrix(eye, target, up), atol=1e-6)


@pytest.mark.parametrize("args", [((0.1, 0.2, 0.3), 2.0, 30, -40, 0, 2),
                                  ((1, 0, -1), 0.7, -120, 15, 25, 2),
                                  ((0, 0, 0), 3.0, 45, -30, 0, 1),
                                  ((0.5, -1, 2), 1.5, 200, 60, -35, 1)])
def test_view_matrix_from_yaw_pitch_roll_is_pybullets(args):
    np.testing.assert_allclose(cam_mod.view_matrix_from_yaw_pitch_roll(*args),
                               pybullet.computeViewMatrixFromYawPitchRoll(*args), atol=1e-5)


def test_projection_matrices_are_pybullets():
    np.testing.assert_allclose(cam_mod.projection_matrix_fov(55.0, 4 / 3, 0.05, 20.0),
                               pybullet.computeProjectionMatrixFOV(55.0, 4 / 3, 0.05, 20.0),
                               rtol=1e-6)
    np.testing.assert_allclose(cam_mod.projection_matrix(-0.1, 0.2, -0.05, 0.15, 0.1, 9.0),
                               pybullet.computeProjectionMatrix(-0.1, 0.2, -0.05, 0.15, 0.1, 9.0),
                               rtol=1e-6)


def test_intrinsics_from_fov_match_the_projection_matrix():
    K = intrinsics_from_fov(640, 480, 1.0)
    fov_y = 2 * math.degrees(math.atan(240 / K[1, 1]))
    _, _, K2, (near, far) = cam_mod.camera_from_matrices(
        640, 480, cam_mod.view_matrix((0, 0, 0), (1, 0, 0), (0, 0, 1)),
        cam_mod.projection_matrix_fov(fov_y, 640 / 480, 0.05, 50.0))
    np.testing.assert_allclose(K2, K, rtol=1e-12)
    assert (near, far) == pytest.approx((0.05, 50.0), rel=1e-12)


# -- against PyBullet's TinyRenderer on S3's pile with the kuka arm -----------------------------
def _kuka_pile():
    """S3's pile and pybullet_data's kuka_iiwa beside it, in sim_node and in PyBullet (DIRECT):
    (sim, robot, pybullet client, {our entity ID: PyBullet body id}, kuka body id)."""
    import pybullet_data
    from scipy.spatial.transform import Rotation

    kuka = Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf"
    world = sim_node.WorldModel()
    world.readFile(str(REPO / "data/worlds/box_pile.yaml"))
    with pytest.warns(Warning):          # its base link's zero mass is repaired
        robot = world.loadRobot(str(kuka), fixed_base=True, t=[0.0, -0.45, 0.0])
    sim = sim_node.Simulator(world)
    client = pybullet.connect(pybullet.DIRECT)
    # PyBullet has no visual for a GEOM_PLANE: the ground is a 24 m grid of 0.24 m cells
    # (TinyRenderer interpolates depth less exactly over large triangles)
    n = 100
    xs = np.linspace(-12.0, 12.0, n + 1)
    X, Y = np.meshgrid(xs, xs)
    k = (np.arange(n)[:, None] * (n + 1) + np.arange(n)[None, :]).ravel()
    grid = np.concatenate([np.column_stack([k, k + 1, k + n + 2]),
                           np.column_stack([k, k + n + 2, k + n + 1])]).ravel()
    ground = pybullet.createMultiBody(
        0, pybullet.createCollisionShape(pybullet.GEOM_PLANE, physicsClientId=client),
        pybullet.createVisualShape(pybullet.GEOM_MESH, physicsClientId=client,
                                   vertices=np.column_stack([X.ravel(), Y.ravel(),
                                                             np.zeros(X.size)]).tolist(),
                                   indices=grid.tolist()), physicsClientId=client)
    ids = {world.terrain("ground").getID(): ground}
    R, t = sim.getRigidObjectTransforms()
    for i in range(world.numRigidObjects()):
        half = (0.5 * np.array(world.rigidObject(i).getCollisionGeometry()[0].shape.size)).tolist()
        ids[world.rigidObject(i).getID()] = pybullet.createMultiBody(
            0.5, pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=half,
                                               physicsClientId=client),
            pybullet.createVisualShape(pybullet.GEOM_BOX, halfExtents=half,
                                       physicsClientId=client),
            basePosition=t[i].tolist(), baseOrientation=Rotation.from_matrix(R[i]).as_quat().tolist(),
            physicsClientId=client)
    body = pybullet.loadURDF(str(kuka), [0.0, -0.45, 0.0], useFixedBase=True,
                             physicsClientId=client)
    ids[robot.getID()] = body
    # PyBullet's link j is the child of joint j; ours counts the base as link 0
    for j in range(pybullet.getNumJoints(body, physicsClientId=client)):
        assert (pybullet.getJointInfo(body, j, physicsClientId=client)[12].decode()
                == robot.link(j + 1).getName())
    return sim, client, ids


def _to_bullet_ids(segmentation, ids):
    """Our segmentation values in PyBullet's numbering: body ids; our robot link l is its
    l - 1 (its base is -1), so its (link + 1) << 24 is l << 24; rigid bodies (our link -1)
    are its bases, 0 << 24."""
    entity, link = segmentation & 0xFFFFFF, (segmentation >> 24) - 1
    out = np.full(segmentation.shape, -1, np.int64)
    for ours, theirs in ids.items():
        m = (entity == ours) & (segmentation >= 0)
        out[m] = theirs + (np.maximum(link[m], 0).astype(np.int64) << 24)
    return out


def test_depth_segmentation_and_colour_match_pybullets_tiny_renderer():
    from scipy import ndimage

    sim, client, ids = _kuka_pile()
    try:
        W, H, near, far = 320, 240, 0.05, 10.0
        view = pybullet.computeViewMatrix([1.2, 0.9, 1.0], [0.0, -0.15, 0.2], [0, 0, 1])
        proj = pybullet.computeProjectionMatrixFOV(60.0, W / H, near, far)
        _, _, rgba_b, buffer_b, seg_b = pybullet.getCameraImage(
            W, H, view, proj, renderer=pybullet.ER_TINY_RENDERER, shadow=0,
            flags=pybullet.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX, lightAmbientCoeff=1.0,
            lightDiffuseCoeff=0.0, lightSpecularCoeff=0.0, physicsClientId=client)
    finally:
        pybullet.disconnect(client)
    rgba_b = np.reshape(rgba_b, (H, W, 4))
    seg_b = np.reshape(seg_b, (H, W))
    z_b = far * near / (far - (far - near) * np.reshape(buffer_b, (H, W)).astype(float))

    def interior(seg):      # away from edges: one segment over the 3x3 neighbourhood
        return ndimage.maximum_filter(seg, 3) == ndimage.minimum_filter(seg, 3)

    # the PyBullet-style call, at pixel centres
    _, _, rgba, buffer, seg = cam_mod.get_camera_image(
        sim, W, H, view, proj, flags=cam_mod.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX,
        lightAmbientCoeff=1.0, lightDiffuseCoeff=0.0)
    ours = _to_bullet_ids(seg, ids)
    away = interior(seg_b) & interior(ours)
    assert (ours == seg_b)[away].mean() > 0.99
    # TinyRenderer samples pixel (i, j) at its corner (i, j + 1), not at its centre: the
    # ground's z-depth there is the closed form's to 0.01 mm. Drawn with that sampling (the
    # principal point moved by half a pixel), ours matches it surface for surface.
    R, t, K, _ = cam_mod.camera_from_matrices(W, H, view, proj)
    u, v = np.meshgrid(np.arange(W), np.arange(H) + 1.0)
    rays = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones_like(u)], -1)
    z_ground = t[2] / -(rays @ R.T)[..., 2]
    on_ground = away & (seg_b == ids[0])
    assert on_ground.sum() > 0.5 * W * H
    assert np.abs(z_b - z_ground)[on_ground].mean() < 1e-4
    K_corner = K + [[0, 0, 0.5], [0, 0, -0.5], [0, 0, 0]]
    camera = Camera(sim, W, H, K=K_corner, near=near, far=far, ambient=1.0, diffuse=0.0)
    img = camera.render(R, t, segmentation=True)
    ours = _to_bullet_ids(img.segmentation, ids)
    assert (ours == seg_b).mean() > 0.99
    both = (ours == seg_b) & (seg_b >= 0) & away
    assert both.sum() > 0.6 * W * H
    assert np.abs(img.depth - z_b)[both].mean() < 1e-3
    # the kuka's URDF material colours (Grey, Blue, Orange), unshaded: PyBullet truncates
    # colour * 255, we round
    kuka = both & ((seg_b & 0xFFFFFF) == ids[sim.getWorld().robot(0).getID()])
    assert kuka.sum() > 500
    assert np.abs(img.rgb[kuka].astype(int) - rgba_b[kuka][:, :3]).max() <= 1


def test_get_camera_image_returns_pybullets_tuple_and_depth_buffer(tmp_path):
    world = sim_node.WorldModel()
    world.readFile(str(REPO / "data/worlds/box_pile.yaml"))
    robot = world.loadRobot(ARM, fixed_base=True, t=[0.0, 0.6, 0.0])
    sim = sim_node.Simulator(world)
    near, far, h = 0.1, 5.0, 1.5
    view = cam_mod.view_matrix([0.0, 0.3, h], [0.0, 0.3, 0.0], [0, 1, 0])
    proj = cam_mod.projection_matrix_fov(70.0, 1.25, near, far)
    w, hgt, rgba, buffer, seg = cam_mod.get_camera_image(sim, 50, 40, view, proj)
    assert (w, hgt) == (50, 40) and rgba.shape == (40, 50, 4) and np.all(rgba[..., 3] == 255)
    assert buffer.dtype == np.float32 and seg.dtype == np.int32
    z = far * near / (far - (far - near) * buffer.astype(float))    # PyBullet's recipe
    ground = seg == world.terrain("ground").getID()
    assert ground.sum() > 100
    np.testing.assert_allclose(z[ground], h, rtol=1e-5)     # float32 buffer, non-linear
    # without the link flag a robot's pixels carry its ID only, as PyBullet's body ids
    assert robot.getID() in seg and seg.max() < 1 << 24
    _, _, _, _, seg_links = cam_mod.get_camera_image(
        sim, 50, 40, view, proj, flags=cam_mod.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX)
    assert robot.getID() + (1 << 24) in seg_links
    # nothing beyond far: buffer 1, segment -1
    up = cam_mod.view_matrix([0.0, 0.0, 1.0], [0.0, 0.0, 2.0], [0, 1, 0])
    _, _, _, sky, sky_seg = cam_mod.get_camera_image(sim, 8, 8, up, proj)
    assert np.all(sky == 1.0) and np.all(sky_seg == -1)
    assert cam_mod.get_camera_image(sim, 8, 8, up, proj,
                                    flags=cam_mod.ER_NO_SEGMENTATION_MASK)[4] is None
