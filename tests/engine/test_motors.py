"""The motor kernels (engine/motors.pyx): the step's dynamics against Pinocchio, the joint
saturation against its definition solved with numpy, the commands and the record against the
formulas of sim_node.pybullet.control's docstring."""
import numpy as np
import pytest
from engine_cases import assert_rel, random_robots
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_node.engine import motors as K
from sim_node.engine.api import ActuatorMode

ACTUATOR_PID, ACTUATOR_TORQUE = int(ActuatorMode.PID), int(ActuatorMode.TORQUE)


@given(random_robots(max_dof=12))
def test_dynamics_rows_are_pinocchios_mass_matrix_bias_and_velocity(robot):
    case, rng = robot
    q, v, _, _ = case.state(rng)
    nv = case.model.nv
    gravity = np.array([0.3, -0.2, -9.81])
    external = rng.normal(size=nv)
    step = np.empty((nv + 2, nv))
    K.motor_dynamics(case.model, case.data(), q, v, gravity, external, step)
    assert_rel(step[:nv], case.twin.mass_matrix(q), what="M")
    assert_rel(step[nv] + external, case.twin.rnea(q, v, np.zeros(nv), gravity), what="C + G")
    assert step[nv + 1].tobytes() == v.tobytes()
    K.motor_dynamics(case.model, case.data(), q, v, gravity, None, step)
    assert_rel(step[nv], case.twin.rnea(q, v, np.zeros(nv), gravity), what="C + G")


def _spd(rng, n):
    A = rng.normal(size=(n, n))
    return A @ A.T + n * np.eye(n) * 0.1


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 7), st.integers(0, 3))
def test_clamps_leave_every_free_motor_within_its_force_and_clamp_only_overloaded_ones(seed, n,
                                                                                       extra):
    # the definition, checked with numpy on the result: with the clamped motors at +-force and
    # the free DOFs (no motor, or clamped) moving under their torques, M a + b = tau holds with
    # a = accel on the unclamped motors' DOFs, and each unclamped motor needs at most its force
    rng = np.random.default_rng(seed)
    nv = n + extra
    M = _spd(rng, nv)
    bias = rng.normal(scale=5.0, size=nv)
    vis = np.sort(rng.choice(nv, n, replace=False)).astype(np.intp)
    forces = np.where(rng.random(n) < 0.2, 0.0, rng.uniform(0.5, 8.0, n))
    known = rng.normal(size=n)
    accel = np.zeros(nv)
    accel[vis] = rng.normal(scale=3.0, size=n)
    step = np.vstack([M, bias, np.zeros(nv)])
    clamp = np.full(n, np.nan)
    K.motor_clamps(step, accel, vis, forces, known, clamp)
    tau = np.zeros(nv)
    tau[vis] += known + clamp
    unclamped = (forces > 0.0) & (clamp == 0.0)
    S = vis[unclamped]
    N = np.setdiff1d(np.arange(nv), S)
    a = np.zeros(nv)
    a[S] = accel[S]
    if N.size:
        a[N] = np.linalg.solve(M[np.ix_(N, N)], tau[N] - bias[N] - M[np.ix_(N, S)] @ a[S])
    need = M[S] @ a + bias[S] - tau[S]
    assert np.all(np.abs(need) <= forces[unclamped] * (1 + 1e-9))
    assert np.all(clamp[forces == 0.0] == 0.0)
    clamped = clamp != 0.0
    assert np.array_equal(np.abs(clamp[clamped]), forces[clamped])


def test_a_single_motor_clamps_exactly_when_it_needs_more_than_its_force():
    # one DOF: need = M a + b - known; closed form
    M, b, known, a = 2.0, 3.0, 0.5, 4.0       # need = 8 + 3 - 0.5 = 10.5
    for force, expected in ((10.4, 10.4), (10.6, 0.0)):
        clamp = np.zeros(1)
        K.motor_clamps(np.array([[M], [b], [0.0]]), np.array([a]), np.array([0], np.intp),
                       np.array([force]), np.array([known]), clamp)
        assert clamp[0] == expected


