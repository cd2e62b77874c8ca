from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel

cdef void user_constraint_rows(SceneModel m, SceneData d, double dt) noexcept nogil
cdef void user_constraint_record(SceneModel m, SceneData d) noexcept nogil
