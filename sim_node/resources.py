"""Locating the files shipped with the package (robots, meshes, worlds in data/)."""
from __future__ import annotations

import os
from pathlib import Path

_SOURCE_ROOT = Path(__file__).resolve().parent.parent


def package_root() -> Path:
    """The directory holding data/: the source tree, or share/sim_node of a ROS install."""
    if (_SOURCE_ROOT / "data").is_dir():
        return _SOURCE_ROOT
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        share = Path(prefix) / "share" / "sim_node"
        if (share / "data").is_dir():
            return share
    raise FileNotFoundError("cannot find the sim_node data directory")


def data_path(*parts: str) -> Path:
    return package_root().joinpath("data", *parts)


def default_world() -> Path:
    return data_path("worlds", "default.yaml")