def _table(n):
    table = np.zeros((K.NROW, n))
    table[K.KD] = 1.0
    table[K.FORCE] = np.nan
    table[K.MAX_VELOCITY] = np.inf
    return table


def test_commands_follow_the_velocity_motor_and_record_what_it_applied():
    # two independent DOFs (diagonal M): motor 0 under POSITION_CONTROL within its force,
    # motor 1 under VELOCITY_CONTROL saturated at its force, with a PD torque on top
    dt, stiffness = 0.01, 100.0
    share = stiffness / (1 + stiffness)
    M = np.diag([2.0, 0.5])
    bias = np.array([1.0, -0.3])
    q, v = np.array([0.2, -0.1]), np.array([0.5, 0.0])
    table = _table(2)
    table[[K.KP, K.Q_TARGET, K.FORCE], 0] = (0.1, 0.3, 1000.0)
    table[[K.V_TARGET, K.FORCE, K.TORQUE], 1] = (5.0, 2.0, 0.25)
    table[[K.PD_ON, K.PD_Q, K.PD_V, K.PD_KP, K.PD_KD, K.PD_FORCE], 1] = (1, 0.0, 0.0, 10.0,
                                                                         1.0, 0.5)
    step = np.vstack([M, bias, v])
    mode = np.zeros(2, np.int32)
    kp, ki, kd, v_des, tau_ff, advance = (np.full(2, 7.0) for _ in range(6))
    joints = np.array([0, 1], np.intp)
    K.motor_commands(q, v, dt, stiffness, 100.0, joints, joints, joints, table, step, mode, kp,
                     ki, kd, v_des, tau_ff, advance)
    target0 = v[0] + 0.1 * (0.3 - 0.2) / dt + 1.0 * (0.0 - v[0])
    assert mode.tolist() == [ACTUATOR_PID, ACTUATOR_TORQUE]
    assert kd[0] == pytest.approx(stiffness * 2.0 / dt) and v_des[0] == pytest.approx(target0)
    assert tau_ff[0] == 0.0
    # motor 1: needs 0.5 (5 share / dt) - 0.3 - known >> 2: clamped to +2 on top of
    # its known torque 0.25 + clip(10 (0 - -0.1) + 1 (0 - 0), +-0.5) = 0.75
    assert 0.5 * share * 5.0 / dt - 0.3 - 0.75 > 2.0
    assert tau_ff[1] == pytest.approx(0.75 + 2.0) and kd[1] == 0.0 and v_des[1] == 0.0
    assert kp.tolist() == ki.tolist() == advance.tolist() == [0.0, 0.0]
    assert table[K.TORQUE].tolist() == [0.0, 0.0]
    # after a step to v_new: applied = K (v* - v_new) for motor 0, the clamp + known for 1;
    # the other forces = M (v_new - v) / dt + bias - actuated
    v_new = np.array([0.9, 0.1])
    external = K.motor_record(v_new, dt, joints, joints, table, step, None, None)
    applied = np.array([kd[0] * (target0 - v_new[0]), 2.75])
    assert table[K.APPLIED] == pytest.approx(applied)
    assert external == pytest.approx(M @ (v_new - v) / dt + bias - applied)


def test_arrays_of_the_wrong_size_are_refused():
    step = np.zeros((3, 2))
    with pytest.raises(ValueError, match="inconsistent motor arrays"):
        K.motor_commands(np.zeros(2), np.zeros(2), 0.01, 100.0, 1.0, np.array([0], np.intp),
                         np.array([0, 1], np.intp), np.array([0], np.intp), _table(1), step,
                         np.zeros(2, np.int32), *(np.zeros(2) for _ in range(6)))


def _motors(case, q, v):
    """A RobotMotors without motors on the robot's (q, v) and fresh actuator arrays."""
    nv = case.model.nv
    zeros = [np.zeros(nv) for _ in range(6)]
    none = np.zeros(0, dtype=np.intp)
    return K.RobotMotors(case.model, case.data(), q, v, none, none, none,
                         np.zeros((K.NROW, 0)), np.empty((nv + 2, nv)),
                         np.zeros(nv, dtype=np.intc), *zeros)


