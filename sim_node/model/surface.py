"""Surface parameters of a body and the seed's per-pair blending rule."""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

DEFAULT_PADDING = 0.0025   # boundary-layer thickness [m] (seed 002)


@dataclass
class SurfaceParameters:
    """Contact coefficients of one body (seed 002). Infinite stiffness means rigid contact;
    finite stiffness [N/m] and damping [N s/m] make the boundary layer soft."""
    kRestitution: float = 0.0
    kFriction: float = 0.5
    kStiffness: float = math.inf
    kDamping: float = math.inf

    def __post_init__(self):
        for f in fields(self):
            value = float(getattr(self, f.name))
            if math.isnan(value) or value < 0:
                raise ValueError(f"{f.name} must be non-negative, got {value}")
            setattr(self, f.name, value)
        if self.kRestitution > 1:
            raise ValueError(f"kRestitution must be in [0, 1], got {self.kRestitution}")
        if math.isinf(self.kFriction):
            raise ValueError("kFriction must be finite")

    def copy(self) -> "SurfaceParameters":
        return replace(self)


def harmonic_mean(a: float, b: float) -> float:
    # 2 / (1/a + 1/b), with 1/inf = 0: a rigid side doubles the other's value, two rigid
    # sides stay rigid, a zero side gives zero
    if a == 0.0 or b == 0.0:
        return 0.0
    if math.isinf(a) and math.isinf(b):
        return math.inf
    return 2.0 / (1.0 / a + 1.0 / b)


def blend(a: SurfaceParameters, b: SurfaceParameters) -> SurfaceParameters:
    """Pair parameters: arithmetic mean of restitution, harmonic means of the others."""
    return SurfaceParameters(
        kRestitution=0.5 * (a.kRestitution + b.kRestitution),
        kFriction=harmonic_mean(a.kFriction, b.kFriction),
        kStiffness=harmonic_mean(a.kStiffness, b.kStiffness),
        kDamping=harmonic_mean(a.kDamping, b.kDamping),
    )
