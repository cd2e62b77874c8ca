from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel

cdef bint free_velocity(SceneModel m, SceneData d, double dt) noexcept nogil
cdef void robot_minv(SceneModel m, SceneData d, int r) noexcept nogil
