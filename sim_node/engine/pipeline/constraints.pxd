from sim_node.engine.scene_data cimport SceneData
from sim_node.engine.scene_model cimport SceneModel

cdef void constraint_setup(SceneModel m, SceneData d, double dt) noexcept nogil
cdef void solve(SceneModel m, SceneData d) noexcept nogil
cdef int reserve_jw(SceneData d, int n) noexcept nogil
cdef void jacobian_rows(SceneModel m, SceneData d, int body, const double* point, int nrow,
                        const double* lin, const double* ang, double sign, int* jw_off,
                        int* nv, int* vel) noexcept nogil
cdef void kinematic_velocity(SceneModel m, SceneData d, int body, const double* point,
                             double* out) noexcept nogil
