# The engine's shared C types: the scene's structs (split into what the SceneModel holds, built
# once, and what the SceneData holds, written by the step), their enums, status codes, the
# pipeline's stage numbers and the contact model's constants.
#
# Velocities of everything that moves dynamically form one vector `vel` (SceneData.nvel
# entries): each robot's v (its own layout, DESIGN.md §3), then 6 entries per dynamic free rigid
# body: linear velocity of its centre of mass and angular velocity, both in world axes.
#
# Also shared, declared beside their kernels: ShapeType, MeshC, BVH, RawContact (geometry.pxd),
# ContactC, PatchC, RowC (constraint.pxd: the solver's rows), ModelC, DataC (model.pxd: one
# robot's multibody model and its kinematics/dynamics scratch).
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

# status codes (Simulator.getStatus; the same numbers as sim_node/msg/SimStatus.msg)
# (Klamp't's set; the engine itself sets NORMAL, ADAPTIVE_TIME_STEPPING and UNSTABLE)
cdef enum Status:
    STATUS_NORMAL = 0
    STATUS_ADAPTIVE_TIME_STEPPING = 1
    STATUS_CONTACT_UNRELIABLE = 2
    STATUS_UNSTABLE = 3
    STATUS_ERROR = 4

# The stages of a step, in order (pipeline/step.pyx); SceneData.stage_seconds and
# stage_calls are indexed by them. STAGE_NAMES in api.pyx spells them.
cdef enum Stage:
    STAGE_KINEMATICS = 0      # pipeline/kinematics.pyx
    STAGE_BROADPHASE = 1      # pipeline/broadphase.pyx
    STAGE_NARROWPHASE = 2     # pipeline/narrowphase.pyx
    STAGE_CLUSTERING = 3      # pipeline/clustering.pyx
    STAGE_ACTUATION = 4       # pipeline/actuation.pyx
    STAGE_DYNAMICS = 5        # pipeline/dynamics.pyx
    STAGE_CONSTRAINTS = 6     # pipeline/constraints.pyx: rows, Jacobians, warm start
    STAGE_SOLVE = 7           # pipeline/constraints.pyx: projected Gauss-Seidel
    STAGE_INTEGRATION = 8     # pipeline/integration.pyx (and the actuators' targets move on)
    STAGE_RECORD = 9          # pipeline/warmstart.pyx
    STAGE_FEEDBACK = 10       # pipeline/feedback.pyx
    NSTAGE = 11

# Contact model (seed 002; the boundary layer is described in pipeline/constraints.pyx)
cdef extern from *:
    """
    #define SIM_REST_GAP_FRACTION 0.1
    #define SIM_RESTITUTION_THRESHOLD 0.05
    #define SIM_IMPACT_SPEED 0.05
    #define SIM_PUSH_OUT_RATE 0.2
    #define SIM_MAX_PUSH_OUT_SPEED 0.2
    #define SIM_MERGE_RADIUS 0.001
    #define SIM_WARM_START_RADIUS 0.01
    #define SIM_MAX_STEP_MOTION 0.5
    """
    # rigid contacts rest this fraction of the summed paddings into the layer's outside
    const double REST_GAP_FRACTION "SIM_REST_GAP_FRACTION"
    # [m/s] slower impacts do not bounce
    const double RESTITUTION_THRESHOLD "SIM_RESTITUTION_THRESHOLD"
    # [m/s] faster approaches are impacts, solved exactly
    const double IMPACT_SPEED "SIM_IMPACT_SPEED"
    # fraction of an overlap beyond the rest gap fixed per step
    const double PUSH_OUT_RATE "SIM_PUSH_OUT_RATE"
    # [m/s] cap of that correction (it adds energy)
    const double MAX_PUSH_OUT_SPEED "SIM_MAX_PUSH_OUT_SPEED"
    # [m] contacts of a pair closer than this are merged
    const double MERGE_RADIUS "SIM_MERGE_RADIUS"
    # [m] a cached impulse follows a contact this close
    const double WARM_START_RADIUS "SIM_WARM_START_RADIUS"
    # [m or rad] a step moving any coordinate further fails
    const double MAX_STEP_MOTION "SIM_MAX_STEP_MOTION"

cdef enum:
    RAW_PER_SHAPE_PAIR = 256  # most raw contacts one shape pair produces
    MAX_HALVINGS = 5          # a failed step is retried as two halves, this deep


# -- SceneModel: built once; user setters change surfaces, padding, filters between steps --------

ctypedef struct ShapeDefC:
    # a collision shape on its body
    int type              # geometry ShapeType
    int body              # owning collision body
    double size[3]        # as for the shape type (geometry.pxd) [m]
    double R_BS[9]        # shape frame in the body frame
    double p_BS[3]        # [m]
    const MeshC* mesh     # CONVEX, MESH, HEIGHTFIELD: its vertex data (SceneModel.meshes)

