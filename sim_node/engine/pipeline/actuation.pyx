"""Actuation stage: the robots' actuator torques (PID / torque / off per DOF, seed 002), and
after the step their integral terms and moving targets (types.pxd RobotStateC).

    (q, v, commands, integral terms) => tau within the torque limits, position errors, armature
    (position errors, velocity targets) => integral terms, targets moved on   [after the step]
"""
from sim_node.engine.spatial cimport quat_exp, quat_log, quat_mul
from sim_node.engine.types cimport ACTUATOR_PID, ACTUATOR_TORQUE, RobotC, RobotStateC


cdef void actuation(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (q, v, commands, integral terms) => tau, clipped to the torque limits; position
    # errors; the implicit damping (joint damping, unsaturated kd) as armature dt c
    cdef int r, k, qi
    cdef const RobotC* rob
    cdef RobotStateC* rs
    cdef double t
    for r in range(m.nrobot):
        rob = &m.robots[r]
        rs = &d.robots[r]
        for k in range(rob.model.nv):
            qi = rob.dof_q[k]
            rs.armature[k] = dt * rob.damping[k]
            if rs.mode[k] == ACTUATOR_PID and qi >= 0:
                if rob.dof_ball[k] < 0:
                    rs.perr[k] = rs.q_des[k] - rs.q[qi]
                elif rob.dof_ball[k] == 0:      # (the joint's three errors at once)
                    _ball_error(&rs.q[qi], &rs.q_des[k], &rs.perr[k])
                t = (rs.tau_ff[k] + rs.kp[k] * rs.perr[k]
                     + rs.kd[k] * (rs.v_des[k] - rs.v[k]) + rs.ki[k] * rs.iterm[k])
                if -rob.effort[k] < t < rob.effort[k]:
                    rs.armature[k] += dt * rs.kd[k]
            elif rs.mode[k] == ACTUATOR_TORQUE:
                rs.perr[k] = 0.0
                t = rs.tau_ff[k]
            else:
                rs.perr[k] = 0.0
                t = 0.0
            if t > rob.effort[k]:
                t = rob.effort[k]
            elif t < -rob.effort[k]:
                t = -rob.effort[k]
            rs.tau[k] = t


cdef void advance_actuators(SceneModel m, SceneData d, double dt) noexcept nogil:
    # (position errors, velocity targets) => integral terms and moving targets after a step
    cdef int r, k
    cdef const RobotC* rob
    cdef RobotStateC* rs
    cdef double bound
    for r in range(m.nrobot):
        rob = &m.robots[r]
        rs = &d.robots[r]
        for k in range(rob.model.nv):
            if rs.mode[k] != ACTUATOR_PID:
                continue
            if rs.ki[k] > 0.0:
                # anti-windup as in Klamp't: ki iterm stays within the torque limits
                rs.iterm[k] += rs.perr[k] * dt
                bound = rob.effort[k] / rs.ki[k]
                if rs.iterm[k] > bound:
                    rs.iterm[k] = bound
                elif rs.iterm[k] < -bound:
                    rs.iterm[k] = -bound
            if rs.advance[k] > 0.0:
                advance_target(rob, rs, k, dt)


cdef void advance_target(const RobotC* rob, RobotStateC* rs, int k, double dt) noexcept nogil:
    # DOF k's PID target moves on with v_des for min(dt, advance) (a spherical joint's three
    # DOFs together, from its first: Q_des <- Q_des exp(v_des h)); v_des drops to 0 at the end
    cdef double h = dt if dt < rs.advance[k] else rs.advance[k]
    cdef double w[3]
    cdef double a[4]
    cdef double b[4]
    cdef double c[4]
    cdef int j, n = 1
    if rob.dof_ball[k] < 0:
        rs.q_des[k] += rs.v_des[k] * h
    elif rob.dof_ball[k] == 0:
        n = 3
        for j in range(3):
            w[j] = rs.v_des[k + j] * h
        quat_exp(&rs.q_des[k], a)
        quat_exp(w, b)
        quat_mul(a, b, c)
        quat_log(c, &rs.q_des[k])
    else:
        return          # moved with the joint's first DOF
    for j in range(k, k + n):
        rs.advance[j] -= h
        if rs.advance[j] <= 0.0:
            rs.advance[j] = 0.0
            rs.v_des[j] = 0.0


cdef inline void _ball_error(const double* q, const double* r_des, double* e) noexcept nogil:
    # e = log(Q^-1 Q_des): the rotation, in child axes, from the joint's quaternion Q to its
    # target Q_des = exp(r_des), the shorter way round
    cdef double target[4]
    cdef double inverse[4]
    cdef double rel[4]
    quat_exp(r_des, target)
    inverse[0] = -q[0]
    inverse[1] = -q[1]
    inverse[2] = -q[2]
    inverse[3] = q[3]
    quat_mul(inverse, target, rel)
    quat_log(rel, e)
