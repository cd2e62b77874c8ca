"""MP4 video of a simulation run without a browser or a display: the CPU renderer's frames
encoded by ffmpeg (the binary in the imageio-ffmpeg wheel; H.264, yuv420p, plays anywhere).

    from sim_node.viewer.video import Recorder
    with Recorder(sim, "run.mp4", fps=30) as recorder:
        for _ in range(90):                      # 3 s of simulated time
            sim.simulate(1 / 30)
            recorder.record()                    # one frame: the scene now

Each `record()` appends one frame of the scene as it is then (sim_node.viewer.snapshot.render);
the video plays at `fps` frames per second, so calling it every 1/fps of simulated time gives a
real-time video. The camera is fixed for the whole video: `camera` (a snapshot.View) or the
view framing the world at the first frame.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from sim_node.viewer.snapshot import DEFAULT_HEIGHT, DEFAULT_WIDTH, View, framing_view, render

MAX_FPS = 1000.0


class Recorder:
    """Frames of `sim` into the MP4 file `path`, at `fps` frames per second of video (0 <
    fps <= MAX_FPS); width and height [pixels] even (H.264's 4:2:0 colour planes are half
    size). close() (or leaving the `with` block) finishes the file."""

    def __init__(self, sim, path, fps: float = 30.0, width: int = DEFAULT_WIDTH,
                 height: int = DEFAULT_HEIGHT, camera: View | None = None):
        try:
            fps = float(fps)
        except (TypeError, ValueError):
            raise ValueError(f"Recorder: fps must be a number, got {fps!r}") from None
        if not (math.isfinite(fps) and 0.0 < fps <= MAX_FPS):
            raise ValueError(f"Recorder: fps {fps!r} must lie in (0, {MAX_FPS:g}]")
        for name, side in (("width", width), ("height", height)):
            if isinstance(side, bool) or not isinstance(side, (int, np.integer)) \
                    or side < 2 or side % 2:
                raise ValueError(f"Recorder: {name} {side!r} must be an even integer >= 2 "
                                 f"(H.264 in yuv420p)")
        if camera is not None and not isinstance(camera, View):
            raise TypeError(f"Recorder: camera must be a sim_node.viewer.snapshot.View or None "
                            f"(a view framing the world), got {type(camera).__name__}")
        self.sim = sim
        self.path = Path(path)
        # ffmpeg only logs a path it cannot open: check here, with a message
        folder = self.path.parent
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            raise OSError(f"Recorder: cannot write {self.path}: {folder} is not a writable "
                          f"directory")
        if self.path.is_dir():
            raise OSError(f"Recorder: cannot write {self.path}: it is a directory")
        self.fps = fps
        self.width, self.height = int(width), int(height)
        self.camera = camera
        self.frames = 0
        self._writer = None

    def record(self) -> np.ndarray:
        """Render the scene now and append it as the next frame; the frame (height, width, 3)
        uint8."""
        if self._writer is False:
            raise ValueError(f"Recorder: {self.path} is closed")
        if self.camera is None:
            self.camera = framing_view(self.sim, self.width, self.height)
        frame = render(self.sim, self.width, self.height, self.camera)
        if self._writer is None:
            self._writer = self._start()
        try:
            self._writer.send(np.ascontiguousarray(frame).tobytes())
        except (OSError, RuntimeError) as error:
            raise OSError(f"Recorder: ffmpeg stopped taking frames for {self.path}: "
                          f"{error}") from None
        self.frames += 1
        return frame

    def _start(self):
        import imageio_ffmpeg

        try:
            writer = imageio_ffmpeg.write_frames(
                str(self.path), (self.width, self.height), fps=self.fps, codec="libx264",
                pix_fmt_in="rgb24", pix_fmt_out="yuv420p", macro_block_size=1,
                ffmpeg_log_level="error")
            writer.send(None)       # starts ffmpeg
        except (OSError, RuntimeError) as error:
            raise OSError(f"Recorder: cannot start ffmpeg writing {self.path}: {error}") from None
        return writer

    def close(self) -> Path | None:
        """Finish the file; its path, or None when no frame was recorded (no file)."""
        writer, self._writer = self._writer, False
        if writer in (None, False):
            return None
        try:
            writer.close()
        except (OSError, RuntimeError) as error:
            raise OSError(f"Recorder: ffmpeg failed to finish {self.path}: {error}") from None
        if not self.path.is_file() or self.path.stat().st_size == 0:
            raise OSError(f"Recorder: ffmpeg wrote no video to {self.path}")
        return self.path

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
