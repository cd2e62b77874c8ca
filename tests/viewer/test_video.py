"""MP4 of a run (sim_node.viewer.video.Recorder): the file decodes (imageio's ffmpeg reader)
to the recorded frame count at the asked size and rate, its frames match the rendered ones up
to the codec's loss and follow the motion, and bad arguments are refused with a message."""
import math

import imageio.v2 as iio2
import numpy as np
import pytest

import sim_node
from sim_node.viewer.snapshot import View
from sim_node.viewer.video import Recorder

# a red ball falling from 1 m (nothing below it), seen from the side
BALL = """<robot name="ball">
  <link name="ball">
    <visual><geometry><sphere radius="0.1"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></visual>
    <collision><geometry><sphere radius="0.1"/></geometry></collision>
    <inertial><mass value="1"/><inertia ixx="0.004" iyy="0.004" izz="0.004" ixy="0" ixz="0"
      iyz="0"/></inertial>
  </link>
</robot>"""
SIDE = View(eye=(0.0, -3.0, 0.6), target=(0.0, 0.0, 0.6), fov_x=math.radians(60))


def _ball_sim():
    world = sim_node.WorldModel()
    world.loadRobot(BALL, fixed_base=False)
    sim = sim_node.Simulator(world)
    q = sim.getActualConfig(0)
    q[:3] = (0.0, 0.0, 1.0)
    sim.setActualConfig(0, q)
    return sim


def _red_row(frame: np.ndarray) -> float:
    """Mean image row of the red pixels (the ball's height in the picture, down = larger)."""
    red = (frame[..., 0] > 120) & (frame[..., 1] < 80) & (frame[..., 2] < 80)
    return float(np.nonzero(red)[0].mean())


def test_recorded_run_decodes_to_its_frames(tmp_path):
    sim = _ball_sim()
    fps, count, width, height = 10.0, 12, 160, 120
    path = tmp_path / "drop.mp4"
    recorded = []
    with Recorder(sim, path, fps=fps, width=width, height=height, camera=SIDE) as recorder:
        for _ in range(count):
            recorded.append(recorder.record())
            sim.simulate(1.0 / fps)
    assert recorder.frames == count
    reader = iio2.get_reader(path, format="FFMPEG")
    try:
        assert reader.get_meta_data()["fps"] == pytest.approx(fps)
        decoded = [frame for frame in reader]
    finally:
        reader.close()
    assert len(decoded) == count
    for frame, original in zip(decoded, recorded):
        assert frame.shape == (height, width, 3)
        # H.264 is lossy: close on average, not bit-exact
        assert np.abs(frame.astype(int) - original.astype(int)).mean() < 4.0
    # the ball falls: at 0.4 s it is 0.78 m lower (g t^2 / 2), ~27 rows at 160 / (2 tan 30 deg)
    # = 139 px per metre at 3 m; the same in the video as in the rendered frames
    fallen = _red_row(decoded[4]) - _red_row(decoded[0])
    assert fallen == pytest.approx(_red_row(recorded[4]) - _red_row(recorded[0]), abs=1.0)
    assert fallen == pytest.approx(0.5 * 9.81 * 0.4 ** 2 * 80 / math.tan(math.radians(30)) / 3,
                                   rel=0.1)


def test_no_frame_no_file_and_closed_recorder_refuses(tmp_path):
    sim = _ball_sim()
    recorder = Recorder(sim, tmp_path / "empty.mp4")
    assert recorder.close() is None
    assert not (tmp_path / "empty.mp4").exists()
    with pytest.raises(ValueError, match="closed"):
        recorder.record()


@pytest.mark.parametrize("kwargs, message", [
    ({"fps": 0}, "fps"), ({"fps": math.nan}, "fps"), ({"fps": "x"}, "fps"),
    ({"width": 161}, "width 161 must be an even integer"), ({"height": 0}, "height"),
    ({"width": 64.0}, "width"), ({"camera": "front"}, "View or None"),
])
def test_bad_arguments_are_refused_with_a_message(tmp_path, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        Recorder(_ball_sim(), tmp_path / "x.mp4", **kwargs)


def test_unwritable_path_names_the_file(tmp_path):
    with pytest.raises(OSError, match="missing_dir is not a writable directory"):
        Recorder(_ball_sim(), tmp_path / "missing_dir" / "x.mp4")
    with pytest.raises(OSError, match="is a directory"):
        Recorder(_ball_sim(), tmp_path)
