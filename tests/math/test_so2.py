"""sim_node.math.so2 against klampt.math.so2 0.10.1 (every function on seeded angles), and its
identities."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from klampt_calls import call_ours, klampt_results, mismatch
from sim_node.math import se3, so2, so3, vectorops

MODULES = dict(vectorops=vectorops, so3=so3, se3=se3, so2=so2)


def so2_calls():
    rng = np.random.default_rng(3)
    calls = [("so2", "identity", [])]
    for _ in range(60):
        a, b, u = (float(x) for x in rng.uniform(-10, 10, size=3))
        pt = rng.normal(size=2).tolist()
        m = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
        calls += [("so2", "inv", [a]), ("so2", "apply", [a, pt]), ("so2", "normalize", [a]),
                  ("so2", "diff", [a, b]), ("so2", "interp", [a, b, u / 10]),
                  ("so2", "compose", [a, b]), ("so2", "matrix", [a]),
                  ("so2", "from_matrix", [m]), ("so2", "ndarray", [a])]
    return calls


def test_every_so2_function_matches_klampt(tmp_path):
    calls = so2_calls()
    results = klampt_results(calls, tmp_path)
    public = {n for n in dir(so2) if not n.startswith("_") and callable(getattr(so2, n))}
    assert public - {c[1] for c in calls} == {"from_ndarray"}      # = from_matrix
    failures = [f"so2.{name}{d}" for (m, name, args), ref in zip(calls, results)
                if (d := mismatch(call_ours(MODULES, m, name, args), ref))]
    assert not failures, "\n".join(failures[:20])


@given(st.floats(-100, 100), st.floats(-100, 100), st.floats(0, 1))
def test_interp_takes_the_shorter_arc(a, b, u):
    d = so2.diff(b, a)
    assert -math.pi <= d <= math.pi
    assert math.cos(a + d) == pytest.approx(math.cos(b), abs=1e-9)
    assert math.sin(a + d) == pytest.approx(math.sin(b), abs=1e-9)
    assert so2.interp(a, b, u) == pytest.approx(a + u * d)
    assert 0 <= so2.normalize(a) <= 2 * math.pi
    back = so2.from_ndarray(so2.ndarray(a))
    assert -math.pi <= back <= math.pi
    assert np.allclose(so2.matrix(back), so2.matrix(a), atol=1e-12)


def test_apply_refuses_a_wrong_length():
    with pytest.raises(ValueError, match="2 numbers"):
        so2.apply(0.3, [1.0, 2.0, 3.0])
