"""sim_node.math.geodesic: every space's difference and integrate invert each other, distances
are the tangents' lengths and interpolation runs along the geodesic; against klampt 0.10.1's
geodesic module where Klamp't is self-consistent (Cartesian, SO2, products; SO3 and SE3 points
and distances), and its documented tangents where it is not."""
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from klampt_reference import run_klampt
from sim_node.math import so3, vectorops
from sim_node.math.geodesic import (CartesianSpace, MultiGeodesicSpace, SE3Space, SO2Space,
                                    SO3Space)

quaternions = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
    lambda q: sum(x * x for x in q) > 1e-2)
rotations = quaternions.map(lambda q: so3.from_quaternion(
    [x / math.sqrt(sum(y * y for y in q)) for x in q]))
vec3 = st.lists(st.floats(-10, 10), min_size=3, max_size=3)
transforms = st.tuples(rotations, vec3).map(lambda rt: rt[0] + rt[1])


def spaces_and_points():
    return st.one_of(
        st.tuples(st.just(CartesianSpace(3)), vec3, vec3),
        st.tuples(st.just(SO2Space()), st.lists(st.floats(0, 6.28), min_size=1, max_size=1),
                  st.lists(st.floats(0, 6.28), min_size=1, max_size=1)),
        st.tuples(st.just(SO3Space()), rotations, rotations),
        st.tuples(st.just(SE3Space()), transforms, transforms),
        st.tuples(st.just(MultiGeodesicSpace(SO3Space(), CartesianSpace(2))),
                  st.tuples(rotations, st.lists(st.floats(-5, 5), min_size=2, max_size=2))
                  .map(lambda x: x[0] + x[1]),
                  st.tuples(rotations, st.lists(st.floats(-5, 5), min_size=2, max_size=2))
                  .map(lambda x: x[0] + x[1])))


@given(spaces_and_points(), st.floats(0, 1))
def test_integrate_undoes_difference_and_interpolation_is_geodesic(space_a_b, u):
    space, a, b = space_a_b
    assert len(a) == space.extrinsicDimension()
    d = space.difference(a, b)
    assert space.integrate(b, d) == pytest.approx(a, abs=1e-9)
    x = space.interpolate(a, b, u)
    total = space.distance(a, b)
    if total < math.pi - 1e-3 or isinstance(space, (CartesianSpace, SO2Space)):
        assert space.distance(a, x) == pytest.approx(u * total, abs=1e-8)
        assert space.distance(x, b) == pytest.approx((1 - u) * total, abs=1e-8)


@given(rotations, rotations)
def test_so3_tangent_is_the_world_angular_velocity(a, b):
    """difference(a, b) = [w] with a = exp([w]) b: the d/du at 0 of interpolate(b, a, u)
    times b^T (Klamp't 0.10.1 documents this and returns [R_b w])."""
    space = SO3Space()
    w = so3.deskew(space.difference(a, b))
    assert so3.mul(so3.from_moment(w), b) == pytest.approx(a, abs=1e-9)
    assert space.distance(a, b) == pytest.approx(vectorops.norm(w), abs=1e-12)
    if vectorops.norm(w) < math.pi - 1e-3:
        h = 1e-7
        dR = vectorops.mul(vectorops.sub(space.interpolate(b, a, h), b), 1 / h)
        assert so3.deskew(so3.mul(dR, so3.inv(b))) == pytest.approx(w, abs=1e-5)


def test_points_and_distances_match_klampt(tmp_path):
    rng = np.random.default_rng(12)
    cases = []
    for _ in range(30):
        R1, R2 = (so3.from_quaternion((q / np.linalg.norm(q)).tolist())
                  for q in rng.normal(size=(2, 4)))
        t1, t2 = rng.normal(size=(2, 3)).tolist()
        u = float(rng.uniform(-0.2, 1.2))
        cases.append((R1, R2, t1, t2, u, rng.uniform(0, 6.3, size=2).tolist()))
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    ref = run_klampt(f"""
from klampt.math.geodesic import SO3Space, SE3Space, SO2Space, MultiGeodesicSpace, CartesianSpace
out = []
for R1, R2, t1, t2, u, (a, b) in json.load(open({str(tmp_path / 'cases.json')!r})):
    multi = MultiGeodesicSpace(SO2Space(), CartesianSpace(3))
    out.append([SO3Space().interpolate(R1, R2, u), SO3Space().distance(R1, R2),
                SE3Space().interpolate(R1 + t1, R2 + t2, u), SE3Space().distance(R1 + t1, R2 + t2),
                SO2Space().interpolate([a], [b], u), SO2Space().difference([a], [b]),
                SO2Space().integrate([a], [u]), multi.distance([a] + t1, [b] + t2),
                multi.interpolate([a] + t1, [b] + t2, u), multi.difference([a] + t1, [b] + t2)])
emit(out)
""", tmp_path)
    for (R1, R2, t1, t2, u, (a, b)), r in zip(cases, ref):
        multi = MultiGeodesicSpace(SO2Space(), CartesianSpace(3))
        ours = [SO3Space().interpolate(R1, R2, u), SO3Space().distance(R1, R2),
                SE3Space().interpolate(R1 + t1, R2 + t2, u),
                SE3Space().distance(R1 + t1, R2 + t2),
                SO2Space().interpolate([a], [b], u), SO2Space().difference([a], [b]),
                SO2Space().integrate([a], [u]), multi.distance([a] + t1, [b] + t2),
                multi.interpolate([a] + t1, [b] + t2, u), multi.difference([a] + t1, [b] + t2)]
        for o, k in zip(ours, r):
            assert np.allclose(o, k, rtol=0, atol=1e-12)
    assert len(ref) == 30


def test_multi_space_splits_and_joins():
    space = MultiGeodesicSpace(SO2Space(), CartesianSpace(2))
    assert space.split([1.0, 2.0, 3.0]) == [[1.0], [2.0, 3.0]]
    assert space.join([[1.0], [2.0, 3.0]]) == [1.0, 2.0, 3.0]
    assert space.intrinsicDimension() == 3 and space.extrinsicDimension() == 3
    space.componentWeights = [4.0, 1.0]
    assert space.distance([0.0, 0, 0], [0.5, 0, 0]) == pytest.approx(1.0)


def test_se3_integrate_refuses_wrong_lengths():
    with pytest.raises(ValueError, match="12 numbers"):
        SE3Space().integrate([0.0] * 12, [0.0] * 9)
