"""MuJoCo MJCF files as PyBullet's loadMJCF reads them: one robot per top-level element.

``parse_mjcf(path)`` returns an ``MJCFFile`` whose ``bodies`` are plain ``URDFRobot`` data built
the way PyBullet 3.2.7's importer (BulletMJCFImporter) lays an MJCF out, so that the one robot
builder (sim_node.model.builder, through ``WorldModel.makeRobot``) makes them:
  * every ``<geom>`` directly in ``<worldbody>`` is a static one-link body named after the geom
    ("anonymous" without a name), its shape at the geom's pose;
  * every top-level ``<body>`` is a robot. Without a joint, or with a free joint, it is a
    floating base at the body's pose (PyBullet makes a top-level body without joints free, where
    MuJoCo would weld it to the world: scripts written for PyBullet's ant rely on it). With other
    joints, a massless root link ``link{m}_{k}`` is fixed at the world origin;
  * every MJCF body is a URDF link named after the body (``link{m}_{k}`` without a name: m the
    model index in the file, k the link's creation index in it). Each joint of a body is a
    massless link ``link{m}_{k}`` moved by that joint, placed at the joint's anchor ``pos`` with
    the body's axes, the joints of one body in a chain in document order (MuJoCo composes them
    in that order); the body's own link hangs from the last one by a fixed joint
    ``jointfix_{n}_{k}`` (n a counter of this file, k the parent link's index) at minus the
    anchor. A body without joints hangs from its parent body by such a fixed joint.
Joints: hinge (revolute, or continuous when not limited), slide (prismatic), ball (spherical,
its range ignored with a warning), free below the top level (a floating joint), and PyBullet's
extension "fixed". ``limited``: true / false, or MuJoCo's default "auto" (limited when a range is
given); hinge ranges in the compiler's angle unit (degrees unless angle="radian").
Mass: MuJoCo's rule, not PyBullet's: with ``inertiafromgeom`` "auto" (the default) a body's
``<inertial>`` is used when present, otherwise every geom is a solid of its ``mass`` or ``density``
(1000 kg/m³ by default) and the body gets the union's mass, centre of mass and inertia.
PyBullet agrees on the masses but puts the centre of mass at the last fromto geom's midpoint and
takes the inertia of the collision shape's bounding box (README "SDF and MJCF (decisions)").
``compiler settotalmass`` scales every body's mass and inertia (PyBullet ignores it).
Ignored with one warning per file naming the first line: armature, stiffness, springref,
solref/solimp/margin (contact softness: sim_node's contacts are rigid). Joint damping and
frictionloss become the URDF joint's damping and friction. ``contype``/``conaffinity`` become the
link's collision filter group/mask, as PyBullet maps them. Actuators (motor, position, velocity,
general) are kept as ``MJCFActuator`` records (joint, gear, ctrlrange, forcerange); they do not
limit the joint's effort.
Hostile input: errors (``MJCFError``: file, line, element, what is valid) for malformed XML,
a root that is not <mujoco>, NaN or infinite numbers, non-positive sizes, unknown geom or joint
types, unknown default classes, mesh assets that are missing, includes that leave the file's
directory, include cycles or depth beyond MAX_INCLUDE_DEPTH, more than MAX_ELEMENTS elements or
bodies nested deeper than MAX_DEPTH. Unknown elements are skipped with a warning (``MJCFWarning``).
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree
from transforms3d.euler import euler2mat
from transforms3d.quaternions import quat2mat

from sim_node.model import geometry as geo
from sim_node.model.errors import ModelLoadError, URDFWarning
from sim_node.model.inertia_repair import Inertial
from sim_node.model.urdf import (GeometryElement, Joint, Limit, Link, Origin, URDFRobot)

MAX_ELEMENTS = 100_000        # elements in a file and its includes
MAX_DEPTH = 200               # nesting of <body> (libxml2 refuses XML nested beyond 256)
MAX_INCLUDE_DEPTH = 10
MAX_MAGNITUDE = 1e15          # as the URDF reader: beyond this products overflow
DEFAULT_DENSITY = 1000.0      # [kg/m³], MuJoCo's
GEOM_TYPES = ("plane", "sphere", "capsule", "cylinder", "box", "ellipsoid", "mesh")
JOINT_TYPES = ("hinge", "slide", "ball", "free", "fixed")
# elements read for their effect on nothing sim_node simulates: skipped without a warning
QUIET = {"light", "camera", "site", "option", "size", "visual", "statistic", "sensor",
         "tendon", "equality", "contact", "keyframe", "custom", "extension", "texture",
         "material"}
# joint attributes sim_node does not model: ignored with one warning per file
IGNORED_JOINT_ATTRIBUTES = ("armature", "stiffness", "springref", "solreflimit", "solimplimit",
                            "margin", "ref")


class MJCFError(ModelLoadError):
    """An MJCF file is malformed or uses something sim_node cannot load."""


class MJCFWarning(URDFWarning):
    """Something in an MJCF file was skipped or approximated (file, line, element, what)."""


@dataclass(frozen=True)
class MJCFActuator:
    name: str
    type: str                  # motor, position, velocity or general
    joint: str
    gear: float
    ctrlrange: tuple | None    # (lower, upper) when ctrllimited
    forcerange: tuple | None   # (lower, upper) when forcelimited


@dataclass(frozen=True)
class MJCFBody:
    """One robot of the file (one PyBullet body unique id)."""
    urdf: URDFRobot
    fixed_base: bool
    R: np.ndarray              # placement of the root link in the world
    p: np.ndarray
    # link name -> (contype, conaffinity), each the OR over the link's geoms
    collision_filters: dict = field(default_factory=dict)
    # the links standing for MJCF <body> elements, in document order (MuJoCo's body order);
    # the others are joint links or a worldbody geom's link
    body_links: tuple = ()


@dataclass(frozen=True)
class MJCFFile:
    model: str                 # <mujoco model=...> ('' when absent), PyBullet's body name
    bodies: tuple              # MJCFBody, in document order
    actuators: tuple           # MJCFActuator, in document order
    source: str


# -- XML reading shared with sim_node.model.sdf ---------------------------------------------------

def read_xml(path: Path, error, max_elements: int = MAX_ELEMENTS):
    """The root element of the XML file `path`; `error(line, element, problem)` builds the
    exception raised for an unreadable or malformed file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise error(None, "file", "no such file") from None
    except OSError as exc:
        raise error(None, "file", f"cannot read: {exc.strerror or exc}") from None
    parser = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True,
                             huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise error(exc.lineno, "XML", str(exc)) from None
    except ValueError as exc:           # e.g. an encoding lxml refuses
        raise error(None, "XML", str(exc)) from None
    if root is None:
        raise error(None, "XML", "the document is empty")
    count = sum(1 for _ in root.iter())
    if count > max_elements:
        raise error(None, "XML", f"{count} elements: more than the {max_elements} allowed")
    return root


