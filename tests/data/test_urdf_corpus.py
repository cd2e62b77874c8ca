"""Coverage on robot files nobody here wrote (issue 10 §1): pybullet_data and example-robot-data.

Claims checked, downloading nothing (tests/data/urdf_corpus.py lists the files):
* sim_node loads every file that PyBullet 3.2.7 loads (p.loadURDF in DIRECT);
* on every file that both sim_node and Pinocchio load, inverse dynamics (RNEA), the mass matrix
  (CRBA) and forward dynamics (ABA) agree with Pinocchio to 1e-9 relative at random states.
  Where sim_node repaired an inertia (sim_node.model.inertia_repair), Pinocchio is given the
  repaired inertia in the URDF it parses, so the algorithms are compared; the repair itself is
  tested in tests/model/test_inertia_repair.py.

The three counts are printed (pytest -s) and written to the report of the run.
"""
from __future__ import annotations

import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from urdf_corpus import assert_rel, corpus, pinocchio_xml  # noqa: E402

import sim_node  # noqa: E402
from sim_node.engine import aba, crba, rnea  # noqa: E402

pybullet = pytest.importorskip("pybullet")
pin = pytest.importorskip("pinocchio")
from random_robots import PinocchioTwin  # noqa: E402

FILES = corpus()
if not FILES:
    pytest.skip("pybullet_data and example-robot-data are not installed", allow_module_level=True)

class Results:
    """Which loader loads which file (computed once per session: mesh loading dominates)."""

    def __init__(self):
        self.ours, self.reason, self.pybullet, self.pinocchio = {}, {}, {}, {}
        self.robots = {}
        self.seconds = {"sim_node": 0.0, "pybullet": 0.0, "pinocchio": 0.0}
        client = pybullet.connect(pybullet.DIRECT)
        try:
            for f in FILES:
                start = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", sim_node.URDFWarning)
                        self.robots[f.name] = sim_node.WorldModel().loadRobot(str(f.path))
                    self.ours[f.name] = True
                except sim_node.ModelLoadError as exc:
                    self.ours[f.name] = False
                    self.reason[f.name] = str(exc)
                middle = time.perf_counter()
                try:
                    self.pybullet[f.name] = pybullet.loadURDF(str(f.path),
                                                              physicsClientId=client) >= 0
                except pybullet.error:
                    self.pybullet[f.name] = False
                pybullet.resetSimulation(physicsClientId=client)
                end = time.perf_counter()
                try:
                    pin.buildModelFromUrdf(str(f.path))
                    self.pinocchio[f.name] = True
                except (RuntimeError, ValueError):
                    self.pinocchio[f.name] = False
                self.seconds["sim_node"] += middle - start
                self.seconds["pybullet"] += end - middle
                self.seconds["pinocchio"] += time.perf_counter() - end
        finally:
            pybullet.disconnect(client)

    def counts(self):
        return {k: sum(d.values()) for k, d in
                (("sim_node", self.ours), ("pybullet", self.pybullet),
                 ("pinocchio", self.pinocchio))}


@pytest.fixture(scope="module")
def results():
    return Results()


def test_sim_node_loads_every_file_that_pybullet_loads(results, record_property):
    counts = results.counts()
    missing = sorted(n for n in results.ours if not results.ours[n] and results.pybullet[n])
    print(f"\nURDF corpus: {len(FILES)} files; loaded by sim_node {counts['sim_node']}, "
          f"PyBullet {counts['pybullet']}, Pinocchio {counts['pinocchio']}; load time "
          + ", ".join(f"{k} {v:.1f} s" for k, v in results.seconds.items()))
    for key, value in counts.items():
        record_property(f"corpus_{key}", value)
    assert not missing, "PyBullet loads these, sim_node does not:\n" + "\n".join(
        f"{n}: {results.reason[n]}" for n in missing)
    assert counts["sim_node"] >= counts["pybullet"]


BOTH = [f for f in FILES]


@pytest.mark.parametrize("entry", BOTH, ids=[f.name for f in BOTH])
def test_dynamics_agree_with_pinocchio(entry, results):
    if not (results.ours[entry.name] and results.pinocchio[entry.name]):
        pytest.skip("not loaded by both sim_node and Pinocchio")
    robot = results.robots[entry.name]
    structure = robot.structure
    model = structure.model
    if model.nv == 0:
        pytest.skip("nothing moves")
    twin = PinocchioTwin(pinocchio_xml(entry.path, robot), structure)
    data = robot.data
    rng = np.random.default_rng(len(entry.name))
    gravity = np.array([0.0, 0.0, -9.81])
    for trial in range(3):
        q = rng.uniform(-1.5, 1.5, model.nq)
        lower, upper = structure.q_lower, structure.q_upper
        finite = np.isfinite(lower) & np.isfinite(upper)
        q[finite] = lower[finite] + (upper[finite] - lower[finite]) * rng.uniform(size=finite.sum())
        if structure.floating:
            q[3:7] /= np.linalg.norm(q[3:7])
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        where = f"{entry.name} state {trial}"
        assert_rel(rnea.inverse_dynamics(model, data, q, v, a, gravity),
                   twin.rnea(q, v, a, gravity), f"RNEA {where}")
        M = crba.mass_matrix(model, data, q).copy()
        assert_rel(M, twin.mass_matrix(q), f"CRBA {where}")
        tau = rng.normal(size=model.nv)
        assert_rel(aba.forward_dynamics(model, data, q, v, tau, gravity),
                   twin.aba(q, v, tau, gravity), f"ABA {where}")

