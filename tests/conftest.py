"""Rules for the whole test run."""
import sys

import pytest


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    # klampt (the reference for sensors, collision and, later, IK) runs only in subprocesses:
    # its native library corrupts the heap of the process it is loaded in (it aborts at exit
    # with "free(): invalid next size" here), which in the test process surfaced as a
    # segmentation fault in rclpy's executor several tests later
    if "klampt" in sys.modules:
        pytest.fail(f"{item.nodeid} imported klampt into the test process; run it in a "
                    "subprocess (tests/klampt_reference.py)", pytrace=False)
