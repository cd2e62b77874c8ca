# The mutable part of a scene (MuJoCo's mjData): state, actuator commands, and every stage's
# output and scratch. Each field: shape, unit, and the stage (pipeline/<module>) that sets it.
# "user": set from Python between steps (Scene setters, or writing the exposed arrays).
from sim_node.engine.constraint cimport ContactC, PatchC, RowC, UserRowC
from sim_node.engine.geometry cimport RawContact
from sim_node.engine.scene_model cimport SceneModel
from sim_node.engine.types cimport (BodyStateC, CacheEntry, FeedbackC, NSTAGE, PatchCache,
                                    RobotStateC, ShapeC)


cdef class SceneData:
    cdef readonly SceneModel model    # the model this data belongs to (its meshes stay alive)
    # -- state (get_state / set_state) --
    cdef readonly double time         # [s] integration; user (set_time, set_state)
    cdef RobotStateC* robots          # [nrobot] q, v (integration; user), commands (user),
                                      # iterm, advance, q_des (actuation), tau (actuation)
    cdef double* fstate               # [nfree * 13] free_state's memory: com position [m],
                                      # quaternion xyzw, com velocity [m/s], angular velocity
                                      # [rad/s], all world (integration; user)
    cdef double* fwrench              # [nfree * 6] free_wrench's memory: force at the com [N],
                                      # torque [N m], world, applied over the next step (user)
    cdef readonly object free_state   # (nfree, 13) numpy view of fstate
    cdef readonly object free_wrench  # (nfree, 6) numpy view of fwrench
    cdef CacheEntry* cache            # [ncache] contacts' normal impulses of the last step (record)
    cdef int ncache, cache_cap
    cdef double* ucons_lam            # [UCONS_MAX_ROWS * nucons] user constraints' row impulses
                                      # of the last step [N s or N m s] (record; user:
                                      # Scene.set_constraints)
    cdef PatchCache* pcache           # [npcache] patches' friction impulses of the last step,
    cdef int npcache, pcache_cap      # sorted by (body_a, body_b) (record)
    # -- status --
    cdef readonly int status          # Status, the worst since clear_status (step)
    cdef readonly double last_dt      # [s] length of the last completed step (step)
    cdef readonly int last_iterations # solver iterations of the last step (solve)
    # -- per-step outputs and scratch --
    cdef BodyStateC* bodies           # [nbody] placements, AABBs, speed bounds (kinematics);
                                      # collidable (broadphase.count_collidable)
    cdef ShapeC* shapes               # [nshape] placed shapes, their AABBs (kinematics)
    cdef bint filters_changed         # recount the collidable bodies before the next step (user)
    cdef readonly int ncollidable     # bodies some other body may collide with (broadphase)
    cdef double* box                  # [nbody * 6] AABBs grown by padding and sweep [m] (kinematics)
    cdef int* sap_order               # [nbody] bodies sorted along x, kept between steps:
                                      # near-sorted (broadphase)
    cdef int* cand                    # [2 ncand] candidate body pairs i < j (broadphase)
    cdef int ncand, cand_cap
    cdef RawContact* raw              # [nraw] shape-pair contacts of every candidate pair
    cdef int nraw, raw_cap            # (narrowphase; clustering reduces each pair's in place)
    cdef int* pair_raw                # [4 ncand] per candidate pair: body a, body b (b the static
                                      # side when there is one), first raw contact, count
                                      # (narrowphase; count: clustering)
    cdef int* scratch                 # [raw_cap] clustering scratch
    cdef ContactC* contacts           # [ncontact] contacts (clustering), their rows (constraints)
    cdef readonly int ncontact        # and impulses (solve)
    cdef int contact_cap
    cdef PatchC* patches              # [npatch] friction patches (clustering), rows
    cdef readonly int npatch          # (constraints), impulses (solve)
    cdef int patch_cap
    cdef RowC* rows                   # [nrow] joint limit and dry friction rows (constraints),
    cdef readonly int nrow            # impulses (solve)
    cdef int row_cap
    cdef UserRowC* urows              # [nurow] user constraint rows (constraints), impulses
    cdef readonly int nurow           # (solve)
    cdef int urow_cap
    cdef double* vel                  # [nvel] velocities: unconstrained (dynamics), then
                                      # constrained (solve) [m/s, rad/s]
    cdef double* vel0                 # [nvel] velocities at the start of the step (dynamics)
    cdef double* jw                   # [jw_size] Jacobian rows and M^-1 J^T columns (constraints)
    cdef double* iinv_world           # [nfree * 9] inverse inertia of each free body in world
                                      # axes, R I_B^-1 R^T, at the step's start (constraints)
    cdef int* path_dofs               # [largest robot ncol] scratch: the DOFs a body's Jacobian
                                      # row can be nonzero on, ascending (constraints)
    cdef int jw_size, jw_cap
    cdef double* blocks               # [blocks_size] patch Delassus blocks (constraints)
    cdef int blocks_size, blocks_cap
    cdef int* separated               # [2 nseparated] body pairs that touched the step before
    cdef int nseparated, separated_cap  # and no longer do (record)
    # -- contact feedback (feedback; the table's entries: user) --
    cdef FeedbackC* fb                # [nfeedback] sorted by (body_a, body_b)
    cdef int nfeedback, feedback_cap
    cdef readonly bint feedback_all   # every touching pair gets an entry (user)
    cdef readonly int window_steps    # steps and time [s] since begin_feedback_window (step)
    cdef readonly double window_time
    # -- work done, summed over steps (a cost measure independent of the machine) --
    cdef readonly long count_shape_pairs    # narrowphase shape-pair tests (narrowphase)
    cdef readonly long count_contacts       # contacts produced (solve)
    cdef readonly long count_row_updates    # constraint rows visited by the solver (solve)
    # -- per-stage profile (step; only while profile is on) --
    cdef public bint profile
    cdef double stage_seconds[NSTAGE] # [s] wall time per stage, summed over steps
    cdef long stage_calls[NSTAGE]     # times each stage ran
    # -- Python views of the robot state (arrays the RobotStateC pointers point into) --
    cdef readonly list robot_data     # [nrobot] Data objects (DataC scratch)
    cdef readonly list robot_q, robot_v, robot_tau_ff, robot_kp, robot_ki, robot_kd
    cdef readonly list robot_q_des, robot_v_des, robot_mode, robot_iterm, robot_advance
    cdef readonly list robot_tau, robot_tau_ext, robot_row_lam
    cdef list _keep                   # arrays whose memory the C structs point into
