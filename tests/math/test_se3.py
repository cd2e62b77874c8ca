"""sim_node.math.se3 against klampt.math.se3 0.10.1 (every function on seeded random
transforms, return forms included), group identities (hypothesis) and wrong shapes."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from klampt_calls import call_ours, klampt_results, mismatch
from sim_node.math import se3, so2, so3, vectorops

MODULES = dict(vectorops=vectorops, so3=so3, se3=se3, so2=so2)


def random_transform(rng):
    q = rng.normal(size=4)
    return so3.from_quaternion((q / np.linalg.norm(q)).tolist()), rng.normal(size=3).tolist()


def se3_calls():
    rng = np.random.default_rng(31)
    transforms = [random_transform(rng) for _ in range(60)]
    transforms.append(([1.0, 0, 0, 0, -1.0, 0, 0, 0, -1.0], [1.0, 2.0, 3.0]))   # half turn
    calls = [("se3", "identity", [])]
    for T, T2 in zip(transforms, transforms[1:] + transforms[:1]):
        p = rng.normal(size=3).tolist()
        u = float(rng.uniform(-0.2, 1.2))
        w1, w2 = (float(x) for x in rng.uniform(0, 3, size=2))
        calls += [("se3", "inv", [T]), ("se3", "apply", [T, p]),
                  ("se3", "apply_rotation", [T, p]), ("se3", "rotation", [T]),
                  ("se3", "from_rotation", [so3.matrix(T[0])]), ("se3", "translation", [T]),
                  ("se3", "from_translation", [T[1]]), ("se3", "homogeneous", [T]),
                  ("se3", "from_homogeneous", [se3.homogeneous(T)]), ("se3", "ndarray", [T]),
                  ("se3", "from_ndarray", [se3.homogeneous(T)]), ("se3", "mul", [T, T2]),
                  ("se3", "distance", [T, T2]), ("se3", "distance", [T, T2, w1, w2]),
                  ("se3", "error", [T, T2]), ("se3", "interpolate", [T, T2, u]),
                  ("se3", "interpolator:", [T, T2, u])]
    return calls


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    calls = se3_calls()
    return calls, klampt_results(calls, tmp_path_factory.mktemp("se3"))


def test_every_se3_function_matches_klampt_on_random_transforms(reference):
    calls, results = reference
    public = {n for n in dir(se3) if not n.startswith("_") and callable(getattr(se3, n))
              and getattr(se3, n).__module__ == se3.__name__}
    assert public <= {c[1].rstrip(":") for c in calls}
    failures = [f"se3.{name}{d}" for (m, name, args), ref in zip(calls, results)
                if (d := mismatch(call_ours(MODULES, m, name, args), ref))]
    assert len(calls) > 1000
    assert not failures, f"{len(failures)} of {len(calls)} differ:\n" + "\n".join(failures[:20])


quaternions = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
    lambda q: sum(x * x for x in q) > 1e-2)
transforms = st.tuples(quaternions, st.lists(st.floats(-100, 100), min_size=3, max_size=3)).map(
    lambda qt: (so3.from_quaternion([x / math.sqrt(sum(y * y for y in qt[0])) for x in qt[0]]),
                qt[1]))
close = dict(rel=0, abs=1e-9)


def flat(T):
    return list(T[0]) + list(T[1])


@given(transforms, transforms, transforms)
def test_group_identities(T1, T2, T3):
    assert flat(se3.mul(se3.mul(T1, T2), T3)) == pytest.approx(flat(se3.mul(T1, se3.mul(T2, T3))),
                                                               **close)
    assert flat(se3.mul(T1, se3.inv(T1))) == pytest.approx(flat(se3.identity()), **close)
    p = [0.3, -1.0, 2.0]
    assert se3.apply(se3.mul(T1, T2), p) == pytest.approx(se3.apply(T1, se3.apply(T2, p)), **close)
    assert np.allclose(se3.ndarray(T1) @ np.append(p, 1.0), se3.apply(T1, p) + [1.0], atol=1e-9)
    assert flat(se3.from_homogeneous(se3.homogeneous(T1))) == flat(T1)


@given(transforms, transforms, st.floats(0, 1))
def test_interpolate_endpoints_and_error(T1, T2, u):
    assert flat(se3.interpolate(T1, T2, 0)) == pytest.approx(flat(T1), **close)
    if so3.distance(T1[0], T2[0]) < math.pi - 1e-6:
        assert flat(se3.interpolate(T1, T2, 1)) == pytest.approx(flat(T2), abs=1e-8)
    assert flat(se3.interpolator(T1, T2)(u)) == pytest.approx(flat(se3.interpolate(T1, T2, u)),
                                                              **close)
    e = se3.error(T1, T2)
    assert so3.mul(so3.from_moment(e[:3]), T2[0]) == pytest.approx(T1[0], **close)
    assert vectorops.add(e[3:], T2[1]) == pytest.approx(T1[1], **close)


def test_matrices_are_accepted_for_the_rotation():
    R = so3.from_rpy([0.3, -0.2, 1.0])
    T, Tm = (R, [1.0, 2.0, 3.0]), (np.array(so3.matrix(R)), np.array([1.0, 2.0, 3.0]))
    assert se3.apply(Tm, [1.0, 0, 0]) == se3.apply(T, [1.0, 0, 0])
    assert se3.mul(Tm, Tm) == se3.mul(T, T)


@pytest.mark.parametrize("call, message", [
    (lambda: se3.mul(se3.identity(), [1.0, 2.0, 3.0]), "did you mean apply"),
    (lambda: se3.apply(([1.0] * 8, [0, 0, 0]), [1, 2, 3]), "T's rotation must be a rotation"),
    (lambda: se3.inv((so3.identity(), [0, 0])), "T's translation must be 3 numbers"),
    (lambda: se3.apply(se3.identity(), [1, 2]), "point must be 3 numbers"),
    (lambda: se3.from_ndarray(np.eye(3)), "4x4"),
    (lambda: se3.inv(5), "got int"),
])
def test_wrong_shapes_are_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
