"""The live web view (viser): sim_node.viewer.Viewer for an in-process Simulator; the scene it
draws (sim_node.viewer.scene.ViewerScene) is shared with the ROS side (``sim_node view``)."""
from sim_node.viewer.viewer import Viewer

__all__ = ["Viewer"]
