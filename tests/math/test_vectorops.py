"""sim_node.math.vectorops against klampt.math.vectorops 0.10.1 (every function on seeded
random vectors, return forms included), its identities, and wrong lengths."""
import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from klampt_calls import call_ours, klampt_results, mismatch
from sim_node.math import se3, so2, so3, vectorops

MODULES = dict(vectorops=vectorops, so3=so3, se3=se3, so2=so2)


def vectorops_calls():
    rng = np.random.default_rng(7)
    calls = []
    for n in (1, 2, 3, 5, 9):
        for _ in range(12):
            a, b, c = (rng.normal(size=n).tolist() for _ in range(3))
            s = float(rng.normal())
            calls += [("vectorops", "add", [a, b, c]), ("vectorops", "add", [a]),
                      ("vectorops", "madd", [a, b, s]), ("vectorops", "sub", [a, b]),
                      ("vectorops", "sub", [a, s]), ("vectorops", "mul", [a, b]),
                      ("vectorops", "mul", [a, s]), ("vectorops", "div", [a, b]),
                      ("vectorops", "div", [a, s]), ("vectorops", "maximum", [a, b]),
                      ("vectorops", "maximum", [a, s]), ("vectorops", "minimum", [a, b]),
                      ("vectorops", "minimum", [a, s]), ("vectorops", "dot", [a, b]),
                      ("vectorops", "normSquared", [a]), ("vectorops", "norm", [a]),
                      ("vectorops", "norm_L2", [a]), ("vectorops", "norm_L1", [a]),
                      ("vectorops", "norm_Linf", [a]), ("vectorops", "unit", [a]),
                      ("vectorops", "unit", [[x * 1e-7 for x in a]]),
                      ("vectorops", "distanceSquared", [a, b]), ("vectorops", "distance", [a, b]),
                      ("vectorops", "interpolate", [a, b, s])]
            if n in (2, 3):
                calls.append(("vectorops", "cross", [a, b]))
    calls += [("vectorops", "add", []), ("so2", "identity", [])]
    for _ in range(30):
        a, b, u = (float(x) for x in rng.uniform(-10, 10, size=3))
        pt = rng.normal(size=2).tolist()
        calls += [("so2", "inv", [a]), ("so2", "apply", [a, pt]), ("so2", "normalize", [a]),
                  ("so2", "diff", [a, b]), ("so2", "interp", [a, b, u / 10]),
                  ("so2", "compose", [a, b]), ("so2", "matrix", [a]),
                  ("so2", "from_matrix", [[[math.cos(a), -math.sin(a)],
                                           [math.sin(a), math.cos(a)]]]),
                  ("so2", "ndarray", [a])]
    return calls


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    calls = vectorops_calls()
    return calls, klampt_results(calls, tmp_path_factory.mktemp("vectorops"))


def test_every_vectorops_and_so2_function_matches_klampt(reference):
    calls, results = reference
    for module in (vectorops, so2):
        public = {n for n in dir(module) if not n.startswith("_")
                  and callable(getattr(module, n)) and not isinstance(getattr(module, n), type)}
        tried = {c[1] for c in calls if c[0] == module.__name__.split(".")[-1]}
        assert public - tried <= {"from_ndarray"}, public - tried
    failures = [f"{m}.{name}{d}" for (m, name, args), ref in zip(calls, results)
                if (d := mismatch(call_ours(MODULES, m, name, args), ref))]
    assert len(calls) > 1300
    assert not failures, f"{len(failures)} of {len(calls)} differ:\n" + "\n".join(failures[:20])


vectors = st.integers(1, 6).flatmap(lambda n: st.tuples(
    *[st.lists(st.floats(-1e3, 1e3), min_size=n, max_size=n) for _ in range(3)]))


@given(vectors, st.floats(-10, 10))
def test_linear_identities(abc, s):
    a, b, c = abc
    assert vectorops.add(a, b) == pytest.approx(vectorops.add(b, a))
    assert vectorops.sub(vectorops.add(a, b), b) == pytest.approx(a, abs=1e-9)
    assert vectorops.madd(a, b, s) == pytest.approx(vectorops.add(a, vectorops.mul(b, s)))
    assert vectorops.interpolate(a, b, 0) == pytest.approx(a)
    assert vectorops.interpolate(a, b, 1) == pytest.approx(b, abs=1e-9)
    assert vectorops.distance(a, b) == pytest.approx(vectorops.norm(vectorops.sub(a, b)))
    assert vectorops.dot(a, a) == pytest.approx(vectorops.normSquared(a))
    # (the norm squares its entries: below 1e-154 they underflow, as in Klamp't)
    assert vectorops.norm_Linf(a) <= vectorops.norm(a) * (1 + 1e-12) + 1e-150
    assert vectorops.norm(a) <= vectorops.norm_L1(a) * (1 + 1e-12)
    assert vectorops.dot(a, vectorops.add(b, c)) == pytest.approx(
        vectorops.dot(a, b) + vectorops.dot(a, c), abs=1e-6)


@given(st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3),
       st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=3))
@example(a=[0.0, 0.0, 7.389975502268987e-198], b=[3.0, 9.0, 0.0])
def test_cross_is_orthogonal_to_both(a, b):
    c = vectorops.cross(a, b)
    assert isinstance(c, tuple)
    # max-abs norms: vectorops.norm squares its entries, which underflow to 0 below 1e-154
    # (a hypothesis draw of a = (0, 0, 7.4e-198) made the bound 0)
    na, nb = 3 * max(map(abs, a)), 3 * max(map(abs, b))
    scale = na * nb * (na + nb)
    assert abs(vectorops.dot(c, a)) <= 1e-12 * scale + 1e-300
    assert abs(vectorops.dot(c, b)) <= 1e-12 * scale + 1e-300


def test_numpy_vectors_are_accepted_and_give_lists():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    assert vectorops.add(a, b) == [1.5, 1.0, 5.0]
    assert vectorops.sub(a, 1.0) == [0.0, 1.0, 2.0]
    assert vectorops.cross(a, b) == (7.0, -0.5, -2.0)


@pytest.mark.parametrize("call", [
    lambda: vectorops.add([1, 2], [1, 2, 3]), lambda: vectorops.madd([1, 2], [1], 2.0),
    lambda: vectorops.sub([1, 2], [1]), lambda: vectorops.mul([1], [1, 2]),
    lambda: vectorops.div([1], [1, 2]), lambda: vectorops.dot([1, 2], [1]),
    lambda: vectorops.distance([1, 2], [1]), lambda: vectorops.maximum([1, 2], [1]),
    lambda: vectorops.cross([1, 2, 3, 4], [1, 2, 3, 4]), lambda: vectorops.cross([1, 2], [1, 2, 3]),
])
def test_wrong_lengths_raise_a_value_error_that_klampt_code_also_catches(call):
    with pytest.raises(ValueError, match=r"vectorops\.\w+: ") as info:
        call()
    assert isinstance(info.value, RuntimeError)         # what Klamp't raises


def test_so2_apply_refuses_a_wrong_length():
    with pytest.raises(ValueError, match="2 numbers"):
        so2.apply(0.3, [1.0, 2.0, 3.0])
