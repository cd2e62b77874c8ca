from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel
from sim_node.engine.types cimport RobotC, RobotStateC

cdef void actuation(SceneModel m, SceneData d, double dt) noexcept nogil
cdef void advance_actuators(SceneModel m, SceneData d, double dt) noexcept nogil
cdef void advance_target(const RobotC* rob, RobotStateC* rs, int k, double dt) noexcept nogil
