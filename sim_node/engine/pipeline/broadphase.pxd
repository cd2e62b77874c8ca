from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel

cdef void count_collidable(SceneModel m, SceneData d) noexcept nogil
cdef bint filtered(SceneModel m, int i, int j) noexcept nogil
cdef void broadphase(SceneModel m, SceneData d) noexcept nogil
