"""sim_node.math.spline against klampt.math.spline 0.10.1 on seeded curves, and the curves'
defining properties: end points and tangents, subdivision, Bezier/Hermite conversion."""
import json

import numpy as np
import pytest

from klampt_reference import run_klampt
from sim_node.math import spline


def test_every_spline_function_matches_klampt(tmp_path):
    rng = np.random.default_rng(6)
    cases = [(rng.normal(size=(4, 3)).tolist(), float(rng.uniform(0, 1)),
              float(rng.uniform(0.2, 1.0))) for _ in range(25)]
    (tmp_path / "c.json").write_text(json.dumps(cases))
    ref = run_klampt(f"""
from klampt.math import spline
out = []
for (x1, v1, x2, v2), u, res in json.load(open({str(tmp_path / 'c.json')!r})):
    out.append([spline.hermite_eval(x1, v1, x2, v2, u),
                [spline.hermite_deriv(x1, v1, x2, v2, u, order=k) for k in range(5)],
                spline.hermite_subdivide(x1, v1, x2, v2, u),
                spline.hermite_length_bound(x1, v1, x2, v2),
                spline.hermite_to_bezier(x1, v1, x2, v2),
                spline.bezier_subdivide(x1, v1, x2, v2, u),
                spline.bezier_length_bound(x1, v1, x2, v2),
                spline.bezier_discretize(x1, v1, x2, v2, res, return_params=True),
                spline.bezier_to_hermite(x1, v1, x2, v2)])
emit(out)
""", tmp_path)
    for ((x1, v1, x2, v2), u, res), r in zip(cases, ref):
        ours = [spline.hermite_eval(x1, v1, x2, v2, u),
                [spline.hermite_deriv(x1, v1, x2, v2, u, order=k) for k in range(5)],
                spline.hermite_subdivide(x1, v1, x2, v2, u),
                spline.hermite_length_bound(x1, v1, x2, v2),
                spline.hermite_to_bezier(x1, v1, x2, v2),
                spline.bezier_subdivide(x1, v1, x2, v2, u),
                spline.bezier_length_bound(x1, v1, x2, v2),
                spline.bezier_discretize(x1, v1, x2, v2, res, return_params=True),
                spline.bezier_to_hermite(x1, v1, x2, v2)]
        assert _close(json.loads(json.dumps(ours)), r)


def _close(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))


def test_hermite_end_points_tangents_and_bezier_form():
    rng = np.random.default_rng(1)
    x1, v1, x2, v2 = rng.normal(size=(4, 3)).tolist()
    assert spline.hermite_eval(x1, v1, x2, v2, 0.0) == pytest.approx(x1)
    assert spline.hermite_eval(x1, v1, x2, v2, 1.0) == pytest.approx(x2)
    assert spline.hermite_deriv(x1, v1, x2, v2, 0.0) == pytest.approx(v1)
    assert spline.hermite_deriv(x1, v1, x2, v2, 1.0) == pytest.approx(v2)
    back = spline.bezier_to_hermite(*spline.hermite_to_bezier(x1, v1, x2, v2))
    assert np.allclose(back, [x1, v1, x2, v2], atol=1e-14)
    first, second = spline.hermite_subdivide(x1, v1, x2, v2, 0.3)
    assert spline.hermite_eval(*first, 0.5) == pytest.approx(
        spline.hermite_eval(x1, v1, x2, v2, 0.15), abs=1e-14)
    assert spline.hermite_eval(*second, 0.5) == pytest.approx(
        spline.hermite_eval(x1, v1, x2, v2, 0.65), abs=1e-14)
    path, params = spline.bezier_discretize(x1, v1, x2, v2, 0.05, return_params=True)
    assert params[0] == 0.0 and params[-1] == 1.0 and len(path) == 3 * (len(params) - 1) + 1


def test_mismatched_lengths_and_bad_resolution_are_value_errors():
    with pytest.raises(ValueError, match="one length"):
        spline.hermite_eval([0.0], [0.0, 1.0], [1.0], [0.0], 0.5)
    with pytest.raises(ValueError, match="res must be positive"):
        spline.bezier_discretize([0.0], [1.0], [2.0], [3.0], 0.0)
