"""Surface parameters and the seed's blending rule: arithmetic mean of restitution, harmonic
means of friction, stiffness and damping."""
import math

import pytest

from sim_node import SurfaceParameters
from sim_node.model.surface import blend


def test_pair_parameters_blend_by_arithmetic_and_harmonic_means():
    a = SurfaceParameters(kRestitution=0.2, kFriction=0.4, kStiffness=1000.0, kDamping=10.0)
    b = SurfaceParameters(kRestitution=0.6, kFriction=1.2, kStiffness=3000.0, kDamping=30.0)
    pair = blend(a, b)
    assert pair.kRestitution == pytest.approx(0.4)
    assert pair.kFriction == pytest.approx(2 * 0.4 * 1.2 / 1.6)
    assert pair.kStiffness == pytest.approx(1500.0)
    assert pair.kDamping == pytest.approx(15.0)
    assert blend(a, b) == blend(b, a)


def test_rigid_and_zero_limits_of_the_harmonic_mean():
    rigid = SurfaceParameters()
    soft = SurfaceParameters(kStiffness=1000.0, kDamping=50.0, kFriction=0.0)
    assert math.isinf(blend(rigid, rigid).kStiffness)
    assert blend(rigid, soft).kStiffness == pytest.approx(2000.0)   # 2 / (1/inf + 1/1000)
    assert blend(rigid, soft).kFriction == 0.0


def test_invalid_parameters_are_rejected():
    for bad in (dict(kFriction=-0.1), dict(kRestitution=1.5), dict(kDamping=math.nan),
                dict(kFriction=math.inf)):
        with pytest.raises(ValueError):
            SurfaceParameters(**bad)
