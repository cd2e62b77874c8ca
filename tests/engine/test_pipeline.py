"""The staged step (engine/pipeline) against the single-class engine it replaced, bit for bit,
and the per-stage profile's bookkeeping.

The reference (data/pipeline_reference.npz) was recorded by pipeline_cases.py from the engine
before the split (commit 46ea8a8's scene.pyx): same floating-point operations in the same order
must give the same bytes."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import pipeline_cases as cases  # noqa: E402


@pytest.fixture(scope="module")
def reference():
    with np.load(cases.REFERENCE) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("case", cases.CASES)
def test_the_staged_step_reproduces_the_recorded_run_bit_for_bit(case, reference):
    run = cases.trace(case)
    expected = {k: v for k, v in reference.items() if k.startswith(case + "/")}
    assert sorted(run) == sorted(expected)
    for key, value in expected.items():
        assert run[key].dtype == value.dtype and run[key].shape == value.shape, key
        # bytes, not values: -0.0 vs 0.0 or a differently rounded last bit is a failure
        assert run[key].tobytes() == value.tobytes(), f"{key} differs"
