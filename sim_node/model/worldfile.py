"""World files (YAML, DESIGN.md §4): robots, rigid objects, terrains, simulation parameters.

    simulation:    {physics_dt, gravity, padding, max_contacts}
    robots:        [{name, urdf, namespace, fixed_base, pose, initial_config, controller,
                     surface, self_collision, plugins}]
    rigid_objects: [{name, geometry | urdf, mass, pose, surface}]
    terrains:      [{name, geometry, pose, surface}]

Paths are relative to the world file (or package:// URIs). Unknown keys are errors that list the
valid keys; every error names the file, the YAML line and the entry. The world is changed only
when the whole file loaded.
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
from sim_node.model.urdf import GeometryElement, Origin, _Parser
from sim_node.model.world import BodySettings, SimulationParameters, TerrainModel, RigidObjectModel, _geometry_mass

SECTIONS = {"simulation", "robots", "rigid_objects", "terrains"}
SIMULATION_KEYS = {"physics_dt", "gravity", "padding", "max_contacts"}
ROBOT_KEYS = {"name", "urdf", "namespace", "fixed_base", "pose", "initial_config", "controller",
              "surface", "self_collision", "plugins"}
OBJECT_KEYS = {"name", "geometry", "urdf", "mass", "pose", "surface"}
TERRAIN_KEYS = {"name", "geometry", "pose", "surface"}
POSE_KEYS = {"position", "orientation"}
SURFACE_KEYS = {"kRestitution", "kFriction", "kStiffness", "kDamping", "padding"}
CONTROLLER_KEYS = {"kp", "ki", "kd"}
PLUGIN_KEYS = {"name", "config"}
GEOMETRY_KINDS = {"box", "sphere", "cylinder", "capsule", "mesh", "plane", "heightfield"}
HEIGHTFIELD_KEYS = {"heights", "file", "size"}


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

    def error(self, where: str, problem: str, node=None):
        return WorldFileError(self.source, where, problem, getattr(node, "line", None))

    def mapping(self, node, where: str, allowed: set, required=()):
        if not isinstance(node, dict):
            raise self.error(where, f"expected a mapping, got {type(node).__name__}")
        unknown = sorted(set(node) - allowed)
        if unknown:
            raise self.error(where, f"unknown key(s) {unknown}; valid keys: {sorted(allowed)}", node)
        for key in required:
            if key not in node:
                raise self.error(where, f"missing required key '{key}'", node)
        return node

    def number(self, value, where: str, *, positive=False, nonneg=False, allow_inf=False):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(where, f"expected a number, got {value!r}")
        value = float(value)
        if math.isnan(value) or (math.isinf(value) and not allow_inf):
            raise self.error(where, f"expected a finite number, got {value}")
        if positive and value <= 0:
            raise self.error(where, f"must be positive, got {value}")
        if nonneg and value < 0:
            raise self.error(where, f"must be non-negative, got {value}")
        return value

    def vector(self, value, n: int, where: str, **kw):
        if not isinstance(value, (list, tuple)) or len(value) != n:
            raise self.error(where, f"expected a list of {n} numbers, got {value!r}")
        return np.array([self.number(v, f"{where}[{i}]", **kw) for i, v in enumerate(value)])

    def string(self, value, where: str):
        if not isinstance(value, str) or not value:
            raise self.error(where, f"expected a non-empty string, got {value!r}")
        return value

    def file_path(self, value, where: str) -> str:
        text = self.string(value, where)
        if text.startswith("package://"):
            parser = _Parser(self.source, self.path.parent, None)
            return str(parser.resolve_uri(None, text, where))
        p = Path(text).expanduser()
        return str(p if p.is_absolute() else self.path.parent / p)

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
            raise self.error(f"{where}.concave", f"expected true or false, got {concave!r}", node)
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


def load_world_file(world, path: Path):
    """Load a YAML world file into `world` (all or nothing)."""
    path = Path(path)
    ctx = _Context(path)
    if not path.is_file():
        raise WorldFileError(str(path), "file", "no such file")
    try:
        loader = _Loader(path.read_text(encoding="utf-8"))
        loader.name = str(path)
        try:
            doc = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise WorldFileError(str(path), "YAML", str(exc).replace("\n", " "),
                             mark.line + 1 if mark else None) from None
    if doc is None:
        doc = _Map()
    ctx.mapping(doc, "world", SECTIONS)

    simulation = _simulation(ctx, doc.get("simulation"))
    entities = []
    for kind, keys, build in (("terrains", TERRAIN_KEYS, _terrain),
                              ("rigid_objects", OBJECT_KEYS, _rigid_object),
                              ("robots", ROBOT_KEYS, _robot)):
        entries = doc.get(kind) or []
        if not isinstance(entries, list):
            raise ctx.error(kind, "expected a list")
        for i, entry in enumerate(entries):
            where = f"{kind}[{i}]"
            ctx.mapping(entry, where, keys, required=("name",))
            where = f"{kind}[{i}] ('{entry['name']}')"
            try:
                entities.append(build(ctx, entry, where, world))
            except WorldFileError:
                raise
            except ModelLoadError as exc:
                raise WorldFileError(ctx.source, where, str(exc), entry.line) from None
            except (ValueError, KeyError) as exc:
                raise ctx.error(where, str(exc), entry) from None
    names = [e.getName() for e in entities] + [n for n in world._entity_names()]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ctx.error("world", f"duplicate entity names {duplicates}")
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
            raise ctx.error("simulation.max_contacts", f"expected an integer >= 1, got {value!r}", node)
        params.max_contacts = value
    return params


def _terrain(ctx, entry, where, world):
    if "geometry" not in entry:
        raise ctx.error(where, "missing required key 'geometry'", entry)
    shape = ctx.geometry(entry["geometry"], f"{where}.geometry")
    R, t = ctx.pose(entry.get("pose"), f"{where}.pose")
    terrain = TerrainModel(ctx.string(entry["name"], f"{where}.name"),
                           (GeometryElement(Origin(), shape),), R, t)
    terrain.settings = ctx.settings(entry.get("surface"), f"{where}.surface")
    return terrain


def _rigid_object(ctx, entry, where, world):
    name = ctx.string(entry["name"], f"{where}.name")
    R, t = ctx.pose(entry.get("pose"), f"{where}.pose")
    mass = ctx.number(entry["mass"], f"{where}.mass", positive=True) if "mass" in entry else None
    if ("geometry" in entry) == ("urdf" in entry):
        raise ctx.error(where, "needs exactly one of 'geometry' or 'urdf'", entry)
    if "urdf" in entry:
        obj = world.makeRigidObject(ctx.file_path(entry["urdf"], f"{where}.urdf"), mass=mass,
                                    name=name, R=R, t=t)
    else:
        if mass is None:
            raise ctx.error(where, "a primitive rigid object needs 'mass'", entry)
        shape = ctx.geometry(entry["geometry"], f"{where}.geometry")
        if isinstance(shape, geo.Plane):
            raise ctx.error(f"{where}.geometry", "a plane cannot be a rigid object", entry)
        element = GeometryElement(Origin(), shape)
        obj = RigidObjectModel(name, (element,), _geometry_mass((element,), mass), R, t)
    obj.settings = ctx.settings(entry.get("surface"), f"{where}.surface")
    return obj


def _robot(ctx, entry, where, world):
    name = ctx.string(entry["name"], f"{where}.name")
    if "urdf" not in entry:
        raise ctx.error(where, "missing required key 'urdf'", entry)
    fixed_base = entry.get("fixed_base")
    if fixed_base is not None and not isinstance(fixed_base, bool):
        raise ctx.error(f"{where}.fixed_base", f"expected true or false, got {fixed_base!r}", entry)
    R, t = ctx.pose(entry.get("pose"), f"{where}.pose")
    robot = world.makeRobot(ctx.file_path(entry["urdf"], f"{where}.urdf"), fixed_base, name=name,
                            R=R, t=t)
    joints = robot.getJointNames()
    q = robot.getConfig()
    initial = entry.get("initial_config") or {}
    ctx.mapping(initial, f"{where}.initial_config", set(joints))
    lower, upper = robot.getJointLimits()
    for joint, value in initial.items():
        qi = robot.structure.joint_q_index[joint]
        q[qi] = ctx.number(value, f"{where}.initial_config.{joint}")
        if not lower[qi] <= q[qi] <= upper[qi]:
            raise ctx.error(f"{where}.initial_config.{joint}",
                            f"{q[qi]} is outside the limits [{lower[qi]}, {upper[qi]}]", initial)
    robot.setConfig(q)
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
    self_collision = entry.get("self_collision", False)
    if not isinstance(self_collision, bool):
        raise ctx.error(f"{where}.self_collision", f"expected true or false, got {self_collision!r}", entry)
    robot.settings = {
        # absent: the node's namespace rule decides (sim_node/ros/namespaces.py)
        "namespace": (ctx.string(entry["namespace"], f"{where}.namespace")
                      if "namespace" in entry else None),
        "controller": gains,
        "body": ctx.settings(entry.get("surface"), f"{where}.surface"),
        "self_collision": self_collision,
        "plugins": [dict(p) for p in plugins],
    }
    return robot
