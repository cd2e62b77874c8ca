"""MotionQueue against closed-form references: bang-bang/trapezoid times, straight lines, linear
and Hermite interpolation, exact state round trips, and input validation."""
import math
import pickle

import numpy as np
import pytest

from sim_node.sim.motionqueue import MotionQueue

H = 1e-3  # sampling step of the finite-difference checks [s]


def rest_to_rest_time(d, v, a):
    """Minimum time to move |d| from rest to rest with |velocity| <= v and |acceleration| <= a."""
    d = abs(d)
    return d / v + v / a if d > v * v / a else 2.0 * math.sqrt(d / a)


def sample(queue, t0, t1, h=H):
    """Times from t0 to t1 with step h and the queue's (q, dq) at each, as (k, n) arrays."""
    ts = np.arange(t0, t1 + 0.5 * h, h)
    states = [queue.evaluate(t) for t in ts]
    return ts, np.array([s[0] for s in states]), np.array([s[1] for s in states])


def assert_within_bounds(q, dq, vmax, amax, h=H):
    """Velocity within vmax; finite-difference accelerations (of dq, and second differences of
    q) within amax; dq consistent with the slope of q."""
    assert np.all(np.abs(dq) <= np.asarray(vmax) * (1 + 1e-12))
    assert np.all(np.abs(np.diff(dq, axis=0)) / h <= np.asarray(amax) * (1 + 1e-9))
    assert np.all(np.abs(np.diff(q, 2, axis=0)) / h**2 <= np.asarray(amax) * (1 + 1e-6))
    slope = (q[2:] - q[:-2]) / (2 * h)
    np.testing.assert_allclose(slope, dq[1:-1], atol=np.max(amax) * h)


def line_distance(points, a, b):
    """Distance of each point to the line through a and b."""
    u = (b - a) / np.linalg.norm(b - a)
    rel = points - a
    return np.linalg.norm(rel - np.outer(rel @ u, u), axis=1)


def hermite(t, p0, v0, p1, v1, h):
    """Cubic Hermite position and velocity at local time t in [0, h] from the basis."""
    s = t / h
    h00, h10, h01, h11 = 2*s**3 - 3*s**2 + 1, s**3 - 2*s**2 + s, -2*s**3 + 3*s**2, s**3 - s**2
    g00, g10, g01, g11 = 6*s**2 - 6*s, 3*s**2 - 4*s + 1, -6*s**2 + 6*s, 3*s**2 - 2*s
    q = h00 * p0 + h10 * h * v0 + h01 * p1 + h11 * h * v1
    dq = (g00 * p0 + g01 * p1) / h + g10 * v0 + g11 * v1
    return q, dq


@pytest.mark.parametrize("d, v, a", [(2.0, 1.0, 2.0),     # trapezoid: cruises at v
                                     (0.2, 1.0, 2.0),     # triangle: never reaches v
                                     (-1.5, 0.7, 0.9)])   # trapezoid, negative direction
def test_rest_to_rest_milestone_takes_the_closed_form_time_within_bounds(d, v, a):
    queue = MotionQueue(1, [v], [a])
    queue.reset([0.3], 1.0)
    queue.set_milestone(1.0, [0.3 + d])
    T = rest_to_rest_time(d, v, a)
    assert queue.end_time() - 1.0 == pytest.approx(T, rel=1e-12)
    assert queue.remaining_time(1.0) == pytest.approx(T, rel=1e-12)
    _, q, dq = sample(queue, 1.0, queue.end_time())
    assert_within_bounds(q, dq, [v], [a])
    if d > v * v / a:
        assert np.max(np.abs(dq)) == pytest.approx(v, rel=1e-9)
    for t in (queue.end_time(), queue.end_time() + 2.0):
        q_end, dq_end = queue.evaluate(t)
        assert q_end.tolist() == [0.3 + d] and dq_end.tolist() == [0.0]


