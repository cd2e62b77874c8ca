# Central declarations of the engine: the constant Model, the mutable Data, joint type codes.
#
# Conventions used by every kernel (see DESIGN.md §2-3):
#   * bodies are the rigid groups that move together (URDF links merged across fixed joints);
#     they are stored in topological order, parent[i] < i, parent -1 is the world frame;
#   * every body is attached to its parent by one joint; its frame is the URDF child-link frame;
#   * spatial vectors are expressed in world axes about the world origin (Plücker "ground"
#     coordinates) with the linear part first: motion m = [v; w], force f = [f; n];
#   * rotations are 3x3 row-major doubles, R_WB maps body coordinates to world coordinates;
#   * a "column" is one motion-subspace column of one body: a 1-DOF joint has one, the
#     spherical joint three, the free joint six. Mimic joints own a column but no DOF: their column feeds the master's DOF,
#     scaled by the mimic multiplier, so every column maps to exactly one velocity index.

cdef enum JointType:
    JOINT_REVOLUTE = 0     # rotation about `axis` (joint frame), q in rad
    JOINT_PRISMATIC = 1    # translation along `axis` (joint frame), q in m
    JOINT_FREE = 2         # free joint (a floating base, or a URDF floating joint anywhere in
                           # the tree): q = [p (3), quaternion xyzw (4)] of the body in the
                           # joint frame, v = [linear velocity (3), angular velocity (3)] of
                           # the body relative to its parent, both in body axes (Pinocchio's
                           # JointModelFreeFlyer)
    JOINT_SPHERICAL = 3    # ball joint: q = quaternion xyzw (4) of the body in the joint frame,
                           # v = angular velocity (3) relative to the parent, body axes
                           # (Pinocchio's JointModelSpherical)

ctypedef struct ModelC:
    int nbody              # number of moving bodies
    int nq                 # configuration size
    int nv                 # velocity size (independent DOFs)
    int ncol               # motion-subspace columns (nv + one per mimic joint)
    int has_mimic          # 1 if any joint is a mimic joint
    # per body [nbody]
    const int* parent      # parent body, -1 = world
    const int* jtype       # JointType
    const int* iq          # first configuration index (the master's for mimic joints)
    const int* icol        # first column
    const int* ncolb       # number of columns (1, 3 spherical or 6 free)
    const double* mimic_mult    # q_joint = mult * q[iq] + offset (1, 0 for ordinary joints)
    const double* mimic_offset
    const double* axis     # [nbody*3] unit joint axis in the joint frame
    const int* axis_kind   # [nbody] +-1, +-2, +-3 when axis = +-e_x, e_y, e_z, else 0
    const double* R_tree   # [nbody*9] rotation parent body frame -> joint frame at q = 0
    const double* p_tree   # [nbody*3] joint frame origin in the parent body frame [m]
    const int* tree_rot_identity  # 1 if R_tree is the identity (skips a 3x3 product)
    const double* mass     # [nbody] body mass [kg]
    const double* com      # [nbody*3] centre of mass in the body frame [m]
    const double* inertia  # [nbody*9] rotational inertia about the com, body axes [kg m^2]
    const double* inertia_B  # [nbody*10] the same in the 10-number form about the body origin
                             # (derived from mass, com, inertia; see spatial.pxd)
    # per column [ncol]
    const int* col_body    # body owning the column
    const int* col_dof     # velocity index the column acts on
    # per DOF [nv]
    const int* dof_parent  # parent DOF in the kinematic tree (-1 at a root); mass-matrix
                           # sparsity used by the LTDL factorisation
    const int* dof_body    # body of the DOF
    # fixed frames: every URDF link, attached rigidly to a body (or the world, body -1)
    int nlink
    const int* link_body   # [nlink]
    const double* link_R   # [nlink*9] rotation body frame -> link frame
    const double* link_p   # [nlink*3] link origin in the body frame [m]
    const double* link_mass     # [nlink] mass of the links attached to the world (body -1), else 0
    const double* link_com_W    # [nlink*3] world com of those world-attached links [m]

ctypedef struct DataC:
    # kinematics (set by forward kinematics)
    double* R          # [nbody*9] R_WB of each body
    double* p          # [nbody*3] p_WB of each body [m]
    double* R_PB       # [nbody*9] rotation parent frame -> body frame (body axes in the parent)
    double* p_PB       # [nbody*3] body origin in the parent frame [m] (local-frame RNEA)
    double* S          # [ncol*6] motion-subspace columns, world axes about the origin,
                       #          mimic columns scaled by their multiplier
    double* link_R     # [nlink*9] R_WL of every link (set by link_placements)
    double* link_p     # [nlink*3]
    # dynamics scratch
    double* v          # [nbody*6] spatial velocity of each body
    double* a          # [nbody*6] spatial acceleration (includes -gravity)
    double* f          # [nbody*6] net spatial force of each body, then subtree sums
    double* Iw         # [nbody*10] world inertia: m, h = m c (3), I about origin (xx yy zz xy xz yz)
    double* Ic         # [nbody*10] composite (subtree) inertia, same layout
    double* IA         # [nbody*36] articulated inertia (ABA) / composite B (Coriolis)
    double* pA         # [nbody*6] articulated bias force (ABA)
    double* c          # [nbody*6] velocity-product acceleration v x (S qd)
    double* U          # [ncol*6] IA S (ABA)
    double* Dinv       # [nbody*36] inverse joint-space articulated inertia (ABA)
    double* u          # [ncol] tau - S^T pA (ABA)
    double* Sdot       # [ncol*6] time derivative of S (Coriolis matrix)
    # outputs
    double* M          # [nv*nv] joint-space mass matrix, row-major
    double* Minv       # [nv*nv]
    double* L          # [nv*nv] LTDL factor of M (unit lower part + D on the diagonal)
    double* Linv       # [nv*nv] L^-1 (unit lower triangular), for the inverse
    double* C          # [nv*nv] Coriolis matrix
    double* tau        # [nv] generalized forces
    double* ddq        # [nv] accelerations
    double* J          # [6*nv] Jacobian rows [angular; linear], row-major
    double* com        # [3] centre of mass [m]
    double* tmp        # [nv] scratch


cdef class Model:
    cdef ModelC c
    cdef object __weakref__          # batch workers are cached per model
    cdef readonly int nbody, nq, nv, ncol, nlink
    cdef readonly bint has_mimic
    cdef readonly object arrays      # dict name -> numpy array owning the ModelC storage
    cdef void _bind(self)


cdef class Data:
    cdef DataC c
    cdef readonly Model model
    cdef readonly object arrays      # dict name -> numpy array owning the DataC storage