ctypedef struct BodyC:
    # a collision body: the shapes that move together (a terrain, a free body, a robot body)
    int kind              # BodyKind
    int index             # robot (ROBOT), free body (FREE / KINEMATIC), -1 (STATIC)
    int robot_body        # body in the robot's Model (ROBOT), else -1
    int robot             # owning robot (its moving bodies and its links welded to the world), else -1
    int id                # world ID (feedback, filtering)
    int first_shape
    int nshape
    double extent         # max distance of a shape point from the body origin [m]
    double R0[9]          # placement when built (the SceneData's first BodyStateC.R, p): a
    double p0[3]          # STATIC body's for good [m]
    # set between steps by the user (Scene setters)
    double padding        # boundary-layer thickness [m]
    double restitution    # surface parameters (seed 002)
    double friction
    double stiffness      # [N/m], inf = rigid
    double damping        # [N s/m]
    unsigned int group    # collision filter group / mask bits (PyBullet semantics)
    unsigned int mask
    int enabled           # 0: the body takes no part in collision

ctypedef struct RobotC:
    # an articulated robot's constant data; its state is the SceneData's RobotStateC
    const ModelC* model
    int vel_offset        # first entry in vel
    int first_body        # first collision body of this robot (its bodies are contiguous,
                          # collision body first_body + i is Model body i)
    int self_collision    # 1: its non-adjacent bodies collide with each other
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
    const double* effort  # [nv] torque limits
    const int* dof_q      # [nv] index of each DOF's coordinate in q (spherical joints: of
                          # their quaternion; -1: floating base and free joints, unactuated)
    const double* q_lower # [nq] position limits
    const double* q_upper
    const double* dry_friction   # [nv] joint dry friction [N m or N]
    const double* damping        # [nv] joint viscous friction [N m s/rad or N s/m]

ctypedef struct FreeBodyC:
    # a free rigid body's constant data; its state is SceneData.free_state[13 i : 13 i + 13]
    int kinematic         # 1: velocity is prescribed (dynamics disabled; set between steps)
    double mass           # [kg]
    double com_B[3]       # centre of mass in the body frame [m]
    double I_B[9]         # inertia about the com, body axes [kg m^2]
    double Iinv_B[9]
    int vel_offset        # first entry in vel (-1 when kinematic at build time)
    int body              # its collision body


# -- SceneData: all mutable state and scratch ----------------------------------------------------

ctypedef struct ShapeC:
    # a collision shape placed in the world: the narrowphase's input. type, size, mesh are
    # copied from the model's ShapeDefC when the SceneData is made (constant); the kinematics
    # stage sets the rest each step.
    int type
    double size[3]
    const MeshC* mesh
    double R[9]           # shape frame in the world
    double p[3]           # [m]
    double lo[3]          # world AABB of the shape itself (no margin) [m]
    double hi[3]

ctypedef struct BodyStateC:
    # a collision body this step (kinematics stage), and whether filters let it collide
    double R[9]           # body frame in the world
    double p[3]           # [m]
    double lo[3]          # AABB of all shapes [m]
    double hi[3]
    double speed          # bound on the speed of any of its points this step [m/s]
    int collidable        # some other body may collide with it (recounted from the filters
                          # at the first step after they change: broadphase.count_collidable)

ctypedef struct RobotStateC:
    # a robot's state, actuator commands and per-step scratch (numpy arrays owned by the
    # SceneData, exposed as robot_q[r], robot_kp[r], ...)
    DataC* data           # its Model's kinematics and dynamics scratch
    int minv_valid        # data.Minv holds B(q)^-1 of this step
    int factored          # data.M, data.L hold B(q) and its LTDL factor of this step
    int collidable        # some of its bodies are collidable (else no collision kinematics)
    int constrained       # a user constraint holds one of its bodies (its kinematics runs
                          # every step even when nothing can collide with it)
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
    double* row_lam       # [3 nv] warm start of the lower-limit, upper-limit, friction rows

cdef struct CacheEntry:
    # a contact's normal impulse, found again next step by its position in body a's frame
    int body_a
    int body_b
    double point_A[3]     # contact point in body a's frame [m]
    double lam            # normal impulse [N s]

cdef struct PatchCache:
    # a body pair's friction impulse, world frame, and where its contacts sit in the cache
    int body_a
    int body_b
    double friction[3]    # [N s]
    double torsion        # [N m s]
    int first             # its contacts in the contact cache
    int count
    int touched           # some contact was inside the boundary layers (depth >= 0)

cdef struct FeedbackC:
    # contact feedback of one body pair (a < b) over the feedback window (Simulator.simulate)
    int body_a
    int body_b
    int touching          # a contact inside the boundary layers at the last step
    int steps_touching    # steps of the window with such a contact
    int penetrated        # the real geometries overlapped at some step of the window
    double impulse[3]     # on a, summed over the window [N s]
    double moment[3]      # on a about the world origin, summed over the window [N m s]
    double force[3]       # on a at the last step [N]
    double torque[3]      # on a about the world origin at the last step [N m]
