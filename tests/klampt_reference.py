"""Klamp't 0.10.1 as a reference for the sensor tests, always in a subprocess: it crashes at
interpreter exit here (`free(): invalid next size`), so the script prints one JSON line and
leaves with os._exit(0)."""
import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest

ARM_URDF = """<robot name="arm">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
</robot>
"""

PLANE_OFF = "OFF\n4 2 0\n-100 -100 0\n100 -100 0\n100 100 0\n-100 100 0\n3 0 1 2\n3 0 2 3\n"

PRELUDE = """
import json, os, sys
import numpy as np
from klampt import WorldModel
def emit(x):
    sys.stdout.write("@@" + json.dumps(x) + "\\n"); sys.stdout.flush(); os._exit(0)
"""


def run_klampt(body: str, tmp_path, timeout: float = 120.0):
    """Run `body` (with ARM = the arm URDF path, PLANE = a 20 m plane mesh path, emit(x) to
    answer) in a Python with klampt; returns what it emitted."""
    if importlib.util.find_spec("klampt") is None:     # (never imported in this process)
        pytest.skip("klampt is not installed (pip install klampt==0.10.1.post1 PyOpenGL)")
    arm, plane = tmp_path / "arm.urdf", tmp_path / "plane.off"
    arm.write_text(ARM_URDF)
    plane.write_text(PLANE_OFF)
    script = PRELUDE + f"ARM = {str(arm)!r}\nPLANE = {str(plane)!r}\n" + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=timeout)
    for line in done.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    raise AssertionError(f"klampt script failed (rc {done.returncode}): {done.stderr[-2000:]}")
