# The simulated scene: articulated robots, free rigid bodies, kinematic and static bodies,
# their collision shapes, and the per-step contact and constraint data.
#
# Velocities of everything that moves dynamically form one vector `vel` (nvel entries):
# each robot's v (its own layout, DESIGN.md §3), then 6 entries per free rigid body:
# linear velocity of its centre of mass and angular velocity, both in world axes.
from sim_node.engine.geometry cimport MeshC
from sim_node.engine.model cimport ModelC, DataC

cdef enum ActuatorMode:
    ACTUATOR_OFF = 0
    ACTUATOR_TORQUE = 1
    ACTUATOR_PID = 2

cdef enum BodyKind:
    BODY_STATIC = 0       # terrain: never moves, infinite mass
    BODY_KINEMATIC = 1    # follows its set velocity; infinite mass (a free body, dynamics off)
    BODY_FREE = 2         # free rigid body with dynamics
    BODY_ROBOT = 3        # one moving body of an articulated robot

ctypedef struct ShapeC:
    int type              # geometry ShapeType
    int body              # owning collision body
    double size[3]
    double R_BS[9]        # shape frame in the body frame
    double p_BS[3]
    const MeshC* mesh
    double R[9]           # shape frame in the world (set each step)
    double p[3]
    double lo[3]          # world AABB of the shape itself (no margin)
    double hi[3]

ctypedef struct BodyC:
    int kind              # BodyKind
    int index             # robot (ROBOT), free body (FREE / KINEMATIC), -1 (STATIC)
    int robot_body        # body in the robot's Model (ROBOT), else -1
    int robot             # owning robot (its moving bodies and its links welded to the world), else -1
    int id                # world ID (feedback, filtering)
    int first_shape
    int nshape
    double padding        # boundary-layer thickness [m]
    double restitution    # surface parameters (seed 002)
    double friction
    double stiffness      # [N/m], inf = rigid
    double damping        # [N s/m]
    unsigned int group    # collision filter group / mask bits (PyBullet semantics)
    unsigned int mask
    int enabled           # 0: the body takes no part in collision
    int collidable        # some other body may collide with it (filters allow the pair)
    double R[9]           # body frame in the world (set each step)
    double p[3]
    double lo[3]          # AABB of all shapes, grown by padding and the step's sweep
    double hi[3]
    double speed          # bound on the speed of any of its points this step [m/s]
    double extent         # max distance of a shape point from the body origin [m]

ctypedef struct RobotC:
    const ModelC* model
    DataC* data
    int vel_offset        # first entry in vel
    int first_body        # first collision body of this robot (its bodies are contiguous,
                          # collision body first_body + i is Model body i)
    int self_collision    # 1: its non-adjacent bodies collide with each other
    int collidable        # some of its bodies are collidable (else no collision kinematics)
    int minv_valid        # data.Minv holds B(q)^-1 of this step
    int factored          # data.M, data.L hold B(q) and its LTDL factor of this step
    int use_factor        # forward dynamics by the factorisation (mimic joints, or dry
                          # friction: the constraint rows need B^-1 anyway), else ABA
    int q_offset          # first joint entry of q (7 after a floating base, else 0); the
                          # joints' DOFs start at the Scene's robot_joint_offset (6 or 0)
    int has_ball          # some DOFs belong to spherical joints
    const int* dof_ball   # [nv] 0, 1, 2: the DOF is that component of a spherical joint's
                          # angular velocity; -1: a scalar DOF (or an unactuated one)
    const int* body_adjacent  # [nbody] the body each body counts as adjacent to (the collision
                          # filter skips the pair): its parent, past a planar joint's
                          # intermediate bodies
    # state (numpy arrays owned by the Scene)
    double* q             # [nq]
    double* v             # [nv]
    double* q_next        # [nq] scratch for the integration
    # actuators, per DOF (seed 002), clipped to +-effort:
    #   ACTUATOR_PID     tau = tau_ff + kp e + kd (v_des - v) + ki iterm, with the position
    #                    error e = q_des - q, or for a spherical joint's three DOFs
    #                    e = log(Q^-1 Q_des) (rotation vector in child axes from its quaternion
    #                    Q to its target Q_des = exp(q_des))
    #   ACTUATOR_TORQUE  tau = tau_ff
    #   ACTUATOR_OFF     tau = 0 (floating-base and free-joint DOFs, passive joints)
    # after each step iterm += e dt (e before the step; ki iterm kept within the torque
    # limits), and while advance > 0 the target moves on: q_des += v_des dt (spherical:
    # Q_des <- Q_des exp(v_des dt)), advance -= dt; when advance runs out v_des becomes 0
    # (velocity commands, queue ticks)
    int* mode             # [nv] ActuatorMode
    double* tau_ff        # [nv]
    double* kp            # [nv]
    double* ki            # [nv]
    double* kd            # [nv]
    double* q_des         # [nv] target of each DOF's coordinate; a spherical joint's three
                          # entries: the rotation vector of its target (angle in [0, pi])
    double* v_des         # [nv]
    double* iterm         # [nv] integral of the position error [rad s or m s]
    double* advance       # [nv] time the target still moves with v_des [s]
    double* perr          # [nv] scratch: position error e before the step
    double* armature      # [nv] dt x the damping made implicit this step (joint damping, and
                          # the PID's kd unless its torque saturates): forward dynamics and
                          # constraint rows use B + diag(armature) (linearly implicit Euler)
    double* tau           # [nv] actuator output of this step
    double* tau_ext       # [nv] external generalized force of this step (applied wrenches)
    double* tau_net       # [nv] scratch: all generalized forces the free velocity sees
    const double* effort  # [nv] torque limits
    const int* dof_q      # [nv] index of each DOF's coordinate in q (spherical joints: of
                          # their quaternion; -1: floating base and free joints, unactuated)
    const double* q_lower # [nq] position limits
    const double* q_upper
    const double* dry_friction   # [nv] joint dry friction [N m or N]
    const double* damping        # [nv] joint viscous friction [N m s/rad or N s/m]
    double* row_lam       # [3 nv] warm start of the lower-limit, upper-limit, friction rows

ctypedef struct FreeBodyC:
    int kinematic         # 1: velocity is prescribed (dynamics disabled)
    double mass           # [kg]
    double com_B[3]       # centre of mass in the body frame [m]
    double I_B[9]         # inertia about the com, body axes [kg m^2]
    double Iinv_B[9]
    double* state         # [13] x_com (world), quaternion (x, y, z, w), v_com, w (world)
    double* wrench        # [6] external force at the com and torque, world, this step
    int vel_offset        # first entry in vel (-1 when kinematic)
    int body              # its collision body
