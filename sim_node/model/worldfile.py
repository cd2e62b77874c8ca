"""World files (YAML, DESIGN.md §4): robots, rigid objects, terrains, simulation parameters.

    simulation:    {physics_dt, gravity, padding, max_contacts}
    robots:        [{name, urdf, namespace, fixed_base, pose, initial_config, controller,
                     surface, self_collision, plugins, sensors, package_dirs, xacro_args}]
    rigid_objects: [{name, geometry | urdf, mass, pose, surface, package_dirs}]
    terrains:      [{name, geometry | urdf, pose, surface, package_dirs}]

Paths are relative to the world file (or package:// URIs, searched in the entry's package_dirs
first). `urdf` may name a .xacro file (its arguments in `xacro_args`). A missing `name` is taken
from the URDF or file, made unique (``box``, ``box_1``, ...); a name given twice is an error.
Unknown keys are errors that list the valid keys; every error names the file, the YAML line and
the entry. The world is changed only when the whole file loaded.

Hostile files fail fast with WorldFileError: more than MAX_FILE_BYTES, bytes that are not UTF-8,
control characters, nesting deeper than MAX_DEPTH, or aliases that would expand to more than
MAX_EXPANDED_NODES nodes (a "billion laughs" bomb) are refused before anything is built from them.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import yaml
from transforms3d.quaternions import quat2mat

from sim_node.model import geometry as geo
from sim_node.model.errors import ModelLoadError, WorldFileError
from sim_node.model.surface import SurfaceParameters
from sim_node.model.packages import PackageSearch
from sim_node.model.urdf import GeometryElement, Origin
from sim_node.model.bodies import RigidObjectModel, TerrainModel, geometry_mass
from sim_node.model.settings import (BodySettings, PluginEntry, RobotSettings, SensorEntry,
                                     SimulationParameters)

SECTIONS = {"simulation", "robots", "rigid_objects", "terrains"}
SIMULATION_KEYS = {"physics_dt", "gravity", "padding", "max_contacts"}
ROBOT_KEYS = {"name", "urdf", "namespace", "fixed_base", "pose", "initial_config", "controller",
              "surface", "self_collision", "plugins", "sensors", "package_dirs", "xacro_args"}
OBJECT_KEYS = {"name", "geometry", "urdf", "mass", "pose", "surface", "package_dirs"}
TERRAIN_KEYS = {"name", "geometry", "urdf", "pose", "surface", "package_dirs"}
POSE_KEYS = {"position", "orientation"}
SURFACE_KEYS = {"kRestitution", "kFriction", "kStiffness", "kDamping", "padding"}
CONTROLLER_KEYS = {"kp", "ki", "kd"}
PLUGIN_KEYS = {"name", "config"}
GEOMETRY_KINDS = {"box", "sphere", "cylinder", "capsule", "mesh", "plane", "heightfield"}
HEIGHTFIELD_KEYS = {"heights", "file", "size"}

MAX_FILE_BYTES = 256 * 1024 * 1024     # a world file (inline heightfields included)
MAX_DEPTH = 64                         # nesting of mappings and lists
MAX_EXPANDED_NODES = 2_000_000         # nodes the document holds once aliases are expanded


class _Map(dict):
    """A YAML mapping that remembers its line."""
    line = None


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader, node):
    loader.flatten_mapping(node)
    result = _Map()
    result.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in result:
            raise WorldFileError(loader.name, f"key '{key}'", "duplicate key",
                                 key_node.start_mark.line + 1)
        result[key] = loader.construct_object(value_node, deep=True)
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


class _Context:
    def __init__(self, path: Path):
        self.path = path
        self.source = str(path)
        self.taken = set()      # names of this file's entities (given or assigned so far)

    def error(self, where: str, problem: str, node=None):
        return WorldFileError(self.source, where, problem, getattr(node, "line", None))

    def mapping(self, node, where: str, allowed: set, required=()):
        if not isinstance(node, dict):
            raise self.error(where, f"expected a mapping, got {type(node).__name__}")
        unknown = sorted((str(k) for k in set(node) - allowed), key=str)
        if unknown:
            raise self.error(where, f"unknown key(s) {unknown}; valid keys: {sorted(allowed)}", node)
        for key in required:
            if key not in node:
                raise self.error(where, f"missing required key '{key}'", node)
        return node

    def number(self, value, where: str, *, positive=False, nonneg=False, allow_inf=False):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(where, f"expected a number, got {_short(value)}")
        try:
            value = float(value)
        except OverflowError:
            raise self.error(where, "the number is too large") from None
        if math.isnan(value) or (math.isinf(value) and not allow_inf):
            raise self.error(where, f"expected a finite number, got {value}")
        if positive and value <= 0:
            raise self.error(where, f"must be positive, got {value}")
        if nonneg and value < 0:
            raise self.error(where, f"must be non-negative, got {value}")
        return value

    def vector(self, value, n: int, where: str, **kw):
        if not isinstance(value, (list, tuple)) or len(value) != n:
            raise self.error(where, f"expected a list of {n} numbers, got {_short(value)}")
        return np.array([self.number(v, f"{where}[{i}]", **kw) for i, v in enumerate(value)])

    def string(self, value, where: str):
        if not isinstance(value, str) or not value:
            raise self.error(where, f"expected a non-empty string, got {_short(value)}")
        return value

    def file_path(self, value, where: str, package_dirs=None, node=None) -> str:
        text = self.string(value, where)
        if text.startswith("package://"):
            rest = text[len("package://"):].lstrip("/")
            package, _, rest = rest.partition("/")
            path, searched = PackageSearch(package_dirs, self.path.parent).resolve(package, rest)
            if path is None:
                raise self.error(where, f"file not found: {text}; looked in: "
                                 + "; ".join(searched), node)
            return str(path)
        if text.startswith("file://"):
            text = text[len("file://"):]
        p = Path(text).expanduser()
        return str(p if p.is_absolute() else self.path.parent / p)

    def package_dirs(self, entry, where: str) -> list:
        """The entry's package_dirs: a list of directories, relative to the world file."""
        value = entry.get("package_dirs")
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise self.error(f"{where}.package_dirs", f"expected a list of directories, got "
                             f"{_short(value)}", entry)
        dirs = []
        for i, item in enumerate(value):
            text = self.string(item, f"{where}.package_dirs[{i}]")
            p = Path(text).expanduser()
            dirs.append(p if p.is_absolute() else self.path.parent / p)
        return dirs

    def pose(self, node, where: str):
        if node is None:
            return np.eye(3), np.zeros(3)
        self.mapping(node, where, POSE_KEYS)
        t = self.vector(node.get("position", [0, 0, 0]), 3, f"{where}.position")
        q = self.vector(node.get("orientation", [0, 0, 0, 1]), 4, f"{where}.orientation")
        norm = np.linalg.norm(q)
        if abs(norm - 1.0) > 1e-3:
            raise self.error(f"{where}.orientation", f"quaternion (x, y, z, w) must be unit, "
                             f"has norm {norm:.6g}", node)
        x, y, z, w = q / norm
        return quat2mat([w, x, y, z]), t

    def settings(self, node, where: str) -> BodySettings:
        if node is None:
            return BodySettings()
        self.mapping(node, where, SURFACE_KEYS)
        values = {k: self.number(node[k], f"{where}.{k}", nonneg=True, allow_inf=True)
                  for k in SURFACE_KEYS - {"padding"} if k in node}
        try:
            surface = SurfaceParameters(**values)
        except ValueError as exc:
            raise self.error(where, str(exc), node) from None
        padding = None
        if "padding" in node:
            padding = self.number(node["padding"], f"{where}.padding", nonneg=True)
        return BodySettings(surface=surface, padding=padding)

    def geometry(self, node, where: str):
        if not isinstance(node, dict) or not node:
            raise self.error(where, f"expected a mapping with one of {sorted(GEOMETRY_KINDS)}")
        kinds = [k for k in node if k in GEOMETRY_KINDS]
        if len(kinds) != 1:
            raise self.error(where, f"needs exactly one of {sorted(GEOMETRY_KINDS)}", node)
        kind = kinds[0]
        allowed = {kind, "scale", "concave"} if kind == "mesh" else {kind}
        self.mapping(node, where, allowed)
        value = node[kind]
        w = f"{where}.{kind}"
        if kind == "box":
            return geo.Box(tuple(self.vector(value, 3, w, positive=True)))
        if kind == "sphere":
            return geo.Sphere(self.number(value, w, positive=True))
        if kind in ("cylinder", "capsule"):
            r, h = self.vector(value, 2, w, nonneg=True)
            if r <= 0:
                raise self.error(w, "radius must be positive", node)
            return geo.Cylinder(r, h) if kind == "cylinder" else geo.Capsule(r, h)
        if kind == "plane":
            self.mapping(value, w, {"normal", "offset"})
            normal = self.vector(value.get("normal", [0, 0, 1]), 3, f"{w}.normal")
            if np.linalg.norm(normal) < 1e-9:
                raise self.error(f"{w}.normal", "must be non-zero", value)
            return geo.Plane(tuple(normal / np.linalg.norm(normal)),
                             self.number(value.get("offset", 0.0), f"{w}.offset"))
        if kind == "heightfield":
            return self.heightfield(value, w)
        path = self.file_path(value, w)
        scale = self.vector(node.get("scale", [1, 1, 1]), 3, f"{where}.scale", positive=True)
        concave = node.get("concave", False)
        if not isinstance(concave, bool):
            raise self.error(f"{where}.concave", f"expected true or false, got {_short(concave)}", node)
        try:
            return geo.load_mesh(path, tuple(scale), concave)
        except FileNotFoundError:
            raise self.error(w, f"mesh file not found: {value} (resolved to {path})", node) from None
        except geo.MeshLoadError as exc:
            raise self.error(w, f"mesh {value}: {exc}", node) from None


