"""PNG snapshots (sim_node.viewer.snapshot): a red box lands where the pinhole model projects
it, the default view frames the scene exactly (its binding corner at 1 / FRAMING_MARGIN of the
half-image), the default world's picture decodes at the asked size and is not blank, and
hostile views and paths are refused with a message."""
import importlib
import math

import imageio.v3 as iio
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_node
from sim_node.resources import default_world

# the module (sim_node.viewer.snapshot is the function `snapshot` as the package's attribute)
snap = importlib.import_module("sim_node.viewer.snapshot")
from sim_node.viewer.snapshot import View, framing_view, render, snapshot

BOX_CENTRE = np.array([0.3, -0.2, 0.5])      # [m], world
BOX_SIZE = np.array([0.2, 0.3, 0.1])         # [m]
RED = (1.0, 0.0, 0.0)


def _box_urdf(centre=BOX_CENTRE, size=BOX_SIZE, rgb=RED) -> str:
    """A red box welded to the world at `centre`."""
    return f"""<robot name="red_box">
  <link name="world"/>
  <link name="box">
    <visual><geometry><box size="{' '.join(map(str, size))}"/></geometry>
      <material name="red"><color rgba="{' '.join(map(str, rgb))} 1"/></material></visual>
    <collision><geometry><box size="{' '.join(map(str, size))}"/></geometry></collision>
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0"
      iyz="0"/></inertial>
  </link>
  <joint name="weld" type="fixed"><parent link="world"/><child link="box"/>
    <origin xyz="{' '.join(map(str, centre))}"/></joint>
</robot>"""


def _box_sim():
    world = sim_node.WorldModel()
    world.loadRobot(_box_urdf())
    return sim_node.Simulator(world)


def _corners(centre=BOX_CENTRE, size=BOX_SIZE) -> np.ndarray:
    signs = np.array([[a, b, c] for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)])
    return centre + 0.5 * signs * size


def _project(view: View, width: int, height: int, points: np.ndarray) -> np.ndarray:
    """Closed-form pinhole projection, written here from the view's eye/target/up (not from
    View.optical_pose): pixel coordinates (N, 2) (u right, v down; pixel (i, j) covers
    [i, i + 1) x [j, j + 1))."""
    eye, target, up = (np.asarray(a, float) for a in (view.eye, view.target, view.up))
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    f = 0.5 * width / math.tan(0.5 * view.fov_x)
    rel = points - eye
    z = rel @ forward
    return np.column_stack([f * (rel @ right) / z + 0.5 * width,
                            f * (rel @ down) / z + 0.5 * height])


def _red_mask(rgb: np.ndarray) -> np.ndarray:
    return (rgb[..., 0] > 60) & (rgb[..., 1] == 0) & (rgb[..., 2] == 0)


def test_a_red_box_is_drawn_red_where_the_pinhole_model_projects_it():
    sim = _box_sim()
    width, height = 320, 240
    view = View(eye=(1.6, 0.9, 1.3), target=(0.1, -0.1, 0.4), fov_x=math.radians(50))
    rgb = render(sim, width, height, view)
    assert rgb.shape == (height, width, 3) and rgb.dtype == np.uint8
    u, v = _project(view, width, height, BOX_CENTRE[None])[0]
    assert _red_mask(rgb)[int(v), int(u)], f"pixel ({u:.1f}, {v:.1f}) is {rgb[int(v), int(u)]}"
    # the red pixels fill the projected corners' bounding rectangle to within a pixel
    corners = _project(view, width, height, _corners())
    rows, cols = np.nonzero(_red_mask(rgb))
    np.testing.assert_allclose([cols.min(), cols.max() + 1, rows.min(), rows.max() + 1],
                               [corners[:, 0].min(), corners[:, 0].max(),
                                corners[:, 1].min(), corners[:, 1].max()], atol=1.0)
    # and nothing else is drawn: the rest is the white background
    outside = ~_red_mask(rgb)
    assert np.all(rgb[outside] == 255)


def test_the_default_view_frames_the_scene_with_its_margin():
    sim = _box_sim()
    width, height = 400, 300
    view = framing_view(sim, width, height)
    np.testing.assert_allclose(view.target, BOX_CENTRE, atol=1e-9)
    corners = _project(view, width, height, _corners())
    # normalised offsets from the image centre: the binding corner sits at 1 / FRAMING_MARGIN
    reach = np.abs(corners - [0.5 * width, 0.5 * height]) / [0.5 * width, 0.5 * height]
    assert reach.max() == pytest.approx(1.0 / snap.FRAMING_MARGIN, abs=1e-9)
    # seen from PyBullet's default direction: yaw 50 deg, pitch -35 deg (looking down)
    forward = np.subtract(view.target, view.eye)
    forward /= np.linalg.norm(forward)
    assert math.degrees(math.asin(forward[2])) == pytest.approx(-35.0)
    assert math.degrees(math.atan2(-forward[0], forward[1])) == pytest.approx(50.0)
    rgb = render(sim, width, height)
    rows, cols = np.nonzero(_red_mask(rgb))
    assert rows.min() > 0 and cols.min() > 0 and rows.max() < height - 1 \
        and cols.max() < width - 1


def test_default_world_snapshot_is_a_png_of_the_asked_size_and_not_blank(tmp_path):
    world = sim_node.WorldModel()
    world.readFile(default_world())
    sim = sim_node.Simulator(world)
    sim.simulate(0.05)
    path = snapshot(sim, tmp_path / "scene.png", width=333, height=200)
    assert path == tmp_path / "scene.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rgb = iio.imread(path)
    assert rgb.shape == (200, 333, 3)
    # the arm, the base, the table, four objects and the ground, shaded: many colours
    assert len(np.unique(rgb.reshape(-1, 3), axis=0)) > 50
    np.testing.assert_array_equal(rgb, render(sim, 333, 200))


def test_an_empty_world_gives_the_background():
    sim = sim_node.Simulator(sim_node.WorldModel())
    rgb = render(sim, 64, 48)
    assert np.all(rgb == 255)


def test_bad_camera_and_path_are_refused_with_a_message(tmp_path):
    sim = _box_sim()
    with pytest.raises(TypeError, match="View or None"):
        render(sim, camera=((1, 1, 1), (0, 0, 0)))
    with pytest.raises(OSError, match="no_such_dir"):
        snapshot(sim, tmp_path / "no_such_dir" / "x.png", width=16, height=16)
    with pytest.raises(ValueError, match="eye and target must differ"):
        View(eye=(1, 2, 3), target=(1, 2, 3))
    with pytest.raises(ValueError, match="parallel"):
        View(eye=(0, 0, 2), target=(0, 0, 0))
    with pytest.raises(ValueError, match="pitch"):
        framing_view(sim, pitch=math.pi / 2)


finite = st.floats(-1e6, 1e6, allow_nan=False)
anything = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=3),
                     st.none(), st.lists(finite, max_size=4))


@settings(max_examples=200, deadline=None)
@given(eye=st.one_of(st.tuples(finite, finite, finite), anything),
       target=st.one_of(st.tuples(finite, finite, finite), anything),
       fov_x=st.one_of(st.floats(-1, 4), anything), near=anything)
def test_hostile_views_raise_value_errors_only(eye, target, fov_x, near):
    try:
        view = View(eye=eye, target=target, fov_x=fov_x,
                    near=0.01 if near is None else near)
    except ValueError as error:
        assert str(error).startswith("View: ")
        return
    assert 0 < view.fov_x < math.pi and 0 < view.near < view.far
    R, t = view.optical_pose()
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-9)
