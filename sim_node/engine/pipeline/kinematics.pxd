from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel

cdef void kinematics(SceneModel m, SceneData d, double dt) noexcept nogil