def _heightfield(self, node, where: str):
    """{heights: [[z, ...], ...] (rows along y) | file: grid.npy, size: [extent x, extent y]}"""
    self.mapping(node, where, HEIGHTFIELD_KEYS, required=("size",))
    if ("heights" in node) == ("file" in node):
        raise self.error(where, "needs exactly one of 'heights' or 'file'", node)
    if "file" in node:
        path = self.file_path(node["file"], f"{where}.file")
        try:
            heights = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise self.error(f"{where}.file", f"cannot read {path}: {exc}", node) from None
    else:
        heights = node["heights"]
        if not isinstance(heights, list) or not all(isinstance(row, list) for row in heights):
            raise self.error(f"{where}.heights", "expected a list of rows of numbers", node)
        if len({len(row) for row in heights}) > 1:
            raise self.error(f"{where}.heights", "rows have different lengths", node)
    size = self.vector(node["size"], 2, f"{where}.size", positive=True)
    try:
        return geo.heightfield_from(heights, size)
    except (ValueError, TypeError) as exc:
        raise self.error(where, str(exc), node) from None


_Context.heightfield = _heightfield


def _short(value, limit: int = 80) -> str:
    """repr(value) cut to `limit` characters (values from hostile files can be huge)."""
    if isinstance(value, (dict, list, tuple)):
        text = f"a {type(value).__name__} of {len(value)} items"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _read_text(path: Path) -> str:
    """The file as text; WorldFileError for a non-file, an oversized file, bytes that are not
    UTF-8 or control characters (with the line)."""
    source = str(path)
    try:
        if not path.is_file():
            raise WorldFileError(source, "file", "no such file")
        size = path.stat().st_size
    except OSError as exc:
        raise WorldFileError(source, "file", f"cannot read: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES:
        raise WorldFileError(source, "file", f"{size} bytes: larger than the limit of "
                             f"{MAX_FILE_BYTES} bytes for a world file")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise WorldFileError(source, "file", f"cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WorldFileError(source, "file", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                             f"offset {exc.start})", data[:exc.start].count(b"\n") + 1) from None
    for i, ch in enumerate(text):
        if ch < " " and ch not in "\t\n\r" or ch == "\x7f":
            raise WorldFileError(source, "file", f"control character U+{ord(ch):04X} "
                                 f"at offset {i}", text.count("\n", 0, i) + 1)
    return text.lstrip("\ufeff")


def _check_structure(text: str, source: str):
    """Refuse deep nesting and alias bombs from the event stream, before anything is built:
    the parser is iterative, the composer and constructors are not."""
    anchors = {}                   # anchor -> expanded node count
    stack = [[None, 0]]            # open collections: [anchor, expanded nodes inside]
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            line = event.start_mark.line + 1 if event.start_mark else None
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if len(stack) > MAX_DEPTH:
                    raise WorldFileError(source, "YAML", f"nested deeper than {MAX_DEPTH} levels",
                                         line)
                stack.append([event.anchor, 0])
                continue
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                anchor, count = stack.pop()
                count += 1
            elif isinstance(event, yaml.ScalarEvent):
                anchor, count = event.anchor, 1
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor not in anchors:
                    continue       # the composer reports an undefined alias with its line
                anchor, count = None, anchors[event.anchor]
            else:
                continue
            if anchor is not None:
                anchors[anchor] = count
            stack[-1][1] += count
            if stack[-1][1] > MAX_EXPANDED_NODES:
                raise WorldFileError(source, "YAML", "aliases expand to more than "
                                     f"{MAX_EXPANDED_NODES} nodes (an alias bomb?)", line)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source) from None


