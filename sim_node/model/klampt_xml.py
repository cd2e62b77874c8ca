"""Klamp't's XML world files (.xml): reading into a WorldModel and writing one.

What is read (Klamp't 0.10.1's XmlWorld, Cpp/IO/XmlWorld.cpp), under a <world> root:
    <robot name file [config] [configfile] [transform]>      file: a URDF (not Klamp't's .rob)
    <rigidObject name [file] [transform]>                     file: a mesh (not Klamp't's .obj
        <geometry mesh|file [transform] [scale]/>              rigid-object format) or a
        <physics mass com inertia automass kFriction ... />    <geometry> child
    <terrain name file [transform] [scale] [kFriction]/>      file: a mesh (not Klamp't's .env)
    <display>, <appearance>, <goal>, <simulation>             ignored (drawing, goals, ODE)
[transform]: translation (or position) "x y z"; rotateRPY "roll pitch yaw" (R = Rz Ry Rx);
rotateMoment "rotation vector"; then rotateX / rotateY / rotateZ "angle" each pre-multiplying R,
as Klamp't does. scale: one factor or three (local axes, before the rotation).
Files are relative to the world file, absolute, or package:// URIs (searched as for URDFs).
A robot's `config` is Klamp't's vector "n q_0 ... q_{n-1}" over its links in Klamp't's order
(klampt_link_order: depth first, children by joint name, as urdfdom's map gives them), after
Klamp't's five virtual base links when n says so (x y z yaw pitch roll of the base on the first
six entries); a joint link takes the value of its parent joint. A URDF rooted at a link named
'world' is fixed in Klamp't, which drops that link and adds no virtual links (klampt_links).
A rigid object without inertia (or with automass) gets the inertia of its geometry filled
uniformly with its mass (default 1 kg). Other URLs are refused (Klamp't downloads them).

What is written: robots by their URDF file (absolute path) with translation / rotateRPY of their
root link and their config; rigid objects and terrains of one mesh with identity origin (or a
scaled one) by the mesh file, with transform, mass properties and surface coefficients. Other
shapes (primitives, several elements) have no Klamp't XML form here: saving them is an error
naming the entity (the YAML world writes them).

Errors are WorldFileError naming the file, the element and its line; the world is changed only
when the whole file loaded.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from lxml import etree
from transforms3d.euler import euler2mat, mat2euler
from transforms3d.quaternions import mat2quat

from sim_node.model import geometry as geo
from sim_node.model.bodies import RigidObjectModel, TerrainModel, geometry_mass
from sim_node.model.drivers import klampt_link_order
from sim_node.model.errors import ModelLoadError, WorldFileError
from sim_node.model.packages import PackageSearch
from sim_node.model.robot import Mass
from sim_node.model.settings import BodySettings
from sim_node.model.surface import SurfaceParameters
from sim_node.model.urdf import GeometryElement, Origin

MAX_FILE_BYTES = 64 * 1024 * 1024
WORLD_CHILDREN = {"robot", "rigidObject", "terrain", "display", "appearance", "goal",
                  "simulation"}
KLAMPT_FORMATS = {".rob": "Klamp't's .rob robot format", ".env": "Klamp't's .env terrain format",
                  ".obj": "Klamp't's .obj rigid-object format"}
ROBOT_SUFFIXES = (".urdf",)
KLAMPT_BASE_LINKS = 5         # virtual links Klamp't puts before a floating URDF robot's root


class _Reader:
    def __init__(self, path: Path):
        self.path = path
        self.source = str(path)
        self.taken = set()

    def error(self, el, where: str, problem: str):
        return WorldFileError(self.source, where, problem,
                              getattr(el, "sourceline", None) if el is not None else None)

    def numbers(self, el, attr: str, n=None, where=None):
        text = el.get(attr)
        where = where or f"<{el.tag}> {attr}"
        try:
            values = [float(x) for x in text.split()]
        except ValueError:
            raise self.error(el, where, f"expected numbers, got '{_short(text)}'") from None
        if n is not None and len(values) not in ((n,) if isinstance(n, int) else n):
            raise self.error(el, where, f"expected {n} numbers, got {len(values)}")
        if not all(math.isfinite(v) for v in values):
            raise self.error(el, where, f"expected finite numbers, got '{_short(text)}'")
        return values

    def file(self, el, attr: str, what: str) -> Path:
        text = el.get(attr)
        if text is None or not text.strip():
            raise self.error(el, f"<{el.tag}>", f"missing attribute '{attr}' (the {what} file)")
        text = text.strip()
        if text.startswith("file://"):
            text = text[len("file://"):]
        if text.startswith("package://"):
            package, _, rest = text[len("package://"):].lstrip("/").partition("/")
            p, searched = PackageSearch(None, self.path.parent).resolve(package, rest)
            if p is None:
                raise self.error(el, f"<{el.tag}> {attr}", f"file not found: {_short(text)}; "
                                 "looked in: " + "; ".join(searched))
        elif "://" in text:
            raise self.error(el, f"<{el.tag}> {attr}", f"'{_short(text)}': URLs are not "
                             "read; give a file path (relative to the world file or absolute) "
                             "or a package:// URI")
        else:
            p = Path(text).expanduser()
            p = p if p.is_absolute() else self.path.parent / p
        p = Path(p)
        suffix = p.suffix.lower()
        if suffix in KLAMPT_FORMATS and not (suffix == ".obj" and is_wavefront(p)):
            raise self.error(el, f"<{el.tag}> {attr}", f"'{text}' is in {KLAMPT_FORMATS[suffix]}, "
                             "which sim_node does not read; give the robot as a URDF and objects "
                             "and terrains as mesh files (STL, OBJ, DAE, PLY, OFF)")
        if not p.is_file():
            raise self.error(el, f"<{el.tag}> {attr}", f"no such file: {p}")
        return p

    def transform(self, el, scaled=False):
        """(R, t, scale (3,)) of an element's transform attributes (module docstring)."""
        R, t = np.eye(3), np.zeros(3)
        for attr in ("translation", "position"):
            if el.get(attr) is not None:
                t = np.array(self.numbers(el, attr, 3))
                break
        if el.get("rotateRPY") is not None:
            roll, pitch, yaw = self.numbers(el, "rotateRPY", 3)
            R = euler2mat(roll, pitch, yaw, "sxyz")
        if el.get("rotateMoment") is not None:
            R = _exp_so3(np.array(self.numbers(el, "rotateMoment", 3)))
        for axis in "XYZ":
            if el.get(f"rotate{axis}") is not None:
                (angle,) = self.numbers(el, f"rotate{axis}", 1)
                R = _axis_rotation("XYZ".index(axis), angle) @ R
        scale = np.ones(3)
        if el.get("scale") is not None:
            if not scaled:
                raise self.error(el, f"<{el.tag}> scale", "only terrains and <geometry> "
                                 "elements can be scaled")
            values = self.numbers(el, "scale", (1, 3))
            scale = np.array(values * 3 if len(values) == 1 else values)
            if np.any(scale <= 0):
                raise self.error(el, f"<{el.tag}> scale", f"must be positive, got {values}")
        return R, t, scale

    def mesh(self, el, attr: str, scale) -> geo.Mesh:
        path = self.file(el, attr, "mesh")
        try:
            return geo.load_mesh(str(path), tuple(scale))
        except (FileNotFoundError, geo.MeshLoadError) as exc:
            raise self.error(el, f"<{el.tag}> {attr}", f"{path}: {exc}") from None

    def name(self, el, default: str, world) -> str:
        name = el.get("name")
        if name is not None:
            name = name.strip()
            if not name:
                raise self.error(el, f"<{el.tag}> name", "must not be empty")
            if name in self.taken or name in world._entity_names():
                raise self.error(el, f"<{el.tag}> name", f"'{name}' is taken")
            return name
        return world.uniqueName(default, self.taken)


