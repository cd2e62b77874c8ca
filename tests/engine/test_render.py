"""The z-buffer rasterizer (engine/queries/render.pyx) against closed-form images: planes of
known pose give the z-depth of the ray-plane intersection at every pixel centre; coverage follows
the top-left rule; a triangle crossing the near plane keeps its far part; threads change no bit."""
import numpy as np
import pytest

from sim_node.engine.api import Rasterizer

W, H = 64, 48
FX = FY = 50.0
CX, CY = W / 2, H / 2
LIGHT = np.array([0.0, 0.0, -1.0])


def _quad(corners, color=(1.0, 0.5, 0.25)):
    """One instance: the quad (4, 3) as two triangles."""
    return (np.asarray(corners, float), np.zeros(4, np.int32), np.array([[0, 1, 2], [0, 2, 3]]),
            np.zeros(2, np.int32), np.tile(np.asarray(color, np.float32), (2, 1)))


def _draw(scene, pose=None, near=0.05, far=100.0, fx=FX, fy=FY, cx=CX, cy=CY, w=W, h=H,
          threads=1, segment=7):
    v, vi, f, fi, c = scene
    ninstance = int(vi.max()) + 1
    r = Rasterizer(v, vi, f, fi, c, ninstance)
    if pose is None:
        pose = np.tile(np.hstack([np.eye(3), np.zeros((3, 1))]), (ninstance, 1, 1))
    depth = np.empty((h, w), np.float32)
    rgb = np.empty((h, w, 3), np.uint8)
    seg = np.empty((h, w), np.int32)
    r.render(np.ascontiguousarray(pose, float), np.full(ninstance, segment, np.int32), fx, fy,
             cx, cy, near, far, LIGHT, 0.5, 0.5, np.array([1, 2, 3], np.uint8), depth, rgb, seg,
             threads)
    return depth, rgb, seg


def _pixel_rays(w=W, h=H, fx=FX, fy=FY, cx=CX, cy=CY):
    """(h, w, 3) ray directions with unit z through the pixel centres."""
    u, v = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    return np.stack([(u - cx) / fx, (v - cy) / fy, np.ones_like(u)], axis=-1)


def test_fronto_parallel_plane_depth_is_its_distance_exactly():
    d = 2.375
    depth, rgb, seg = _draw(_quad([[-50, -50, d], [50, -50, d], [50, 50, d], [-50, 50, d]]))
    assert np.all(depth == np.float32(d))
    assert np.all(seg == 7)
    # normal along the optical axis, light from behind the camera: ambient + diffuse = 1
    assert np.all(rgb == np.array([255, 128, 64], np.uint8))


@pytest.mark.parametrize("tilt", [0.3, -0.7, 1.2])
def test_tilted_plane_depth_is_ray_plane_intersection(tilt):
    d = 3.0
    n = np.array([0.0, np.sin(tilt), np.cos(tilt)])   # the plane through (0, 0, d), normal n
    u = np.array([1.0, 0.0, 0.0])
    w = np.cross(n, u)
    p0 = np.array([0.0, 0.0, d])
    s = 40.0
    corners = [p0 - s * u - s * w, p0 + s * u - s * w, p0 + s * u + s * w, p0 - s * u + s * w]
    depth, _, _ = _draw(_quad(corners), far=1e3)
    rays = _pixel_rays()
    denom = rays @ n
    z = np.where(denom > 0, (n @ p0) / np.where(denom > 0, denom, 1.0), np.inf)  # ray z = 1
    hit = np.where(np.isfinite(z)[..., None], rays * np.where(np.isfinite(z), z, 0)[..., None],
                   0) - p0
    inside = (np.abs(hit @ u) < s - 0.5) & (np.abs(hit @ w) < s - 0.5)
    outside = (np.abs(hit @ u) > s + 0.5) | (np.abs(hit @ w) > s + 0.5) | ~np.isfinite(z)
    seen = np.isfinite(z) & (z >= 0.05) & (z <= 1e3) & inside
    assert seen.sum() > 0.3 * W * H
    np.testing.assert_allclose(depth[seen], z[seen], rtol=2e-7)
    assert np.all(np.isinf(depth[outside]))


def test_plane_crossing_near_plane_keeps_far_part():
    # the floor y = 0.5 (below the camera: y down) from z = -5 to z = 60: pixels below the
    # horizon see it at z = 0.5 fy / (v - cy); where that is nearer than `near` it is clipped
    near = 1.0
    floor = _quad([[-30, 0.5, -5], [30, 0.5, -5], [30, 0.5, 60], [-30, 0.5, 60]])
    depth, _, _ = _draw(floor, near=near)
    v = np.arange(H) + 0.5
    z_row = np.where(v > CY, 0.5 * FY / np.where(v > CY, v - CY, 1.0), np.inf)
    x_half = 30.0 * FX / z_row                     # the floor's half width on that row [px]
    for j in range(H):
        z = z_row[j]
        cols = np.abs(np.arange(W) + 0.5 - CX) < x_half[j] - 1
        if near <= z <= 60.0:
            assert np.all(np.abs(depth[j, cols] - z) <= 2e-7 * z), j
        elif z < near or z > 60.0:
            assert np.all(np.isinf(depth[j])), j
    assert np.isfinite(depth).sum() > 0.2 * W * H


