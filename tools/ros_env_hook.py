"""Startup hook of the development venv: makes the locally built ROS interfaces importable.

tools/bootstrap.py copies this file into the venv's site-packages as ``_sim_node_ros_env.py``
together with ``_sim_node_ros_env.pth`` (one line: ``import _sim_node_ros_env``). Python runs
``.pth`` files in name order at every start, so this runs

* after ``__editable__.sim_node-*.pth`` put the source tree on sys.path, and
* before ``ros_wheels_bootstrapper.pth`` of the ROS wheels, which re-executes the interpreter
  with LD_LIBRARY_PATH extended. Whatever this hook puts into os.environ is inherited by that
  final process (and by the dynamic linker), so nobody has to source anything.

The prefix (``<venv>/ros/install``) holds tf2_msgs / simulation_interfaces when built locally and
the generated sim_node.msg / sim_node.srv code. Its ``sim_node`` directory has no __init__.py: it
is one more portion of the package that ``sim_node/__init__.py`` (pkgutil.extend_path) picks up.
"""
import os
import sys

_PREFIX = os.path.join(sys.prefix, "ros", "install")
_SITE_PACKAGES = os.path.join(
    _PREFIX, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")


def _prepend(variable, entries):
    """Put entries first in a path-list environment variable (no duplicates); True if it changed."""
    old = os.environ.get(variable, "")
    parts = [part for part in old.split(os.pathsep) if part]
    new = os.pathsep.join(entries + [part for part in parts if part not in entries])
    os.environ[variable] = new
    return new != old


def _wire():
    if not os.path.isdir(_PREFIX):
        # Before the first setup: the wheels alone still want the venv in the ament index path.
        _prepend("AMENT_PREFIX_PATH", [sys.prefix])
        return
    # ament_index lookups (typesupport, package share dirs) search AMENT_PREFIX_PATH.
    _prepend("AMENT_PREFIX_PATH", [_PREFIX, sys.prefix])
    library_dir = os.path.join(_PREFIX, "lib")
    if library_dir not in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        _prepend("LD_LIBRARY_PATH", [library_dir])
        # The dynamic linker reads LD_LIBRARY_PATH only at process start: make the wheels'
        # bootstrapper re-execute even if a parent process already did (its guard variable).
        os.environ.pop("_ROS_WHEELS_BOOTSTRAP_COMPLETE", None)
    # Appended, so the editable sources (added by an earlier .pth) stay in front.
    if _SITE_PACKAGES not in sys.path:
        sys.path.append(_SITE_PACKAGES)


_wire()
