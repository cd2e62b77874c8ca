"""WorldModel: the robots, rigid objects and terrains of a scene, and their loaders.

IDs follow the seed: every terrain, rigid object, robot and robot link has a unique integer ID,
assigned contiguously (terrains, then rigid objects, then each robot followed by its links);
``numIDs()`` and ``getName(id)`` enumerate them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sim_node.model import geometry as geo
from sim_node.model import inertia_repair
from sim_node.model.builder import build_robot
from sim_node.model.errors import ModelLoadError, URDFError
from sim_node.model.robot import Mass, RobotModel
from sim_node.model.bodies import RigidObjectModel, TerrainModel, geometry_mass, rigid_transform
from sim_node.model.settings import BodySettings, SimulationParameters
from sim_node.model.urdf import GeometryElement, Origin, URDFRobot, parse_urdf
from sim_node.model.klampt_xml import (KLAMPT_FORMATS, is_wavefront, load_klampt_world,
                                      save_klampt_world)
from sim_node.model.mjcf import is_mjcf, parse_mjcf
from sim_node.model.sdf import parse_sdf
from sim_node.model.worldfile import load_world_file, save_world_file
from sim_node.model.xacro_files import is_xacro

# (re-exported: their home was this module)
__all__ = ["BodySettings", "MESH_SUFFIXES", "RigidObjectModel", "SimulationParameters",
           "TerrainModel", "WorldModel", "urdf_collision_geometry"]

MESH_SUFFIXES = (".stl", ".obj", ".dae", ".ply", ".off")


class WorldModel:
    """The scene: robots, rigid objects, terrains and simulation parameters."""

    def __init__(self):
        self._robots: list[RobotModel] = []
        self._objects: list[RigidObjectModel] = []
        self._terrains: list[TerrainModel] = []
        self.simulation = SimulationParameters()
        self._id_names: list[str] = []
        self._id_owner: list = []
        self.source = None
        self._constraints: dict = {}     # uid -> Constraint (model/constraints.py), in order
        self._next_constraint = 0

    # -- loading -----------------------------------------------------------------------
    def readFile(self, path) -> bool:
        """Load a world YAML, a URDF or xacro robot, an SDF file or an MuJoCo MJCF file (every
        model a robot: sim_node.model.sdf, sim_node.model.mjcf), or a mesh terrain; a Klamp't
        XML world as loadFile (Klamp't's readFile and loadFile are one). An .xml file is MJCF
        when its root element is <mujoco>, a Klamp't world otherwise. Raises ModelLoadError
        (naming the file, element and problem) on malformed input and then adds nothing."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".sdf" or (suffix == ".xml" and is_mjcf(path)):
            self.loadModels(path)
            return True
        if suffix == ".xml" or (suffix in KLAMPT_FORMATS
                                and not (suffix == ".obj" and is_wavefront(path))):
            return self.loadFile(path)
        if suffix in (".yaml", ".yml"):
            load_world_file(self, path)
        elif suffix == ".urdf" or is_xacro(path):
            self.loadRobot(str(path))
        elif suffix in MESH_SUFFIXES:
            self.loadTerrain(str(path))
        else:
            raise ModelLoadError(str(path), "file", "unknown world file type; expected .yaml, "
                                 ".xml (Klamp't or MJCF), .urdf, .xacro, .sdf or a mesh ("
                                 + ", ".join(MESH_SUFFIXES) + ")")
        return True

    def loadFile(self, path) -> bool:
        """Klamp't's loadFile: a Klamp't XML world (.xml: robots as URDF files, objects and
        terrains as meshes; sim_node.model.klampt_xml) or anything readFile reads (an .xml
        with a <mujoco> root is MJCF). Klamp't's own .rob / .env / .obj object formats are
        refused with an error naming the file."""
        path = Path(path)
        if path.suffix.lower() == ".xml" and not is_mjcf(path):
            load_klampt_world(self, path)
            return True
        suffix = path.suffix.lower()
        if suffix in KLAMPT_FORMATS and not (suffix == ".obj" and is_wavefront(path)):
            raise ModelLoadError(str(path), "file", f"{KLAMPT_FORMATS[suffix]} is not read by "
                                 "sim_node; give robots as URDF, terrains and objects as meshes")
        return self.readFile(path)

    def saveFile(self, path) -> bool:
        """Write the world: .xml as a Klamp't XML world (sim_node.model.klampt_xml), .yaml /
        .yml as our world file (sim_node.model.worldfile). Raises ValueError naming an entity
        the format cannot hold, before writing anything."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".xml":
            save_klampt_world(self, path)
        elif suffix in (".yaml", ".yml"):
            save_world_file(self, path)
        else:
            raise ValueError(f"saveFile: '{path}': expected a .xml (Klamp't) or .yaml world file")
        return True

    def loadRobot(self, path_or_urdf, fixed_base: bool | None = None, *, name: str | None = None,
                  R=np.eye(3), t=np.zeros(3), package_dirs=None,
                  xacro_args: dict | None = None) -> RobotModel:
        """Load a robot from a URDF or xacro file path or a URDF XML string, placing its root at
        (R, t). fixed_base None: fixed iff the URDF root link is 'world' or the root body (the root
        link and the links welded to it) has no mass (PyBullet's convention for static bases:
        plane.urdf, cartpole.urdf's slide bar). Without `name` the robot is named
        after the URDF, made unique in this world (``box``, ``box_1``, ...); an explicit `name`
        that is taken is an error. `package_dirs`: searched first for package:// and $(find);
        `xacro_args`: {name: value} arguments of a .xacro file."""
        robot = self.makeRobot(path_or_urdf, fixed_base, name=name, R=R, t=t,
                               package_dirs=package_dirs, xacro_args=xacro_args)
        self.add(robot)
        return robot

    def makeRobot(self, path_or_urdf, fixed_base=None, *, name=None, R=np.eye(3),
                  t=np.zeros(3), package_dirs=None, xacro_args=None, taken=()) -> RobotModel:
        """Build a robot without adding it to the world (see loadRobot); `path_or_urdf` may also
        be a parsed URDFRobot. A generated name also avoids the names in `taken`."""
        if isinstance(path_or_urdf, URDFRobot):
            urdf = path_or_urdf
        else:
            urdf = parse_urdf(path_or_urdf, package_dirs=package_dirs, xacro_args=xacro_args)
        R, t = rigid_transform(R, t)
        if fixed_base is None and urdf.root != "world" and inertia_repair.root_body_mass(urdf) == 0:
            fixed_base = True       # PyBullet's convention: a massless base is static
        floating = fixed_base is False if urdf.root == "world" else not fixed_base
        urdf = inertia_repair.repair_moving_bodies(urdf, floating)
        structure = build_robot(urdf, fixed_base, R, t)
        return RobotModel(name or self.uniqueName(urdf.name, taken), urdf, structure)

    def loadModels(self, path) -> list:
        """Every model of an SDF file or MJCF file (.xml with a <mujoco> root) as a robot, in
        document order (MJCF masses by MuJoCo's rule); returns them. Nothing is added when one
        fails to load."""
        path = Path(path)
        if path.suffix.lower() == ".sdf":
            bodies = parse_sdf(path).bodies
        else:
            bodies = parse_mjcf(path).bodies
        robots, taken = [], []
        for body in bodies:
            robot = self.makeRobot(body.urdf, body.fixed_base, R=body.R, t=body.p, taken=taken)
            taken.append(robot.getName())
            robots.append(robot)
        for robot in robots:
            self.add(robot)
        return robots

    def loadRigidObject(self, path, *, mass: float | None = None, name: str | None = None,
                        R=np.eye(3), t=np.zeros(3), package_dirs=None) -> RigidObjectModel:
        """Load a rigid object from a one-link URDF (its inertial and collision geometry) or a
        mesh file (uniform density, `mass` kg, default 1 kg). Named after the file unless `name`
        is given, made unique as loadRobot does."""
        obj = self.makeRigidObject(path, mass=mass, name=name, R=R, t=t,
                                   package_dirs=package_dirs)
        self.add(obj)
        return obj

    def makeRigidObject(self, path, *, mass=None, name=None, R=np.eye(3), t=np.zeros(3),
                        package_dirs=None, taken=()):
        path_text = str(path)
        if path_text.lstrip().startswith("<") or Path(path_text).suffix.lower() == ".urdf" \
                or is_xacro(path_text):
            urdf = parse_urdf(path_text, package_dirs=package_dirs)
            if len(urdf.links) != 1:
                raise URDFError(urdf.source, f"robot '{urdf.name}'",
                                f"a rigid object needs exactly one link, found {len(urdf.links)}")
            link = next(iter(urdf.links.values()))
            if not link.collisions:
                raise URDFError(urdf.source, f"link '{link.name}'", "a rigid object needs <collision>",
                                link.line)
            if link.inertial is None or link.inertial.mass <= 0:
                if mass is None:
                    raise URDFError(urdf.source, f"link '{link.name}'",
                                    "a rigid object needs a positive <inertial> mass", link.line)
                body_mass = geometry_mass(link.collisions, mass, urdf.source)
            else:
                body_mass = Mass(link.inertial.mass, link.inertial.com, link.inertial.inertia)
                if mass is not None:
                    body_mass = _scaled(body_mass, mass)
            return RigidObjectModel(name or self.uniqueName(urdf.name, taken), link.collisions,
                                    body_mass, R, t)
        path = Path(path_text)
        shape = _load_mesh_or_error(path)
        element = GeometryElement(Origin(), shape)
        return RigidObjectModel(name or self.uniqueName(path.stem, taken), (element,),
                                geometry_mass((element,), 1.0 if mass is None else mass,
                                               str(path)), R, t)

    def loadTerrain(self, path, *, name: str | None = None, R=np.eye(3),
                    t=np.zeros(3), package_dirs=None) -> TerrainModel:
        """Load a static terrain from a mesh file or a URDF (the collision geometry of all its
        links at the zero configuration, fixed in the world). Named after the file unless `name`
        is given, made unique as loadRobot does."""
        terrain = self.makeTerrain(path, name=name, R=R, t=t, package_dirs=package_dirs)
        self.add(terrain)
        return terrain

    def makeTerrain(self, path, *, name=None, R=np.eye(3), t=np.zeros(3), package_dirs=None,
                    taken=()):
        path_text = str(path)
        if path_text.lstrip().startswith("<") or Path(path_text).suffix.lower() == ".urdf" \
                or is_xacro(path_text):
            urdf = parse_urdf(path_text, package_dirs=package_dirs)
            elements = urdf_collision_geometry(urdf)
            if not elements:
                raise URDFError(urdf.source, f"robot '{urdf.name}'",
                                "a terrain needs <collision> geometry; the robot has none")
            return TerrainModel(name or self.uniqueName(urdf.name, taken), elements, R, t)
        shape = _load_mesh_or_error(Path(path_text))
        return TerrainModel(name or self.uniqueName(Path(path_text).stem, taken),
                            (GeometryElement(Origin(), shape),), R, t)

    def uniqueName(self, base: str, taken=()) -> str:
        """`base` if no entity of this world (nor any of `taken`) has it, else the first free
        of ``base_1``, ``base_2``, ..."""
        used = self._entity_names() | set(taken)
        if base not in used:
            return base
        k = 1
        while f"{base}_{k}" in used:
            k += 1
        return f"{base}_{k}"

    def add(self, entity):
        """Add a built robot, rigid object or terrain; names must be unique."""
        name = entity.getName()
        if name in self._entity_names():
            raise ValueError(f"the world already has an entity named '{name}'")
        if isinstance(entity, RobotModel):
            self._robots.append(entity)
            entity.world = self
        elif isinstance(entity, RigidObjectModel):
            self._objects.append(entity)
        elif isinstance(entity, TerrainModel):
            self._terrains.append(entity)
        else:
            raise TypeError(f"cannot add {type(entity).__name__} to a world")
        self._assign_ids()

    def remove(self, entity):
        """Remove a robot, rigid object or terrain of this world; IDs are reassigned
        (contiguous, in the same order)."""
        for entities in (self._robots, self._objects, self._terrains):
            if any(e is entity for e in entities):
                entities.remove(entity)
                # the constraints on it go with it
                self._constraints = {uid: c for uid, c in self._constraints.items()
                                     if not any(e is entity for e in c.entities())}
                entity._id = -1
                if isinstance(entity, RobotModel):
                    entity.world = None
                    for link in entity.links():
                        link._id = -1
                self._assign_ids()
                return
        raise ValueError(f"{entity!r} is not in this world")

    # -- user constraints (model/constraints.py) -----------------------------------------
    def addConstraint(self, constraint) -> int:
        """Add a Constraint whose entities are in this world; returns its unique id (from 0,
        never reused by this world). ValueError when it cannot be simulated."""
        constraint.check()
        for entity in constraint.entities():
            if not any(e is entity for e in (*self._robots, *self._objects)):
                raise ValueError(f"constraint: {entity!r} is not in this world")
        constraint.uid = self._next_constraint
        self._next_constraint += 1
        self._constraints[constraint.uid] = constraint
        return constraint.uid

    def removeConstraint(self, uid: int):
        """Remove the constraint with this unique id (KeyError when there is none)."""
        if uid not in self._constraints:
            raise KeyError(f"no constraint with unique id {uid}")
        del self._constraints[uid]

    def constraint(self, uid: int):
        if uid not in self._constraints:
            raise KeyError(f"no constraint with unique id {uid}")
        return self._constraints[uid]

    def constraints(self) -> list:
        """The constraints in the order they were added."""
        return list(self._constraints.values())

    # -- access --------------------------------------------------------------------------
    def numRobots(self) -> int:
        return len(self._robots)

    def robot(self, index_or_name) -> RobotModel:
        return _pick(self._robots, index_or_name, "robot")

    def robotlink(self, robot, link):
        return self.robot(robot).link(link)

    def numRigidObjects(self) -> int:
        return len(self._objects)

    def rigidObject(self, index_or_name) -> RigidObjectModel:
        return _pick(self._objects, index_or_name, "rigid object")

    def numTerrains(self) -> int:
        return len(self._terrains)

    def terrain(self, index_or_name) -> TerrainModel:
        return _pick(self._terrains, index_or_name, "terrain")

    def numIDs(self) -> int:
        return len(self._id_names)

    def getName(self, id_: int) -> str:
        if not 0 <= id_ < len(self._id_names):
            raise IndexError(f"ID {id_} out of range [0, {len(self._id_names)})")
        return self._id_names[id_]

    def getEntity(self, id_: int):
        """The terrain, rigid object, robot or robot link with this ID."""
        self.getName(id_)
        return self._id_owner[id_]

    # -- internals -----------------------------------------------------------------------
    def _entity_names(self):
        return {e.getName() for e in (*self._robots, *self._objects, *self._terrains)}

    def _assign_ids(self):
        names, owners = [], []
        for entity in (*self._terrains, *self._objects):
            entity._id = len(names)
            names.append(entity.getName())
            owners.append(entity)
        for robot in self._robots:
            robot._id = len(names)
            names.append(robot.getName())
            owners.append(robot)
            for link in robot.links():
                link._id = len(names)
                names.append(f"{robot.getName()}/{link.getName()}")
                owners.append(link)
        self._id_names, self._id_owner = names, owners

    def __repr__(self):
        return (f"WorldModel({len(self._robots)} robots, {len(self._objects)} rigid objects, "
                f"{len(self._terrains)} terrains)")


def _pick(items, index_or_name, what):
    if isinstance(index_or_name, str):
        for item in items:
            if item.getName() == index_or_name:
                return item
        raise KeyError(f"no {what} named '{index_or_name}'; have {[i.getName() for i in items]}")
    index = int(index_or_name)
    if not 0 <= index < len(items):
        raise IndexError(f"{what} index {index} out of range [0, {len(items)})")
    return items[index]


def urdf_collision_geometry(urdf) -> tuple:
    """Every link's collision elements placed in the URDF root frame, the movable joints at
    zero (clamped to their limits): what a URDF is as a terrain."""
    structure = build_robot(urdf, True)
    robot = RobotModel(urdf.name, urdf, structure)
    R_root, p_root = robot.link(structure.link_names[0]).getTransform()
    elements = []
    for index, link_name in enumerate(structure.link_names):
        R_link, p_link = robot.link(index).getTransform()
        R_rel, p_rel = R_root.T @ R_link, R_root.T @ (p_link - p_root)
        for e in urdf.links[link_name].collisions:
            elements.append(GeometryElement(Origin(R=R_rel @ e.origin.R, p=p_rel + R_rel @ e.origin.p),
                                            e.shape, e.name))
    return tuple(elements)


def _load_mesh_or_error(path: Path) -> geo.Mesh:
    try:
        return geo.load_mesh(str(path))
    except FileNotFoundError:
        raise ModelLoadError(str(path), "mesh", "no such file") from None
    except geo.MeshLoadError as exc:
        raise ModelLoadError(str(path), "mesh", str(exc)) from None


def _scaled(mass: Mass, new_mass: float) -> Mass:
    ratio = new_mass / mass.getMass()
    return Mass(new_mass, mass.getCom(), mass.getInertia() * ratio)