def test_top_left_rule_draws_shared_edges_once():
    # screen = camera x, y at z = 1 with f = 1, c = 0: corners on pixel centres (2.5 .. 10.5);
    # the diagonal runs through centres too
    a, b, c, d = [2.5, 2.5, 1], [10.5, 2.5, 1], [10.5, 10.5, 1], [2.5, 10.5, 1]
    kw = dict(fx=1.0, fy=1.0, cx=0.0, cy=0.0, near=0.1, w=16, h=16)
    masks = []
    for tri in ([a, b, c], [a, c, d]):
        depth, _, _ = _draw((np.array(tri, float), np.zeros(3, np.int32), np.array([[0, 1, 2]]),
                             np.zeros(1, np.int32), np.ones((1, 3), np.float32)), **kw)
        masks.append(np.isfinite(depth))
    assert not np.any(masks[0] & masks[1])
    union = masks[0] | masks[1]
    expected = np.zeros((16, 16), bool)
    expected[2:10, 2:10] = True               # left and top edges in, right and bottom out
    assert np.array_equal(union, expected)


def test_instances_move_with_their_pose_and_segments_stay_theirs():
    v = np.array([[-0.5, -0.5, 0], [0.5, -0.5, 0], [0.5, 0.5, 0], [-0.5, 0.5, 0]] * 2, float)
    vi = np.repeat(np.arange(2, dtype=np.int32), 4)
    f = np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]])
    fi = np.repeat(np.arange(2, dtype=np.int32), 2)
    colors = np.ones((4, 3), np.float32)
    r = Rasterizer(v, vi, f, fi, colors, 2)
    pose = np.zeros((2, 3, 4))
    pose[:, :, :3] = np.eye(3)
    pose[0, :, 3] = [0.0, 0.0, 2.0]     # instance 0 straight ahead at 2 m
    pose[1, :, 3] = [0.1, 0.0, 1.5]     # instance 1 in front of it, shifted right
    depth = np.empty((H, W), np.float32)
    seg = np.empty((H, W), np.int32)
    r.render(pose, np.array([5, 9], np.int32), FX, FY, CX, CY, 0.05, 10.0, LIGHT, 1.0, 0.0,
             np.zeros(3, np.uint8), depth, None, seg, 1)
    rays = _pixel_rays()
    in1 = (np.abs(rays[..., 0] * 1.5 - 0.1) < 0.49) & (np.abs(rays[..., 1] * 1.5) < 0.49)
    in0 = (np.abs(rays[..., 0] * 2.0) < 0.49) & (np.abs(rays[..., 1] * 2.0) < 0.49) & ~in1
    assert np.all(seg[in1] == 9) and np.all(depth[in1] == np.float32(1.5))
    assert np.all(seg[in0] == 5) and np.all(depth[in0] == np.float32(2.0))
    out = (np.abs(rays[..., 0] * 2.0) > 0.51) & (np.abs(rays[..., 0] * 1.5 - 0.1) > 0.51)
    assert np.all(seg[out] == -1) and np.all(np.isinf(depth[out]))


def test_threads_change_no_bit():
    rng = np.random.default_rng(3)
    n = 400
    v = rng.uniform(-1, 1, (3 * n, 3)) + [0, 0, 3]
    scene = (v, np.zeros(3 * n, np.int32), np.arange(3 * n).reshape(n, 3), np.zeros(n, np.int32),
             rng.uniform(0, 1, (n, 3)).astype(np.float32))
    one = _draw(scene, threads=1)
    two = _draw(scene, threads=2)
    for a, b in zip(one, two):
        assert np.array_equal(a, b)
    assert np.isfinite(one[0]).sum() > 0.3 * W * H


def test_bad_scene_arrays_are_refused():
    with pytest.raises(ValueError, match="triangle indices"):
        Rasterizer(np.zeros((3, 3)), np.zeros(3), [[0, 1, 3]], [0], np.ones((1, 3)), 1)
    with pytest.raises(ValueError, match="finite"):
        Rasterizer(np.full((3, 3), np.nan), np.zeros(3), [[0, 1, 2]], [0], np.ones((1, 3)), 1)


def test_an_instance_with_a_nan_pose_is_not_drawn():
    v = np.array([[-0.5, -0.5, 0], [0.5, -0.5, 0], [0.5, 0.5, 0], [-0.5, 0.5, 0]] * 2, float)
    r = Rasterizer(v, np.repeat(np.arange(2, dtype=np.int32), 4),
                   np.array([[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]]),
                   np.repeat(np.arange(2, dtype=np.int32), 2), np.ones((4, 3), np.float32), 2)
    pose = np.zeros((2, 3, 4))
    pose[:, :, :3] = np.eye(3)
    pose[0, :, 3] = [0.0, 0.0, 2.0]
    pose[1] = np.nan
    depth = np.empty((H, W), np.float32)
    seg = np.empty((H, W), np.int32)
    r.render(pose, np.array([5, 9], np.int32), FX, FY, CX, CY, 0.05, 10.0, LIGHT, 1.0, 0.0,
             np.zeros(3, np.uint8), depth, None, seg, 2)
    assert set(np.unique(seg)) == {-1, 5}
    assert not np.any(np.isnan(depth)) and np.all(depth[seg == 5] == np.float32(2.0))
