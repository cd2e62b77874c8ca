"""URDF parsing into plain data, with strict validation.

``parse_urdf(path_or_xml)`` returns a ``URDFRobot`` or raises ``URDFError`` naming the file,
the element, the line and the problem. Supported: links with inertial / visual / collision
(box, cylinder, sphere, mesh in STL/OBJ/DAE), joints fixed / revolute / continuous / prismatic
with origin, axis, limit, dynamics and mimic. Mesh URIs: ``package://<pkg>/...`` (resolved
through ``package_dirs``, ROS_PACKAGE_PATH, AMENT_PREFIX_PATH and the package.xml files above
the URDF), ``file://`` and paths relative to the URDF file.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree
from transforms3d.euler import euler2mat

from sim_node.model import geometry as geo
from sim_node.model.errors import URDFError

JOINT_TYPES = ("fixed", "revolute", "continuous", "prismatic", "planar", "floating", "spherical")
MOVABLE_TYPES = ("revolute", "continuous", "prismatic", "planar", "floating", "spherical")

# The sim_node sources (or installed share directory) for package://sim_node/ URIs.
_OWN_PACKAGE_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Origin:
    R: np.ndarray = field(default_factory=lambda: np.eye(3))  # rotation child -> parent
    p: np.ndarray = field(default_factory=lambda: np.zeros(3))


@dataclass(frozen=True)
class Inertial:
    mass: float
    com: np.ndarray        # centre of mass in the link frame [m]
    inertia: np.ndarray    # 3x3 about the com, link axes [kg m^2]


@dataclass(frozen=True)
class GeometryElement:
    origin: Origin
    shape: geo.Shape
    name: str = ""


@dataclass(frozen=True)
class Limit:
    lower: float
    upper: float
    effort: float
    velocity: float


@dataclass(frozen=True)
class Mimic:
    joint: str
    multiplier: float
    offset: float


@dataclass(frozen=True)
class Link:
    name: str
    inertial: Inertial | None
    visuals: tuple
    collisions: tuple


@dataclass(frozen=True)
class Joint:
    name: str
    type: str
    parent: str
    child: str
    origin: Origin
    axis: np.ndarray
    limit: Limit | None
    damping: float
    friction: float
    mimic: Mimic | None


@dataclass(frozen=True)
class URDFRobot:
    name: str
    links: dict          # name -> Link, in document order
    joints: dict         # name -> Joint, in document order
    root: str            # the root link
    source: str          # file path or '<string>'
    xml: str = field(repr=False, default="")

    def child_joints(self, link: str) -> list:
        return [j for j in self.joints.values() if j.parent == link]


def parse_urdf(path_or_xml: str | os.PathLike, package_dirs=None) -> URDFRobot:
    """Parse a URDF file path or XML string. Raises URDFError on any malformed input."""
    text = str(path_or_xml)
    if text.lstrip().startswith("<"):
        source, base_dir, xml = "<string>", Path.cwd(), text
    else:
        path = Path(text).expanduser()
        source = str(path)
        if not path.is_file():
            raise URDFError(source, "file", "no such file")
        base_dir = path.resolve().parent
        try:
            xml = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise URDFError(source, "file", f"cannot read: {exc}") from None
    return _Parser(source, base_dir, package_dirs).parse(xml)


class _Parser:
    def __init__(self, source: str, base_dir: Path, package_dirs):
        self.source = source
        self.base_dir = base_dir
        self.package_dirs = [Path(p) for p in (package_dirs or [])]

    # -- errors and attribute helpers -------------------------------------------------------

    def error(self, el, what: str, problem: str):
        return URDFError(self.source, what, problem, getattr(el, "sourceline", None))

    def attr(self, el, name: str, what: str, default=None, required=False):
        value = el.get(name)
        if value is None:
            if required:
                raise self.error(el, what, f"missing attribute '{name}'")
            return default
        return value

    def floats(self, el, name: str, what: str, n: int, default=None, required=False):
        raw = self.attr(el, name, what, None, required)
        if raw is None:
            return None if default is None else np.array(default, dtype=float)
        try:
            values = np.array([float(x) for x in raw.split()], dtype=float)
        except ValueError:
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" is not {n} numbers") from None
        if values.shape != (n,):
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" needs {n} numbers")
        if not np.all(np.isfinite(values)):
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" is not finite")
        return values

    def scalar(self, el, name: str, what: str, default=None, required=False, finite=True):
        raw = self.attr(el, name, what, None, required)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" is not a number") from None
        if finite and not math.isfinite(value):
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" is not finite")
        if math.isnan(value):
            raise self.error(el, what, f"attribute '{name}' is NaN")
        return value

    def origin(self, parent_el, what: str) -> Origin:
        el = parent_el.find("origin")
        if el is None:
            return Origin()
        xyz = self.floats(el, "xyz", f"{what} <origin>", 3, default=(0, 0, 0))
        rpy = self.floats(el, "rpy", f"{what} <origin>", 3, default=(0, 0, 0))
        return Origin(R=euler2mat(*rpy, axes="sxyz"), p=xyz)

    # -- document -----------------------------------------------------------------------------

    def parse(self, xml: str) -> URDFRobot:
        try:
            root = etree.fromstring(xml.encode("utf-8"), etree.XMLParser(remove_comments=True))
        except etree.XMLSyntaxError as exc:
            raise URDFError(self.source, "XML", str(exc), exc.lineno) from None
        if root.tag != "robot":
            raise self.error(root, f"<{root.tag}>", "the root element must be <robot>")
        name = self.attr(root, "name", "<robot>", required=True)
        links = {}
        for el in root.findall("link"):
            link = self.link(el)
            if link.name in links:
                raise self.error(el, f"link '{link.name}'", "duplicate link name")
            links[link.name] = link
        if not links:
            raise self.error(root, f"robot '{name}'", "has no <link>")
        joints = {}
        for el in root.findall("joint"):
            joint = self.joint(el, links)
            if joint.name in joints:
                raise self.error(el, f"joint '{joint.name}'", "duplicate joint name")
            joints[joint.name] = joint
        self.check_mimics(root, joints)
        root_link = self.check_tree(root, links, joints)
        return URDFRobot(name=name, links=links, joints=joints, root=root_link,
                         source=self.source, xml=xml)

    def link(self, el) -> Link:
        name = self.attr(el, "name", "<link>", required=True)
        what = f"link '{name}'"
        inertial = None
        in_el = el.find("inertial")
        if in_el is not None:
            inertial = self.inertial(in_el, f"{what} <inertial>")
        visuals = tuple(self.geometry_element(g, f"{what} <visual>") for g in el.findall("visual"))
        collisions = tuple(self.geometry_element(g, f"{what} <collision>")
                           for g in el.findall("collision"))
        return Link(name=name, inertial=inertial, visuals=visuals, collisions=collisions)

    def inertial(self, el, what: str) -> Inertial:
        origin = self.origin(el, what)
        mass_el = el.find("mass")
        if mass_el is None:
            raise self.error(el, what, "missing <mass>")
        mass = self.scalar(mass_el, "value", f"{what} <mass>", required=True)
        if mass < 0:
            raise self.error(mass_el, f"{what} <mass>", f"negative mass {mass}")
        in_el = el.find("inertia")
        if in_el is None:
            raise self.error(el, what, "missing <inertia>")
        w = f"{what} <inertia>"
        ixx, ixy, ixz, iyy, iyz, izz = (self.scalar(in_el, k, w, required=True)
                                        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
        tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        scale = max(abs(ixx), abs(iyy), abs(izz), 1e-300)
        if np.linalg.eigvalsh(tensor)[0] < -1e-9 * scale:
            raise self.error(in_el, w, "the inertia tensor is not positive semi-definite")
        # inertia given in the <origin> frame; express it in link axes
        return Inertial(mass=mass, com=origin.p, inertia=origin.R @ tensor @ origin.R.T)

    def geometry_element(self, el, what: str) -> GeometryElement:
        origin = self.origin(el, what)
        g = el.find("geometry")
        if g is None:
            raise self.error(el, what, "missing <geometry>")
        shapes = [c for c in g if isinstance(c.tag, str)]
        if len(shapes) != 1:
            raise self.error(g, f"{what} <geometry>", "needs exactly one shape element")
        return GeometryElement(origin=origin, shape=self.shape(shapes[0], what),
                               name=el.get("name", ""))

    def shape(self, el, what: str) -> geo.Shape:
        w = f"{what} <{el.tag}>"
        if el.tag == "box":
            size = self.floats(el, "size", w, 3, required=True)
            if np.any(size <= 0):
                raise self.error(el, w, "box sides must be positive")
            return geo.Box(tuple(size))
        if el.tag == "sphere":
            r = self.scalar(el, "radius", w, required=True)
            if r <= 0:
                raise self.error(el, w, "radius must be positive")
            return geo.Sphere(r)
        if el.tag in ("cylinder", "capsule"):
            r = self.scalar(el, "radius", w, required=True)
            h = self.scalar(el, "length", w, required=True)
            if r <= 0 or h < 0:
                raise self.error(el, w, "radius must be positive and length non-negative")
            return geo.Cylinder(r, h) if el.tag == "cylinder" else geo.Capsule(r, h)
        if el.tag == "mesh":
            uri = self.attr(el, "filename", w, required=True)
            scale = self.floats(el, "scale", w, 3, default=(1, 1, 1))
            path = self.resolve_uri(el, uri, w)
            try:
                return geo.load_mesh(str(path), tuple(scale))
            except FileNotFoundError:
                raise self.error(el, w, f"mesh file not found: {uri} (resolved to {path})") from None
            except geo.MeshLoadError as exc:
                raise self.error(el, w, f"mesh {uri}: {exc}") from None
        raise self.error(el, w, "unknown shape; expected box, cylinder, sphere or mesh")

    def resolve_uri(self, el, uri: str, what: str) -> Path:
        if uri.startswith("package://"):
            package, _, rest = uri[len("package://"):].partition("/")
            bases = self.package_candidates(package)
            if not bases:
                raise self.error(el, what, f"cannot locate package '{package}' for {uri}")
            # several installs may provide the package (e.g. an interfaces-only prefix):
            # take the first that has the file
            for base in bases:
                if (base / rest).is_file():
                    return base / rest
            return bases[0] / rest
        if uri.startswith("file://"):
            return Path(uri[len("file://"):])
        path = Path(uri)
        return path if path.is_absolute() else self.base_dir / path

    def package_candidates(self, package: str) -> list:
        """Directories that may hold `package`, most specific first."""
        found = []
        for base in self.package_dirs:
            found += [d for d in (base, base / package) if d.name == package and d.is_dir()]
        # a package.xml naming `package` in a directory above the URDF
        for parent in [self.base_dir, *self.base_dir.parents]:
            manifest = parent / "package.xml"
            if manifest.is_file() and _package_name(manifest) == package:
                found.append(parent)
                break
        bases = [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
        bases += [Path(p) / "share" for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)
                  if p]
        for base in bases:
            found += [d for d in (base, base / package) if d.name == package and d.is_dir()]
        if package == "sim_node":
            found.append(_OWN_PACKAGE_ROOT)
        return found

    # -- joints and tree ----------------------------------------------------------------------

    def joint(self, el, links: dict) -> Joint:
        name = self.attr(el, "name", "<joint>", required=True)
        what = f"joint '{name}'"
        jtype = self.attr(el, "type", what, required=True)
        if jtype not in JOINT_TYPES:
            raise self.error(el, what, f"unsupported joint type '{jtype}'; supported: "
                             + ", ".join(JOINT_TYPES))
        ends = {}
        for end in ("parent", "child"):
            e = el.find(end)
            if e is None:
                raise self.error(el, what, f"missing <{end}>")
            link = self.attr(e, "link", f"{what} <{end}>", required=True)
            if link not in links:
                raise self.error(e, f"{what} <{end}>", f"names missing link '{link}'")
            ends[end] = link
        axis = np.array([1.0, 0.0, 0.0])
        axis_el = el.find("axis")
        if axis_el is not None:
            axis = self.floats(axis_el, "xyz", f"{what} <axis>", 3, default=(1, 0, 0))
            norm = np.linalg.norm(axis)
            if norm < 1e-12:
                raise self.error(axis_el, f"{what} <axis>", "axis must be non-zero")
            axis = axis / norm
        limit = None
        limit_el = el.find("limit")
        if jtype in ("revolute", "prismatic") and limit_el is None:
            raise self.error(el, what, f"a {jtype} joint needs <limit>")
        # spherical and floating joints have no limits (as in PyBullet); a planar joint's
        # bounds apply to each of its coordinates and are absent unless given
        if limit_el is not None and jtype not in ("fixed", "spherical", "floating"):
            w = f"{what} <limit>"
            planar = jtype == "planar"
            lower = self.scalar(limit_el, "lower", w, default=-math.inf if planar else 0.0,
                                finite=False)
            upper = self.scalar(limit_el, "upper", w, default=math.inf if planar else 0.0,
                                finite=False)
            effort = self.scalar(limit_el, "effort", w, required=True, finite=False)
            velocity = self.scalar(limit_el, "velocity", w, required=True, finite=False)
            if jtype == "continuous":
                lower, upper = -math.inf, math.inf
            elif lower > upper:
                raise self.error(limit_el, w, f"lower {lower} > upper {upper}")
            if effort < 0 or velocity < 0:
                raise self.error(limit_el, w, "effort and velocity must be non-negative")
            limit = Limit(lower, upper, effort, velocity)
        elif jtype == "continuous":
            limit = Limit(-math.inf, math.inf, math.inf, math.inf)
        damping = friction = 0.0
        dyn_el = el.find("dynamics")
        if dyn_el is not None:
            w = f"{what} <dynamics>"
            damping = self.scalar(dyn_el, "damping", w, default=0.0)
            friction = self.scalar(dyn_el, "friction", w, default=0.0)
            if damping < 0 or friction < 0:
                raise self.error(dyn_el, w, "damping and friction must be non-negative")
        mimic = None
        mimic_el = el.find("mimic")
        if mimic_el is not None:
            w = f"{what} <mimic>"
            mimic = Mimic(joint=self.attr(mimic_el, "joint", w, required=True),
                          multiplier=self.scalar(mimic_el, "multiplier", w, default=1.0),
                          offset=self.scalar(mimic_el, "offset", w, default=0.0))
        return Joint(name=name, type=jtype, parent=ends["parent"], child=ends["child"],
                     origin=self.origin(el, what), axis=axis, limit=limit, damping=damping,
                     friction=friction, mimic=mimic)

    def check_mimics(self, root, joints: dict):
        lines = {el.get("name"): el for el in root.findall("joint")}
        for joint in joints.values():
            if joint.mimic is None:
                continue
            el = lines[joint.name]
            what = f"joint '{joint.name}' <mimic>"
            if joint.type == "fixed":
                raise self.error(el, what, "a fixed joint cannot mimic")
            target = joints.get(joint.mimic.joint)
            if target is None:
                raise self.error(el, what, f"names missing joint '{joint.mimic.joint}'")
            if target.type not in MOVABLE_TYPES or target.mimic is not None:
                raise self.error(el, what, f"joint '{target.name}' is not an independent "
                                 "movable joint")
            if (target.type == "prismatic") != (joint.type == "prismatic"):
                raise self.error(el, what, f"cannot couple a {joint.type} joint to a "
                                 f"{target.type} joint")

    def check_tree(self, root, links: dict, joints: dict) -> str:
        parent_of = {}
        for joint in joints.values():
            if joint.child in parent_of:
                raise URDFError(self.source, f"link '{joint.child}'",
                                f"has two parent joints ('{parent_of[joint.child]}' and "
                                f"'{joint.name}')")
            parent_of[joint.child] = joint.name
        roots = [name for name in links if name not in parent_of]
        if not roots:
            raise URDFError(self.source, f"robot '{root.get('name')}'",
                            "the joints form a cycle: every link has a parent")
        if len(roots) > 1:
            raise URDFError(self.source, f"robot '{root.get('name')}'",
                            f"has several root links {roots}; a robot must be one tree")
        reached, stack = {roots[0]}, [roots[0]]
        children = {}
        for joint in joints.values():
            children.setdefault(joint.parent, []).append(joint.child)
        while stack:
            for child in children.get(stack.pop(), []):
                reached.add(child)
                stack.append(child)
        unreached = [name for name in links if name not in reached]
        if unreached:
            raise URDFError(self.source, f"robot '{root.get('name')}'",
                            f"the joints form a cycle through links {unreached}")
        return roots[0]


def _package_name(manifest: Path) -> str | None:
    try:
        return etree.parse(str(manifest)).getroot().findtext("name")
    except (OSError, etree.XMLSyntaxError):
        return None