def parse_numbers(text: str, n: int | None, error, name: str) -> np.ndarray:
    """The whitespace-separated numbers of attribute (or element) `name`; exactly `n` of them
    unless None. NaN, infinities and magnitudes beyond MAX_MAGNITUDE are errors, built by
    `error(problem)`."""
    tokens = text.split()
    try:
        values = np.array([float(t) for t in tokens], dtype=float)
    except ValueError:
        raise error(f"{name}=\"{text}\" is not a list of numbers") from None
    if n is not None and len(values) != n:
        raise error(f"{name}=\"{text}\" needs {n} numbers, has {len(values)}")
    if not np.all(np.isfinite(values)):
        raise error(f"{name}=\"{text}\" is not finite")
    if np.any(np.abs(values) > MAX_MAGNITUDE):
        raise error(f"{name}=\"{text}\" exceeds {MAX_MAGNITUDE:g} in magnitude")
    return values


def rotation_between(a, b) -> np.ndarray:
    """The smallest rotation taking unit vector a to unit vector b."""
    a = np.asarray(a, float) / np.linalg.norm(a)
    b = np.asarray(b, float) / np.linalg.norm(b)
    v, c = np.cross(a, b), float(a @ b)
    if c < -1.0 + 1e-12:                    # opposite: half a turn about any perpendicular
        perp = np.cross(a, np.eye(3)[int(np.argmin(np.abs(a)))])
        perp /= np.linalg.norm(perp)
        return 2.0 * np.outer(perp, perp) - np.eye(3)
    vx = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + vx + vx @ vx / (1.0 + c)


# -- MJCF ----------------------------------------------------------------------------------------

def parse_mjcf(path: str | os.PathLike, *, pybullet_masses: bool = False) -> MJCFFile:
    """Read an MJCF file (module docstring). Raises MJCFError; warns MJCFWarning.

    `pybullet_masses`: masses as PyBullet's loadMJCF computes them (every geom 1000 kg/m³
    whatever its density or mass attribute, <inertial> used when present, settotalmass
    ignored), for scripts tuned on PyBullet (pybullet_data's ant weighs 182 kg there, 0.9 kg
    in MuJoCo); centres of mass and inertias stay those of the union of the geoms."""
    reader = _Reader(Path(path), pybullet_masses)
    result = reader.read()
    for w in reader.warnings:
        warnings.warn(w, stacklevel=2)
    return result


@dataclass
class _Geom:
    element: GeometryElement      # shape at its pose in the body frame
    mass: float                   # [kg]
    com: np.ndarray               # in the body frame
    inertia: np.ndarray           # about com, body axes
    group: int
    mask: int


