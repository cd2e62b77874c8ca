from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel

cdef void constraint_setup(SceneModel m, SceneData d, double dt) noexcept nogil
cdef void solve(SceneModel m, SceneData d) noexcept nogil
