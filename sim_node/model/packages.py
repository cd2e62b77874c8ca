"""Where ``package://NAME/...`` URIs (and xacro's ``$(find NAME)``) point: the package search.

A package NAME is looked for, in this order (README, "Loading robot files"):

1. ``package_dirs`` given to ``loadRobot`` or in a world file: a directory named NAME, one whose
   package.xml names NAME, or the subdirectory NAME of one (as Pinocchio's ``package_dirs``);
2. ``ROS_PACKAGE_PATH`` entries, the same way (ROS 1);
3. ``AMENT_PREFIX_PATH`` prefixes: ``PREFIX/share/NAME`` (ROS 2 installs);
4. the folders above the robot file, nearest first: a folder named NAME or holding a package.xml
   whose ``<name>`` is NAME, or a subfolder NAME of one of them (sibling packages in a workspace,
   and the ``package://meshes/...`` shortcut that PyBullet's own files use);
5. ``pybullet_data`` when it is installed (located through importlib; pybullet itself is never
   imported), its subfolder NAME or itself for NAME ``pybullet_data``.

Several places may hold a package (e.g. an interfaces-only install prefix beside the sources): a
file is taken from the first candidate that has it. ``PackageSearch.resolve`` reports every place
it looked, for error messages.
"""
from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path

from lxml import etree

# The sim_node sources (or an installed share directory) answer for package://sim_node/ too.
_OWN_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=512)
def _manifest_name(manifest: str, mtime: float) -> str | None:
    try:
        parser = etree.XMLParser(resolve_entities=False, no_network=True)
        return (etree.parse(manifest, parser).getroot().findtext("name") or "").strip() or None
    except (OSError, etree.Error):
        return None


def package_xml_name(directory: Path) -> str | None:
    """The <name> in directory/package.xml, or None."""
    manifest = directory / "package.xml"
    try:
        mtime = manifest.stat().st_mtime
    except OSError:
        return None
    return _manifest_name(str(manifest), mtime)


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:        # e.g. a name too long for the file system
        return False


def _holds(directory: Path, name: str) -> list:
    """directory itself if it is package NAME, else directory/NAME if that exists."""
    if directory.name == name or package_xml_name(directory) == name:
        return [directory]
    sub = directory / name
    return [sub] if _is_dir(sub) else []


def pybullet_data_dir() -> Path | None:
    """pybullet_data's folder when the package is installed (it is a plain data package)."""
    try:
        spec = importlib.util.find_spec("pybullet_data")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


class PackageSearch:
    """The package search for one robot file: `package_dirs`, the environment at construction,
    and the folder of the file (None for XML given as a string)."""

    def __init__(self, package_dirs=None, file_dir: Path | None = None):
        self.package_dirs = [Path(p).expanduser() for p in (package_dirs or [])]
        self.ros_package_path = [Path(p) for p in
                                 os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
        self.ament_prefixes = [Path(p) for p in
                               os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
        self.file_dir = file_dir

    def candidates(self, name: str) -> tuple[list, list]:
        """(directories that may be package NAME in search order, description of each place
        searched)."""
        found, searched = [], []
        for base in self.package_dirs:
            found += [d for d in _holds(base, name) if _is_dir(d)]
        searched.append(f"package_dirs {[str(p) for p in self.package_dirs]}")
        for base in self.ros_package_path:
            found += [d for d in _holds(base, name) if _is_dir(d)]
        searched.append(f"ROS_PACKAGE_PATH {[str(p) for p in self.ros_package_path]}")
        for prefix in self.ament_prefixes:
            share = prefix / "share" / name
            if _is_dir(share):
                found.append(share)
        searched.append(f"AMENT_PREFIX_PATH {[str(p) for p in self.ament_prefixes]} share/{name}")
        if self.file_dir is not None:
            for parent in [self.file_dir, *self.file_dir.parents]:
                found += _holds(parent, name)
            searched.append(f"the folders above {self.file_dir}")
        data = pybullet_data_dir()
        if data is not None:
            found += [data] if name == "pybullet_data" else [d for d in [data / name] if _is_dir(d)]
            searched.append(f"pybullet_data ({data})")
        if name == "sim_node":
            found.append(_OWN_PACKAGE_ROOT)
        unique = []
        for d in found:
            if d not in unique:
                unique.append(d)
        return unique, searched

    def find(self, name: str) -> Path | None:
        """The first directory that may be package NAME, or None."""
        dirs, _ = self.candidates(name)
        return dirs[0] if dirs else None

    def resolve(self, name: str, rest: str) -> tuple[Path | None, list]:
        """(the file `rest` inside package NAME, or None; every path or place searched)."""
        dirs, searched = self.candidates(name)
        tried = []
        for base in dirs:
            path = base / rest
            try:
                if path.is_file():
                    return path, tried
            except OSError:
                pass
            tried.append(str(path))
        if not dirs:
            tried.append(f"package '{name}' not found in: " + "; ".join(searched))
        return None, tried
