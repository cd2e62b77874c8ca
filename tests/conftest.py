"""Rules for the whole test run."""
import os
import sys

import pytest

# connect(GUI) stays headless in the suite (no web server per test); the viewer's own tests
# (tests/viewer/test_pybullet_gui.py) lift this for themselves
os.environ.setdefault("SIM_NODE_PYBULLET_GUI", "headless")


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    # klampt (the reference for sensors, collision and, later, IK) runs only in subprocesses:
    # its native library corrupts the heap of the process it is loaded in (it aborts at exit
    # with "free(): invalid next size" here), which in the test process surfaced as a
    # segmentation fault in rclpy's executor several tests later
    if "klampt" in sys.modules:
        pytest.fail(f"{item.nodeid} imported klampt into the test process; run it in a "
                    "subprocess (tests/klampt_reference.py)", pytrace=False)