def _yaml_error(exc, source: str) -> WorldFileError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    text = str(exc).replace("\n", " ")
    return WorldFileError(source, "YAML", text if len(text) < 300 else text[:300] + "...", line)


def load_world_file(world, path: Path):
    """Load a YAML world file into `world` (all or nothing)."""
    path = Path(path)
    ctx = _Context(path)
    text = _read_text(path)
    _check_structure(text, ctx.source)
    try:
        loader = _Loader(text)
        loader.name = str(path)
        try:
            doc = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, ctx.source) from None
    except WorldFileError:
        raise
    except (ValueError, OverflowError) as exc:  # e.g. an integer of more than 4300 digits
        raise WorldFileError(ctx.source, "YAML", f"a value cannot be read: {exc}") from None
    except TypeError:
        raise WorldFileError(ctx.source, "YAML", "a mapping key must be a plain value, "
                             "not a list or mapping") from None
    if doc is None:
        doc = _Map()
    ctx.mapping(doc, "world", SECTIONS)

    simulation = _simulation(ctx, doc.get("simulation"))
    entries_by_kind = []
    explicit = []
    for kind, keys, build in (("terrains", TERRAIN_KEYS, _terrain),
                              ("rigid_objects", OBJECT_KEYS, _rigid_object),
                              ("robots", ROBOT_KEYS, _robot)):
        entries = doc.get(kind) or []
        if not isinstance(entries, list):
            raise ctx.error(kind, f"expected a list, got {_short(entries)}", doc)
        for i, entry in enumerate(entries):
            ctx.mapping(entry, f"{kind}[{i}]", keys)
            if "name" in entry:
                explicit.append(ctx.string(entry["name"], f"{kind}[{i}].name"))
        entries_by_kind.append((kind, build, entries))
    duplicates = sorted({n for n in explicit if explicit.count(n) > 1}
                        | (set(explicit) & world._entity_names()))
    if duplicates:
        raise ctx.error("world", f"duplicate entity names {duplicates}")
    ctx.taken = set(explicit)
    entities = []
    for kind, build, entries in entries_by_kind:
        for i, entry in enumerate(entries):
            where = f"{kind}[{i}]" + (f" ('{entry['name']}')" if "name" in entry else "")
            try:
                entity = build(ctx, entry, where, world)
            except WorldFileError:
                raise
            except ModelLoadError as exc:
                raise WorldFileError(ctx.source, where, str(exc), entry.line) from None
            except (ValueError, KeyError, TypeError, IndexError, ArithmeticError) as exc:
                raise ctx.error(where, str(exc), entry) from None
            ctx.taken.add(entity.getName())
            entities.append(entity)
    # everything parsed: now change the world
    world.simulation = simulation
    for entity in entities:
        world.add(entity)
    world.source = str(path)


