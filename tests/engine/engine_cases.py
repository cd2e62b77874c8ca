"""Cases for the engine tests: hypothesis-generated trees and the project's own robots, each
paired with its Pinocchio twin (the independent reference), plus random states."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings, strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from random_robots import PinocchioTwin, random_urdf  # noqa: E402

from sim_node.engine.model import Data  # noqa: E402
from sim_node.model.builder import build_robot  # noqa: E402
from sim_node.model.urdf import parse_urdf  # noqa: E402

pytest.importorskip("pinocchio")

REPO = Path(__file__).resolve().parents[2]
PROJECT_URDFS = sorted((REPO / "data" / "robots").glob("*/*.urdf"))
GRAVITY = np.array([0.0, 0.0, -9.81])

# The default profile replays the same examples on every run (derandomized), so CI is
# reproducible; SIM_NODE_HYPOTHESIS=explore draws fresh, many more random robots.
_health = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("engine", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=_health)
settings.register_profile("explore", max_examples=1000, deadline=None,
                          suppress_health_check=_health)
settings.load_profile("explore" if os.environ.get("SIM_NODE_HYPOTHESIS") == "explore" else "engine")


@dataclass
class Case:
    xml: str
    structure: object
    twin: PinocchioTwin

    @property
    def model(self):
        return self.structure.model

    def data(self):
        return Data(self.structure.model)

    def state(self, rng):
        """A random (q, v, a, tau) with unit quaternions (base, spherical, floating joints)."""
        m = self.structure.model
        q = rng.uniform(-1.5, 1.5, m.nq)
        for k in self.structure.quaternions:
            q[k:k + 4] /= np.linalg.norm(q[k:k + 4])
        return q, rng.normal(size=m.nv), rng.normal(size=m.nv), rng.normal(size=m.nv)


def make_case(xml: str, fixed_base=None, path=None) -> Case:
    structure = build_robot(parse_urdf(path or xml), fixed_base)
    return Case(xml, structure, PinocchioTwin(xml, structure))


@st.composite
def random_robots(draw, max_dof=40):
    """Fixed and floating bases, chains to bushy trees, every joint type (spherical, planar and
    floating joints anywhere in the tree too), arbitrary axes, merged fixed links and mimic
    joints, up to `max_dof` DOFs of movable joints."""
    n_movable = draw(st.integers(1, max_dof))
    n_fixed = draw(st.integers(0, 4))
    floating = draw(st.booleans())
    branching = draw(st.sampled_from([0.0, 0.3, 0.7]))
    mimic_prob = draw(st.sampled_from([0.0, 0.0, 0.25]))
    multi_dof_prob = draw(st.sampled_from([0.0, 0.25, 0.6]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    xml = random_urdf(rng, n_movable, n_fixed, world_root=not floating, branching=branching,
                      mimic_prob=mimic_prob, multi_dof_prob=multi_dof_prob)
    return make_case(xml), np.random.default_rng(seed + 1)


def project_case(path: Path) -> Case:
    return make_case(path.read_text(), path=path)


def assert_rel(actual, expected, rtol=1e-9, what="", atol=1e-12):
    """max|actual - expected| <= rtol * max|expected| + atol: norm-wise relative agreement;
    atol only matters for quantities that vanish (e.g. C(q, qd) of a single joint), where both
    sides are rounding noise."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    scale = np.abs(expected).max(initial=0.0)
    err = np.abs(actual - expected).max(initial=0.0)
    assert err <= rtol * scale + atol, f"{what}: max error {err:.3e} > {rtol:g} x {scale:.3e}"

