from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel

cdef int feedback_entry(SceneModel m, SceneData d, int a, int b, bint create) noexcept nogil
cdef void feedback(SceneModel m, SceneData d, double dt) noexcept nogil