def test_multi_joint_milestone_finishes_all_joints_together_at_the_slowest_time():
    vmax, amax = np.array([1.0, 2.0, 0.5]), np.array([2.0, 1.0, 3.0])
    q0, q1 = np.array([0.0, 1.0, -1.0]), np.array([0.4, -2.0, 0.5])
    queue = MotionQueue(3, vmax, amax)
    queue.reset(q0, 0.0)
    queue.set_milestone(0.0, q1)
    times = [rest_to_rest_time(d, v, a) for d, v, a in zip(q1 - q0, vmax, amax)]
    T = max(times)
    assert len(set(times)) == 3 and queue.end_time() == pytest.approx(T, rel=1e-12)
    _, q, dq = sample(queue, 0.0, T)
    assert_within_bounds(q, dq, vmax, amax)
    # every joint still moves just before T: none finishes early
    q_late, dq_late = queue.evaluate(T - 0.01)
    assert np.all(np.abs(dq_late) > 1e-4) and np.all(q_late != q1)
    np.testing.assert_array_equal(queue.end_state()[0], q1)
    np.testing.assert_array_equal(queue.evaluate(T)[1], np.zeros(3))


def test_milestone_reaches_a_nonzero_final_velocity_then_the_queue_holds_at_rest():
    queue = MotionQueue(2, [1.0, 1.0], [2.0, 2.0])
    queue.reset([0.0, 0.0], 0.0)
    queue.add_milestone([1.0, -0.5], [0.5, -0.3])
    T = queue.end_time()
    q, dq = queue.evaluate(T)
    assert q.tolist() == [1.0, -0.5] and dq.tolist() == [0.5, -0.3]
    np.testing.assert_allclose(queue.evaluate(T - 1e-7)[1], [0.5, -0.3], atol=1e-6)
    _, q, dq = sample(queue, 0.0, T)
    assert_within_bounds(q, dq, [1.0, 1.0], [2.0, 2.0])
    # documented: after the end, the end position is held with zero velocity
    q, dq = queue.evaluate(T + 1e-9)
    assert q.tolist() == [1.0, -0.5] and dq.tolist() == [0.0, 0.0]
    assert not queue.active(T) and queue.active(T - 1e-6)


def test_set_milestone_mid_motion_is_continuous_in_position_and_velocity():
    vmax, amax = np.array([1.0, 1.5]), np.array([2.0, 1.0])
    queue = MotionQueue(2, vmax, amax)
    queue.reset([0.0, 0.0], 0.0)
    queue.set_milestone(0.0, [2.0, 1.0])
    t_switch = 0.7005
    ts_before = t_switch - H * np.arange(200, 0, -1)
    states = [queue.evaluate(t) for t in ts_before]
    before = queue.evaluate(t_switch)
    assert np.all(np.abs(before[1]) > 0.1)
    queue.set_milestone(t_switch, [-1.0, 0.5])
    after = queue.evaluate(t_switch)
    np.testing.assert_array_equal(after[0], before[0])
    np.testing.assert_array_equal(after[1], before[1])
    ts_after = t_switch + H * np.arange(math.ceil((queue.end_time() - t_switch) / H) + 1)
    states += [queue.evaluate(t) for t in ts_after]
    q, dq = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    assert_within_bounds(q, dq, vmax, amax)
    q, dq = queue.evaluate(queue.end_time())
    assert q.tolist() == [-1.0, 0.5] and dq.tolist() == [0.0, 0.0]


def test_milestone_from_above_the_velocity_bound_brakes_at_the_acceleration_bound():
    queue = MotionQueue(1, [1.0], [2.0])
    queue.reset([0.0], 0.0)
    queue.set_velocity(0.0, [3.0], 5.0)       # velocity commands are not bounded
    queue.set_milestone(1.0, [4.0])
    _, q, dq = sample(queue, 1.0, queue.end_time())
    fast = dq[:, 0] > 1.0
    assert fast[0] and np.all(np.diff(dq[fast, 0]) < 0.0)
    assert np.all(np.abs(dq[~fast]) <= 1.0 * (1 + 1e-12))
    assert np.all(np.abs(np.diff(dq, axis=0)) / H <= 2.0 * (1 + 1e-9))
    assert queue.evaluate(queue.end_time())[0].tolist() == [4.0]


