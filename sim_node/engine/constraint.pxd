# Contact and joint constraints of one step.
#
# A contact joins collision bodies a and b at a world point; its normal points from b towards a.
# The contacts of one body pair with near normals form a patch (a pair touching several faces of
# a crease has a patch per face): each contact carries its own normal impulse (so the support of
# the patch is exact), and the patch carries the friction: two tangential impulses and a
# torsional one about its mean normal, at the patch centroid. Jacobian rows map `vel` to the
# velocity of a relative to b; for each side with degrees of freedom the buffer `jw` holds the
# rows (nrow x nv) followed by W = M^-1 J^T (nv x nrow, stored as nrow columns).

ctypedef struct ContactC:
    int body_a
    int body_b
    int patch             # index of its patch (body pair)
    double point[3]       # world, midway between the two real surfaces [m]
    double normal[3]      # unit, from b towards a
    double distance       # separation of the real geometries [m] (< 0: they overlap)
    double depth          # into the summed boundary layers: padding_a + padding_b - distance
    double restitution    # pair surface parameters (seed blending rule)
    double stiffness
    double damping
    double rho            # distance from the patch centroid, across the normal [m]
    # solver data (normal row)
    double lam            # normal impulse [N s]
    double D              # J M^-1 J^T
    double target         # normal velocity the solve aims at [m/s]
    double gamma          # soft-contact compliance [m/(N s)] (0: rigid)
    double bounce         # 1 when the target is a restitution bounce
    double exact          # 1: solved without regularisation (a bounce, or an impact that
                          # closes the gap this step: it stops at the rest gap, not inside)
    double bias           # normal velocity contributed by kinematic sides (no DOFs) [m/s]
    int jw_a              # offset of side a in the jw buffer, -1 if a has no DOFs
    int jw_b
    int nv_a              # DOFs of each side and their first entry in vel
    int nv_b
    int vel_a
    int vel_b

ctypedef struct PatchC:
    int body_a
    int body_b
    int first             # its contacts: first .. first + count - 1
    int count
    double point[3]       # centroid of the contact points [m]
    double normal[3]      # mean contact normal (unit, from b towards a)
    double t1[3]          # tangents: t1, t2, normal right-handed
    double t2[3]
    double mu             # friction coefficient of the pair
    double bias[3]        # velocity of the rows contributed by kinematic sides (no DOFs)
    # solver data (rows t1, t2 at the centroid; torsion about the normal)
    double lam[3]         # friction impulse [N s] along t1, t2; torsional impulse [N m s]
    double D[9]           # J M^-1 J^T (3 x 3)
    double Dt_eig[2]      # eigen-decomposition of the tangential 2 x 2 block
    double Dt_rot[2]      # (cos, sin) of the first eigenvector in the (t1, t2) basis
    int jw_a
    int jw_b
    int nv_a
    int nv_b
    int vel_a
    int vel_b
    int block             # offset in the block buffer of the patch's Delassus matrix
                          # ((count + 3)^2: normal rows, then t1, t2, torsion)
    int cached            # the previous step's patch its friction warm start comes from (-1: none)

ctypedef struct RowC:
    # A one-DOF robot constraint: a joint limit (unilateral) or joint dry friction (bounded).
    int vel               # entry of vel
    int wcol              # offset of M^-1 e_dof (nv doubles) in the jw buffer
    int nv                # robot DOFs
    int vel0              # the robot's first vel entry
    double sign           # +1: velocity must be >= target (lower limit), -1: <= (upper)
    double lo             # impulse bounds [N s]
    double hi
    double D              # (M^-1)[dof, dof]
    double target         # velocity the solve aims at
    double lam            # accumulated impulse

# User constraints (PyBullet's createConstraint): bilateral rows holding a frame of body a on a
# frame of body b (b = -1: the world). Their definitions are the SceneModel's (Scene
# set_constraints, between steps); their rows and warm starts the SceneData's.
cdef enum UserConstraintKind:
    UCONS_FIXED = 0       # 6 rows: the two frames coincide
    UCONS_POINT2POINT = 1 # 3 rows: the two frame origins coincide (a ball joint)
    UCONS_GEAR = 2        # 1 row: qdot_a + ratio qdot_b = qdot_aux (DOFs of robot joints)
    UCONS_PRISMATIC = 3   # 5 rows: the frames coincide but for a slide along the axis

cdef enum:
    UCONS_MAX_ROWS = 6

ctypedef struct UserConstraintC:
    int kind              # UserConstraintKind
    int body_a            # collision bodies (body_b may be -1: the world)
    int body_b
    double R_a[9]         # frame on body a in its body frame (rotation, origin [m]); the
    double p_a[3]         # world frame when the body is -1
    double R_b[9]
    double p_b[3]
    double axis[3]        # PRISMATIC: unit slide axis in frame a's axes
    double max_force      # |force| bound of every row [N or N m] (impulse max_force dt)
    double erp            # fraction of the position error removed per step (Baumgarte)
    double ratio          # GEAR: the gear ratio
    double target         # GEAR: relative position target of q_a + ratio q_b [rad or m]
    int dof_a             # GEAR: DOF of robot a / b in the robot's velocity vector
    int dof_b
    int dof_aux           # GEAR: DOF of robot a whose velocity the pair follows (-1: none)

ctypedef struct UserRowC:
    # one bilateral row: u = bias + J_a vel[vel_a:] + J_b vel[vel_b:]
    int cons              # its constraint
    int row               # its index among the constraint's rows
    int ja                # offsets in jw of the J row and the W = M^-1 J^T column of each side
    int wa                # (-1: the side has no DOFs)
    int jb
    int wb
    int nv_a
    int nv_b
    int vel_a
    int vel_b
    double D              # J M^-1 J^T
    double bias           # velocity contributed by kinematic sides [m/s or rad/s]
    double target         # velocity the solve aims at (Baumgarte: -erp error / dt)
    double lo             # impulse bounds [N s or N m s]
    double hi
    double lam            # accumulated impulse
