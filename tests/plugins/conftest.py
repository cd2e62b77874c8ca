"""The plugin tests import their helpers (plugin_helpers.py, here) and the node harness
(tests/ros/node_harness.py) by module name."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ros"))