def test_add_milestone_chains_segments_end_to_start():
    queue = MotionQueue(1, [1.0], [1.0])
    queue.reset([0.0], 0.0)
    queue.add_milestone([3.0])
    t1 = queue.end_time()
    queue.add_milestone([2.5])
    T1, T2 = rest_to_rest_time(3.0, 1.0, 1.0), rest_to_rest_time(0.5, 1.0, 1.0)
    assert t1 == pytest.approx(T1, rel=1e-12)
    assert queue.end_time() == pytest.approx(T1 + T2, rel=1e-12)
    q, dq = queue.evaluate(t1)
    assert q.tolist() == [3.0] and dq.tolist() == [0.0]
    _, q, dq = sample(queue, 0.0, queue.end_time())
    assert_within_bounds(q, dq, [1.0], [1.0])
    assert queue.evaluate(queue.end_time())[0].tolist() == [2.5]


def test_add_milestone_linear_from_rest_moves_on_the_line_in_the_optimal_time():
    vmax, amax = np.array([1.0, 0.5, 2.0]), np.array([1.0, 2.0, 0.5])
    q0, q1 = np.array([0.0, 0.2, -0.3]), np.array([1.0, -0.6, 0.9])
    queue = MotionQueue(3, vmax, amax)
    queue.reset(q0, 0.0)
    queue.add_milestone_linear(q1)
    d = q1 - q0
    v_s, a_s = np.min(vmax / np.abs(d)), np.min(amax / np.abs(d))
    assert queue.end_time() == pytest.approx(rest_to_rest_time(1.0, v_s, a_s), rel=1e-12)
    _, q, dq = sample(queue, 0.0, queue.end_time())
    assert np.max(line_distance(q, q0, q1)) < 1e-9
    assert_within_bounds(q, dq, vmax, amax)
    assert queue.end_state()[0].tolist() == q1.tolist()


def test_add_milestone_linear_from_motion_stops_first_then_follows_the_line():
    vmax, amax = np.array([1.0, 1.0]), np.array([2.0, 1.0])
    queue = MotionQueue(2, vmax, amax)
    queue.reset([0.0, 0.0], 0.0)
    queue.add_milestone([1.0, 0.5], [0.6, 0.3])
    t_end = queue.end_time()
    queue.add_milestone_linear([0.0, 1.0])
    # stopping together at the slowest joint's braking time, decelerating uniformly
    t_stop = max(0.6 / 2.0, 0.3 / 1.0)
    q_stop = np.array([1.0, 0.5]) + np.array([0.6, 0.3]) * t_stop / 2
    q, dq = queue.evaluate(t_end + t_stop)
    np.testing.assert_allclose(q, q_stop, atol=1e-12)
    assert np.all(dq == 0.0)
    _, q, dq = sample(queue, 0.0, queue.end_time())
    assert_within_bounds(q, dq, vmax, amax)
    _, q_line, _ = sample(queue, t_end + t_stop, queue.end_time())
    assert np.max(line_distance(q_line, q_stop, np.array([0.0, 1.0]))) < 1e-9


def test_set_linear_interpolates_at_constant_velocity_then_holds():
    queue = MotionQueue(2, [1.0, 1.0], [1.0, 1.0])
    queue.reset([0.5, -1.0], 0.0)
    q0, q1, t0, dt = np.array([0.5, -1.0]), np.array([2.5, 4.0]), 0.25, 2.0
    queue.set_linear(t0, q1, dt)   # not bounded by vmax (velocity 1, 2.5)
    for t in np.linspace(t0, t0 + dt, 7):
        q, dq = queue.evaluate(t)
        np.testing.assert_allclose(q, q0 + (q1 - q0) * (t - t0) / dt, rtol=0, atol=1e-14)
        np.testing.assert_allclose(dq, (q1 - q0) / dt, rtol=1e-15)
    for t in (t0 + dt + 1e-9, t0 + dt + 3.0):
        q, dq = queue.evaluate(t)
        assert q.tolist() == q1.tolist() and dq.tolist() == [0.0, 0.0]


