"""Every ROS test process stays on this machine, like the node processes it starts."""
import pytest


@pytest.fixture(scope="module", autouse=True)
def localhost_only():
    """This process's client nodes, like the node processes, stay on this machine."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        yield