def _simulation(ctx: _Context, node) -> SimulationParameters:
    params = SimulationParameters()
    if node is None:
        return params
    ctx.mapping(node, "simulation", SIMULATION_KEYS)
    if "physics_dt" in node:
        params.physics_dt = ctx.number(node["physics_dt"], "simulation.physics_dt", positive=True)
    if "gravity" in node:
        params.gravity = tuple(float(g) for g in ctx.vector(node["gravity"], 3, "simulation.gravity"))
    if "padding" in node:
        params.padding = ctx.number(node["padding"], "simulation.padding", nonneg=True)
    if "max_contacts" in node:
        value = node["max_contacts"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ctx.error("simulation.max_contacts", f"expected an integer >= 1, got {_short(value)}",
                            node)
        params.max_contacts = value
    return params


def _terrain(ctx, entry, where, world):
    R, t = ctx.pose(entry.get("pose"), f"{where}.pose")
    name = entry.get("name")
    if ("geometry" in entry) == ("urdf" in entry):
        raise ctx.error(where, "needs exactly one of 'geometry' or 'urdf'", entry)
    if "urdf" in entry:
        dirs = ctx.package_dirs(entry, where)
        terrain = world.makeTerrain(ctx.file_path(entry["urdf"], f"{where}.urdf", dirs, entry),
                                    name=name, R=R, t=t, package_dirs=dirs, taken=ctx.taken)
    else:
        shape = ctx.geometry(entry["geometry"], f"{where}.geometry")
        if name is None:
            base = Path(shape.path).stem if isinstance(shape, geo.Mesh) else "terrain"
            name = world.uniqueName(base, ctx.taken)
        terrain = TerrainModel(name, (GeometryElement(Origin(), shape),), R, t)
    terrain.settings = ctx.settings(entry.get("surface"), f"{where}.surface")
    return terrain


def _rigid_object(ctx, entry, where, world):
    name = entry.get("name")
    R, t = ctx.pose(entry.get("pose"), f"{where}.pose")
    mass = ctx.number(entry["mass"], f"{where}.mass", positive=True) if "mass" in entry else None
    if ("geometry" in entry) == ("urdf" in entry):
        raise ctx.error(where, "needs exactly one of 'geometry' or 'urdf'", entry)
    if "urdf" in entry:
        dirs = ctx.package_dirs(entry, where)
        obj = world.makeRigidObject(ctx.file_path(entry["urdf"], f"{where}.urdf", dirs, entry),
                                    mass=mass, name=name, R=R, t=t, package_dirs=dirs,
                                    taken=ctx.taken)
    else:
        if mass is None:
            raise ctx.error(where, "a primitive rigid object needs 'mass'", entry)
        shape = ctx.geometry(entry["geometry"], f"{where}.geometry")
        if isinstance(shape, (geo.Plane, geo.Heightfield)):
            raise ctx.error(f"{where}.geometry", f"a {type(shape).__name__.lower()} cannot be a "
                            "rigid object", entry)
        if name is None:
            base = Path(shape.path).stem if isinstance(shape, geo.Mesh) else "object"
            name = world.uniqueName(base, ctx.taken)
        element = GeometryElement(Origin(), shape)
        obj = RigidObjectModel(name, (element,), geometry_mass((element,), mass, ctx.source), R, t)
    obj.settings = ctx.settings(entry.get("surface"), f"{where}.surface")
    return obj


def _robot(ctx, entry, where, world):
    if "urdf" not in entry:
        raise ctx.error(where, "missing required key 'urdf'", entry)
    fixed_base = entry.get("fixed_base")
    if fixed_base is not None and not isinstance(fixed_base, bool):
        raise ctx.error(f"{where}.fixed_base", f"expected true or false, got {_short(fixed_base)}",
                        entry)
    R, t = ctx.pose(entry.get("pose"), f"{where}.pose")
    dirs = ctx.package_dirs(entry, where)
    xacro_args = entry.get("xacro_args") or {}
    if not isinstance(xacro_args, dict):
        raise ctx.error(f"{where}.xacro_args", f"expected a mapping of argument names to values, "
                        f"got {_short(xacro_args)}", entry)
    for key, value in xacro_args.items():
        if not isinstance(key, str) or not isinstance(value, (str, int, float, bool)):
            raise ctx.error(f"{where}.xacro_args", f"argument {_short(key)}: expected a name and "
                            f"a plain value, got {_short(value)}", entry)
    robot = world.makeRobot(ctx.file_path(entry["urdf"], f"{where}.urdf", dirs, entry), fixed_base,
                            name=entry.get("name"), R=R, t=t, package_dirs=dirs,
                            xacro_args={k: str(v).lower() if isinstance(v, bool) else v
                                        for k, v in xacro_args.items()}, taken=ctx.taken)
    name = robot.getName()
    joints = robot.getJointNames()
    q = robot.getConfig()
    initial = entry.get("initial_config") or {}
    ctx.mapping(initial, f"{where}.initial_config", set(joints))
    lower, upper = robot.getJointLimits()
    st = robot.structure
    for joint, value in initial.items():
        qi, n, w = st.joint_q_index[joint], st.joint_nq[joint], f"{where}.initial_config.{joint}"
        if n == 1:
            q[qi] = ctx.number(value, w)
        else:   # spherical: quaternion xyzw; planar: x, y, theta; floating: position, quaternion
            if not isinstance(value, list) or len(value) != n:
                raise ctx.error(w, f"a {st.joint_type[joint]} joint takes a list of {n} numbers, "
                                f"got {value!r}", initial)
            q[qi:qi + n] = [ctx.number(x, f"{w}[{k}]") for k, x in enumerate(value)]
        for k in range(qi, qi + n):
            if not lower[k] <= q[k] <= upper[k]:
                raise ctx.error(w, f"{q[k]} is outside the limits [{lower[k]}, {upper[k]}]",
                                initial)
    try:
        robot.setConfig(q)
    except ValueError as error:     # a zero quaternion
        raise ctx.error(f"{where}.initial_config", str(error), initial) from None
    controller = entry.get("controller") or {}
    ctx.mapping(controller, f"{where}.controller", CONTROLLER_KEYS)
    gains = {}
    for key in CONTROLLER_KEYS:
        value = controller.get(key, None)
        if value is None:
            continue
        if isinstance(value, dict):
            ctx.mapping(value, f"{where}.controller.{key}", set(joints))
            gains[key] = {j: ctx.number(v, f"{where}.controller.{key}.{j}", nonneg=True)
                          for j, v in value.items()}
        else:
            scalar = ctx.number(value, f"{where}.controller.{key}", nonneg=True)
            gains[key] = {j: scalar for j in joints}
    plugins = entry.get("plugins") or []
    if not isinstance(plugins, list):
        raise ctx.error(f"{where}.plugins", "expected a list", entry)
    for i, plugin in enumerate(plugins):
        ctx.mapping(plugin, f"{where}.plugins[{i}]", PLUGIN_KEYS, required=("name",))
        ctx.string(plugin["name"], f"{where}.plugins[{i}].name")
        if not isinstance(plugin.get("config", {}), dict):
            raise ctx.error(f"{where}.plugins[{i}].config", "expected a mapping", plugin)
    sensors = _sensor_entries(ctx, entry.get("sensors"), f"{where}.sensors", entry)
    from_urdf = tuple(robot.settings.sensors)
    twice = {s.name for s in from_urdf} & {s.name for s in sensors}
    if twice:
        raise ctx.error(f"{where}.sensors", f"sensor(s) {sorted(twice)} are already defined in "
                        f"the URDF's <klampt><sensors>", entry)
    sensors = from_urdf + sensors
    self_collision = entry.get("self_collision", False)
    if not isinstance(self_collision, bool):
        raise ctx.error(f"{where}.self_collision", f"expected true or false, got "
                        f"{_short(self_collision)}", entry)
    robot.settings = RobotSettings(
        # absent: the namespace rule decides (sim_node/sim/namespaces.py)
        namespace=(ctx.string(entry["namespace"], f"{where}.namespace")
                   if "namespace" in entry else None),
        controller=gains,
        body=ctx.settings(entry.get("surface"), f"{where}.surface"),
        self_collision=self_collision,
        plugins=tuple(PluginEntry(p["name"], p.get("config")) for p in plugins),
        sensors=sensors)
    return robot


def _sensor_entries(ctx, sensors, where: str, entry) -> tuple:
    # `sensors:` [{name, type, <Klamp't setting>: value, ...}] -> SensorEntry tuple; the
    # settings are checked when the Simulator builds the sensors (sim_node.sim.sensors)
    if sensors is None:
        return ()
    if not isinstance(sensors, list):
        raise ctx.error(where, "expected a list of sensors", entry)
    out, names = [], set()
    for i, sensor in enumerate(sensors):
        w = f"{where}[{i}]"
        if not isinstance(sensor, dict):
            raise ctx.error(w, f"expected a mapping, got {_short(sensor)}", entry)
        for key in ("name", "type"):
            if key not in sensor:
                raise ctx.error(w, f"missing key '{key}'", sensor)
            ctx.string(sensor[key], f"{w}.{key}")
        if sensor["name"] in names:
            raise ctx.error(f"{w}.name", f"the sensor name '{sensor['name']}' is used twice",
                            sensor)
        names.add(sensor["name"])
        values = []
        for key, value in sensor.items():
            if key in ("name", "type"):
                continue
            if isinstance(value, bool):
                value = "1" if value else "0"
            elif isinstance(value, (int, float)):
                value = repr(value)
            elif isinstance(value, list) and all(isinstance(v, (int, float))
                                                 and not isinstance(v, bool) for v in value):
                value = " ".join(repr(v) for v in value)
            elif not isinstance(value, str):
                raise ctx.error(f"{w}.{key}", f"expected a number, a flag, a list of numbers "
                                f"or a string, got {_short(value)}", sensor)
            values.append((str(key), value))
        out.append(SensorEntry(sensor["name"], sensor["type"], tuple(values)))
    return tuple(out)


# -- writing -------------------------------------------------------------------------------------
def save_world_file(world, path: Path):
    """Write `world` as a YAML world file that load_world_file reads back to the same world:
    robots by their URDF file (absolute path) with pose (the root link's placement now),
    fixed_base and initial_config (the current joint values), rigid objects and terrains by
    their geometry (one element with identity origin: a primitive, a mesh file, a plane, a
    heightfield inline) with pose, mass and surface. Raises ValueError naming an entity the
    format cannot hold (a robot from a URDF string or a xacro, a multi-element body, a rigid
    object whose mass properties are not its geometry's at uniform density), before writing."""
    from transforms3d.quaternions import mat2quat

    def pose(R, t):
        w, x, y, z = mat2quat(np.asarray(R))
        return {"position": [float(v) for v in t], "orientation": [float(x), float(y),
                                                                    float(z), float(w)]}

    def surface(settings: BodySettings):
        s = settings.surface
        out = {k: float(getattr(s, k)) for k in SURFACE_KEYS - {"padding"}}
        if settings.padding is not None:
            out["padding"] = float(settings.padding)
        return out

    def geometry(body, what):
        elements = body.getCollisionGeometry()
        if len(elements) != 1 or not (np.allclose(elements[0].origin.R, np.eye(3))
                                      and np.allclose(elements[0].origin.p, 0)):
            raise ValueError(f"{what} '{body.getName()}': only one geometry element at the body "
                             "origin has a world-file form")
        shape = elements[0].shape
        if isinstance(shape, geo.Box):
            return {"box": [float(v) for v in shape.size]}
        if isinstance(shape, geo.Sphere):
            return {"sphere": float(shape.radius)}
        if isinstance(shape, (geo.Cylinder, geo.Capsule)):
            kind = "cylinder" if isinstance(shape, geo.Cylinder) else "capsule"
            return {kind: [float(shape.radius), float(shape.length)]}
        if isinstance(shape, geo.Plane):
            return {"plane": {"normal": [float(v) for v in shape.normal],
                              "offset": float(shape.offset)}}
        if isinstance(shape, geo.Heightfield):
            return {"heightfield": {"heights": shape.heights.tolist(),
                                    "size": [float(v) for v in shape.size]}}
        return {"mesh": str(Path(shape.path).resolve()), "scale": [float(v) for v in shape.scale],
                "concave": bool(shape.concave)}

    doc = {"simulation": {"physics_dt": float(world.simulation.physics_dt),
                          "gravity": [float(g) for g in world.simulation.gravity],
                          "padding": float(world.simulation.padding),
                          "max_contacts": int(world.simulation.max_contacts)}}
    robots = []
    for i in range(world.numRobots()):
        robot = world.robot(i)
        source = robot.urdf.source
        if not source or source == "<string>" or not Path(source).is_file():
            raise ValueError(f"robot '{robot.getName()}' was not loaded from a URDF file "
                             f"(source {source!r}): a world file names robots by their file")
        st = robot.structure
        q = robot.getConfig()
        entry = {"name": robot.getName(), "urdf": str(Path(source).resolve()),
                 "fixed_base": not robot.isFloatingBase(),
                 "pose": pose(*robot.link(0).getTransform())}
        initial = {}
        for joint in robot.getJointNames():
            k, n = st.joint_q_index[joint], st.joint_nq[joint]
            initial[joint] = float(q[k]) if n == 1 else [float(v) for v in q[k:k + n]]
        if initial:
            entry["initial_config"] = initial
        settings = robot.settings
        if settings.namespace is not None:
            entry["namespace"] = settings.namespace
        if settings.controller:
            entry["controller"] = {k: {j: float(g) for j, g in v.items()}
                                   for k, v in settings.controller.items()}
        if settings.plugins:
            entry["plugins"] = [{"name": p.name, **({"config": dict(p.config)} if p.config
                                                     else {})} for p in settings.plugins]
        entry["self_collision"] = bool(settings.self_collision)
        entry["surface"] = surface(settings.body)
        robots.append(entry)
    objects = []
    for i in range(world.numRigidObjects()):
        obj = world.rigidObject(i)
        spec = geometry(obj, "rigid object")
        m = obj.getMass()
        uniform = geometry_mass(obj.getCollisionGeometry(), m.getMass(), "")
        if not (np.allclose(uniform.getCom(), m.getCom(), atol=1e-9)
                and np.allclose(uniform.getInertia(), m.getInertia(), rtol=1e-6, atol=1e-12)):
            raise ValueError(f"rigid object '{obj.getName()}': its mass properties are not its "
                             "geometry's at uniform density, which a world file cannot say")
        objects.append({"name": obj.getName(), "geometry": spec, "mass": float(m.getMass()),
                        "pose": pose(*obj.getTransform()), "surface": surface(obj.settings)})
    terrains = []
    for i in range(world.numTerrains()):
        terrain = world.terrain(i)
        terrains.append({"name": terrain.getName(), "geometry": geometry(terrain, "terrain"),
                         "pose": pose(*terrain.getTransform()),
                         "surface": surface(terrain.settings)})
    if robots:
        doc["robots"] = robots
    if objects:
        doc["rigid_objects"] = objects
    if terrains:
        doc["terrains"] = terrains
    text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)
    Path(path).write_text(text, encoding="utf-8")