def test_set_cubic_follows_the_hermite_polynomial_from_the_current_state():
    queue = MotionQueue(2, [1.0, 1.0], [1.0, 1.0])
    queue.reset([0.0, 1.0], 0.0)
    queue.set_velocity(0.0, [0.4, -0.2], 10.0)
    t0, dt = 0.5, 1.5
    p0, v0 = queue.evaluate(t0)
    p1, v1 = np.array([1.0, 2.0]), np.array([-0.3, 0.7])
    queue.set_cubic(t0, p1, v1, dt)
    for t in np.linspace(t0, t0 + dt, 9):
        q, dq = queue.evaluate(t)
        q_ref, dq_ref = hermite(t - t0, p0, v0, p1, v1, dt)
        np.testing.assert_allclose(q, q_ref, rtol=0, atol=1e-13)
        np.testing.assert_allclose(dq, dq_ref, rtol=0, atol=1e-13)
    q, dq = queue.evaluate(t0 + dt)
    assert q.tolist() == p1.tolist() and dq.tolist() == v1.tolist()
    q, dq = queue.evaluate(t0 + dt + 0.1)
    assert q.tolist() == p1.tolist() and dq.tolist() == [0.0, 0.0]


def test_add_linear_and_add_cubic_chain_from_the_end_state():
    queue = MotionQueue(1, [1.0], [1.0])
    queue.reset([0.0], 0.0)
    queue.add_cubic([1.0], [0.5], 2.0)
    queue.add_cubic([0.0], [0.0], 1.0)
    queue.add_linear([3.0], 0.5)
    assert queue.end_time() == 3.5
    q, dq = queue.evaluate(2.6)
    q_ref, dq_ref = hermite(0.6, 1.0, 0.5, 0.0, 0.0, 1.0)
    assert q[0] == pytest.approx(q_ref, abs=1e-14) and dq[0] == pytest.approx(dq_ref, abs=1e-14)
    q, dq = queue.evaluate(3.25)
    assert q[0] == pytest.approx(1.5, abs=1e-14) and dq[0] == pytest.approx(6.0, abs=1e-14)


def test_set_velocity_moves_at_constant_velocity_then_holds_and_counts_down():
    queue = MotionQueue(3, [1.0] * 3, [1.0] * 3)
    queue.reset([0.1, 0.2, 0.3], 0.0)
    q0, v, t0, dt = np.array([0.1, 0.2, 0.3]), np.array([0.5, -1.0, 0.0]), 2.0, 0.8
    queue.set_velocity(t0, v, dt)
    for t in np.linspace(t0, t0 + dt, 5):
        q, dq = queue.evaluate(t)
        np.testing.assert_allclose(q, q0 + v * (t - t0), rtol=0, atol=1e-15)
        np.testing.assert_array_equal(dq, v)
        assert queue.remaining_time(t) == pytest.approx(t0 + dt - t, abs=1e-15)
        assert queue.active(t) == (t < t0 + dt)
    for t in (t0 + dt + 0.01, t0 + 5.0):
        q, dq = queue.evaluate(t)
        np.testing.assert_allclose(q, q0 + v * dt, rtol=0, atol=1e-15)
        assert dq.tolist() == [0.0] * 3 and queue.remaining_time(t) == 0.0


def test_add_on_a_finished_queue_starts_at_the_last_time_seen_from_rest():
    queue = MotionQueue(1, [1.0], [1.0])
    queue.reset([0.0], 0.0)
    queue.set_cubic(0.0, [1.0], [0.5], 1.0)     # ends moving at 0.5 at t = 1
    queue.evaluate(4.0)                          # finished: holds [1.0] at rest
    queue.add_linear([2.0], 1.0)
    assert queue.end_time() == 5.0
    q, dq = queue.evaluate(4.0)
    assert q.tolist() == [1.0] and dq.tolist() == [1.0]
    q, dq = queue.evaluate(4.5)
    assert q[0] == pytest.approx(1.5, abs=1e-15)
    # not finished: the next segment starts at the end time from the end state
    queue.add_cubic([2.0], [0.0], 1.0)
    assert queue.end_time() == 6.0
    queue.add_milestone([0.0])
    assert queue.evaluate(6.0)[0].tolist() == [2.0]


