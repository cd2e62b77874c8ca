"""sim_node: a ROS 2 robot simulator with a Cython physics engine.

The public API follows the Klamp't simulation documents (see DESIGN.md §3): ``WorldModel``,
``RobotModel``, ``RobotModelLink``, ``Mass``, ``Simulator``, ``SimBody``, ``SimRobotController``.
SI units throughout; gravity defaults to (0, 0, -9.81) m/s²; quaternions are (x, y, z, w).
"""
# The ROS interface code generated for this package (sim_node.msg, sim_node.srv) may live in a
# different directory than these sources (a pip setup installs it into a separate prefix), so
# the package path spans every ``sim_node`` directory on sys.path.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

__version__ = "0.1.0"

from sim_node.model.drivers import RobotModelDriver  # noqa: E402
from sim_node.model.errors import ModelLoadError, URDFError, URDFWarning, WorldFileError  # noqa: E402
from sim_node.model.contact import set_friction_cone_approximation_edges  # noqa: E402
from sim_node.model.geometry3d import DistanceQueryResult, GeometricPrimitive, Geometry3D  # noqa: E402,E501
from sim_node.model.robot import Mass, RobotModel, RobotModelLink  # noqa: E402
from sim_node.model.surface import SurfaceParameters  # noqa: E402
from sim_node.model.world import RigidObjectModel, TerrainModel, WorldModel  # noqa: E402
from sim_node.sim.body import SimBody  # noqa: E402
from sim_node.sim.controller import SimRobotController  # noqa: E402
from sim_node.sim.simulator import Simulator  # noqa: E402

__all__ = [
    "WorldModel", "RobotModel", "RobotModelLink", "RigidObjectModel", "TerrainModel", "Mass",
    "SurfaceParameters", "Simulator", "SimBody", "SimRobotController", "ModelLoadError",
    "URDFError", "URDFWarning", "WorldFileError", "Geometry3D", "GeometricPrimitive",
    "DistanceQueryResult", "RobotModelDriver", "set_friction_cone_approximation_edges",
]
