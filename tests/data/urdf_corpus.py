"""The URDF coverage corpus (issue 10 §1): robot files nobody on this project wrote.

* every ``.urdf`` of ``pybullet_data`` (the pybullet 3.2.7 wheel) outside ``random_urdfs/``;
* the first ``RANDOM_URDFS`` of ``random_urdfs/`` in sorted path order (deterministic);
* every ``.urdf`` of example-robot-data 6.0.0 (PyPI; its data lives in the wheel's
  ``cmeel.prefix/share/example-robot-data``).

Nothing is downloaded: both are test-only pip dependencies (requirements/dev.txt). ``corpus()``
returns an empty list for a source that is not installed, so the tests that use it can skip.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lxml import etree

RANDOM_URDFS = 50


@dataclass(frozen=True)
class CorpusFile:
    source: str        # "pybullet_data" or "example-robot-data"
    path: Path

    @property
    def name(self) -> str:
        """A short unique name: the path below the source's root."""
        return f"{self.source}/{self.path.relative_to(source_root(self.source)).as_posix()}"


def pybullet_data_root() -> Path | None:
    spec = importlib.util.find_spec("pybullet_data")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def example_robot_data_root() -> Path | None:
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    root = Path(dist.locate_file("cmeel.prefix/share/example-robot-data"))
    return root if root.is_dir() else None


def source_root(source: str) -> Path | None:
    return pybullet_data_root() if source == "pybullet_data" else example_robot_data_root()


def corpus() -> list[CorpusFile]:
    """The corpus files, in a fixed order."""
    files = []
    root = pybullet_data_root()
    if root is not None:
        plain = sorted(p for p in root.rglob("*.urdf") if "random_urdfs" not in p.parts)
        random = sorted((root / "random_urdfs").rglob("*.urdf"))[:RANDOM_URDFS]
        files += [CorpusFile("pybullet_data", p) for p in plain + random]
    root = example_robot_data_root()
    if root is not None:
        files += [CorpusFile("example-robot-data", p) for p in sorted(root.rglob("*.urdf"))]
    return files


def pinocchio_xml(path: Path, robot) -> str:
    """The file's URDF with sim_node's repaired inertias written into the links concerned."""
    root = etree.fromstring(robot.urdf.xml.encode(), etree.XMLParser(remove_comments=True))
    links = {el.get("name"): el for el in root.findall("link")}
    for name, (_, used) in robot.urdf.inertia_repairs.items():
        el = links[name]
        for old in el.findall("inertial"):
            el.remove(old)
        inertial = etree.SubElement(el, "inertial")
        etree.SubElement(inertial, "origin", xyz=" ".join(repr(float(x)) for x in used.com),
                         rpy="0 0 0")
        etree.SubElement(inertial, "mass", value=repr(float(used.mass)))
        I = {k: repr(float(used.inertia[i, j])) for k, i, j in
             (("ixx", 0, 0), ("ixy", 0, 1), ("ixz", 0, 2), ("iyy", 1, 1), ("iyz", 1, 2),
              ("izz", 2, 2))}
        etree.SubElement(inertial, "inertia", **I)
    return etree.tostring(root, encoding="unicode")


def assert_rel(actual, expected, what, rtol=1e-9, atol=1e-12):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    scale = np.abs(expected).max(initial=0.0)
    error = np.abs(actual - expected).max(initial=0.0)
    assert error <= rtol * scale + atol, f"{what}: max error {error:.3e} > {rtol:g} x {scale:.3e}"