def test_finished_segments_are_discarded_while_appending():
    queue = MotionQueue(1, [1.0], [1.0])
    queue.reset([0.0], 0.0)
    for k in range(200):
        queue.add_linear([float(k + 1)], 0.1)
        queue.evaluate(0.1 * k + 0.05)
    assert len(queue.get_state()["segments"]) <= 2
    q, dq = queue.evaluate(19.95)
    assert q[0] == pytest.approx(199.5, abs=1e-9) and dq[0] == pytest.approx(10.0)


def full_queue():
    """A queue with every segment kind, mid-way through its motion."""
    queue = MotionQueue(3, [1.0, 0.8, 1.2], [2.0, 1.0, 1.5])
    queue.reset([0.0, 0.1, -0.2], 0.0)
    queue.set_milestone(0.0, [0.5, -0.5, 1.0], [0.3, 0.0, -0.4])
    queue.add_milestone_linear([1.0, 1.0, 1.0])
    queue.add_cubic([0.0, 0.0, 0.0], [0.1, 0.2, 0.3], 0.7)
    queue.add_linear([0.5, 0.5, 0.5], 0.3)
    queue.add_milestone([0.2, 0.1, 0.0])
    queue.evaluate(0.4)
    return queue


@pytest.mark.parametrize("through_pickle", [False, True])
def test_state_round_trip_rebuilds_a_bit_identical_queue(through_pickle):
    original = full_queue()
    state = original.get_state()
    if through_pickle:
        state = pickle.loads(pickle.dumps(state))
    copy = MotionQueue(3, [9.0] * 3, [9.0] * 3)
    copy.set_state(state)
    assert copy.get_state() == original.get_state()
    kinds = [seg["kind"] for seg in state["segments"]]
    assert kinds == ["milestone", "stop", "line", "cubic", "ramp", "milestone"]
    ends = [seg["t1"] for seg in state["segments"]]
    times = np.concatenate([np.linspace(-1.0, original.end_time() + 1.0, 2001), ends])
    for t in times:
        for a, b in zip(original.evaluate(t), copy.evaluate(t)):
            assert a.tobytes() == b.tobytes()
    # same later behaviour: the limits and the last time seen were restored too
    t_later = original.end_time() + 0.5
    for queue in (original, copy):
        queue.evaluate(t_later)
        queue.add_milestone([1.0, 2.0, 3.0])
    assert copy.end_time() == original.end_time()
    assert copy.evaluate(copy.end_time() - 0.3)[0].tobytes() == \
        original.evaluate(original.end_time() - 0.3)[0].tobytes()


def test_set_state_rejects_a_segment_that_re_solves_differently():
    queue = full_queue()
    state = queue.get_state()
    state["segments"][0]["t1"] += 1e-9
    before = queue.get_state()
    with pytest.raises(ValueError, match="set_state: a milestone segment re-solves"):
        queue.set_state(state)
    assert queue.get_state() == before