class _Reader:
    def __init__(self, path: Path, pybullet_masses: bool = False):
        self.pybullet_masses = pybullet_masses
        self.path = path
        self.source = str(path)
        self.warnings = []
        self.ignored = {}             # attribute -> first line, for one warning per file
        self.counter = 0              # PyBullet's name counter (jointfix_N, jointN_...)

    # -- errors and attributes ------------------------------------------------------------
    def error(self, el, what: str, problem: str):
        return MJCFError(self.source, what, problem, getattr(el, "sourceline", None))

    def warn(self, el, what: str, problem: str):
        self.warnings.append(MJCFWarning(self.source, what, problem,
                                         getattr(el, "sourceline", None)))

    def raw(self, el, name: str, kind: str | None = None):
        """An attribute of `el`, else of its default class chain, else None."""
        value = el.get(name)
        if value is not None:
            return value
        for defaults in self.class_chain(el, kind or el.tag):
            if name in defaults:
                return defaults[name]
        return None

    def numbers(self, el, name: str, n: int | None, default=None, kind=None):
        text = self.raw(el, name, kind)
        if text is None:
            return None if default is None else np.array(default, dtype=float)
        what = self.describe(el)
        return parse_numbers(text, n, lambda p: self.error(el, what, p), name)

    def scalar(self, el, name: str, default=None, kind=None):
        values = self.numbers(el, name, 1, None if default is None else [default], kind)
        return None if values is None else float(values[0])

    def flag(self, el, name: str, default: str, kind=None) -> str:
        value = (self.raw(el, name, kind) or default).strip().lower()
        if value not in ("true", "false", "auto"):
            raise self.error(el, self.describe(el), f"attribute {name}=\"{value}\": expected "
                             "true, false or auto")
        return value

    def describe(self, el) -> str:
        name = el.get("name")
        return f"<{el.tag} name=\"{name}\">" if name else f"<{el.tag}>"

    # -- document ---------------------------------------------------------------------------
    def read(self) -> MJCFFile:
        root = read_xml(self.path, lambda line, what, problem:
                        MJCFError(self.source, what, problem, line))
        if root.tag != "mujoco":
            raise MJCFError(self.source, f"<{root.tag}>", "the root element must be <mujoco>",
                            root.sourceline)
        self.expand_includes(root, self.path.resolve().parent, [self.path.resolve()])
        if sum(1 for _ in root.iter()) > MAX_ELEMENTS:
            raise self.error(root, "<mujoco>", f"more than {MAX_ELEMENTS} elements with its "
                             "includes")
        self.model = root.get("model", "")
        self.compiler(root)
        self.defaults = {}            # class -> {tag: {attr: value}} (inherited already)
        self.default_of = {}          # element -> class name for elements inside <default>
        for el in root.findall("default"):
            self.read_defaults(el, "main", None)
        self.meshes = {}
        for asset in root.findall("asset"):
            self.read_assets(asset)
        bodies = []
        for world in root.findall("worldbody"):
            for el in world:
                if not isinstance(el.tag, str):
                    continue
                if el.tag == "geom":
                    bodies.append(self.static_geom(el))
                elif el.tag == "body":
                    bodies.append(self.top_body(el, len(bodies)))
                elif el.tag in ("freejoint", "joint", "inertial"):
                    raise self.error(el, self.describe(el), "not allowed in <worldbody>")
                elif el.tag not in QUIET:
                    self.warn(el, f"<{el.tag}>", "unknown element in <worldbody>: ignored")
        known = {"compiler", "default", "asset", "worldbody", "actuator", "include"} | QUIET
        for el in root:
            if isinstance(el.tag, str) and el.tag not in known:
                self.warn(el, f"<{el.tag}>", "unknown element in <mujoco>: ignored")
        actuators = self.read_actuators(root, bodies)
        if self.total_mass is not None and not self.pybullet_masses:
            bodies = self.scale_masses(bodies, self.total_mass)
        for attribute, line in self.ignored.items():
            self.warnings.append(MJCFWarning(
                self.source, f"joint attribute '{attribute}'", "not modelled by sim_node: "
                "ignored wherever it appears (first here)", line))
        if not bodies:
            raise self.error(root, "<mujoco>", "has no <geom> or <body> in <worldbody>")
        return MJCFFile(self.model, tuple(bodies), tuple(actuators), self.source)

    def expand_includes(self, root, directory: Path, chain: list):
        for inc in list(root.iter("include")):
            name = inc.get("file")
            if not name:
                raise self.error(inc, "<include>", "missing attribute 'file'")
            target = (directory / name).resolve()
            if target != directory and directory not in target.parents:
                raise self.error(inc, "<include>", f"file \"{name}\" is outside the model's "
                                 f"directory {directory}: refused")
            if target in chain:
                raise self.error(inc, "<include>", f"file \"{name}\" includes itself")
            if len(chain) > MAX_INCLUDE_DEPTH:
                raise self.error(inc, "<include>", f"includes nested deeper than "
                                 f"{MAX_INCLUDE_DEPTH}")
            included = read_xml(target, lambda line, what, problem: MJCFError(
                str(target), what, problem, line))
            if included.tag != "mujoco":
                raise MJCFError(str(target), f"<{included.tag}>", "an included file's root "
                                "element must be <mujoco>", included.sourceline)
            self.expand_includes(included, directory, chain + [target])
            parent = inc.getparent()
            index = parent.index(inc)
            parent.remove(inc)
            for k, child in enumerate(list(included)):
                parent.insert(index + k, child)

    def compiler(self, root):
        self.angle_scale = math.pi / 180.0
        self.eulerseq = "xyz"
        self.inertia_from_geom = "auto"
        self.total_mass = None
        self.mesh_dir = self.path.resolve().parent
        for el in root.findall("compiler"):
            angle = el.get("angle")
            if angle is not None:
                if angle not in ("degree", "radian"):
                    raise self.error(el, "<compiler>", f"angle=\"{angle}\": expected degree "
                                     "or radian")
                self.angle_scale = 1.0 if angle == "radian" else math.pi / 180.0
            seq = el.get("eulerseq")
            if seq is not None:
                if len(seq) != 3 or seq.lower().strip("xyz") or len(set(seq.lower())) == 1:
                    raise self.error(el, "<compiler>", f"eulerseq=\"{seq}\": expected three "
                                     "of xyzXYZ")
                self.eulerseq = seq
            if el.get("coordinate", "local") != "local":
                self.warn(el, "<compiler>", f"coordinate=\"{el.get('coordinate')}\" is not "
                          "supported (MuJoCo 2.3.3 removed it): positions read as local, as "
                          "PyBullet does")
            if el.get("inertiafromgeom") is not None:
                self.inertia_from_geom = self.flag(el, "inertiafromgeom", "auto")
            if el.get("settotalmass") is not None:
                mass = self.scalar(el, "settotalmass")
                if mass > 0:
                    self.total_mass = mass
            if el.get("meshdir") is not None:
                self.mesh_dir = self.path.resolve().parent / el.get("meshdir")

    # -- default classes --------------------------------------------------------------------
    def read_defaults(self, el, name: str, parent: str | None):
        cls = el.get("class", name)
        if cls in self.defaults:
            raise self.error(el, "<default>", f"class \"{cls}\" defined twice")
        inherited = {tag: dict(attrs) for tag, attrs in self.defaults.get(parent, {}).items()}
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tag == "default":
                continue
            inherited.setdefault(child.tag, {}).update(child.attrib)
        self.defaults[cls] = inherited
        for child in el.findall("default"):
            if child.get("class") is None:
                raise self.error(child, "<default>", "a nested <default> needs a class")
            self.read_defaults(child, child.get("class"), cls)

    def class_chain(self, el, kind: str):
        """Default attribute dicts for element `el` of kind `kind`, most specific first."""
        cls = el.get("class")
        if cls is None:
            node = el.getparent()
            while node is not None and cls is None:
                if node.tag in ("body", "worldbody"):
                    cls = node.get("childclass")
                node = node.getparent()
        cls = cls or "main"
        if cls not in self.defaults:
            if cls == "main":
                return []
            raise self.error(el, self.describe(el), f"unknown default class \"{cls}\"; "
                             f"defined: {sorted(self.defaults) or 'none'}")
        found = self.defaults[cls].get(kind)
        return [found] if found else []

    # -- assets -----------------------------------------------------------------------------
    def read_assets(self, asset):
        for el in asset:
            if not isinstance(el.tag, str) or el.tag != "mesh":
                continue
            file = el.get("file")
            if not file:
                raise self.error(el, "<mesh>", "missing attribute 'file'")
            name = el.get("name") or Path(file).stem
            scale = self.numbers(el, "scale", 3, (1, 1, 1))
            self.meshes[name] = (el, self.mesh_dir / file, scale)

    # -- orientation --------------------------------------------------------------------------
    def frame(self, el, kind=None) -> Origin:
        """pos and the one orientation attribute of `el` (quat, axisangle, euler, xyaxes, zaxis)."""
        pos = self.numbers(el, "pos", 3, (0, 0, 0), kind)
        given = [a for a in ("quat", "axisangle", "euler", "xyaxes", "zaxis")
                 if el.get(a) is not None]
        if len(given) > 1:
            raise self.error(el, self.describe(el), f"several orientations ({', '.join(given)});"
                             " give one")
        R = np.eye(3)
        what = self.describe(el)
        if given == ["quat"]:
            q = self.numbers(el, "quat", 4)
            norm = np.linalg.norm(q)
            if norm < 1e-12:
                raise self.error(el, what, "quat must be non-zero")
            R = quat2mat(q / norm)                    # MuJoCo quaternions are w x y z
        elif given == ["axisangle"]:
            v = self.numbers(el, "axisangle", 4)
            if np.linalg.norm(v[:3]) < 1e-12:
                raise self.error(el, what, "axisangle's axis must be non-zero")
            axis = v[:3] / np.linalg.norm(v[:3])
            angle = v[3] * self.angle_scale
            K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
            R = np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K
        elif given == ["euler"]:
            e = self.numbers(el, "euler", 3) * self.angle_scale
            seq = self.eulerseq
            # MuJoCo: lower case = axes that move with the frame, upper case = fixed axes
            axes = ("r" if seq.islower() else "s") + seq.lower()
            if not (seq.islower() or seq.isupper()):
                raise self.error(el, what, f"eulerseq \"{seq}\" mixes moving and fixed axes: "
                                 "not supported")
            R = euler2mat(*e, axes=axes)
        elif given == ["xyaxes"]:
            v = self.numbers(el, "xyaxes", 6)
            x = v[:3]
            y = v[3:] - (v[3:] @ x) / max(x @ x, 1e-300) * x
            if np.linalg.norm(x) < 1e-12 or np.linalg.norm(y) < 1e-12:
                raise self.error(el, what, "xyaxes must be two independent vectors")
            x, y = x / np.linalg.norm(x), y / np.linalg.norm(y)
            R = np.column_stack([x, y, np.cross(x, y)])
        elif given == ["zaxis"]:
            z = self.numbers(el, "zaxis", 3)
            if np.linalg.norm(z) < 1e-12:
                raise self.error(el, what, "zaxis must be non-zero")
            R = rotation_between([0, 0, 1], z)
        return Origin(R=R, p=pos)

    # -- geoms ----------------------------------------------------------------------------------
    def geom(self, el) -> _Geom | None:
        what = self.describe(el)
        gtype = self.raw(el, "type") or "sphere"
        if gtype not in GEOM_TYPES:
            raise self.error(el, what, f"unknown geom type \"{gtype}\"; supported: "
                             + ", ".join(GEOM_TYPES))
        size = self.numbers(el, "size", None, ())
        fromto = self.numbers(el, "fromto", 6) if el.get("fromto") is not None else None
        origin = self.frame(el, "geom")
        needed = {"sphere": 1, "capsule": 1 if fromto is not None else 2,
                  "cylinder": 1 if fromto is not None else 2, "box": 3, "ellipsoid": 3,
                  "plane": 0, "mesh": 0}[gtype]
        if len(size) < needed:
            raise self.error(el, what, f"a {gtype} needs {needed} size number(s), "
                             f"got \"{self.raw(el, 'size') or ''}\"")
        if needed and np.any(size[:needed] <= 0):
            raise self.error(el, what, f"size \"{self.raw(el, 'size')}\" must be positive")
        if fromto is not None and gtype in ("capsule", "cylinder"):
            a, b = fromto[:3], fromto[3:]
            length = float(np.linalg.norm(b - a))
            if length < 1e-12:
                raise self.error(el, what, "fromto's two points coincide")
            origin = Origin(R=rotation_between([0, 0, 1], b - a), p=(a + b) / 2)
            half = length / 2
        elif gtype in ("capsule", "cylinder"):
            half = float(size[1])
        if gtype == "sphere":
            shape = geo.Sphere(float(size[0]))
            volume = 4.0 / 3.0 * math.pi * size[0] ** 3
        elif gtype == "box":
            shape = geo.Box(tuple(float(s) * 2 for s in size[:3]))
            volume = 8.0 * float(np.prod(size[:3]))
        elif gtype == "capsule":
            r = float(size[0])
            shape = geo.Capsule(r, 2 * half)
            volume = math.pi * r * r * 2 * half + 4.0 / 3.0 * math.pi * r ** 3
        elif gtype == "cylinder":
            r = float(size[0])
            shape = geo.Cylinder(r, 2 * half)
            volume = math.pi * r * r * 2 * half
        elif gtype == "plane":
            if el.getparent().tag != "worldbody":
                raise self.error(el, what, "a plane geom must be static: put it in <worldbody>")
            shape = geo.Plane((0.0, 0.0, 1.0), 0.0)
            volume = 0.0
        elif gtype == "ellipsoid":
            raise self.error(el, what, "ellipsoid geoms are not supported (sim_node has no "
                             "ellipsoid shape); use a sphere, capsule or mesh")
        else:
            shape, volume = self.mesh_geom(el, what)
        density = self.scalar(el, "density", DEFAULT_DENSITY)
        mass = self.scalar(el, "mass")
        if density < 0 or (mass is not None and mass < 0):
            raise self.error(el, what, "mass and density must be non-negative")
        if self.pybullet_masses:
            density, mass = DEFAULT_DENSITY, None
        if mass is None:
            mass = density * volume
        inertia = np.zeros((3, 3))
        if mass > 0 and volume > 0:
            if gtype == "mesh":
                props = geo.mass_properties(shape, mass)
                com_local, I_local = props.com, props.inertia
            else:
                com_local, I_local = np.zeros(3), geo.mass_properties(shape, mass).inertia
            inertia = origin.R @ I_local @ origin.R.T
            com = origin.p + origin.R @ com_local
        else:
            com = origin.p.copy()
        rgba = self.numbers(el, "rgba", 4, None) if self.raw(el, "rgba") else None
        color = None if rgba is None else tuple(float(c) for c in np.clip(rgba, 0, 1))
        group = self.integer(el, "contype", 1)
        mask = self.integer(el, "conaffinity", 1)
        element = GeometryElement(origin=origin, shape=shape, name=el.get("name", ""),
                                  color=color)
        return _Geom(element, float(mass), com, inertia, group, mask)

    def integer(self, el, name: str, default: int) -> int:
        text = self.raw(el, name)
        if text is None:
            return default
        try:
            value = int(text.strip())
        except ValueError:
            raise self.error(el, self.describe(el), f"attribute {name}=\"{text}\" is not an "
                             "integer") from None
        if not 0 <= value < 2 ** 31:
            raise self.error(el, self.describe(el), f"attribute {name}={value}: expected 0 .. "
                             "2^31 - 1")
        return value

    def mesh_geom(self, el, what):
        name = self.raw(el, "mesh")
        if not name or name not in self.meshes:
            raise self.error(el, what, f"mesh \"{name}\" is not an <asset><mesh>; have "
                             f"{sorted(self.meshes) or 'none'}")
        asset_el, path, scale = self.meshes[name]
        try:
            shape = geo.load_mesh(str(path), tuple(scale))
        except FileNotFoundError:
            raise self.error(asset_el, f"<mesh name=\"{name}\">",
                             f"mesh file not found: {path}") from None
        except geo.MeshLoadError as exc:
            raise self.error(asset_el, f"<mesh name=\"{name}\">", str(exc)) from None
        import trimesh      # volume of the mesh (its convex hull when it is not closed)

        tm = trimesh.Trimesh(vertices=shape.vertices, faces=shape.faces, process=False)
        volume = abs(float(tm.volume)) if tm.is_watertight else float(tm.convex_hull.volume)
        return shape, volume

    # -- bodies -----------------------------------------------------------------------------------
    def static_geom(self, el) -> MJCFBody:
        geom = self.geom(el)
        name = el.get("name") or "anonymous"
        link = Link(name=name, inertial=None, visuals=(geom.element,),
                    collisions=(geom.element,), line=el.sourceline)
        urdf = URDFRobot(name=self.model, links={name: link}, joints={}, root=name,
                         source=self.source)
        return MJCFBody(urdf, True, np.eye(3), np.zeros(3), {name: (geom.group, geom.mask)})

    def top_body(self, el, m: int) -> MJCFBody:
        self.m = m
        self.links, self.joints, self.filters = {}, {}, {}
        self.body_links = []
        self.link_count = 0
        root_link, fixed, origin = self.body(el, None, 0)
        urdf = URDFRobot(name=self.model, links=self.links, joints=self.joints, root=root_link,
                         source=self.source)
        return MJCFBody(urdf, fixed, origin.R if not fixed else np.eye(3),
                        origin.p if not fixed else np.zeros(3), dict(self.filters),
                        tuple(self.body_links))

    def new_link_name(self, name: str | None) -> tuple[str, int]:
        index = self.link_count
        self.link_count += 1
        name = name or f"link{self.m}_{index}"
        if name in self.links:
            raise MJCFError(self.source, f"body '{name}'", "duplicate body name")
        self.links[name] = None          # reserved; filled when the body is read
        return name, index

    def add_joint(self, joint: Joint):
        if joint.name in self.joints:
            raise MJCFError(self.source, f"joint '{joint.name}'", "duplicate joint name",
                            joint.line)
        self.joints[joint.name] = joint

    def body(self, el, parent: tuple | None, depth: int):
        """Read <body> `el` hanging from parent = (link name, link index) or None (top level).
        Returns (the top link's name, whether the base is fixed, the body's pose)."""
        if depth > MAX_DEPTH:
            raise self.error(el, self.describe(el), f"bodies nested deeper than {MAX_DEPTH}")
        name, index = self.new_link_name(el.get("name"))
        self.body_links.append(name)
        if el.get("name") is None:
            self.counter += 1            # PyBullet numbers anonymous bodies from its counter
        pose = self.frame(el)
        top = parent is None
        joint_els = [c for c in el if isinstance(c.tag, str) and c.tag in ("joint", "freejoint")]
        free_top = top and any(self.joint_type(j) == "free" for j in joint_els)
        if free_top and len(joint_els) > 1:
            raise self.error(joint_els[1], self.describe(joint_els[1]), "a top-level body "
                             "with a free joint can have no other joint")
        root_name = name
        fixed_base = False
        attach = parent                # (link, index) the next joint or the body hangs from
        to_next = pose                 # from the attach link's frame to the next frame
        previous_anchor = None
        geoms, inertial_el = [], None
        for child in el:
            if not isinstance(child.tag, str):
                continue
            tag = child.tag
            if tag in ("joint", "freejoint"):
                if free_top:
                    continue
                if attach is None:      # a top-level body with joints: a fixed massless root
                    root, root_index = self.new_link_name(None)
                    self.links[root] = Link(name=root, inertial=None, visuals=(), collisions=(),
                                            line=el.sourceline)
                    attach, root_name, fixed_base = (root, root_index), root, True
                joint, anchor = self.joint(child, attach[0], to_next, previous_anchor)
                attach = (joint.child, self.link_count - 1)
                previous_anchor = anchor
                to_next = Origin(R=np.eye(3), p=-anchor)
            elif tag == "geom":
                geoms.append(self.geom(child))
            elif tag == "inertial":
                inertial_el = child
            elif tag == "body":
                self.body(child, (name, index), depth + 1)
            elif tag not in QUIET:
                self.warn(child, f"<{tag}>", f"unknown element in <body>: ignored")
        if attach is not None and attach[0] != name:
            self.add_joint(Joint(
                name=f"jointfix_{self.counter}_{attach[1]}", type="fixed", parent=attach[0],
                child=name, origin=to_next, axis=np.array([1.0, 0.0, 0.0]), limit=None,
                damping=0.0, friction=0.0, mimic=None, line=el.sourceline))
            self.counter += 1
        elements = tuple(g.element for g in geoms)
        self.links[name] = Link(name=name, inertial=self.body_inertial(el, inertial_el, geoms),
                                visuals=elements, collisions=elements, line=el.sourceline)
        if geoms:
            self.filters[name] = (int(np.bitwise_or.reduce([g.group for g in geoms])),
                                  int(np.bitwise_or.reduce([g.mask for g in geoms])))
        return root_name, fixed_base, pose

    def joint_type(self, el) -> str:
        if el.tag == "freejoint":
            return "free"
        jtype = self.raw(el, "type", "joint") or "hinge"
        if jtype not in JOINT_TYPES:
            raise self.error(el, self.describe(el), f"unknown joint type \"{jtype}\"; "
                             "supported: " + ", ".join(JOINT_TYPES))
        return jtype

    def joint(self, el, parent: str, to_anchor: Origin, previous_anchor):
        """The URDF joint for MJCF joint `el`: a new massless link hanging from `parent` at
        `to_anchor` composed with the joint's anchor. Returns (Joint, anchor in the body)."""
        kind = "joint"
        jtype = self.joint_type(el)
        what = self.describe(el)
        anchor = self.numbers(el, "pos", 3, (0, 0, 0), kind)
        axis = self.numbers(el, "axis", 3, (0, 0, 1), kind)
        norm = np.linalg.norm(axis)
        if jtype in ("hinge", "slide"):
            if norm < 1e-12:
                raise self.error(el, what, "axis must be non-zero")
            axis = axis / norm
        else:
            axis = np.array([1.0, 0.0, 0.0])
        for attribute in IGNORED_JOINT_ATTRIBUTES:
            value = self.raw(el, attribute, kind)
            if value is not None and value.strip() not in ("0", "0.0") and attribute not in \
                    self.ignored:
                self.ignored[attribute] = el.sourceline
        lower, upper = -math.inf, math.inf
        range_ = self.numbers(el, "range", 2, None, kind)
        limited = self.flag(el, "limited", "auto", kind)
        if limited == "auto":
            limited = "true" if range_ is not None else "false"
        if limited == "true" and jtype in ("hinge", "slide"):
            if range_ is None:
                raise self.error(el, what, "limited=\"true\" needs a range")
            scale = self.angle_scale if jtype == "hinge" else 1.0
            lower, upper = float(range_[0]) * scale, float(range_[1]) * scale
            if lower > upper:
                raise self.error(el, what, f"range \"{self.raw(el, 'range', kind)}\": lower "
                                 "above upper")
        elif limited == "true" and jtype == "ball":
            self.warn(el, what, "the range of a ball joint (a cone) is not modelled: ignored")
        damping = self.scalar(el, "damping", 0.0, kind)
        friction = self.scalar(el, "frictionloss", 0.0, kind)
        if damping < 0 or friction < 0:
            raise self.error(el, what, "damping and frictionloss must be non-negative")
        urdf_type = {"hinge": "revolute" if math.isfinite(lower) else "continuous",
                     "slide": "prismatic", "ball": "spherical", "free": "floating",
                     "fixed": "fixed"}[jtype]
        limit = Limit(lower, upper, math.inf, math.inf) if urdf_type in (
            "revolute", "continuous", "prismatic") else None
        child, index = self.new_link_name(None)
        self.links[child] = Link(name=child, inertial=None, visuals=(), collisions=(),
                                 line=el.sourceline)
        name = el.get("name")
        if not name:
            name = f"joint{self.counter}_{index}_{len(self.joints)}"
            self.counter += 1
        origin = Origin(R=to_anchor.R, p=to_anchor.p + to_anchor.R @ anchor)
        self.add_joint(Joint(name=name, type=urdf_type, parent=parent, child=child,
                             origin=origin, axis=axis, limit=limit, damping=damping,
                             friction=friction, mimic=None, line=el.sourceline))
        return self.joints[name], anchor

    def body_inertial(self, body_el, el, geoms) -> Inertial | None:
        use_geoms = el is None if self.pybullet_masses else (
            self.inertia_from_geom == "true" or (self.inertia_from_geom == "auto" and el is None))
        if not use_geoms:
            if el is None:
                return None
            what = f"{self.describe(body_el)} <inertial>"
            mass = self.scalar(el, "mass")
            if mass is None or mass < 0:
                raise self.error(el, what, "needs a non-negative mass")
            frame = self.frame(el)
            if el.get("diaginertia") is not None:
                I = np.diag(self.numbers(el, "diaginertia", 3))
            elif el.get("fullinertia") is not None:
                xx, yy, zz, xy, xz, yz = self.numbers(el, "fullinertia", 6)
                I = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            else:
                union = self.geoms_inertial(geoms)
                if union is None:
                    raise self.error(el, what, "needs diaginertia or fullinertia (the body "
                                     "has no geom to take the inertia from)")
                self.warn(el, what, "no diaginertia or fullinertia (MuJoCo needs one): the "
                          "inertia of the body's geoms, scaled to the mass, as PyBullet does")
                return Inertial(mass=mass, com=frame.p, inertia=union.inertia * (
                    mass / union.mass))
            return Inertial(mass=mass, com=frame.p, inertia=frame.R @ I @ frame.R.T)
        return self.geoms_inertial(geoms)

    @staticmethod
    def geoms_inertial(geoms) -> Inertial | None:
        """Mass, centre of mass and inertia of the union of the geoms (None: no mass)."""
        parts = [(g.mass, g.com, g.inertia) for g in geoms if g.mass > 0]
        mass = sum(m for m, _, _ in parts)
        if mass <= 0:
            return None
        com = sum(m * c for m, c, _ in parts) / mass
        inertia = np.zeros((3, 3))
        for m, c, I in parts:
            d = c - com
            inertia += I + m * (d @ d * np.eye(3) - np.outer(d, d))
        return Inertial(mass=float(mass), com=com, inertia=inertia)

    # -- actuators and masses ---------------------------------------------------------------------
    def read_actuators(self, root, bodies) -> list:
        joints = {name for b in bodies for name in b.urdf.joints}
        out = []
        for block in root.findall("actuator"):
            for el in block:
                if not isinstance(el.tag, str):
                    continue
                if el.tag not in ("motor", "position", "velocity", "general"):
                    self.warn(el, f"<{el.tag}>", "actuator type not read (motor, position, "
                              "velocity and general are): ignored")
                    continue
                joint = el.get("joint")
                if joint is None:
                    self.warn(el, self.describe(el), "drives no joint (tendon, site...): ignored")
                    continue
                if joint not in joints:
                    # PyBullet ignores actuators; a file of actuators for another file's robot
                    # (pybullet_data's ground.xml) loads there
                    self.warn(el, self.describe(el), f"names missing joint '{joint}': ignored")
                    continue
                gear = self.numbers(el, "gear", None, (1,))
                ranges = {}
                for key in ("ctrl", "force"):
                    limited = self.flag(el, f"{key}limited", "auto")
                    values = self.numbers(el, f"{key}range", 2, None)
                    if limited == "auto":
                        limited = "true" if values is not None else "false"
                    if limited == "true" and values is None:
                        raise self.error(el, self.describe(el), f"{key}limited needs "
                                         f"{key}range")
                    ranges[key] = tuple(float(v) for v in values) if limited == "true" else None
                out.append(MJCFActuator(el.get("name", ""), el.tag, joint, float(gear[0]),
                                        ranges["ctrl"], ranges["force"]))
        return out

    def scale_masses(self, bodies, total: float) -> list:
        current = sum(link.inertial.mass for b in bodies for link in b.urdf.links.values()
                      if link.inertial is not None)
        if current <= 0:
            return bodies
        k = total / current
        out = []
        for b in bodies:
            links = {n: (l if l.inertial is None else Link(
                name=l.name, inertial=Inertial(mass=l.inertial.mass * k, com=l.inertial.com,
                                               inertia=l.inertial.inertia * k),
                visuals=l.visuals, collisions=l.collisions, line=l.line))
                for n, l in b.urdf.links.items()}
            urdf = URDFRobot(name=b.urdf.name, links=links, joints=b.urdf.joints,
                             root=b.urdf.root, source=b.urdf.source)
            out.append(MJCFBody(urdf, b.fixed_base, b.R, b.p, b.collision_filters,
                                b.body_links))
        return out


def is_mjcf(path) -> bool:
    """Whether the XML file `path` has a <mujoco> root element (a Klamp't world has <world>);
    False for anything unreadable (the Klamp't reader then reports it)."""
    try:
        for _, element in etree.iterparse(str(path), events=("start",), resolve_entities=False,
                                          no_network=True, remove_comments=True):
            return element.tag == "mujoco"
    except (OSError, etree.XMLSyntaxError):
        return False
    return False
