"""One time step: the stages in order, and the retry of a failed step as two halves.

    kinematics     (q, v, free-body states)      => placements, AABBs, speeds
    broadphase     (AABBs, filters)              => candidate body pairs
    narrowphase    (candidate pairs, shapes)     => raw contacts per pair
    clustering     (raw contacts)                => contacts, friction patches
    actuation      (q, v, commands)              => tau, armature
    dynamics       (q, v, tau, wrenches, g)      => vel without constraints
    constraints    (contacts, patches, limits,   => rows, Delassus blocks, targets, warm start
                    user constraints)
    solve          (rows, vel)                   => vel, impulses
    integration    (vel)                         => q, v, free-body states; targets move on
    record         (impulses)                    => warm-start caches, separated pairs,
                                                    user constraints' impulses
    feedback       (patches, impulses)           => contact feedback (when asked for)

With SceneData.profile on, each stage's wall time (CLOCK_MONOTONIC) and calls are summed in
stage_seconds / stage_calls; off, the cost is one branch per stage.
"""
from libc.math cimport fabs, isfinite
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from sim_node.engine.pipeline.actuation cimport actuation, advance_actuators
from sim_node.engine.pipeline.broadphase cimport broadphase, count_collidable
from sim_node.engine.pipeline.clustering cimport clustering
from sim_node.engine.pipeline.constraints cimport constraint_setup, solve
from sim_node.engine.pipeline.dynamics cimport free_velocity
from sim_node.engine.pipeline.feedback cimport feedback
from sim_node.engine.pipeline.integration cimport integration
from sim_node.engine.pipeline.kinematics cimport kinematics
from sim_node.engine.pipeline.narrowphase cimport narrowphase
from sim_node.engine.pipeline.user_constraints cimport user_constraint_record, user_constraint_rows
from sim_node.engine.pipeline.warmstart cimport record
from sim_node.engine.types cimport (MAX_HALVINGS, MAX_STEP_MOTION, STATUS_ADAPTIVE_TIME_STEPPING,
                                    STATUS_UNSTABLE, STAGE_ACTUATION, STAGE_BROADPHASE,
                                    STAGE_CLUSTERING, STAGE_CONSTRAINTS, STAGE_DYNAMICS,
                                    STAGE_FEEDBACK, STAGE_INTEGRATION, STAGE_KINEMATICS,
                                    STAGE_NARROWPHASE, STAGE_RECORD, STAGE_SOLVE)


cdef void step_adaptive(SceneModel m, SceneData d, double dt, int depth) noexcept nogil:
    # one step of dt; a failed one (state untouched) is retried as two halves, MAX_HALVINGS deep
    if step(m, d, dt):
        return
    if depth == MAX_HALVINGS:
        d.status = STATUS_UNSTABLE
        return
    if d.status < STATUS_ADAPTIVE_TIME_STEPPING:
        d.status = STATUS_ADAPTIVE_TIME_STEPPING
    step_adaptive(m, d, 0.5 * dt, depth + 1)
    if d.status != STATUS_UNSTABLE:
        step_adaptive(m, d, 0.5 * dt, depth + 1)


cdef bint step(SceneModel m, SceneData d, double dt) noexcept nogil:
    # one step; False (state untouched) when it fails: a singular mass matrix, a non-finite
    # velocity, or a coordinate moving more than MAX_STEP_MOTION
    cdef int i
    cdef double t = _start(d)
    if d.filters_changed:
        # (filters) => the bodies that can collide at all (the kinematics skips the others);
        # rare, so timed with the kinematics
        count_collidable(m, d)
    kinematics(m, d, dt)
    _lap(d, STAGE_KINEMATICS, &t)
    broadphase(m, d)
    _lap(d, STAGE_BROADPHASE, &t)
    narrowphase(m, d, dt)
    _lap(d, STAGE_NARROWPHASE, &t)
    clustering(m, d, dt)
    _lap(d, STAGE_CLUSTERING, &t)
    actuation(m, d, dt)
    _lap(d, STAGE_ACTUATION, &t)
    if not free_velocity(m, d, dt):
        return False
    _lap(d, STAGE_DYNAMICS, &t)
    constraint_setup(m, d, dt)
    if m.nucons:
        user_constraint_rows(m, d, dt)
    _lap(d, STAGE_CONSTRAINTS, &t)
    solve(m, d)
    for i in range(m.nvel):
        if not isfinite(d.vel[i]) or fabs(d.vel[i]) * dt > MAX_STEP_MOTION:
            return False
    _lap(d, STAGE_SOLVE, &t)
    integration(m, d, dt)
    advance_actuators(m, d, dt)
    _lap(d, STAGE_INTEGRATION, &t)
    record(m, d)
    if m.nucons:
        user_constraint_record(m, d)
    d.last_dt = dt
    _lap(d, STAGE_RECORD, &t)
    if d.nfeedback or d.feedback_all:
        feedback(m, d, dt)
        _lap(d, STAGE_FEEDBACK, &t)
    d.window_steps += 1
    d.window_time += dt
    d.time += dt
    return True


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef inline double _start(SceneData d) noexcept nogil:
    return _now() if d.profile else 0.0


cdef inline void _lap(SceneData d, int stage, double* t) noexcept nogil:
    # the time since t goes to the stage; t moves on to now
    cdef double now
    if d.profile:
        now = _now()
        d.stage_seconds[stage] += now - t[0]
        d.stage_calls[stage] += 1
        t[0] = now