NAN = float("nan")
BAD_CALLS = [
    ("set_milestone", lambda m: m.set_milestone(0.5, [NAN, 0.0])),
    ("set_milestone", lambda m: m.set_milestone(0.5, [1.0, 0.0, 0.0])),
    ("set_milestone", lambda m: m.set_milestone(NAN, [1.0, 0.0])),
    ("set_milestone", lambda m: m.set_milestone(0.5, [1.0, 0.0], [2.0, 0.0])),
    ("add_milestone", lambda m: m.add_milestone([1.0, math.inf])),
    ("add_milestone", lambda m: m.add_milestone([1.0, 0.0], [0.0])),
    ("add_milestone_linear", lambda m: m.add_milestone_linear([1.0])),
    ("set_linear", lambda m: m.set_linear(0.5, [1.0, 0.0], 0.0)),
    ("set_linear", lambda m: m.set_linear(0.5, [1.0, 0.0], -1.0)),
    ("add_linear", lambda m: m.add_linear([1.0, 0.0], NAN)),
    ("set_cubic", lambda m: m.set_cubic(0.5, [1.0, 0.0], [0.0, NAN], 1.0)),
    ("add_cubic", lambda m: m.add_cubic([1.0, 0.0], [0.0, 0.0], 0.0)),
    ("set_velocity", lambda m: m.set_velocity(0.5, [1.0, 0.0], math.inf)),
    ("set_velocity", lambda m: m.set_velocity(0.5, "fast", 1.0)),
    ("set_limits", lambda m: m.set_limits([1.0, 0.0], [1.0, 1.0])),
    ("set_limits", lambda m: m.set_limits([1.0, 1.0], [1.0, -2.0])),
    ("set_limits", lambda m: m.set_limits([1.0, math.inf], [1.0, 1.0])),
    ("reset", lambda m: m.reset([0.0, 0.0], NAN)),
    ("evaluate", lambda m: m.evaluate(NAN)),
    ("set_state", lambda m: m.set_state({"version": 1})),
]


@pytest.mark.parametrize("method, call", BAD_CALLS)
def test_bad_input_raises_and_leaves_the_queue_unchanged(method, call):
    queue = MotionQueue(2, [1.0, 1.0], [1.0, 1.0])
    queue.reset([0.0, 0.0], 0.0)
    queue.set_milestone(0.0, [1.0, -1.0])
    queue.add_cubic([0.0, 0.0], [0.2, 0.0], 1.0)
    queue.evaluate(0.25)
    before = queue.get_state()
    with pytest.raises(ValueError, match=f"^{method}: "):
        call(queue)
    assert queue.get_state() == before


@pytest.mark.parametrize("vmax, amax", [([1.0, math.inf], [1.0, 1.0]), ([1.0], [1.0, 1.0]),
                                        ([1.0, 1.0], [0.0, 1.0])])
def test_constructor_requires_positive_finite_bounds(vmax, amax):
    with pytest.raises(ValueError, match="^MotionQueue: "):
        MotionQueue(2, vmax, amax)


# -- rotation blocks (spherical joints): a quaternion in q, an angular velocity in v -------------
def quat_about(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.array([*(axis * math.sin(angle / 2)), math.cos(angle / 2)])


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz])


def relative_rotation(q_a, q_b):
    """Rotation vector (child axes of a) of conj(q_a) q_b, the shorter way round."""
    rel = quat_mul([-q_a[0], -q_a[1], -q_a[2], q_a[3]], q_b)
    rel = rel if rel[3] >= 0 else -rel
    n = np.linalg.norm(rel[:3])
    return np.zeros(3) if n == 0 else 2 * math.atan2(n, rel[3]) * rel[:3] / n


def ball_and_slider():
    """A queue over a spherical joint (q 0..3, v 0..2) followed by a scalar joint (q 4, v 3)."""
    return MotionQueue(4, [1.0, 1.0, 1.0, 0.5], [2.0, 2.0, 2.0, 1.0], rotations=[(0, 0)])


def test_rotations_move_along_the_geodesic_on_a_line_at_the_angular_velocity_of_the_slope():
    queue = ball_and_slider()
    Q0, Q1 = quat_about([1, 2, 0.5], 0.4), quat_about([-0.3, 0.2, 1.0], 1.9)
    queue.reset([*Q0, 0.1], 0.0)
    queue.add_milestone_linear([*Q1, -0.4])
    axis_angle = relative_rotation(Q0, Q1)
    theta = np.linalg.norm(axis_angle)
    ts, q, dq = sample(queue, 0.0, queue.end_time())
    # slerp: the rotation from the start has the fixed axis, and the scalar keeps in step
    s = np.array([np.linalg.norm(relative_rotation(Q0, qi[:4])) for qi in q]) / theta
    for qi, si in zip(q, s):
        np.testing.assert_allclose(relative_rotation(Q0, qi[:4]), si * axis_angle, atol=1e-12)
    np.testing.assert_allclose(q[:, 4], 0.1 + s * (-0.5), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(q[:, :4], axis=1), 1.0, atol=1e-14)
    # the angular velocity is along the axis at the rate of the angle, within the bounds
    np.testing.assert_allclose(dq[:, :3], np.outer(np.gradient(s, ts), axis_angle), atol=5e-3)
    assert np.all(np.abs(dq) <= np.array([1.0, 1.0, 1.0, 0.5]) * (1 + 1e-12))
    assert queue.end_state()[0].tolist() == [*Q1, -0.4]