@given(random_robots(max_dof=12), st.floats(0.0, 2.0), st.floats(0.0, 2.0))
def test_link_damping_is_the_jacobians_transpose_of_bullets_link_forces(robot, k_lin, k_ang):
    # each body b (mass m, COM c, inertia I_c): f = -m k_lin (1 + |v_c|) v_c,
    # n = -k_ang (1 + |w|) I_c w (world axes), summed as J_c^T [n; f] with the engine's point
    # Jacobian at the COM (a URDF link of the body), not the RNEA backward pass
    from sim_node.engine.api import kinematics
    case, rng = robot
    q, v, _, _ = case.state(rng)
    model = case.model
    a = model.arrays
    if model.nv == 0:
        return
    link_body = a["link_body"].reshape(-1)
    # (the bodies with a URDF link: planar joints add link-less ones between)
    bodies = np.array([b for b in range(model.nbody) if (link_body == b).any()], dtype=np.intp)
    rows = np.zeros((len(bodies), K.DAMP_NCOL))
    rows[:, K.DAMP_MASS] = a["mass"][bodies]
    rows[:, K.DAMP_COM:K.DAMP_COM + 3] = a["com"].reshape(-1, 3)[bodies]
    rows[:, K.DAMP_INERTIA:] = a["inertia"].reshape(-1, 9)[bodies]
    motors = _motors(case, q, v)
    tau_ext = np.full(model.nv, np.nan)
    motors.set_damping(bodies, rows, k_lin, k_ang, tau_ext)
    assert not tau_ext.any()
    motors.damp()
    data = case.data()
    R_all, _ = kinematics.frames(model, data, q)
    expected = np.zeros(model.nv)
    for row, b in zip(rows, bodies):
        link = int(np.flatnonzero(link_body == b)[0])
        R_BL = a["link_R"].reshape(-1, 3, 3)[link]
        p_BL = a["link_p"].reshape(-1, 3)[link]
        c_L = R_BL.T @ (row[1:4] - p_BL)
        J = kinematics.jacobian(model, data, q, link, c_L).copy()
        w, vc = J[:3] @ v, J[3:] @ v
        R_WB = R_all[link] @ R_BL.T
        I_W = R_WB @ row[4:].reshape(3, 3) @ R_WB.T
        f = -row[0] * k_lin * (1 + np.linalg.norm(vc)) * vc
        n = -k_ang * (1 + np.linalg.norm(w)) * I_W @ w
        expected += J[:3].T @ n + J[3:].T @ f
    assert_rel(tau_ext, expected, rtol=1e-9, atol=1e-12, what="damping")
    assert_rel(motors.damping_forces, expected, rtol=1e-9, atol=1e-12, what="damping")
    # off: zero at once
    motors.set_damping(bodies, rows, 0.0, 0.0, tau_ext)
    motors.damp()
    assert not tau_ext.any()


def test_damping_arguments_of_the_wrong_size_or_sign_are_refused():
    from engine_cases import make_case
    case = make_case("""<robot name="r"><link name="a"/><link name="b"><inertial>
      <mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
      </link><joint name="j" type="revolute"><parent link="a"/><child link="b"/>
      <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>""")
    nv = case.model.nv
    motors = _motors(case, np.zeros(case.model.nq), np.zeros(nv))
    rows = np.zeros((1, K.DAMP_NCOL))
    for args in (([0], np.zeros((1, 3)), 0.1, 0.1, np.zeros(nv)),
                 ([5], rows, 0.1, 0.1, np.zeros(nv)),
                 ([0], rows, -0.1, 0.1, np.zeros(nv)),
                 ([0], rows, 0.1, np.nan, np.zeros(nv)),
                 ([0], rows, 0.1, 0.1, np.zeros(nv + 1))):
        with pytest.raises(ValueError):
            motors.set_damping(np.array(args[0], dtype=np.intp), *args[1:])
