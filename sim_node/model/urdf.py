"""URDF parsing into plain data: liberal in what is accepted, strict in what is used.

``parse_urdf(path_or_xml)`` returns a ``URDFRobot`` or raises ``URDFError`` naming the file, the
element, the line and the problem. Supported: links with inertial / visual / collision (box,
cylinder, sphere, capsule, plane, mesh in STL/OBJ/DAE/PLY/OFF), joints fixed / revolute /
continuous / prismatic with origin, axis, limit, dynamics and mimic; ``.xacro`` files through the
xacro package (sim_node.model.xacro_files). Mesh URIs: ``package://NAME/...`` (the package search
of sim_node.model.packages), ``file://`` and paths relative to the URDF file.

Harmless defects are repaired and reported with a ``URDFWarning`` (file, line, element, what was
done) once the file loaded; README "Loading robot files" lists them: an XML declaration that is
not 1.0 or not at the start, trailing NUL bytes, unusable visual geometry (dropped), non-shape
elements inside <geometry>, vectors with extra numbers, unexpanded xacro substitutions
(``$(optenv ...)``), an axis of 0 0 0 on a joint type that ignores it, lower > upper limits (no
position limit, as PyBullet), a mimic naming no usable joint (dropped), a missing robot name,
``package:///NAME``, and physically invalid inertias (sim_node.model.inertia_repair). What stays
an error: an unusable kinematic tree or collision geometry.
"""
from __future__ import annotations

import codecs
import math
import os
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from lxml import etree
from transforms3d.euler import euler2mat

from sim_node.model import geometry as geo
from sim_node.model import inertia_repair
from sim_node.model.errors import URDFError, URDFWarning
from sim_node.model.inertia_repair import Inertial
from sim_node.model.packages import PackageSearch
from sim_node.model.xacro_files import expand as expand_xacro
from sim_node.model.xacro_files import is_xacro, resolve_substitutions

JOINT_TYPES = ("fixed", "revolute", "continuous", "prismatic", "planar", "floating", "spherical")
MOVABLE_TYPES = ("revolute", "continuous", "prismatic", "planar", "floating", "spherical")
# one-coordinate joints: the only ones a <mimic> can couple
SCALAR_TYPES = ("revolute", "continuous", "prismatic")
# joint types whose <axis> means nothing: a zero axis there is ignored with a warning
AXIS_IGNORED_TYPES = ("fixed", "floating", "spherical")
SHAPE_TAGS = ("box", "sphere", "cylinder", "capsule", "mesh", "plane")
# |x| above this in a URDF number is refused: no robot needs it, and products of such numbers
# overflow in the dynamics
MAX_MAGNITUDE = 1e15


@dataclass(frozen=True)
class Origin:
    R: np.ndarray = field(default_factory=lambda: np.eye(3))  # rotation child -> parent
    p: np.ndarray = field(default_factory=lambda: np.zeros(3))


@dataclass(frozen=True)
class GeometryElement:
    origin: Origin
    shape: geo.Shape
    name: str = ""
    # a visual's <material> colour (r, g, b, a) in [0, 1]: inline <color rgba> or the robot-level
    # <material> of that name; None when not given (textures are not read: the renderer's
    # default grey stands in for them)
    color: tuple | None = None


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
    line: int | None = None      # of the <link> element


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
    line: int | None = None      # of the <joint> element


@dataclass(frozen=True)
class URDFRobot:
    name: str
    links: dict          # name -> Link, in document order
    joints: dict         # name -> Joint, in document order
    root: str            # the root link
    source: str          # file path or '<string>'
    xml: str = field(repr=False, default="")   # the document (repaired if it had to be)
    # link name -> (Inertial as written or None, Inertial used) for every repaired inertia
    inertia_repairs: dict = field(repr=False, default_factory=dict)
    # Klamp't sensors of <klampt><sensors><TYPE name=".." setting=".."/></sensors></klampt>
    # (sim_node.model.settings.SensorEntry), in document order
    sensors: tuple = ()

    def child_joints(self, link: str) -> list:
        return [j for j in self.joints.values() if j.parent == link]