def test_a_velocity_command_turns_a_rotation_at_a_constant_body_rate():
    queue = ball_and_slider()
    Q0, w = quat_about([0, 0, 1], 0.3), np.array([0.2, -0.4, 0.6])
    queue.reset([*Q0, 0.0], 0.0)
    queue.set_velocity(0.0, [*w, 0.25], 2.0)
    for t in (0.5, 1.3, 2.0, 3.0):
        q, dq = queue.evaluate(t)
        tau = min(t, 2.0)
        angle = np.linalg.norm(w) * tau
        np.testing.assert_allclose(q[:4], quat_mul(Q0, quat_about(w, angle)), atol=1e-14)
        assert q[4] == pytest.approx(0.25 * tau, abs=1e-15)
        np.testing.assert_allclose(dq, [*w, 0.25] if t <= 2.0 else np.zeros(4), atol=1e-15)


def test_a_cubic_reaches_its_target_rotation_with_its_target_angular_velocity():
    queue = ball_and_slider()
    Q0, Q1 = quat_about([1, 0, 0], 0.2), quat_about([0, 1, 1], 1.2)
    v0, v1 = np.array([0.3, 0.0, -0.2, 0.1]), np.array([-0.5, 0.4, 0.2, 0.0])
    queue.reset([*Q0, 0.0], 0.0)
    queue.set_velocity(0.0, v0, 10.0)           # moving at v0 when the cubic starts
    queue.set_cubic(0.0, [*Q1, 0.3], v1, 1.5)
    q, dq = queue.evaluate(1.5 - 1e-7)
    assert np.linalg.norm(relative_rotation(q[:4], Q1)) < 1e-6
    np.testing.assert_allclose(dq, v1, atol=1e-5)
    q, dq = queue.evaluate(1e-7)
    np.testing.assert_allclose(dq, v0, atol=1e-5)
    ts, q, dq = sample(queue, 0.0, 1.5)
    # the angular velocity is the derivative of the orientation: q(t + h) = q(t) exp(w h)
    for k in range(0, len(ts) - 1, 97):
        np.testing.assert_allclose(relative_rotation(q[k, :4], q[k + 1, :4]) / H,
                                   0.5 * (dq[k, :3] + dq[k + 1, :3]), atol=1e-4)


def test_rotation_queues_round_trip_their_state_and_refuse_zero_quaternions():
    queue = ball_and_slider()
    queue.reset([*quat_about([1, 1, 1], 0.5), 0.0], 0.0)
    queue.set_milestone(0.0, [*quat_about([0, 1, 0], -2.5), 1.0], [0.1, 0.2, 0.0, 0.0])
    queue.add_linear([*quat_about([1, 0, 0], 1.0), 0.0], 0.7)
    copy = ball_and_slider()
    copy.set_state(pickle.loads(pickle.dumps(queue.get_state())))
    for t in np.linspace(0, queue.end_time() + 0.5, 37):
        a, b = queue.evaluate(t), copy.evaluate(t)
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    with pytest.raises(ValueError, match="zero quaternion"):
        queue.set_milestone(0.0, [0.0, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_allclose(queue.difference([*quat_about([0, 0, 1], 0.2), 1.0],
                                                [*quat_about([0, 0, 1], -0.5), 3.0]),
                               [0, 0, -0.7, 2.0], atol=1e-15)
