"""Seeing a simulation: the live web view (viser) and pictures without a browser.

    from sim_node.viewer import Viewer, ViewerScene, snapshot, View, Recorder

Viewer: the live view of an in-process Simulator (sim_node.viewer.viewer); ViewerScene: the
drawing it makes on a viser server, shared with the ROS side (``sim_node view``, the node's
``viewer:=true``); snapshot: a PNG of the scene from the CPU renderer (View: its camera);
Recorder: an MP4 of a run. The function `snapshot` hides the module of that name as an
attribute of this package: reach the module's other names with ``from sim_node.viewer.snapshot
import ...``. Importing this package adds ~15 ms to ``import sim_node`` (viser itself, ~0.35 s,
is imported when a server starts), so the names are imported eagerly.
"""
from sim_node.viewer.scene import ViewerScene
from sim_node.viewer.snapshot import View, snapshot
from sim_node.viewer.video import Recorder
from sim_node.viewer.viewer import Viewer

__all__ = ["Recorder", "View", "Viewer", "ViewerScene", "snapshot"]
