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
    # state (numpy arrays owned by the Scene)
    double* q             # [nq]
    double* v             # [nv]
    double* q_next        # [nq] scratch for the integration
    # actuators, per DOF (seed 002), clipped to +-effort:
    #   ACTUATOR_PID     tau = tau_ff + kp (q_des - q) + kd (v_des - v) + ki iterm
    #   ACTUATOR_TORQUE  tau = tau_ff
    #   ACTUATOR_OFF     tau = 0 (floating-base DOFs, passive joints)
    # after each step iterm += (q_des - q) dt (q before the step; ki iterm kept within the
    # torque limits), and while advance > 0 the target moves on: q_des += v_des dt,
    # advance -= dt; when advance runs out v_des becomes 0 (velocity commands, queue ticks)
    int* mode             # [nv] ActuatorMode
    double* tau_ff        # [nv]
    double* kp            # [nv]
    double* ki            # [nv]
    double* kd            # [nv]
    double* q_des         # [nv] target of each DOF's coordinate
    double* v_des         # [nv]
    double* iterm         # [nv] integral of the position error [rad s or m s]
    double* advance       # [nv] time the target still moves with v_des [s]
    double* perr          # [nv] scratch: position error before the step
    double* armature      # [nv] dt x the damping made implicit this step (joint damping, and
                          # the PID's kd unless its torque saturates): forward dynamics and
                          # constraint rows use B + diag(armature) (linearly implicit Euler)
    double* tau           # [nv] actuator output of this step
    double* tau_ext       # [nv] external generalized force of this step (applied wrenches)
    double* tau_net       # [nv] scratch: all generalized forces the free velocity sees
    const double* effort  # [nv] torque limits
    const int* dof_q      # [nv] index of each DOF's coordinate in q (-1: floating base)
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
