"""SDFormat (.sdf) files as PyBullet's loadSDF reads them: one robot per <model>.

``parse_sdf(path, scale)`` returns an ``SDFFile`` whose ``bodies`` are plain ``URDFRobot`` data
for the one robot builder (sim_node.model.builder, through ``WorldModel.makeRobot``), one per
``<model>`` (directly under <sdf> or in a <world>), in document order:
  * links keep their names; a link's <pose> is in the model frame, the model's <pose> places
    the model in the world (SDFormat 1.4-1.6; the 1.7 ``relative_to`` attribute is refused);
  * a joint's <pose> is in its child link's frame (SDFormat). The URDF link frame of a child is
    its joint frame (URDF links are at their joint), so the link's inertial, collision and visual
    poses are re-expressed in it: for the usual zero joint pose the link frame is the SDF link
    pose, as PyBullet reports it;
  * the axis is in the joint frame, or in the model frame with use_parent_model_frame true (the
    default for SDFormat 1.4 files, as sdformat's 1.4 -> 1.5 conversion does);
  * joint types: revolute (continuous without finite limits), continuous, prismatic, fixed,
    ball; revolute2, universal, screw and gearbox are refused. A joint whose parent is "world"
    (and no link has that name) fixes the model: a fixed joint makes its child the fixed base,
    a movable one hangs the child from a fixed root link "world";
  * the base is fixed for a <static> model (its links then carry no mass, as PyBullet reports),
    or when the root link and the links welded to it have no mass (PyBullet's convention, applied
    by WorldModel.makeRobot);
  * limits: SDFormat's defaults (±1e16, effort and velocity -1) mean "none"; damping and friction
    from <dynamics>;
  * geometry: box, sphere, cylinder, capsule, plane and mesh (``uri``: relative to the file,
    ``file://``, ``model://NAME/...`` looked up beside the file and in its parent directory);
    mesh <scale>; a visual's <material><diffuse> (else <ambient>) colour;
  * ``scale`` (loadSDF's globalScaling) multiplies every length: poses, sizes and mesh scales;
    masses stay, inertias grow by scale², prismatic limits stay, as Bullet's importer does.
Unknown elements are skipped (a warning names file and line); <include> and nested models are
refused with an error. Errors (``SDFError``): file, line, element and what is valid.
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat

from sim_node.model import geometry as geo
from sim_node.model.errors import ModelLoadError
from sim_node.model.inertia_repair import Inertial
from sim_node.model.mjcf import MAX_ELEMENTS, MJCFWarning, parse_numbers, read_xml
from sim_node.model.urdf import GeometryElement, Joint, Limit, Link, Origin, URDFRobot

SUPPORTED_JOINTS = ("revolute", "continuous", "prismatic", "fixed", "ball")
REFUSED_JOINTS = ("revolute2", "universal", "screw", "gearbox")
SDF_NO_LIMIT = 1e16        # SDFormat's default limit magnitude: "no limit"
# elements of a world or model that describe nothing sim_node loads: skipped quietly
QUIET_WORLD = {"light", "physics", "gravity", "scene", "gui", "atmosphere", "magnetic_field",
               "spherical_coordinates", "wind", "audio", "state", "plugin", "population",
               "road", "actor", "frame"}
QUIET_MODEL = {"static", "self_collide", "allow_auto_disable", "plugin", "gripper", "frame",
               "enable_wind", "pose"}
QUIET_LINK = {"gravity", "self_collide", "kinematic", "must_be_base_link", "velocity_decay",
              "sensor", "projector", "audio_sink", "audio_source", "battery", "light",
              "particle_emitter", "enable_wind", "pose", "inertial", "collision", "visual"}


class SDFError(ModelLoadError):
    """An SDF file is malformed or uses something sim_node cannot load."""


class SDFWarning(MJCFWarning):
    """Something in an SDF file was skipped (file, line, element, what)."""


@dataclass(frozen=True)
class SDFBody:
    """One robot of the file (one PyBullet body unique id)."""
    urdf: URDFRobot
    fixed_base: bool | None      # True: static or fixed to the world; None: by the mass rule
    R: np.ndarray                # placement of the root link in the world
    p: np.ndarray


@dataclass(frozen=True)
class SDFFile:
    bodies: tuple                # SDFBody, in document order
    source: str


def parse_sdf(path: str | os.PathLike, scale: float = 1.0) -> SDFFile:
    """Read an SDF file (module docstring); `scale` multiplies every length. Raises SDFError,
    warns SDFWarning."""
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number, got {scale}")
    reader = _Reader(Path(path), float(scale))
    result = reader.read()
    for w in reader.warnings:
        warnings.warn(w, stacklevel=2)
    return result


def _compose(a: Origin, b: Origin) -> Origin:
    return Origin(R=a.R @ b.R, p=a.p + a.R @ b.p)


def _inverse(a: Origin) -> Origin:
    return Origin(R=a.R.T, p=-a.R.T @ a.p)


class _Reader:
    def __init__(self, path: Path, scale: float):
        self.path = path
        self.source = str(path)
        self.scale = scale
        self.warnings = []

    def error(self, el, what: str, problem: str):
        return SDFError(self.source, what, problem, getattr(el, "sourceline", None))

    def warn(self, el, what: str, problem: str):
        self.warnings.append(SDFWarning(self.source, what, problem,
                                        getattr(el, "sourceline", None)))

    def numbers(self, el, n: int | None, what: str) -> np.ndarray:
        return parse_numbers(el.text or "", n, lambda p: self.error(el, what, p),
                             f"<{el.tag}>")

    def child_numbers(self, parent, tag: str, n: int, what: str, default=None):
        el = parent.find(tag)
        if el is None:
            if default is None:
                raise self.error(parent, what, f"missing <{tag}>")
            return np.array(default, dtype=float)
        return self.numbers(el, n, f"{what} <{tag}>")

    def child_scalar(self, parent, tag: str, what: str, default: float) -> float:
        el = parent.find(tag) if parent is not None else None
        return default if el is None else float(self.numbers(el, 1, f"{what} <{tag}>")[0])

    def pose(self, parent, what: str) -> Origin:
        el = parent.find("pose")
        if el is None:
            return Origin()
        if el.get("relative_to") or el.get("frame"):
            raise self.error(el, f"{what} <pose>", "poses relative to a named frame "
                             "(SDFormat 1.7 relative_to / frame) are not supported")
        v = self.numbers(el, 6, f"{what} <pose>")
        return Origin(R=euler2mat(*v[3:], axes="sxyz"), p=v[:3] * self.scale)

    # -- document -------------------------------------------------------------------------
    def read(self) -> SDFFile:
        root = read_xml(self.path, lambda line, what, problem:
                        SDFError(self.source, what, problem, line), MAX_ELEMENTS)
        if root.tag != "sdf":
            raise SDFError(self.source, f"<{root.tag}>", "the root element must be <sdf>",
                           root.sourceline)
        version = root.get("version", "1.6")
        try:
            self.version = tuple(int(x) for x in version.split(".")[:2])
        except ValueError:
            raise self.error(root, "<sdf>", f"version=\"{version}\" is not a version number "
                             "like 1.6") from None
        models = []
        for el in root:
            if not isinstance(el.tag, str):
                continue
            if el.tag == "model":
                models.append(el)
            elif el.tag == "world":
                for child in el:
                    if not isinstance(child.tag, str):
                        continue
                    if child.tag == "model":
                        models.append(child)
                    elif child.tag == "include":
                        raise self.error(child, "<include>", "not supported: put the model's "
                                         "<model> in the file")
                    elif child.tag not in QUIET_WORLD:
                        self.warn(child, f"<{child.tag}>", "unknown element in <world>: ignored")
            elif el.tag not in ("light", "actor"):
                self.warn(el, f"<{el.tag}>", "unknown element in <sdf>: ignored")
        if not models:
            raise self.error(root, "<sdf>", "has no <model>")
        return SDFFile(tuple(self.model(m) for m in models), self.source)

    # -- models -----------------------------------------------------------------------------
    def model(self, el) -> SDFBody:
        name = el.get("name")
        if not name:
            raise self.error(el, "<model>", "missing attribute 'name'")
        what = f"model '{name}'"
        static_el = el.find("static")
        static = static_el is not None and (static_el.text or "").strip().lower() in ("1", "true")
        model_pose = self.pose(el, what)
        link_els, joint_els = [], []
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if child.tag == "link":
                link_els.append(child)
            elif child.tag == "joint":
                joint_els.append(child)
            elif child.tag in ("model", "include"):
                raise self.error(child, f"{what} <{child.tag}>", "nested models and includes "
                                 "are not supported")
            elif child.tag not in QUIET_MODEL:
                self.warn(child, f"{what} <{child.tag}>", "unknown element in <model>: ignored")
        if not link_els:
            raise self.error(el, what, "has no <link>")
        # link poses in the model frame, and each link's parent joint
        link_pose, link_el = {}, {}
        for lel in link_els:
            lname = lel.get("name")
            if not lname:
                raise self.error(lel, f"{what} <link>", "missing attribute 'name'")
            if lname in link_pose:
                raise self.error(lel, f"link '{lname}'", "duplicate link name")
            link_pose[lname] = self.pose(lel, f"link '{lname}'")
            link_el[lname] = lel
        joints = {}
        parent_joint = {}
        world_fixed = None           # child link fixed to the world by a fixed joint
        world_root = False           # a movable joint to the world: a root link "world"
        for jel in joint_els:
            j = self.joint(jel, link_pose, what)
            if j["name"] in joints:
                raise self.error(jel, f"joint '{j['name']}'", "duplicate joint name")
            if j["child"] in parent_joint:
                raise self.error(jel, f"joint '{j['name']}'", f"link '{j['child']}' already "
                                 f"has parent joint '{parent_joint[j['child']]}'")
            if j["parent"] == "world" and "world" not in link_pose:
                if j["type"] == "fixed":
                    if world_fixed is not None:
                        raise self.error(jel, f"joint '{j['name']}'", "a second link fixed to "
                                         "the world: a model has one base")
                    world_fixed = j["child"]
                    continue
                world_root = True
            parent_joint[j["child"]] = j["name"]
            joints[j["name"]] = j
        roots = [n for n in link_pose if n not in parent_joint]
        if world_root:
            roots = [r for r in roots if r != "world"]
        if not world_root and len(roots) != 1:
            if not roots:
                raise self.error(el, what, "the joints form a cycle: every link has a parent")
            raise self.error(el, what, f"has several root links {roots[:10]}; a model must "
                             "be one tree (join them with joints)")
        if world_root and roots:
            raise self.error(el, what, f"links {roots[:10]} hang from nothing while others "
                             "hang from the world")
        # URDF frame of every link (model frame): its SDF pose composed with its joint's pose
        frame = {}
        for lname, pose in link_pose.items():
            jname = parent_joint.get(lname)
            frame[lname] = _compose(pose, joints[jname]["pose"]) if jname else pose
        if world_root:
            frame["world"] = Origin()
        links = {}
        for lname in link_pose:
            links[lname] = self.link(link_el[lname],
                                     _compose(_inverse(frame[lname]), link_pose[lname]), static)
        if world_root:
            links = {"world": Link(name="world", inertial=None, visuals=(), collisions=()),
                     **links}
        urdf_joints = {}
        for jname, j in joints.items():
            parent_frame = frame[j["parent"]]
            child_frame = frame[j["child"]]
            origin = _compose(_inverse(parent_frame), child_frame)
            axis = j["axis"]
            if j["model_axis"]:
                axis = child_frame.R.T @ axis
            urdf_joints[jname] = Joint(
                name=jname, type=j["urdf_type"], parent=j["parent"], child=j["child"],
                origin=origin, axis=axis, limit=j["limit"], damping=j["damping"],
                friction=j["friction"], mimic=None, line=j["line"])
        root = "world" if world_root else roots[0]
        self.check_reach(el, what, root, links, urdf_joints)
        base = model_pose if world_root else _compose(model_pose, frame[root])
        fixed = True if (static or world_fixed is not None or world_root) else None
        if world_fixed is not None and world_fixed != root:
            raise self.error(el, what, f"link '{world_fixed}' is fixed to the world but is "
                             f"not the root link '{root}'")
        urdf = URDFRobot(name=name, links=links, joints=urdf_joints, root=root,
                         source=self.source)
        return SDFBody(urdf, fixed, base.R, base.p)

    def check_reach(self, el, what, root, links, joints):
        children = {}
        for j in joints.values():
            children.setdefault(j.parent, []).append(j.child)
        reached, stack = {root}, [root]
        while stack:
            for c in children.get(stack.pop(), []):
                if c not in reached:
                    reached.add(c)
                    stack.append(c)
        missing = [n for n in links if n not in reached]
        if missing:
            raise self.error(el, what, f"the joints form a cycle through links {missing[:10]}")

    def joint(self, el, link_pose, what_model) -> dict:
        name = el.get("name")
        if not name:
            raise self.error(el, f"{what_model} <joint>", "missing attribute 'name'")
        what = f"joint '{name}'"
        jtype = el.get("type")
        if jtype in REFUSED_JOINTS:
            raise self.error(el, what, f"type '{jtype}' is not supported; supported: "
                             + ", ".join(SUPPORTED_JOINTS))
        if jtype not in SUPPORTED_JOINTS:
            raise self.error(el, what, f"unknown joint type '{jtype}'; supported: "
                             + ", ".join(SUPPORTED_JOINTS))
        ends = {}
        for end in ("parent", "child"):
            e = el.find(end)
            if e is None or not (e.text or "").strip():
                raise self.error(el, what, f"missing <{end}>")
            link = e.text.strip()
            if link not in link_pose and not (link == "world" and end == "parent"):
                raise self.error(e, f"{what} <{end}>", f"names missing link '{link}'; links: "
                                 f"{list(link_pose)[:10]}")
            ends[end] = link
        if ends["parent"] == ends["child"]:
            raise self.error(el, what, "parent and child are the same link")
        axis = np.array([0.0, 0.0, 1.0])
        model_axis = self.version < (1, 5)
        lower, upper, effort, velocity = -math.inf, math.inf, math.inf, math.inf
        damping = friction = 0.0
        axis_el = el.find("axis")
        if axis_el is not None:
            axis = self.child_numbers(axis_el, "xyz", 3, f"{what} <axis>", (0, 0, 1))
            upmf = axis_el.find("use_parent_model_frame")
            if upmf is not None:
                model_axis = (upmf.text or "").strip().lower() in ("1", "true")
            limit_el = axis_el.find("limit")
            if limit_el is not None:
                w = f"{what} <axis><limit>"
                lower = self.child_scalar(limit_el, "lower", w, -math.inf)
                upper = self.child_scalar(limit_el, "upper", w, math.inf)
                effort = self.child_scalar(limit_el, "effort", w, math.inf)
                velocity = self.child_scalar(limit_el, "velocity", w, math.inf)
            dyn = axis_el.find("dynamics")
            damping = self.child_scalar(dyn, "damping", f"{what} <dynamics>", 0.0)
            friction = self.child_scalar(dyn, "friction", f"{what} <dynamics>", 0.0)
        if jtype in ("revolute", "prismatic", "continuous"):
            norm = np.linalg.norm(axis)
            if norm < 1e-12:
                raise self.error(axis_el, f"{what} <axis>", "axis must be non-zero")
            axis = axis / norm
        if damping < 0 or friction < 0:
            raise self.error(el, what, "damping and friction must be non-negative")
        # SDFormat: effort / velocity -1 and limits of 1e16 mean unlimited
        effort = math.inf if effort < 0 else effort
        velocity = math.inf if velocity < 0 else velocity
        lower = -math.inf if lower <= -SDF_NO_LIMIT else lower
        upper = math.inf if upper >= SDF_NO_LIMIT else upper
        if lower > upper:
            raise self.error(el, what, f"lower limit {lower:g} above upper {upper:g}")
        urdf_type = {"revolute": "revolute", "continuous": "continuous", "prismatic": "prismatic",
                     "fixed": "fixed", "ball": "spherical"}[jtype]
        if urdf_type == "revolute" and not (math.isfinite(lower) and math.isfinite(upper)):
            urdf_type = "continuous"
        if urdf_type == "continuous":
            lower, upper = -math.inf, math.inf
        limit = (Limit(lower, upper, effort, velocity)
                 if urdf_type in ("revolute", "continuous", "prismatic") else None)
        return dict(name=name, type=jtype, urdf_type=urdf_type, parent=ends["parent"],
                    child=ends["child"], pose=self.pose(el, what), axis=axis,
                    model_axis=model_axis, limit=limit, damping=damping, friction=friction,
                    line=el.sourceline)

    # -- links --------------------------------------------------------------------------------
    def link(self, el, to_urdf: Origin, static: bool) -> Link:
        """Link `el`; `to_urdf`: the SDF link frame in the URDF link frame."""
        name = el.get("name")
        what = f"link '{name}'"
        for child in el:
            if isinstance(child.tag, str) and child.tag not in QUIET_LINK:
                self.warn(child, f"{what} <{child.tag}>", "unknown element in <link>: ignored")
        inertial = None
        in_el = el.find("inertial")
        if in_el is not None:
            inertial = self.inertial(in_el, f"{what} <inertial>", to_urdf)
            if static:
                inertial = replace(inertial, mass=0.0, inertia=np.zeros((3, 3)))
        collisions = tuple(self.geometry_element(c, f"{what} <collision>", to_urdf)
                           for c in el.findall("collision"))
        visuals = tuple(self.geometry_element(v, f"{what} <visual>", to_urdf, visual=True)
                        for v in el.findall("visual"))
        return Link(name=name, inertial=inertial, visuals=visuals, collisions=collisions,
                    line=el.sourceline)

    def inertial(self, el, what: str, to_urdf: Origin) -> Inertial:
        pose = _compose(to_urdf, self.pose(el, what))
        mass = self.child_scalar(el, "mass", what, 1.0)       # SDFormat's default mass: 1 kg
        if mass < 0:
            raise self.error(el, what, f"mass {mass:g} is negative")
        I = np.diag([1.0, 1.0, 1.0])                           # SDFormat's default inertia
        in_el = el.find("inertia")
        if in_el is not None:
            v = {k: self.child_scalar(in_el, k, f"{what} <inertia>", 0.0)
                 for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
            I = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                          [v["ixz"], v["iyz"], v["izz"]]])
        I = I * self.scale ** 2
        return Inertial(mass=mass, com=pose.p, inertia=pose.R @ I @ pose.R.T)

    def geometry_element(self, el, what: str, to_urdf: Origin, visual=False) -> GeometryElement:
        origin = _compose(to_urdf, self.pose(el, what))
        g = el.find("geometry")
        if g is None:
            raise self.error(el, what, "missing <geometry>")
        shapes = [c for c in g if isinstance(c.tag, str)]
        if len(shapes) != 1:
            raise self.error(g, f"{what} <geometry>", "needs exactly one shape (box, sphere, "
                             "cylinder, capsule, plane or mesh)")
        shape = self.shape(shapes[0], f"{what} <{shapes[0].tag}>")
        color = None
        material = el.find("material")
        if visual and material is not None:
            for tag in ("diffuse", "ambient"):
                c = material.find(tag)
                if c is not None:
                    rgba = self.numbers(c, None, f"{what} <material><{tag}>")
                    if len(rgba) in (3, 4):
                        color = tuple(float(x) for x in np.clip(
                            np.append(rgba, 1.0)[:4], 0, 1))
                        break
        return GeometryElement(origin=origin, shape=shape, name=el.get("name", ""), color=color)

    def shape(self, el, what: str):
        s = self.scale
        if el.tag == "box":
            size = self.child_numbers(el, "size", 3, what) * s
            if np.any(size <= 0):
                raise self.error(el, what, "box sides must be positive")
            return geo.Box(tuple(size))
        if el.tag == "sphere":
            r = self.child_scalar(el, "radius", what, 1.0) * s
            if r <= 0:
                raise self.error(el, what, "radius must be positive")
            return geo.Sphere(r)
        if el.tag in ("cylinder", "capsule"):
            r = self.child_scalar(el, "radius", what, 1.0) * s
            h = self.child_scalar(el, "length", what, 1.0) * s
            if r <= 0 or h < 0:
                raise self.error(el, what, "radius must be positive and length non-negative")
            return geo.Cylinder(r, h) if el.tag == "cylinder" else geo.Capsule(r, h)
        if el.tag == "plane":
            normal = self.child_numbers(el, "normal", 3, what, (0, 0, 1))
            if np.linalg.norm(normal) < 1e-12:
                raise self.error(el, what, "normal must be non-zero")
            return geo.Plane(tuple(normal / np.linalg.norm(normal)), 0.0)
        if el.tag == "mesh":
            uri_el = el.find("uri")
            if uri_el is None or not (uri_el.text or "").strip():
                raise self.error(el, what, "missing <uri>")
            scale = self.child_numbers(el, "scale", 3, what, (1, 1, 1)) * s
            path = self.resolve(uri_el.text.strip())
            try:
                return geo.load_mesh(str(path), tuple(scale))
            except FileNotFoundError:
                raise self.error(uri_el, what, f"mesh file not found: {uri_el.text.strip()} "
                                 f"(looked for {path})") from None
            except geo.MeshLoadError as exc:
                raise self.error(uri_el, what, f"mesh {uri_el.text.strip()}: {exc}") from None
        raise self.error(el, what, "unknown shape; expected box, sphere, cylinder, capsule, "
                         "plane or mesh")

    def resolve(self, uri: str) -> Path:
        base = self.path.resolve().parent
        if uri.startswith("file://"):
            return Path(uri[len("file://"):])
        if uri.startswith("model://"):
            rest = uri[len("model://"):]
            for candidate in (base / rest, base.parent / rest, base / rest.partition("/")[2]):
                if candidate.is_file():
                    return candidate
            return base / rest
        path = Path(uri)
        if not path.is_absolute():
            return base / path
        if not path.exists() and (base / uri.lstrip("/")).is_file():
            # "/meshes/x.stl" meant relative to the file (pybullet_data's kuka_with_gripper);
            # PyBullet's mesh search finds it there too
            self.warnings.append(SDFWarning(self.source, f"mesh '{uri}'", "no such absolute "
                                            f"path: read relative to the file's directory"))
            return base / uri.lstrip("/")
        return path