def parse_urdf(path_or_xml: str | os.PathLike, package_dirs=None,
               xacro_args: dict | None = None, *, substitutions: bool = True) -> URDFRobot:
    """Parse a URDF (or xacro) file path or a URDF XML string. Raises URDFError on input that
    cannot be used; repairs harmless defects and then issues one URDFWarning per repair.

    `package_dirs`: directories searched first for package:// URIs and $(find); `xacro_args`:
    {name: value} arguments of a .xacro file; `substitutions`: False refuses the substitution
    args ($(env ...), $(find ...)) a plain URDF may hold instead of expanding them (a URDF a ROS
    client sent: expanding them would hand it the node's environment and file system)."""
    text = str(path_or_xml)
    if text.lstrip().startswith("<"):
        parser = _Parser("<string>", Path.cwd(), PackageSearch(package_dirs, None),
                         substitutions)
        robot = parser.parse(text.encode("utf-8"), from_string=True)
    else:
        path = Path(text).expanduser()
        source = str(path)
        try:
            is_file = path.is_file()
        except OSError:
            is_file = False
        if not is_file:
            raise URDFError(source, "file", "no such file")
        search = PackageSearch(package_dirs, path.resolve().parent)
        parser = _Parser(source, path.resolve().parent, search, substitutions)
        if is_xacro(path):
            xml = expand_xacro(path, xacro_args, search)
            parser.source = f"{source} (expanded by xacro)"
            robot = parser.parse(xml.encode("utf-8"), from_string=True)
        else:
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise URDFError(source, "file", f"cannot read: {exc.strerror or exc}") from None
            robot = parser.parse(data)
    for warning in parser.warnings:
        warnings.warn(warning, stacklevel=2)
    return robot


_XML_DECLARATION = re.compile(rb"<\?xml\s[^>]*\?>")
# a number followed only by stray punctuation
_LENIENT_NUMBER = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[.,;:]+$")
_DECLARED_VERSION = re.compile(rb"""version\s*=\s*["']([^"']*)["']""")
_DECLARED_ENCODING = re.compile(rb"""encoding\s*=\s*["']([^"']*)["']""")


