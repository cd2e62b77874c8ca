"""rotation_input: the one rule by which the API reads a rotation (a 3x3 matrix, or Klamp't's
column-major 9-list), against Klamp't's so3 layout and with hostile input."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim_node.math import so3
from sim_node.math.rotation_input import as_klampt, as_matrix, as_rotation

quaternions = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
    lambda q: sum(x * x for x in q) > 1e-2)


@given(quaternions)
def test_a_9_list_is_read_column_by_column_like_klampts_so3(q):
    R9 = so3.from_quaternion([x / math.sqrt(sum(y * y for y in q)) for x in q])
    M = np.array(so3.matrix(R9))
    for flat in (R9, tuple(R9), np.array(R9)):
        assert np.array_equal(as_matrix(flat), M) and np.array_equal(as_rotation(flat), M)
    assert np.array_equal(as_matrix(M), M) and np.array_equal(as_matrix(M.tolist()), M)
    assert as_klampt(M) == R9


@pytest.mark.parametrize("R, message", [
    ([1.0] * 8, r"got shape \(8,\)"), (np.eye(4), r"got shape \(4, 4\)"),
    (np.zeros((3, 2)), r"got shape \(3, 2\)"), ("abc", "got str"),
    ([[1, 0, 0], [0, 1]], "got list"), (None, r"got shape \(\)"),
])
def test_other_shapes_are_refused_naming_the_argument(R, message):
    with pytest.raises(ValueError, match="R_test: a rotation is a 3x3 matrix or Klamp't's "
                                         "column-major 9-list.*" + message):
        as_matrix(R, "R_test")


@pytest.mark.parametrize("R, message", [
    (np.eye(3) * 2, "not a rotation matrix"), (np.diag([1.0, 1.0, -1.0]), "not a rotation"),
    (np.full((3, 3), np.nan), "NaN or infinity"), ([math.inf] + [0.0] * 8, "NaN or infinity"),
])
def test_as_rotation_checks_orthonormality_and_handedness(R, message):
    with pytest.raises(ValueError, match="R_test: .*" + message):
        as_rotation(R, "R_test")
