"""sim_node.model.sensing against klampt.model.sensing on measurement vectors klampt's own
CameraSensor produced (klampt in a subprocess: it crashes at exit here)."""
import importlib.util
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sim_node.model import sensing

PLANE_OFF = "OFF\n4 2 0\n-1 -1 0\n3 -1 0\n3 3 0\n-1 3 0\n3 0 1 2\n3 0 2 3\n"
ROBOT = """<robot name="r"><link name="base"><inertial><mass value="1"/><inertia ixx="0.01"
 iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"""


@pytest.fixture(scope="module")
def klampt_camera(tmp_path_factory):
    """klampt's settings, measurements and its sensing functions' results for a camera seeing
    a tilted plane's edge (some pixels see nothing: zmax)."""
    # klampt is never imported into the test process: its heap breaks at exit here and, loaded
    # beside rclpy, a later test crashed in rclpy's executor
    if importlib.util.find_spec("klampt") is None:
        pytest.skip("klampt is not installed (pip install klampt==0.10.1.post1 PyOpenGL)")
    d = tmp_path_factory.mktemp("klampt")
    (d / "plane.off").write_text(PLANE_OFF)
    (d / "r.urdf").write_text(ROBOT)
    script = textwrap.dedent(f"""
        import json, os, sys
        import numpy as np
        from klampt import WorldModel
        from klampt.model import sensing
        w = WorldModel(); r = w.loadRobot({str(d / "r.urdf")!r})
        w.loadTerrain({str(d / "plane.off")!r})
        out = []
        for rgb in ("1", "0"):
            s = r.addSensor("cam" + rgb, "CameraSensor")
            for k, v in {{"xres": "20", "yres": "15", "zmax": "6", "rgb": rgb, "xfov": "1.3",
                         "Tsensor": "1 0 0 0 -0.8 -0.6 0 0.6 -0.8 0 -0.4 2"}}.items():
                s.setSetting(k, v)
            s.kinematicSimulate(w, 0.01)
            res = {{"settings": {{k: s.getSetting(k) for k in list(s.settings())
                                 + ["fx", "fy", "cx", "cy"]}},
                   "m": list(s.getMeasurements())}}
            images = sensing.camera_to_images(s)
            if rgb == "1":
                res["rgb"], res["depth"] = images[0].tolist(), images[1].tolist()
                res["packed"] = sensing.camera_to_images(s, color_format="rgb")[0].tolist()
                res["pts_rgb"] = sensing.camera_to_points(s, color_format="rgb").tolist()
            else:
                res["depth"] = images.tolist()
            res["pts"] = sensing.camera_to_points(s).tolist()
            res["pts_all"] = sensing.camera_to_points(s, all_points=True).tolist()
            res["K"] = sensing.camera_to_intrinsics(s, "numpy").tolist()
            out.append(res)
        sys.stdout.write("@@" + json.dumps(out) + "\\n"); sys.stdout.flush(); os._exit(0)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    for line in done.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    raise AssertionError(f"klampt failed: {done.stderr[-2000:]}")


class Recorded:
    """A sensor stand-in: Klamp't's settings strings and measurements."""

    def __init__(self, ref):
        self._settings, self._m = ref["settings"], ref["m"]

    def getSetting(self, name):
        return self._settings[name]

    def getMeasurements(self):
        return list(self._m)


def test_the_scene_has_hits_and_misses(klampt_camera):
    depth = np.array(klampt_camera[0]["depth"])
    assert (depth < 6).any() and (depth >= 6).any()


def test_camera_to_images_equals_klampts(klampt_camera):
    ref = klampt_camera[0]
    rgb, depth = sensing.camera_to_images(Recorded(ref))
    assert rgb.dtype == np.uint8 and rgb.shape == (15, 20, 3)
    np.testing.assert_array_equal(rgb, ref["rgb"])
    np.testing.assert_array_equal(depth, ref["depth"])
    packed, _ = sensing.camera_to_images(Recorded(ref), color_format="rgb")
    np.testing.assert_array_equal(packed, ref["packed"])
    # the same with the measurements passed in
    rgb2, _ = sensing.camera_to_images(Recorded(ref), measurements=np.array(ref["m"]))
    np.testing.assert_array_equal(rgb2, rgb)
    only_depth = sensing.camera_to_images(Recorded(klampt_camera[1]))
    np.testing.assert_array_equal(only_depth, klampt_camera[1]["depth"])


@pytest.mark.parametrize("which", [0, 1])
def test_camera_to_points_equals_klampts(which, klampt_camera):
    ref = klampt_camera[which]
    np.testing.assert_allclose(sensing.camera_to_points(Recorded(ref)), ref["pts"],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(sensing.camera_to_points(Recorded(ref), all_points=True),
                               ref["pts_all"], rtol=0, atol=1e-12)
    if which == 0:
        np.testing.assert_allclose(sensing.camera_to_points(Recorded(ref), color_format="rgb"),
                                   ref["pts_rgb"], rtol=0, atol=1e-12)


def test_camera_to_intrinsics_equals_klampts(klampt_camera):
    ref = klampt_camera[0]
    # klampt prints fx with 6 digits in its settings; its numpy K is the full value
    np.testing.assert_allclose(sensing.camera_to_intrinsics(Recorded(ref)), ref["K"],
                               rtol=1e-5)
    K, dist = sensing.camera_to_intrinsics(Recorded(ref), "opencv")
    assert dist.shape == (5,) and not dist.any()


def test_bad_inputs_are_refused(klampt_camera):
    ref = klampt_camera[0]
    with pytest.raises(ValueError, match="12 measurements, the settings \\(20 x 15"):
        sensing.camera_to_images(Recorded(ref), measurements=np.zeros(12))
    with pytest.raises(ValueError, match="color_format"):
        sensing.camera_to_images(Recorded(ref), color_format="hsv")
    with pytest.raises(ValueError, match="no depth channel"):
        sensing.camera_to_points(Recorded({"settings": dict(ref["settings"], depth="0"),
                                           "m": []}))
