from sim_node.engine.constraint cimport ContactC, PatchC
from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel

cdef int cached_patch(SceneModel m, SceneData d, int body_a, int body_b) noexcept nogil
cdef int warm_start_contact(SceneModel m, SceneData d, ContactC* c, int cached) noexcept nogil
cdef void warm_start_patch(SceneData d, PatchC* p, int cached) noexcept nogil
cdef void record(SceneModel m, SceneData d) noexcept nogil
