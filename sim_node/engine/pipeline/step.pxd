from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel

cdef bint step(SceneModel m, SceneData d, double dt) noexcept nogil
cdef void step_adaptive(SceneModel m, SceneData d, double dt, int depth) noexcept nogil
