# The constant part of a scene (MuJoCo's mjModel): built once from the world, never written by
# the step. The Scene's setters change surfaces, padding, enabling, filters, kinematic flags,
# gravity and solver settings between steps.
from sim_node.engine.constraint cimport UserConstraintC
from sim_node.engine.geometry cimport MeshC
from sim_node.engine.types cimport BodyC, FreeBodyC, RobotC, ShapeDefC


cdef class SceneModel:
    cdef RobotC* robots               # [nrobot]
    cdef FreeBodyC* free_bodies       # [nfree]
    cdef BodyC* bodies                # [nbody] collision bodies
    cdef ShapeDefC* shapes            # [nshape] shapes, each body's contiguous
    cdef MeshC* meshes                # [nmesh] vertex data of CONVEX / MESH / HEIGHTFIELD shapes
    cdef readonly int nrobot, nfree, nbody, nshape, nmesh
    cdef readonly int nvel            # length of vel (types.pxd)
    cdef double g[3]                  # gravity [m/s^2]
    cdef readonly int max_contacts    # per body pair after clustering
    cdef public int max_iterations    # of the projected Gauss-Seidel solve
    cdef public double tolerance      # its convergence tolerance
    cdef public double regularization
    cdef unsigned long long* disabled # [ndisabled] sorted (min id << 32 | max id) of disabled
    cdef int ndisabled                # pairs of world IDs
    cdef unsigned long long* enabled  # [nenabled] the same for pairs enabled by override: they
    cdef int nenabled                 # collide whatever their group / mask (PyBullet's pair filter)
    cdef UserConstraintC* ucons       # [nucons] user constraints (Scene.set_constraints)
    cdef readonly int nucons
    cdef readonly list robot_models   # [nrobot] the robots' Model objects
    cdef readonly list robot_joint_offset    # first DOF of the joints (6 after a floating base, else 0)
    cdef readonly list robot_joint_q_offset  # first q entry of the joints (7 or 0)
    cdef list _keep                   # arrays whose memory the C structs point into