def load_klampt_world(world, path) -> None:
    """Load a Klamp't XML world file into `world` (all or nothing; module docstring)."""
    path = Path(path)
    reader = _Reader(path)
    root = _parse(path)
    if root.tag != "world":
        raise reader.error(root, f"<{root.tag}>", "the root element must be <world>")
    entities = []
    for el in root:
        if not isinstance(el.tag, str):
            continue                              # processing instructions
        if el.tag not in WORLD_CHILDREN:
            raise reader.error(el, f"<{el.tag}>", f"unknown element; valid: "
                               f"{sorted(WORLD_CHILDREN)}")
        build = {"robot": _robot, "rigidObject": _rigid_object, "terrain": _terrain}.get(el.tag)
        if build is None:
            continue
        try:
            entity = build(reader, el, world)
        except WorldFileError:
            raise
        except ModelLoadError as exc:
            raise reader.error(el, f"<{el.tag}>", str(exc)) from None
        except (ValueError, KeyError, TypeError, IndexError, ArithmeticError) as exc:
            raise reader.error(el, f"<{el.tag}>", str(exc)) from None
        reader.taken.add(entity.getName())
        entities.append(entity)
    for entity in entities:          # everything built: now change the world
        world.add(entity)
    world.source = str(path)


def _parse(path: Path):
    source = str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise WorldFileError(source, "file", f"cannot read: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES:
        raise WorldFileError(source, "file", f"{size} bytes, more than the "
                             f"{MAX_FILE_BYTES >> 20} MB a world file may have")
    data = path.read_bytes()
    parser = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True,
                             remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise WorldFileError(source, "XML", str(exc), exc.lineno) from None
    if root is None:
        raise WorldFileError(source, "XML", "the document is empty")
    return root


def _robot(reader: _Reader, el, world):
    path = reader.file(el, "file", "robot")
    if path.suffix.lower() not in ROBOT_SUFFIXES:
        raise reader.error(el, "<robot> file", f"'{path.name}': a robot must be a URDF file "
                           "(.urdf)")
    R, t, _ = reader.transform(el)
    robot = world.makeRobot(str(path), name=reader.name(el, "Robot", world), R=R, t=t,
                            taken=reader.taken)
    config = None
    if el.get("config") is not None:
        config = reader.numbers(el, "config")
        where = "<robot> config"
    if el.get("configfile") is not None:
        cfg = reader.file(el, "configfile", "configuration")
        try:
            config = [float(x) for x in cfg.read_text(encoding="utf-8").split()]
        except (UnicodeDecodeError, ValueError):
            raise reader.error(el, "<robot> configfile", f"{cfg}: expected numbers") from None
        where = f"<robot> configfile {cfg}"
    if config is not None:
        try:
            robot.setConfig(config_from_klampt(robot, config))
        except ValueError as exc:
            raise reader.error(el, where, str(exc)) from None
    return robot


def _rigid_object(reader: _Reader, el, world):
    elements = []
    if el.get("file") is not None:
        elements.append(GeometryElement(Origin(), reader.mesh(el, "file", np.ones(3))))
    geometry = el.find("geometry")
    if geometry is not None:
        attr = "file" if geometry.get("file") is not None else "mesh"
        R, t, scale = reader.transform(geometry, scaled=True)
        elements = [GeometryElement(Origin(R=R, p=t), reader.mesh(geometry, attr, scale))]
    if not elements:
        raise reader.error(el, "<rigidObject>", "needs a 'file' attribute or a <geometry> "
                           "child naming a mesh")
    R, t, _ = reader.transform(el)
    name = reader.name(el, "Object", world)
    mass, com, inertia, automass = 1.0, None, None, False
    surface = {}
    physics = el.find("physics")
    if physics is not None:
        if physics.get("mass") is not None:
            (mass,) = reader.numbers(physics, "mass", 1)
            if mass <= 0:
                raise reader.error(physics, "<physics> mass", f"must be positive, got {mass}")
        if physics.get("com") is not None:
            com = np.array(reader.numbers(physics, "com", 3))
        if physics.get("inertia") is not None:
            inertia = np.array(reader.numbers(physics, "inertia", (1, 3, 9)))
        if physics.get("automass") is not None:
            automass = physics.get("automass").strip() not in ("0", "false")
        for key in ("kRestitution", "kFriction", "kStiffness", "kDamping"):
            if physics.get(key) is not None:
                surface[key] = _surface_number(reader, physics, key)
    if automass or inertia is None or not np.any(inertia):
        body_mass = geometry_mass(tuple(elements), mass, reader.source)
        if com is not None and not automass:
            body_mass = Mass(mass, com, body_mass.getInertia())
    else:
        body_mass = Mass(mass, np.zeros(3) if com is None else com,
                         inertia if inertia.size != 1 else float(inertia[0]))
    obj = RigidObjectModel(name, tuple(elements), body_mass, R, t)
    obj.settings = _settings(reader, physics, surface)
    return obj


def _terrain(reader: _Reader, el, world):
    R, t, scale = reader.transform(el, scaled=True)
    mesh = reader.mesh(el, "file", scale)
    terrain = TerrainModel(reader.name(el, "Terrain", world), (GeometryElement(Origin(), mesh),),
                           R, t)
    surface = {}
    if el.get("kFriction") is not None:
        surface["kFriction"] = _surface_number(reader, el, "kFriction")
    terrain.settings = _settings(reader, el, surface)
    return terrain


def _surface_number(reader, el, key) -> float:
    text = el.get(key).strip()
    value = math.inf if text in ("inf", "Inf", "infinity") else None
    if value is None:
        (value,) = reader.numbers(el, key, 1)
    return value


def _settings(reader, el, surface: dict) -> BodySettings:
    try:
        return BodySettings(surface=SurfaceParameters(**surface))
    except ValueError as exc:
        raise reader.error(el, f"<{el.tag}>", str(exc)) from None


# -- configurations in Klamp't's link space ------------------------------------------------------
def klampt_links(robot) -> tuple:
    """(our link indices in Klamp't's order, whether Klamp't adds its five virtual base links).
    Klamp't fixes a URDF rooted at a link named 'world' to the world, without that link and
    without virtual links; any other root gets the virtual floating base."""
    order = klampt_link_order(robot.structure)
    if robot.structure.link_names[order[0]] == "world":
        return order[1:], False
    return order, True


def config_from_klampt(robot, values) -> np.ndarray:
    """Our q of a Klamp't config "n q_0 ... q_{n-1}" (module docstring)."""
    if len(values) < 1 or values[0] != int(values[0]) or int(values[0]) != len(values) - 1:
        raise ValueError("a Klamp't config is 'n' followed by n numbers")
    values = np.asarray(values[1:], dtype=float)
    order, virtual_base = klampt_links(robot)
    nlinks = len(order)
    st = robot.structure
    q = robot.getConfig()
    if virtual_base and len(values) == nlinks + KLAMPT_BASE_LINKS:
        base, links = values[:6], values[KLAMPT_BASE_LINKS:]
        if robot.isFloatingBase():
            # Klamp't's base DOFs move the root from its placement (R0, t0):
            # root = (R0, t0) * translation(x, y, z) * Rz(yaw) Ry(pitch) Rx(roll)
            x, y, z, yaw, pitch, roll = base
            R0, t0 = robot.link(0).getTransform()
            q[:3] = t0 + R0 @ np.array([x, y, z])
            w, qx, qy, qz = mat2quat(R0 @ euler2mat(roll, pitch, yaw, "sxyz"))
            q[3:7] = (qx, qy, qz, w)
        elif np.any(base != 0):
            raise ValueError(f"robot '{robot.getName()}' has a fixed base: the config's six "
                             "base entries must be 0")
    elif len(values) == nlinks:
        links = values
    elif virtual_base:
        raise ValueError(f"robot '{robot.getName()}' has {nlinks} links: a Klamp't config has "
                         f"{nlinks} (fixed base) or {nlinks + KLAMPT_BASE_LINKS} entries, got "
                         f"{len(values)}")
    else:
        raise ValueError(f"robot '{robot.getName()}' is rooted at 'world': Klamp't gives it "
                         f"{nlinks} links and a config of {nlinks} entries, got {len(values)}")
    for k, i in enumerate(order):
        joint = st.link_joint[i]
        if joint in st.joint_type and st.joint_nq[joint] == 1:
            q[st.joint_q_index[joint]] = links[k]
    return q


def config_to_klampt(robot) -> list:
    """The robot's configuration as a Klamp't config over its links (klampt_links), with
    Klamp't's five virtual base links first when it adds them (a URDF not rooted at 'world');
    the base entries are 0 (the placement is written as the robot's transform)."""
    st = robot.structure
    q = robot.getConfig()
    order, virtual_base = klampt_links(robot)
    links = np.zeros(len(order))
    mimic = st.mimic_joints
    for k, i in enumerate(order):
        joint = st.link_joint[i]
        if joint in st.joint_type and st.joint_nq[joint] == 1:
            links[k] = q[st.joint_q_index[joint]]
        elif joint in mimic:
            master, multiplier, offset = mimic[joint]
            links[k] = multiplier * q[st.joint_q_index[master]] + offset
    values = [0.0] * KLAMPT_BASE_LINKS * virtual_base + links.tolist()
    return [len(values)] + values


# -- writing ---------------------------------------------------------------------------------------
def save_klampt_world(world, path) -> None:
    """Write `world` as a Klamp't XML world file (module docstring); raises ValueError naming
    an entity that has no Klamp't XML form, before writing anything."""
    path = Path(path)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<world>"]
    for i in range(world.numRobots()):
        lines.append(_robot_xml(world.robot(i)))
    for i in range(world.numRigidObjects()):
        lines.append(_object_xml(world.rigidObject(i)))
    for i in range(world.numTerrains()):
        lines.append(_terrain_xml(world.terrain(i)))
    lines.append("</world>")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _robot_xml(robot) -> str:
    source = robot.urdf.source
    if not source or source == "<string>" or not Path(source).is_file() \
            or Path(source).suffix.lower() != ".urdf":
        raise ValueError(f"robot '{robot.getName()}' was not loaded from a URDF file "
                         f"(source {source!r}): Klamp't XML names robots by their URDF file")
    R, t = robot.link(0).getTransform()
    n, *values = config_to_klampt(robot)
    config = " ".join([str(int(n))] + [_num(x) for x in values])     # (Klamp't reads n as int)
    return (f'  <robot name={_attr(robot.getName())} file={_attr(str(Path(source).resolve()))}'
            f'{_transform_attrs(R, t)} config="{config}"/>')


def _single_mesh(body, what: str):
    elements = body.getCollisionGeometry()
    if len(elements) != 1 or not isinstance(elements[0].shape, geo.Mesh):
        raise ValueError(f"{what} '{body.getName()}': only a single mesh has a Klamp't XML form "
                         "here (save the world as YAML)")
    return elements[0]


def _object_xml(obj) -> str:
    element = _single_mesh(obj, "rigid object")
    mesh = element.shape
    R, t = obj.getTransform()
    m = obj.getMass()
    s = obj.settings.surface
    return (f'  <rigidObject name={_attr(obj.getName())}{_transform_attrs(R, t)}>\n'
            f'    <geometry mesh={_attr(str(Path(mesh.path).resolve()))}'
            f'{_transform_attrs(element.origin.R, element.origin.p)}'
            f'{_scale_attr(mesh.scale)}/>\n'
            f'    <physics mass="{_num(m.getMass())}" com="{_nums(m.getCom())}" '
            f'inertia="{_nums(m.getInertia())}" kRestitution="{_num(s.kRestitution)}" '
            f'kFriction="{_num(s.kFriction)}" kStiffness="{_num(s.kStiffness)}" '
            f'kDamping="{_num(s.kDamping)}"/>\n'
            f'  </rigidObject>')


def _terrain_xml(terrain) -> str:
    element = _single_mesh(terrain, "terrain")
    if not (np.allclose(element.origin.R, np.eye(3)) and np.allclose(element.origin.p, 0)):
        raise ValueError(f"terrain '{terrain.getName()}': its mesh is offset in the terrain "
                         "frame, which Klamp't's <terrain> cannot say (save the world as YAML)")
    R, t = terrain.getTransform()
    return (f'  <terrain name={_attr(terrain.getName())} '
            f'file={_attr(str(Path(element.shape.path).resolve()))}{_transform_attrs(R, t)}'
            f'{_scale_attr(element.shape.scale)} '
            f'kFriction="{_num(terrain.settings.surface.kFriction)}"/>')


def _transform_attrs(R, t) -> str:
    roll, pitch, yaw = mat2euler(np.asarray(R), "sxyz")
    return f' translation="{_nums(t)}" rotateRPY="{_nums((roll, pitch, yaw))}"'


def _scale_attr(scale) -> str:
    return "" if tuple(scale) == (1.0, 1.0, 1.0) else f' scale="{_nums(scale)}"'


def _num(x) -> str:
    x = float(x)
    return "inf" if x == math.inf else repr(x)


def _nums(xs) -> str:
    return " ".join(_num(x) for x in np.asarray(xs, dtype=float).reshape(-1))


def _attr(text: str) -> str:
    from xml.sax.saxutils import quoteattr
    return quoteattr(text)


# -- helpers ---------------------------------------------------------------------------------------
def is_wavefront(path: Path) -> bool:
    """A .obj file that is a Wavefront mesh (vertex lines), not Klamp't's rigid-object format
    (a 'mesh' / 'geometry' line first)."""
    try:
        with open(path, "rb") as f:
            head = f.read(65536).decode("utf-8", "replace")
    except OSError:
        return True          # (missing: reported as such)
    for line in head.splitlines():
        word = line.strip().split(maxsplit=1)[0] if line.strip() else ""
        if not word or word.startswith("#"):
            continue
        return word not in ("mesh", "geometry", "file", "T", "mass", "com", "inertia")
    return True


def _axis_rotation(axis: int, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    i, j = (axis + 1) % 3, (axis + 2) % 3
    R = np.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def _exp_so3(w) -> np.ndarray:
    theta = float(np.linalg.norm(w))
    if theta < 1e-12:
        return np.eye(3)
    k = w / theta
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(theta) * K + (1 - math.cos(theta)) * K @ K


def _short(text, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "..."
