"""PyBullet's API on the sim_node engine: ``import sim_node.pybullet as p`` (seed 003).

Functions, constants, body unique ids and return tuples follow PyBullet's; the physics is
sim_node's (contacts differ from Bullet's by design). Each module below owns one part of the
API and lists its public names in ``__all__``; README "The PyBullet API" tables what is
supported, partial or not.
"""
from sim_node.pybullet.errors import *          # noqa: F401,F403
from sim_node.pybullet.constants import *       # noqa: F401,F403
from sim_node.pybullet.connection import *      # noqa: F401,F403
from sim_node.pybullet.loading import *         # noqa: F401,F403
from sim_node.pybullet.formats import *         # noqa: F401,F403
from sim_node.pybullet.bodies import *          # noqa: F401,F403
from sim_node.pybullet.control import *         # noqa: F401,F403
from sim_node.pybullet.state import *           # noqa: F401,F403
from sim_node.pybullet.queries import *         # noqa: F401,F403
from sim_node.pybullet.camera import *          # noqa: F401,F403
from sim_node.pybullet.kinematics import *      # noqa: F401,F403
from sim_node.pybullet.transforms import *      # noqa: F401,F403
from sim_node.pybullet.debug import *           # noqa: F401,F403
from sim_node.pybullet.logging import *         # noqa: F401,F403
from sim_node.pybullet.constraints import *     # noqa: F401,F403
from sim_node.pybullet.userdata import *        # noqa: F401,F403