class _Parser:
    def __init__(self, source: str, base_dir: Path, search: PackageSearch,
                 substitutions: bool = True):
        self.source = source
        self.substitutions = substitutions
        self.base_dir = base_dir
        self.search = search
        self.warnings = []
        self.inertia_repairs = {}
        self.named_colors = {}     # <material> name -> rgba (robot level, then as links define)

    # -- errors, warnings and attribute helpers ---------------------------------------------

    def error(self, el, what: str, problem: str):
        return URDFError(self.source, what, problem, getattr(el, "sourceline", None))

    def warn(self, el, what: str, repaired: str, line=None):
        line = line if line is not None else getattr(el, "sourceline", None)
        self.warnings.append(URDFWarning(self.source, what, repaired, line))

    def attr(self, el, name: str, what: str, default=None, required=False):
        value = el.get(name)
        if value is None:
            if required:
                raise self.error(el, what, f"missing attribute '{name}'")
            return default
        if "$(" in value:
            # a substitution xacro would have expanded (e.g. $(optenv HUSKY_IMU_XYZ 0 0 0))
            if not self.substitutions:
                raise self.error(el, what, f"attribute '{name}' holds a substitution arg "
                                 "($(...)): not expanded in a URDF sent by a client; expand "
                                 "it before sending")
            try:
                expanded = resolve_substitutions(value, self.search)
            except ValueError as exc:
                raise self.error(el, what, f"attribute '{name}'=\"{value}\": {exc}") from None
            self.warn(el, what, f"attribute '{name}'=\"{value}\" holds an unexpanded xacro "
                      f"substitution: expanded to \"{expanded}\"")
            value = expanded
        return value

    def number(self, el, name: str, what: str, raw: str, token: str) -> float:
        """float(token); a number followed only by stray punctuation ('-1.57.') is read with a
        warning, as PyBullet's strtod-based parser reads it."""
        try:
            return float(token)
        except ValueError:
            pass
        match = _LENIENT_NUMBER.match(token)
        if match is None:
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" is not a number") from None
        value = float(match.group(1))
        self.warn(el, what, f"attribute '{name}'=\"{raw}\": '{token}' read as {value:g}")
        return value

    def floats(self, el, name: str, what: str, n: int, default=None, required=False):
        raw = self.attr(el, name, what, None, required)
        if raw is None:
            return None if default is None else np.array(default, dtype=float)
        tokens = [t for t in re.split(r"[\s,]+", raw) if t]
        if "," in raw and len(tokens) >= n:
            self.warn(el, what, f"attribute '{name}'=\"{raw}\": numbers separated by commas")
        try:
            values = np.array([self.number(el, name, what, raw, t) for t in tokens], dtype=float)
        except OverflowError:
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" is not {n} numbers") from None
        if len(values) < n:
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" needs {n} numbers")
        if len(values) > n:
            self.warn(el, what, f"attribute '{name}'=\"{raw}\" has {len(values)} numbers, "
                      f"{n} expected: the first {n} are used")
            values = values[:n]
        if not np.all(np.isfinite(values)):
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" is not finite")
        if np.any(np.abs(values) > MAX_MAGNITUDE):
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" exceeds "
                             f"{MAX_MAGNITUDE:g} in magnitude")
        return values

    def scalar(self, el, name: str, what: str, default=None, required=False, finite=True):
        raw = self.attr(el, name, what, None, required)
        if raw is None:
            return default
        value = self.number(el, name, what, raw, raw.strip())
        if math.isnan(value):
            raise self.error(el, what, f"attribute '{name}' is NaN")
        if finite and not math.isfinite(value):
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" is not finite")
        if finite and abs(value) > MAX_MAGNITUDE:
            raise self.error(el, what, f"attribute '{name}'=\"{raw}\" exceeds "
                             f"{MAX_MAGNITUDE:g} in magnitude")
        return value

    def origin(self, parent_el, what: str) -> Origin:
        el = parent_el.find("origin")
        if el is None:
            return Origin()
        xyz = self.floats(el, "xyz", f"{what} <origin>", 3, default=(0, 0, 0))
        rpy = self.floats(el, "rpy", f"{what} <origin>", 3, default=(0, 0, 0))
        return Origin(R=euler2mat(*rpy, axes="sxyz"), p=xyz)

    # -- document -----------------------------------------------------------------------------

    def clean(self, data: bytes, from_string: bool) -> tuple[bytes, str]:
        """(the document without its XML declaration (blanked in place, so line numbers stay),
        decoded by the declared encoding and without trailing NUL bytes, as UTF-8; the text to
        keep as the robot description: the original, or the cleaned one if it was repaired)."""
        repairs_before = len(self.warnings)
        if data.startswith(codecs.BOM_UTF8):
            data = data[len(codecs.BOM_UTF8):]
        encoding = "utf-8"
        original = data
        stripped = data.lstrip(b" \t\r\n")
        declaration = _XML_DECLARATION.match(stripped)
        if declaration is not None:
            start = len(data) - len(stripped)
            text = declaration.group(0)
            lines_before = data[:start].count(b"\n")
            if start and not from_string:
                self.warn(None, "XML declaration", f"{lines_before} blank line(s) before the XML "
                          "declaration: ignored", line=lines_before + 1)
            version = _DECLARED_VERSION.search(text)
            if version is not None and version.group(1) not in (b"1.0", b"1.1"):
                self.warn(None, "XML declaration", f"version \"{version.group(1).decode('ascii', 'replace')}\""
                          ": read as XML 1.0", line=lines_before + 1)
            declared = _DECLARED_ENCODING.search(text)
            if declared is not None:
                encoding = declared.group(1).decode("ascii", "replace")
            blank = bytes(b if b == 0x0A else 0x20 for b in text)
            data = data[:start] + blank + data[start + len(text):]
        body = data.rstrip(b" \t\r\n\x00")
        if b"\x00" in data[len(body):]:
            self.warn(None, "document", "NUL byte(s) after the end of the document: ignored",
                      line=body.count(b"\n") + 1)
        try:
            text = body.decode(encoding)
            kept = text if len(self.warnings) > repairs_before else original.decode(encoding)
            return text.encode("utf-8"), kept
        except LookupError:
            raise URDFError(self.source, "XML declaration",
                            f"unknown encoding '{encoding}'", 1) from None
        except UnicodeDecodeError as exc:
            line = body[:exc.start].count(b"\n") + 1
            raise URDFError(self.source, "document", f"bytes that are not valid {encoding} "
                            f"at offset {exc.start}", line) from None

    def parse(self, data: bytes, from_string: bool = False) -> URDFRobot:
        xml, description = self.clean(data, from_string)
        parser = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True)
        try:
            root = etree.fromstring(xml, parser)
        except etree.XMLSyntaxError as exc:
            raise URDFError(self.source, "XML", str(exc), exc.lineno) from None
        if root is None:
            raise URDFError(self.source, "XML", "the document is empty")
        if root.tag != "robot":
            raise self.error(root, f"<{root.tag}>", "the root element must be <robot>")
        name = root.get("name")
        if not name:
            name = Path(self.source.split(" (")[0]).stem if self.source != "<string>" else "robot"
            self.warn(root, "<robot>", f"missing attribute 'name': named '{name}'")
        # robot-level materials may follow the links that name them
        self.named_colors = self.materials(root)
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
        joints = self.check_mimics(joints)
        root_link = self.check_tree(name, links, joints)
        return URDFRobot(name=name, links=links, joints=joints, root=root_link,
                         source=self.source, xml=description,
                         inertia_repairs=dict(self.inertia_repairs),
                         sensors=self.klampt_sensors(root))

    def klampt_sensors(self, root) -> tuple:
        # Klamp't's <klampt><sensors>: one element per sensor, its tag the sensor type, its
        # attributes the settings (name required); the settings are checked when the
        # simulator builds the sensors (sim_node.sim.sensors)
        from sim_node.model.settings import SensorEntry

        out, names = [], set()
        for block in root.findall("klampt"):
            for sensors in block.findall("sensors"):
                for el in sensors:
                    if not isinstance(el.tag, str):
                        continue
                    name = self.attr(el, "name", f"<klampt><sensors><{el.tag}>", required=True)
                    if name in names:
                        raise self.error(el, f"sensor '{name}'", "duplicate sensor name")
                    names.add(name)
                    out.append(SensorEntry(name, el.tag, tuple(
                        (k, v) for k, v in el.attrib.items() if k != "name")))
        return tuple(out)

    def link(self, el) -> Link:
        name = self.attr(el, "name", "<link>", required=True)
        what = f"link '{name}'"
        inertial = None
        in_el = el.find("inertial")
        if in_el is not None:
            inertial = self.inertial(in_el, f"{what} <inertial>", name)
        visuals = tuple(v for v in (self.visual(g, f"{what} <visual>") for g in el.findall("visual"))
                        if v is not None)
        collisions = tuple(self.geometry_element(g, f"{what} <collision>")
                           for g in el.findall("collision"))
        return Link(name=name, inertial=inertial, visuals=visuals, collisions=collisions,
                    line=el.sourceline)

    def inertial(self, el, what: str, link: str) -> Inertial:
        origin = self.origin(el, what)
        mass_el = el.find("mass")
        if mass_el is None:
            raise self.error(el, what, "missing <mass>")
        mass = self.scalar(mass_el, "value", f"{what} <mass>", required=True)
        in_el = el.find("inertia")
        if in_el is None:
            raise self.error(el, what, "missing <inertia>")
        w = f"{what} <inertia>"
        ixx, ixy, ixz, iyy, iyz, izz = (self.scalar(in_el, k, w, required=True)
                                        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
        tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        # inertia given in the <origin> frame; express it in link axes
        written = Inertial(mass=mass, com=origin.p, inertia=origin.R @ tensor @ origin.R.T)
        repaired, note = inertia_repair.repair_link_inertial(written)
        if note:
            self.warn(in_el, w, note)
            self.inertia_repairs[link] = (written, repaired)
        return repaired

    def visual(self, el, what: str) -> GeometryElement | None:
        """A visual element, or None (with a warning) when its geometry cannot be used."""
        try:
            element = self.geometry_element(el, what)
        except URDFError as exc:
            self.warn(el, exc.element, f"visual dropped: {exc.problem}", line=exc.line)
            return None
        material = el.find("material")
        if material is None:
            return element
        color = self.material_color(material, f"{what} <material>")
        if color is None:
            color = self.named_colors.get(material.get("name"))
        elif material.get("name") and material.get("name") not in self.named_colors:
            # a named colour defined inside a <visual> serves later references to that name,
            # as in urdfdom and PyBullet (r2d2.urdf defines "black" in its first wheel)
            self.named_colors[material.get("name")] = color
        return element if color is None else replace(element, color=color)

    def materials(self, root) -> dict:
        """The robot-level <material name=...><color rgba=.../></material>: name -> rgba."""
        named = {}
        for el in root.findall("material"):
            color = self.material_color(el, f"<material name=\"{el.get('name', '')}\">")
            if color is not None and el.get("name"):
                named[el.get("name")] = color
        return named

    def material_color(self, el, what: str) -> tuple | None:
        """A <material>'s <color rgba> clipped to [0, 1], or None (absent, or unreadable: then
        with a warning, as a colour is cosmetic)."""
        color_el = el.find("color")
        if color_el is None:
            return None
        try:
            rgba = self.floats(color_el, "rgba", f"{what} <color>", 4, required=True)
        except URDFError as exc:
            self.warn(color_el, exc.element, f"colour ignored: {exc.problem}", line=exc.line)
            return None
        return tuple(float(c) for c in np.clip(rgba, 0.0, 1.0))

    def geometry_element(self, el, what: str) -> GeometryElement:
        origin = self.origin(el, what)
        g = el.find("geometry")
        if g is None:
            raise self.error(el, what, "missing <geometry>")
        children = [c for c in g if isinstance(c.tag, str)]
        shapes = [c for c in children if c.tag in SHAPE_TAGS]
        if not children:
            raise self.error(g, f"{what} <geometry>", "is empty; expected one of "
                             + ", ".join(SHAPE_TAGS))
        if not shapes:
            raise self.error(children[0], f"{what} <{children[0].tag}>",
                             "unknown shape; expected " + ", ".join(SHAPE_TAGS))
        if len(shapes) > 1:
            raise self.error(g, f"{what} <geometry>", "holds several shapes "
                             f"({', '.join(c.tag for c in shapes)}); expected one")
        for other in children:
            if other.tag not in SHAPE_TAGS:
                self.warn(other, f"{what} <geometry>", f"<{other.tag}> is not a shape: ignored")
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
                raise self.error(el, w, f"radius must be positive, got {r:g}")
            return geo.Sphere(r)
        if el.tag in ("cylinder", "capsule"):
            r = self.scalar(el, "radius", w, required=True)
            h = self.scalar(el, "length", w, required=True)
            if r <= 0 or h < 0:
                raise self.error(el, w, "radius must be positive and length non-negative")
            return geo.Cylinder(r, h) if el.tag == "cylinder" else geo.Capsule(r, h)
        if el.tag == "plane":
            # PyBullet's extension: the plane through the element's origin, normal in its axes
            normal = self.floats(el, "normal", w, 3, default=(0, 0, 1))
            norm = np.linalg.norm(normal)
            if norm < 1e-12:
                raise self.error(el, w, "normal must be non-zero")
            return geo.Plane(tuple(normal / norm), 0.0)
        uri = self.attr(el, "filename", w, required=True)
        scale = self.floats(el, "scale", w, 3, default=(1, 1, 1))
        path = self.resolve_uri(el, uri, w)
        try:
            return geo.load_mesh(str(path), tuple(scale))
        except FileNotFoundError:
            raise self.error(el, w, f"mesh file not found: {uri} (resolved to {path})") from None
        except geo.MeshLoadError as exc:
            raise self.error(el, w, f"mesh {uri}: {exc}") from None

    def resolve_uri(self, el, uri: str, what: str) -> Path:
        if uri.startswith("package://"):
            rest = uri[len("package://"):]
            if rest.startswith("/"):
                self.warn(el, what, f"'{uri}' names no package (three slashes): read as "
                          f"package://{rest.lstrip('/')}")
                rest = rest.lstrip("/")
            package, _, rest = rest.partition("/")
            path, searched = self.search.resolve(package, rest)
            if path is None:
                raise self.error(el, what, f"mesh file not found: {uri}; looked in: "
                                 + "; ".join(searched))
            return path
        if uri.startswith("file://"):
            return Path(uri[len("file://"):])
        path = Path(uri)
        return path if path.is_absolute() else self.base_dir / path

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
                if jtype not in AXIS_IGNORED_TYPES:
                    raise self.error(axis_el, f"{what} <axis>", "axis must be non-zero")
                self.warn(axis_el, f"{what} <axis>", f"axis 0 0 0 on a {jtype} joint, which "
                          "has no axis: ignored")
                axis = np.array([1.0, 0.0, 0.0])
            else:
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
                # PyBullet's convention for an unlimited joint
                self.warn(limit_el, w, f"lower {lower:g} > upper {upper:g}: no position limit")
                lower, upper = -math.inf, math.inf
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
            target = mimic_el.get("joint")
            if not target:
                self.warn(mimic_el, w, "missing attribute 'joint': mimic dropped, the joint moves "
                          "on its own")
            else:
                mimic = Mimic(joint=target,
                              multiplier=self.scalar(mimic_el, "multiplier", w, default=1.0),
                              offset=self.scalar(mimic_el, "offset", w, default=0.0))
        return Joint(name=name, type=jtype, parent=ends["parent"], child=ends["child"],
                     origin=self.origin(el, what), axis=axis, limit=limit, damping=damping,
                     friction=friction, mimic=mimic, line=el.sourceline)

    def check_mimics(self, joints: dict) -> dict:
        """The joints with every unusable <mimic> dropped (warned): the joint then moves on its
        own, as Pinocchio and PyBullet treat it."""
        result = dict(joints)
        for joint in joints.values():
            if joint.mimic is None:
                continue
            target = joints.get(joint.mimic.joint)
            problem = None
            if joint.type not in SCALAR_TYPES:
                problem = f"a {joint.type} joint cannot mimic"
            elif target is None:
                problem = f"names missing joint '{joint.mimic.joint}'"
            elif target.type not in SCALAR_TYPES or target.mimic is not None:
                problem = f"joint '{target.name}' is not an independent one-coordinate joint"
            elif (target.type == "prismatic") != (joint.type == "prismatic"):
                problem = f"cannot couple a {joint.type} joint to a {target.type} joint"
            if problem is not None:
                self.warn(None, f"joint '{joint.name}' <mimic>", f"{problem}: mimic dropped, "
                          "the joint moves on its own", line=joint.line)
                result[joint.name] = replace(joint, mimic=None)
        return result

    def check_tree(self, robot_name: str, links: dict, joints: dict) -> str:
        parent_of = {}
        for joint in joints.values():
            if joint.child in parent_of:
                raise URDFError(self.source, f"link '{joint.child}'",
                                f"has two parent joints ('{parent_of[joint.child]}' and "
                                f"'{joint.name}')", joint.line)
            parent_of[joint.child] = joint.name
        roots = [name for name in links if name not in parent_of]
        if not roots:
            raise URDFError(self.source, f"robot '{robot_name}'",
                            "the joints form a cycle: every link has a parent")
        if len(roots) > 1:
            shown = roots if len(roots) <= 10 else roots[:10] + ["..."]
            raise URDFError(self.source, f"robot '{robot_name}'",
                            f"has several root links {shown}; a robot must be one tree")
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
            shown = unreached if len(unreached) <= 10 else unreached[:10] + ["..."]
            raise URDFError(self.source, f"robot '{robot_name}'",
                            f"the joints form a cycle through links {shown}")
        return roots[0]
