"""Robot description packages as they are in the wild, xacro included (issue 10 §1): the ROS
description packages that the Robotics Toolbox ships in rtb-data 2.0.0 (PyPI; ROS-Industrial's
KUKA and ABB, Clearpath's Ridgeback, QUT's Franka Panda arms, Trossen's Interbotix arms, the
Puma 560, ...), loaded as a user points sim_node at them, downloading nothing.

Claims:
* every top-level .urdf / .xacro file (not the *_macro.xacro libraries) either loads, or is
  refused for what the file really lacks: a package it needs that rtb-data does not ship (the
  ROS-Industrial `*_support` packages were renamed there), no link at all (a xacro library of
  materials or macros), or no XML (rtbdata/data/test.urdf is a DH table);
* on every robot that loads, RNEA, CRBA and ABA agree with Pinocchio reading the same
  xacro-expanded URDF to 1e-9 relative.
"""
from __future__ import annotations

import importlib.util
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))

import sim_node  # noqa: E402
from sim_node.engine import aba, crba, rnea  # noqa: E402

pin = pytest.importorskip("pinocchio")
from random_robots import PinocchioTwin  # noqa: E402
from urdf_corpus import assert_rel, pinocchio_xml  # noqa: E402

_spec = importlib.util.find_spec("rtbdata")
if _spec is None:
    pytest.skip("rtb-data is not installed", allow_module_level=True)
ROOT = Path(list(_spec.submodule_search_locations)[0])
FILES = sorted(p for p in ROOT.rglob("*") if p.suffix in (".urdf", ".xacro")
               and not p.stem.endswith("_macro"))
SHIPPED_PACKAGES = {p.name for p in ROOT.rglob("*") if p.is_dir()}


def _load(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sim_node.URDFWarning)
        return sim_node.WorldModel().loadRobot(str(path))


def _refusal_is_justified(path: Path, message: str) -> bool:
    missing = re.search(r"(?:package|\$\(find) '?([\w-]+)'? not found|package://([\w-]+)/", message)
    if missing and "not found" in message:
        package = missing.group(1) or missing.group(2)
        return package not in SHIPPED_PACKAGES
    if "has no <link>" in message:
        return True
    return path.name == "test.urdf" and "Start tag expected" in message


@pytest.fixture(scope="module")
def loaded():
    robots, refused = {}, {}
    for path in FILES:
        try:
            robots[path] = _load(path)
        except sim_node.ModelLoadError as error:
            refused[path] = str(error)
    return robots, refused


def test_every_complete_description_loads_and_the_rest_say_what_is_missing(loaded):
    robots, refused = loaded
    print(f"\nrtb-data: {len(FILES)} description files; {len(robots)} load, {len(refused)} "
          f"refused ({sum('has no <link>' in m for m in refused.values())} without links)")
    unjustified = {p.relative_to(ROOT).as_posix(): m for p, m in refused.items()
                   if not _refusal_is_justified(p, m)}
    assert not unjustified, "\n".join(f"{p}: {m}" for p, m in unjustified.items())
    xacro_robots = [p for p in robots if p.suffix == ".xacro"]
    assert len(xacro_robots) >= 20                  # the Trossen, QUT and xArm xacros at least


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(ROOT).as_posix() for p in FILES])
def test_dynamics_agree_with_pinocchio_on_the_expanded_urdf(path, loaded):
    robots, _ = loaded
    if path not in robots:
        pytest.skip("refused (checked above)")
    robot = robots[path]
    structure, model = robot.structure, robot.structure.model
    if model.nv == 0:
        pytest.skip("nothing moves")
    twin = PinocchioTwin(pinocchio_xml(path, robot), structure)
    rng = np.random.default_rng(7)
    gravity = np.array([0.0, 0.0, -9.81])
    # within the joint limits and 1.5 of zero: the Ridgeback's base joints allow +-1e6 m, where
    # the engine's world-frame spatial algebra keeps only ~1e-4 of the mass matrix (its error
    # grows as (distance / size)^2 x 1e-16; Pinocchio's local frames do not lose it)
    low = np.maximum(structure.q_lower, -1.5)
    high = np.minimum(structure.q_upper, 1.5)
    for trial in range(2):
        q = rng.uniform(low, high)
        for k in structure.quaternions:
            q[k:k + 4] /= np.linalg.norm(q[k:k + 4])
        v, a, tau = (rng.normal(size=model.nv) for _ in range(3))
        where = f"{path.name} state {trial}"
        assert_rel(rnea.inverse_dynamics(model, robot.data, q, v, a, gravity),
                   twin.rnea(q, v, a, gravity), f"RNEA {where}")
        assert_rel(crba.mass_matrix(model, robot.data, q).copy(), twin.mass_matrix(q),
                   f"CRBA {where}")
        assert_rel(aba.forward_dynamics(model, robot.data, q, v, tau, gravity),
                   twin.aba(q, v, tau, gravity), f"ABA {where}")
