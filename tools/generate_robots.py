#!/usr/bin/env python3
"""Generate the robots and meshes shipped in ``data/``.

    python tools/generate_robots.py [--output-dir DIR]

writes, below DIR (default: the repository root)::

    data/robots/arm7/arm7.urdf            7-DOF arm + 2-finger gripper (root link 'world')
    data/robots/arm7/meshes/*.stl|dae|obj
    data/robots/quadruped/quadruped.urdf  12-DOF floating-base quadruped (primitives)
    data/robots/pendulum/pendulum.urdf    the seed's one-link robot (Monte Carlo example)
    data/robots/diff_drive/diff_drive.urdf differential-drive base (primitives)
    data/meshes/table.stl                 table for the default world (top surface at z = 0.75)

The output is deterministic: running the generator twice gives byte-identical files (no time
stamps, no dict-order or hash dependence; every mesh is built here from closed-form vertex lists
and written by the writers below, not by a library exporter).

Mass properties.  Every link's <inertial> is computed from exactly the geometry in its
<collision> elements, as a solid of uniform density:

* meshes: the mesh is first rounded to float32 (what a binary STL stores), then its volume,
  centre of mass and inertia are computed with ``trimesh.triangles.mass_properties`` -- so the
  values can be recomputed from the STL file to ~1e-12;
* primitives (box, cylinder, sphere): closed-form solids; a link with several collision
  primitives has them with disjoint interiors (touching at most) so their volumes add.

The density of each link is stated in a comment inside the <link> element, either directly
(e.g. aluminium 2700 kg/m^3) or derived from a stated link mass distributed uniformly over the
collision solid (arm links: structure, motor and gearbox smeared over the link volume). The comment
always contains ``density <value> kg/m^3`` (used by tests/data/test_robots.py). The <inertial>
origin is the centre of mass; its rpy is zero except where stated (links whose long axis is not
the link z axis get an inertial frame aligned with that axis); ixx..izz is the full tensor in
that frame (URDF convention: ixy = -integral(x*y dm)).
"""
from __future__ import annotations

import argparse
import math
import struct
from pathlib import Path

import numpy as np
import trimesh

REPO = Path(__file__).resolve().parent.parent
PKG = "package://sim_node"
HALF_PI = math.pi / 2

# ----------------------------------------------------------------------------------------------
# small math helpers
# ----------------------------------------------------------------------------------------------


def rpy_matrix(rpy):
    """URDF rpy (fixed-axis roll about x, then pitch about y, then yaw about z)."""
    r, p, y = rpy
    cr, sr, cp, sp = math.cos(r), math.sin(r), math.cos(p), math.sin(p)
    cy, sy = math.cos(y), math.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def fmt(x: float, exact: bool = False) -> str:
    """Deterministic float formatting without '-0': computed values with 12 significant digits
    (robust to last-bit differences between platforms), inputs such as angles exactly."""
    x = float(x)
    if abs(x) < 1e-15:
        return "0"
    return repr(x) if exact else f"{x:.12g}"


def fmtv(v, exact: bool = False) -> str:
    return " ".join(fmt(x, exact) for x in v)


# ----------------------------------------------------------------------------------------------
# mesh construction (indexed triangle meshes, outward winding)
# ----------------------------------------------------------------------------------------------


class Mesh:
    def __init__(self, vertices, faces):
        self.vertices = np.asarray(vertices, dtype=np.float64)
        self.faces = np.asarray(faces, dtype=np.int64)

    def transformed(self, R=None, t=None, scale=1.0):
        v = self.vertices * scale
        if R is not None:
            v = v @ np.asarray(R).T
        if t is not None:
            v = v + np.asarray(t)
        return Mesh(v, self.faces)

    def quantized(self):
        """Round to float32, the precision stored in a binary STL."""
        return Mesh(self.vertices.astype(np.float32).astype(np.float64), self.faces)

    def trimesh(self):
        return trimesh.Trimesh(self.vertices, self.faces, process=False)

    @staticmethod
    def concatenate(meshes):
        verts, faces, off = [], [], 0
        for m in meshes:
            verts.append(m.vertices)
            faces.append(m.faces + off)
            off += len(m.vertices)
        return Mesh(np.vstack(verts), np.vstack(faces))


def revolve(profile, segments):
    """Closed solid of revolution about z.

    ``profile``: (r, z) points from bottom to top. An end with r == 0 is a pole; an end with
    r > 0 is closed with a flat disc. Winding is outward.
    """
    profile = [(float(r), float(z)) for r, z in profile]
    angles = [2 * math.pi * k / segments for k in range(segments)]
    verts, faces = [], []
    rings = []  # per profile point: list of vertex indices (len 1 for a pole)
    for r, z in profile:
        if r == 0.0:
            rings.append([len(verts)])
            verts.append((0.0, 0.0, z))
        else:
            idx = []
            for a in angles:
                idx.append(len(verts))
                verts.append((r * math.cos(a), r * math.sin(a), z))
            rings.append(idx)
    # bottom flat cap
    if len(rings[0]) > 1:
        c = len(verts)
        verts.append((0.0, 0.0, profile[0][1]))
        ring = rings[0]
        for k in range(segments):
            faces.append((c, ring[(k + 1) % segments], ring[k]))
    for lo, hi in zip(rings[:-1], rings[1:]):
        for k in range(segments):
            k1 = (k + 1) % segments
            if len(lo) == 1:
                faces.append((lo[0], hi[k1], hi[k]))
            elif len(hi) == 1:
                faces.append((lo[k], lo[k1], hi[0]))
            else:
                faces.append((lo[k], lo[k1], hi[k1]))
                faces.append((lo[k], hi[k1], hi[k]))
    if len(rings[-1]) > 1:
        c = len(verts)
        verts.append((0.0, 0.0, profile[-1][1]))
        ring = rings[-1]
        for k in range(segments):
            faces.append((c, ring[k], ring[(k + 1) % segments]))
    return Mesh(verts, faces)


def capsule_profile(radius, length, round_start=True, round_end=True, arc_steps=8):
    """Profile of a capsule along z from z=0 to z=length (hemispheres centred on the ends)."""
    prof = []
    if round_start:
        for i in range(arc_steps + 1):  # pole (-r) up to the equator at z=0
            a = -HALF_PI + HALF_PI * i / arc_steps
            prof.append((radius * math.cos(a), radius * math.sin(a)))
        prof[0] = (0.0, -radius)
    else:
        prof.append((radius, 0.0))
    if round_end:
        for i in range(arc_steps + 1):
            a = HALF_PI * i / arc_steps
            prof.append((radius * math.cos(a), length + radius * math.sin(a)))
        prof[-1] = (0.0, length + radius)
    else:
        prof.append((radius, length))
    return prof


def box_mesh(lo, hi):
    x0, y0, z0 = lo
    x1, y1, z1 = hi
    v = [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
         (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]
    f = [(0, 2, 1), (0, 3, 2), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4),
         (1, 2, 6), (1, 6, 5), (2, 3, 7), (2, 7, 6), (3, 0, 4), (3, 4, 7)]
    return Mesh(v, f)


def prism_x(polygon_yz, half_x):
    """Convex polygon in the (y, z) plane (counter-clockwise seen from +x) extruded over
    x in [-half_x, half_x]."""
    n = len(polygon_yz)
    verts = [(-half_x, y, z) for y, z in polygon_yz] + [(half_x, y, z) for y, z in polygon_yz]
    faces = []
    for k in range(1, n - 1):  # fans: +x cap counter-clockwise, -x cap reversed
        faces.append((n, n + k, n + k + 1))
        faces.append((0, k + 1, k))
    for k in range(n):
        k1 = (k + 1) % n
        faces.append((k, k1, n + k1))
        faces.append((k, n + k1, n + k))
    return Mesh(verts, faces)


def align_z_to(d):
    """Rotation taking +z to the unit vector d (exact for the coordinate axes)."""
    d = np.asarray(d, dtype=float)
    d = d / np.linalg.norm(d)
    table = {(0, 0, 1): (0, 0, 0), (0, 0, -1): (math.pi, 0, 0),
             (0, -1, 0): (HALF_PI, 0, 0), (0, 1, 0): (-HALF_PI, 0, 0),
             (1, 0, 0): (0, HALF_PI, 0), (-1, 0, 0): (0, -HALF_PI, 0)}
    key = tuple(int(round(c)) for c in d)
    if np.allclose(d, key) and key in table:
        return rpy_matrix(table[key]), table[key]
    raise ValueError("only axis-aligned link directions are used")


def mesh_mass_properties(mesh: Mesh, density: float):
    """(mass, com, inertia about com in mesh axes, volume) of a closed mesh."""
    tm = mesh.trimesh()
    assert tm.is_watertight and tm.is_winding_consistent, "mesh must be a closed solid"
    mp = trimesh.triangles.mass_properties(tm.triangles, density=density)
    assert mp.volume > 0, "mesh winding must be outward"
    return float(mp.mass), np.array(mp.center_mass), np.array(mp.inertia), float(mp.volume)


# ----------------------------------------------------------------------------------------------
# closed-form solids (per unit density)
# ----------------------------------------------------------------------------------------------


def box_props(size):
    a, b, c = size
    v = a * b * c
    return v, v / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def cylinder_props(r, length):  # axis z
    v = math.pi * r * r * length
    ixx = v * (3 * r * r + length * length) / 12
    return v, np.diag([ixx, ixx, v * r * r / 2])


def sphere_props(r):
    v = 4.0 / 3.0 * math.pi * r ** 3
    return v, np.eye(3) * (0.4 * v * r * r)


def combine(parts):
    """parts: list of (volume, com, inertia-per-density about com) -> (volume, com, inertia)."""
    vol = sum(p[0] for p in parts)
    com = sum(p[0] * np.asarray(p[1]) for p in parts) / vol
    inertia = np.zeros((3, 3))
    for v, c, i in parts:
        d = np.asarray(c) - com
        inertia += i + v * (d @ d * np.eye(3) - np.outer(d, d))
    return vol, com, inertia


# ----------------------------------------------------------------------------------------------
# file writers (deterministic)
# ----------------------------------------------------------------------------------------------


def write_stl(path: Path, mesh: Mesh):
    v = mesh.vertices.astype(np.float32)
    tri = v[mesh.faces]
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    ln = np.linalg.norm(n, axis=1, keepdims=True)
    n = (n / np.where(ln > 0, ln, 1)).astype(np.float32)
    rec = np.zeros(len(tri), dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    rec["n"] = n
    rec["v"] = tri
    header = b"sim_node tools/generate_robots.py binary STL".ljust(80, b" ")
    path.write_bytes(header + struct.pack("<I", len(tri)) + rec.tobytes())


def write_obj(path: Path, mesh: Mesh, name: str):
    lines = [f"# {name}: generated by sim_node tools/generate_robots.py", f"o {name}"]
    lines += ["v %.6g %.6g %.6g" % tuple(p) for p in mesh.vertices]
    lines += ["f %d %d %d" % tuple(f + 1) for f in mesh.faces]
    path.write_text("\n".join(lines) + "\n")


def write_dae(path: Path, mesh: Mesh, name: str, rgba):
    pos = " ".join("%.6g" % x for x in mesh.vertices.ravel())
    idx = " ".join(str(int(i)) for i in mesh.faces.ravel())
    nv, nf = len(mesh.vertices), len(mesh.faces)
    color = " ".join("%.3g" % c for c in rgba)
    text = f"""<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset>
    <contributor><authoring_tool>sim_node tools/generate_robots.py</authoring_tool></contributor>
    <created>2025-01-01T00:00:00</created>
    <modified>2025-01-01T00:00:00</modified>
    <unit name="meter" meter="1"/>
    <up_axis>Z_UP</up_axis>
  </asset>
  <library_effects>
    <effect id="{name}-effect">
      <profile_COMMON>
        <technique sid="common">
          <phong><diffuse><color sid="diffuse">{color}</color></diffuse></phong>
        </technique>
      </profile_COMMON>
    </effect>
  </library_effects>
  <library_materials>
    <material id="{name}-material" name="{name}-material"><instance_effect url="#{name}-effect"/></material>
  </library_materials>
  <library_geometries>
    <geometry id="{name}-mesh" name="{name}">
      <mesh>
        <source id="{name}-positions">
          <float_array id="{name}-positions-array" count="{3 * nv}">{pos}</float_array>
          <technique_common>
            <accessor source="#{name}-positions-array" count="{nv}" stride="3">
              <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
            </accessor>
          </technique_common>
        </source>
        <vertices id="{name}-vertices"><input semantic="POSITION" source="#{name}-positions"/></vertices>
        <triangles material="{name}-material" count="{nf}">
          <input semantic="VERTEX" source="#{name}-vertices" offset="0"/>
          <p>{idx}</p>
        </triangles>
      </mesh>
    </geometry>
  </library_geometries>
  <library_visual_scenes>
    <visual_scene id="Scene" name="Scene">
      <node id="{name}" name="{name}" type="NODE">
        <instance_geometry url="#{name}-mesh">
          <bind_material><technique_common>
            <instance_material symbol="{name}-material" target="#{name}-material"/>
          </technique_common></bind_material>
        </instance_geometry>
      </node>
    </visual_scene>
  </library_visual_scenes>
  <scene><instance_visual_scene url="#Scene"/></scene>
</COLLADA>
"""
    path.write_text(text)


# ----------------------------------------------------------------------------------------------
# URDF text helpers
# ----------------------------------------------------------------------------------------------


def origin_xml(xyz=(0, 0, 0), rpy=(0, 0, 0)):
    return f'<origin xyz="{fmtv(xyz)}" rpy="{fmtv(rpy, exact=True)}"/>'


def inertial_xml(mass, com, inertia, rpy=(0, 0, 0), indent="    "):
    """inertia: tensor about the com, expressed in the link frame; written in the frame given by
    rpy (I_frame = R^T I_link R)."""
    R = rpy_matrix(rpy)
    i = R.T @ np.asarray(inertia) @ R
    i = 0.5 * (i + i.T)
    tiny = 1e-12 * np.abs(i).max()
    i = np.where(np.abs(i) < tiny, 0.0, i)
    return (f"{indent}<inertial>\n"
            f"{indent}  {origin_xml(com, rpy)}\n"
            f"{indent}  <mass value=\"{fmt(mass)}\"/>\n"
            f"{indent}  <inertia ixx=\"{fmt(i[0, 0])}\" ixy=\"{fmt(i[0, 1])}\" "
            f"ixz=\"{fmt(i[0, 2])}\" iyy=\"{fmt(i[1, 1])}\" iyz=\"{fmt(i[1, 2])}\" "
            f"izz=\"{fmt(i[2, 2])}\"/>\n"
            f"{indent}</inertial>\n")


def geometry_xml(geom):
    kind = geom[0]
    if kind == "box":
        return f'<box size="{fmtv(geom[1])}"/>'
    if kind == "cylinder":
        return f'<cylinder radius="{fmt(geom[1])}" length="{fmt(geom[2])}"/>'
    if kind == "sphere":
        return f'<sphere radius="{fmt(geom[1])}"/>'
    if kind == "mesh":
        scale = geom[2] if len(geom) > 2 else None
        s = f' scale="{fmtv(scale)}"' if scale is not None else ""
        return f'<mesh filename="{geom[1]}"{s}/>'
    raise ValueError(kind)


def visual_xml(geom, material, xyz=(0, 0, 0), rpy=(0, 0, 0), indent="    "):
    return (f"{indent}<visual>\n{indent}  {origin_xml(xyz, rpy)}\n"
            f"{indent}  <geometry>{geometry_xml(geom)}</geometry>\n"
            f"{indent}  <material name=\"{material}\"/>\n{indent}</visual>\n")


def collision_xml(geom, xyz=(0, 0, 0), rpy=(0, 0, 0), indent="    "):
    return (f"{indent}<collision>\n{indent}  {origin_xml(xyz, rpy)}\n"
            f"{indent}  <geometry>{geometry_xml(geom)}</geometry>\n{indent}</collision>\n")


def density_comment(density, what, indent="    "):
    return f"{indent}<!-- mass: {what}; density {fmt(density)} kg/m^3 -->\n"


def stated_mass(mass, volume, what):
    rho = mass / volume
    return rho, (f"stated mass {fmt(mass)} kg ({what}) distributed uniformly over the collision "
                 "geometry")


def joint_xml(name, jtype, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None, limit=None,
              dynamics=None, mimic=None, indent="  "):
    s = f'{indent}<joint name="{name}" type="{jtype}">\n'
    s += f"{indent}  {origin_xml(xyz, rpy)}\n"
    s += f'{indent}  <parent link="{parent}"/>\n{indent}  <child link="{child}"/>\n'
    if axis is not None:
        s += f'{indent}  <axis xyz="{fmtv(axis)}"/>\n'
    if limit is not None:
        lo, hi, eff, vel = limit
        if lo is None:
            s += f'{indent}  <limit effort="{fmt(eff)}" velocity="{fmt(vel)}"/>\n'
        else:
            s += (f'{indent}  <limit lower="{fmt(lo)}" upper="{fmt(hi)}" effort="{fmt(eff)}" '
                  f'velocity="{fmt(vel)}"/>\n')
    if dynamics is not None:
        s += f'{indent}  <dynamics damping="{fmt(dynamics[0])}" friction="{fmt(dynamics[1])}"/>\n'
    if mimic is not None:
        s += (f'{indent}  <mimic joint="{mimic[0]}" multiplier="{fmt(mimic[1])}" '
              f'offset="{fmt(mimic[2])}"/>\n')
    return s + f"{indent}</joint>\n"


def materials_xml(materials):
    return "".join(f'  <material name="{n}"><color rgba="{fmtv(c)}"/></material>\n'
                   for n, c in materials)


# ----------------------------------------------------------------------------------------------
# arm7: 7-DOF serial arm (KUKA-iiwa-like kinematics, all joint axes intersecting) + gripper
# ----------------------------------------------------------------------------------------------
#
# Zero configuration: the arm points straight up. All joints rotate about their local z axis;
# the alternation (z, y, z, y, z, y, z in world axes at q = 0) comes from rpy in the joint origins.
# Heights above the base_link origin (the bottom of the pedestal) at q = 0:
#   joint1 0.10, joint2 (shoulder) 0.30, joint3 0.50, joint4 (elbow) 0.70, joint5 0.89,
#   joint6 (wrist) 1.08, joint7 1.15, tool0 (flange) 1.19, fingertip centre (tcp) 1.285.
# Non-adjacent links keep >= 15 mm apart at q = 0 (link6 ends flat at joint7, link7 is a flange
# disc), so the arm does not touch itself when self-collision is enabled.
# Reach from the shoulder to the fingertips: 0.985 m.
#
# Mass model: each arm link is a solid (capsule / pedestal / prism) carrying a stated mass
# (aluminium structure + motor + gearbox) distributed uniformly over it; the fingers are solid
# aluminium (2700 kg/m^3).

ALUMINIUM = 2700.0  # kg/m^3

ARM_SEG = 32  # segments around capsules
ARM_ARC = 8   # rings per hemisphere

# name, parent, joint origin xyz, rpy (in the parent frame), capsule radius, vector from the link
# origin to the next joint (link frame), round_start, round_end, stated mass, limits, dynamics
ARM_LINKS = [
    # link,  origin xyz,         origin rpy,        radius, to next,           rs,    re,   mass
    ("link1", (0, 0, 0.10), (0, 0, 0), 0.070, (0, 0, 0.20), False, True, 2.8),
    ("link2", (0, 0, 0.20), (-HALF_PI, 0, 0), 0.065, (0, -0.20, 0), True, True, 2.6),
    ("link3", (0, -0.20, 0), (HALF_PI, 0, 0), 0.065, (0, 0, 0.20), True, True, 2.2),
    ("link4", (0, 0, 0.20), (HALF_PI, 0, 0), 0.060, (0, 0.19, 0), True, True, 2.0),
    ("link5", (0, 0.19, 0), (-HALF_PI, 0, 0), 0.055, (0, 0, 0.19), True, True, 1.6),
    ("link6", (0, 0, 0.19), (-HALF_PI, 0, 0), 0.050, (0, -0.07, 0), True, False, 1.2),
    ("link7", (0, -0.07, 0), (HALF_PI, 0, 0), 0.045, (0, 0, 0.04), False, False, 0.4),
]
# joint limits: lower, upper [rad], effort [N m], velocity [rad/s]; dynamics: damping
# [N m s/rad], Coulomb friction [N m]
ARM_LIMITS = [
    (-2.9, 2.9, 100.0, 2.0), (-2.0, 2.0, 100.0, 2.0), (-2.9, 2.9, 100.0, 2.0),
    (-2.5, 2.5, 100.0, 2.0), (-2.9, 2.9, 30.0, 2.5), (-2.0, 2.0, 30.0, 2.5),
    (-3.0, 3.0, 30.0, 2.5),
]
ARM_DYNAMICS = [(0.5, 0.3)] * 4 + [(0.2, 0.1)] * 3
BASE_MASS = 3.5       # kg, pedestal with joint-1 motor
HAND_MASS = 0.7       # kg, gripper housing with finger drive
FINGER_TRAVEL = 0.04  # m per finger (opening 0 .. 0.08 m)

# mesh file of each link: (collision uri kind, visual format)
#   collision: 'pkg' -> package://sim_node/..., 'rel' -> path relative to the URDF
ARM_FILES = {
    "base_link": ("pkg", "stl"), "link1": ("pkg", "dae"), "link2": ("pkg", "stl"),
    "link3": ("pkg", "stl"), "link4": ("rel", "obj"), "link5": ("rel", "stl"),
    "link6": ("rel", "obj"), "link7": ("rel", "stl"), "hand": ("pkg", "dae"),
    "finger": ("rel", "stl"),
}
ARM_COLORS = {"arm_white": (0.92, 0.92, 0.9, 1.0), "arm_grey": (0.35, 0.35, 0.38, 1.0),
              "arm_black": (0.1, 0.1, 0.1, 1.0)}


def arm_mesh_uri(name, ext, kind):
    if kind == "pkg":
        return f"{PKG}/data/robots/arm7/meshes/{name}.{ext}"
    return f"meshes/{name}.{ext}"


def build_arm(out: Path):
    mdir = out / "data/robots/arm7/meshes"
    mdir.mkdir(parents=True, exist_ok=True)
    links_xml = []
    joints_xml = []
    summary = {}

    def emit_mesh_link(name, mesh, mass=None, density=None, what="", material="arm_white",
                       inertial_rpy=(0, 0, 0), scale=None):
        """Write the mesh files of a link and return its <link> xml."""
        kind, vis_fmt = ARM_FILES[name]
        q = mesh.quantized()  # what the STL stores (in file units)
        write_stl(mdir / f"{name}.stl", q)
        metric = q if scale is None else Mesh(q.vertices * scale, q.faces)
        vol = mesh_mass_properties(metric, 1.0)[3]
        if density is None:
            density, what = stated_mass(mass, vol, what)
        m, com, inertia, _ = mesh_mass_properties(metric, density)
        sc = None if scale is None else (scale, scale, scale)
        coll = ("mesh", arm_mesh_uri(name, "stl", kind), sc)
        if vis_fmt == "stl":
            vis = coll
        else:
            vis_kind = "rel" if kind == "pkg" else "pkg"  # exercise the other URI form too
            vis = ("mesh", arm_mesh_uri(name, vis_fmt, vis_kind), sc)
            if vis_fmt == "obj":
                write_obj(mdir / f"{name}.obj", q, name)
            else:
                write_dae(mdir / f"{name}.dae", q, name, ARM_COLORS[material])
        s = f'  <link name="{name}">\n'
        s += density_comment(density, what)
        s += inertial_xml(m, com, inertia, inertial_rpy)
        s += visual_xml(vis, material)
        s += collision_xml(coll)
        s += "  </link>\n"
        summary[name] = m
        return s

    # base_link: pedestal (cylinder r 90 mm, chamfered to r 75 mm at the top, 100 mm high),
    # stored in millimetres and scaled by 0.001 in the URDF (exercises <mesh scale>).
    base = revolve([(0, 0), (90, 0), (90, 80), (75, 100), (0, 100)], ARM_SEG)
    links_xml.append('  <link name="world"/>\n')
    joints_xml.append(joint_xml("world_joint", "fixed", "world", "base_link"))
    links_xml.append(emit_mesh_link("base_link", base, mass=BASE_MASS,
                                    what="pedestal with joint-1 motor", material="arm_grey",
                                    scale=0.001))

    parent = "base_link"
    for k, (name, xyz, rpy, r, to_next, rs, re, mass) in enumerate(ARM_LINKS):
        length = float(np.linalg.norm(to_next))
        R, align_rpy = align_z_to(to_next)
        mesh = revolve(capsule_profile(r, length, rs, re, ARM_ARC), ARM_SEG).transformed(R)
        material = "arm_white" if k % 2 == 0 else "arm_grey"
        links_xml.append(emit_mesh_link(name, mesh, mass=mass,
                                        what="aluminium structure, motor and gearbox",
                                        material=material, inertial_rpy=align_rpy))
        lo, hi, eff, vel = ARM_LIMITS[k]
        joints_xml.append(joint_xml(f"joint{k + 1}", "revolute", parent, name, xyz, rpy,
                                    axis=(0, 0, 1), limit=(lo, hi, eff, vel),
                                    dynamics=ARM_DYNAMICS[k]))
        parent = name

    # flange frame
    links_xml.append('  <link name="tool0"/>\n')
    joints_xml.append(joint_xml("tool0_joint", "fixed", "link7", "tool0", ARM_LINKS[-1][4]))

    # hand: chamfered prism, 60 mm (x) x 180 mm (y) x 50 mm (z), on the flange
    hand_poly = [(-0.09, 0.0), (0.09, 0.0), (0.09, 0.035), (0.07, 0.05), (-0.07, 0.05),
                 (-0.09, 0.035)]
    links_xml.append(emit_mesh_link("hand", prism_x(hand_poly, 0.03), mass=HAND_MASS,
                                    what="gripper housing with finger drive",
                                    material="arm_white"))
    joints_xml.append(joint_xml("hand_joint", "fixed", "tool0", "hand"))

    # fingers: solid aluminium pads (tapered), 20 mm wide in x; the right finger uses the same
    # mesh rotated by pi about z (its collision/visual origin), i.e. mirrored in y.
    finger_poly = [(0.0, 0.0), (0.018, 0.0), (0.018, 0.02), (0.008, 0.055), (0.0, 0.055)]
    finger = prism_x(finger_poly, 0.01).quantized()
    write_stl(mdir / "finger.stl", finger)
    fm, fcom, fI, _ = mesh_mass_properties(finger, ALUMINIUM)
    furi = arm_mesh_uri("finger", "stl", ARM_FILES["finger"][0])
    for side, jname, axis, yaw in (("left", "finger_joint1", (0, 1, 0), 0.0),
                                   ("right", "finger_joint2", (0, -1, 0), math.pi)):
        Rz = rpy_matrix((0, 0, yaw))
        s = f'  <link name="{side}_finger">\n'
        s += density_comment(ALUMINIUM, "solid aluminium (6061)")
        s += inertial_xml(fm, Rz @ fcom, Rz @ fI @ Rz.T)
        s += visual_xml(("mesh", furi), "arm_black", rpy=(0, 0, yaw))
        s += collision_xml(("mesh", furi), rpy=(0, 0, yaw))
        s += "  </link>\n"
        links_xml.append(s)
        summary[f"{side}_finger"] = fm
        joints_xml.append(joint_xml(
            jname, "prismatic", "hand", f"{side}_finger", (0, 0, 0.05), axis=axis,
            limit=(0.0, FINGER_TRAVEL, 20.0, 0.2), dynamics=(1.0, 0.5),
            mimic=("finger_joint1", 1.0, 0.0) if side == "right" else None))

    links_xml.append('  <link name="tcp"/>\n')
    joints_xml.append(joint_xml("tcp_joint", "fixed", "hand", "tcp", (0, 0, 0.095)))

    total = sum(summary.values())
    header = f"""<?xml version="1.0"?>
<!-- Generated by tools/generate_robots.py; do not edit by hand.

     arm7: 7-DOF serial arm (KUKA-iiwa-like kinematics, joint axes intersecting pairwise) with a
     parallel 2-finger gripper. Root link 'world' (fixed base); the base_link origin is the bottom
     of the pedestal. Joints joint1..joint7 rotate about their local z axis; at q = 0 the arm
     points straight up and the world-frame joint axes are z, y, z, -y, z, y, z.
     Heights at q = 0: joint2 (shoulder) 0.30 m, joint4 (elbow) 0.70 m, joint6 (wrist) 1.08 m,
     tool0 (flange) 1.19 m, tcp (fingertip centre) 1.285 m; reach shoulder-to-tcp 0.985 m.
     finger_joint1 (prismatic, 0..{FINGER_TRAVEL} m) opens the left finger along +y of the hand;
     finger_joint2 mimics it (right finger along -y): 7 revolute + 1 prismatic independent DOF.
     Total mass {total:.3f} kg. Mass properties: see tools/generate_robots.py (each link's
     density is stated inside the link).
     Meshes: collision binary STL (package:// and relative URIs), visual STL / COLLADA / OBJ;
     base_link's mesh is in millimetres (scale 0.001). -->
<robot name="arm7">
"""
    text = header + materials_xml(sorted(ARM_COLORS.items()))
    text += "".join(links_xml) + "".join(joints_xml) + "</robot>\n"
    (out / "data/robots/arm7/arm7.urdf").write_text(text)
    return total


# ----------------------------------------------------------------------------------------------
# quadruped: 12-DOF floating base, primitive geometry
# ----------------------------------------------------------------------------------------------

QUAD_TRUNK = (0.4, 0.2, 0.1)       # box [m]
QUAD_HIP_POS = (0.19, 0.05)        # hip abduction joint at (+-x, +-y, 0) in the trunk frame
QUAD_HIP_OFFSET = 0.10             # lateral offset hip_abd -> hip_flex [m]
QUAD_THIGH = 0.20                  # hip_flex -> knee [m]
QUAD_SHANK = 0.20                  # knee -> foot centre [m]
QUAD_FOOT_R = 0.02                 # foot sphere radius [m]
QUAD_MASSES = {"trunk": 6.6, "hip": 0.5, "thigh": 0.6, "shank": 0.2, "foot": 0.05}  # kg (12.0)
QUAD_STAND = {"hip_abd": 0.0, "hip_flex": 0.8, "knee": -1.6}  # rad
QUAD_LIMITS = {"hip_abd": (-0.8, 0.8, 30.0, 20.0), "hip_flex": (-1.2, 2.8, 30.0, 20.0),
               "knee": (-2.7, 0.0, 40.0, 20.0)}
QUAD_DYNAMICS = (0.1, 0.1)         # damping [N m s/rad], friction [N m]


def quad_stand_height():
    """Trunk-origin height with all feet touching flat ground in the standing configuration
    (hip_flex = 0.8, knee = -1.6: the foot centre is straight below the hip_flex axis)."""
    a, b = QUAD_STAND["hip_flex"], QUAD_STAND["hip_flex"] + QUAD_STAND["knee"]
    return QUAD_THIGH * math.cos(a) + QUAD_SHANK * math.cos(b) + QUAD_FOOT_R


def primitive_link(name, mass, what, parts, material, indent="  "):
    """parts: list of (geom, xyz, rpy). Closed-form mass properties of the union (disjoint)."""
    props = []
    for geom, xyz, rpy in parts:
        if geom[0] == "box":
            v, i = box_props(geom[1])
        elif geom[0] == "cylinder":
            v, i = cylinder_props(geom[1], geom[2])
        elif geom[0] == "sphere":
            v, i = sphere_props(geom[1])
        else:
            raise ValueError(geom)
        R = rpy_matrix(rpy)
        props.append((v, np.asarray(xyz, float), R @ i @ R.T))
    vol, com, inertia = combine(props)
    rho, text = stated_mass(mass, vol, what)
    s = f'{indent}<link name="{name}">\n'
    s += density_comment(rho, text)
    s += inertial_xml(rho * vol, com, rho * inertia)
    for geom, xyz, rpy in parts:
        s += visual_xml(geom, material, xyz, rpy)
    for geom, xyz, rpy in parts:
        s += collision_xml(geom, xyz, rpy)
    return s + f"{indent}</link>\n", rho * vol


def build_quadruped(out: Path):
    d = out / "data/robots/quadruped"
    d.mkdir(parents=True, exist_ok=True)
    links, joints, total = [], [], 0.0
    s, m = primitive_link("trunk", QUAD_MASSES["trunk"], "frame, battery and electronics",
                          [(("box", QUAD_TRUNK), (0, 0, 0), (0, 0, 0))], "quad_body")
    links.append(s)
    total += m
    hx, hy = QUAD_HIP_POS
    for leg, sx, sy in (("FL", 1, 1), ("FR", 1, -1), ("HL", -1, 1), ("HR", -1, -1)):
        # hip: the hip_flex motor, a cylinder along y between the trunk side and the thigh
        s, m = primitive_link(f"{leg}_hip", QUAD_MASSES["hip"], "hip-flexion motor",
                              [(("cylinder", 0.04, 0.05), (0, sy * 0.075, 0), (HALF_PI, 0, 0))],
                              "quad_motor")
        links.append(s)
        total += m
        s, m = primitive_link(f"{leg}_thigh", QUAD_MASSES["thigh"], "thigh with knee motor",
                              [(("cylinder", 0.02, QUAD_THIGH), (0, 0, -QUAD_THIGH / 2),
                                (0, 0, 0))],
                              "quad_body")
        links.append(s)
        total += m
        s, m = primitive_link(f"{leg}_shank", QUAD_MASSES["shank"], "shank tube",
                              [(("cylinder", 0.015, QUAD_SHANK - QUAD_FOOT_R),
                                (0, 0, -(QUAD_SHANK - QUAD_FOOT_R) / 2), (0, 0, 0))], "quad_body")
        links.append(s)
        total += m
        s, m = primitive_link(f"{leg}_foot", QUAD_MASSES["foot"], "rubber foot",
                              [(("sphere", QUAD_FOOT_R), (0, 0, 0), (0, 0, 0))], "quad_foot")
        links.append(s)
        total += m
        lim, dyn = QUAD_LIMITS, QUAD_DYNAMICS
        joints.append(joint_xml(f"{leg}_hip_abd", "revolute", "trunk", f"{leg}_hip",
                                (sx * hx, sy * hy, 0), axis=(1, 0, 0), limit=lim["hip_abd"],
                                dynamics=dyn))
        joints.append(joint_xml(f"{leg}_hip_flex", "revolute", f"{leg}_hip", f"{leg}_thigh",
                                (0, sy * QUAD_HIP_OFFSET, 0), axis=(0, 1, 0),
                                limit=lim["hip_flex"], dynamics=dyn))
        joints.append(joint_xml(f"{leg}_knee", "revolute", f"{leg}_thigh", f"{leg}_shank",
                                (0, 0, -QUAD_THIGH), axis=(0, 1, 0), limit=lim["knee"],
                                dynamics=dyn))
        joints.append(joint_xml(f"{leg}_foot_joint", "fixed", f"{leg}_shank", f"{leg}_foot",
                                (0, 0, -QUAD_SHANK)))
    h = quad_stand_height()
    st = QUAD_STAND
    header = f"""<?xml version="1.0"?>
<!-- Generated by tools/generate_robots.py; do not edit by hand.

     quadruped: 12-DOF floating-base quadruped, total mass {total:.3f} kg. Root link 'trunk'
     (floating base). Trunk box {QUAD_TRUNK[0]} x {QUAD_TRUNK[1]} x {QUAD_TRUNK[2]} m, origin at its
     centre, x forward, z up. Legs FL FR HL HR; per leg: <leg>_hip_abd (about x, at
     (+-{hx}, +-{hy}, 0) in the trunk), <leg>_hip_flex (about y, {QUAD_HIP_OFFSET} m further out),
     <leg>_knee (about y, thigh {QUAD_THIGH} m), foot sphere r = {QUAD_FOOT_R} m centred
     {QUAD_SHANK} m below the knee (link <leg>_foot, fixed joint). At q = 0 the legs hang
     straight down; positive hip_flex swings the foot backwards, negative knee folds it forwards.

     STANDING CONFIGURATION: hip_abd = {st['hip_abd']}, hip_flex = {st['hip_flex']}, knee = {st['knee']}
     (rad, all four legs), trunk level; each foot centre lies straight below its hip_flex
     axis, and the feet touch flat ground with the trunk origin at z = {h:.6f} m
     (touchdown height).
     Collision geometry: primitives only (box, cylinder, sphere). Mass properties: closed form,
     each link's stated mass distributed uniformly over its collision solid. -->
<robot name="quadruped">
"""
    mats = [("quad_body", (0.2, 0.2, 0.22, 1.0)), ("quad_foot", (0.05, 0.05, 0.05, 1.0)),
            ("quad_motor", (0.6, 0.6, 0.65, 1.0))]
    text = header + materials_xml(mats) + "".join(links) + "".join(joints) + "</robot>\n"
    (d / "quadruped.urdf").write_text(text)
    return total, h


# ----------------------------------------------------------------------------------------------
# pendulum: the seed's one-link robot
# ----------------------------------------------------------------------------------------------

PEND_PIVOT_Z = 1.0   # pivot height above the world origin [m]
PEND_ROD = (0.01, 0.45)  # rod radius, length [m]
PEND_BOB = 0.05      # bob radius [m]; bob centre 0.5 m from the pivot
PEND_MASS = 1.0      # kg


def build_pendulum(out: Path):
    d = out / "data/robots/pendulum"
    d.mkdir(parents=True, exist_ok=True)
    r, L = PEND_ROD
    s, m = primitive_link("link1", PEND_MASS, "rod and bob",
                          [(("cylinder", r, L), (0, 0, -L / 2), (0, 0, 0)),
                           (("sphere", PEND_BOB), (0, 0, -(L + PEND_BOB)), (0, 0, 0))],
                          "pendulum_orange")
    text = f"""<?xml version="1.0"?>
<!-- Generated by tools/generate_robots.py; do not edit by hand.

     pendulum: the seed's one-link robot (Monte Carlo batch-simulation example). Root link 'world'
     (fixed base); joint1 is a continuous (unlimited) revolute joint about the horizontal y axis,
     {PEND_PIVOT_Z} m above the world origin. link1 ({PEND_MASS} kg, uniform density): a rod
     (r {r} m, {L} m long) and a bob (r {PEND_BOB} m) centred {L + PEND_BOB} m below the pivot.
     q = 0 hangs straight down; q = +-pi is upright. -->
<robot name="pendulum">
{materials_xml([("pendulum_orange", (0.9, 0.45, 0.1, 1.0))])}  <link name="world"/>
{s}{joint_xml("joint1", "continuous", "world", "link1", (0, 0, PEND_PIVOT_Z), axis=(0, 1, 0),
              limit=(None, None, 50.0, 20.0), dynamics=(0.01, 0.0))}</robot>
"""
    (d / "pendulum.urdf").write_text(text)
    return m


# ----------------------------------------------------------------------------------------------
# diff_drive: differential-drive mobile base
# ----------------------------------------------------------------------------------------------

DD_WHEEL_R = 0.08          # wheel radius [m]
DD_WHEEL_W = 0.03          # wheel width [m]
DD_WHEEL_SEP = 0.34        # distance between the wheel centres [m]
DD_CHASSIS = (0.40, 0.28, 0.10)
DD_CHASSIS_Z = 0.03        # chassis box centre above base_link (the wheel axle)
DD_CASTER_R = 0.03
DD_CASTER_X = -0.15
DD_MASSES = {"chassis": 10.0, "wheel": 0.5, "caster": 0.2}


def build_diff_drive(out: Path):
    d = out / "data/robots/diff_drive"
    d.mkdir(parents=True, exist_ok=True)
    links, joints, total = [], [], 0.0
    s, m = primitive_link("base_link", DD_MASSES["chassis"], "chassis with batteries",
                          [(("box", DD_CHASSIS), (0, 0, DD_CHASSIS_Z), (0, 0, 0))], "dd_body")
    links.append(s)
    total += m
    for side, sy in (("left", 1), ("right", -1)):
        s, m = primitive_link(f"{side}_wheel", DD_MASSES["wheel"], "wheel with tyre",
                              [(("cylinder", DD_WHEEL_R, DD_WHEEL_W), (0, 0, 0), (HALF_PI, 0, 0))],
                              "dd_wheel")
        links.append(s)
        total += m
        joints.append(joint_xml(f"{side}_wheel_joint", "continuous", "base_link", f"{side}_wheel",
                                (0, sy * DD_WHEEL_SEP / 2, 0), axis=(0, 1, 0),
                                limit=(None, None, 10.0, 20.0), dynamics=(0.05, 0.02)))
    caster_z = -DD_WHEEL_R + DD_CASTER_R
    s, m = primitive_link("caster", DD_MASSES["caster"], "caster ball",
                          [(("sphere", DD_CASTER_R), (0, 0, 0), (0, 0, 0))], "dd_wheel")
    links.append(s)
    total += m
    joints.append(joint_xml("caster_joint", "fixed", "base_link", "caster",
                            (DD_CASTER_X, 0, caster_z)))
    header = f"""<?xml version="1.0"?>
<!-- Generated by tools/generate_robots.py; do not edit by hand.

     diff_drive: differential-drive mobile base, total mass {total:.3f} kg. Root link 'base_link'
     (floating base), origin on the wheel axle midway between the wheels, x forward, z up; it is
     {DD_WHEEL_R} m above flat ground when the robot stands on it.
     Wheel radius {DD_WHEEL_R} m, wheel width {DD_WHEEL_W} m, wheel separation (centre to centre)
     {DD_WHEEL_SEP} m. left_wheel_joint / right_wheel_joint: continuous, axis +y (positive =
     forward motion for both wheels). Passive caster: a fixed sphere (r {DD_CASTER_R} m) at
     x = {DD_CASTER_X} m that touches the ground together with the wheels; give it low friction.
     Chassis box {DD_CHASSIS[0]} x {DD_CHASSIS[1]} x {DD_CHASSIS[2]} m centred {DD_CHASSIS_Z} m
     above base_link. Mass properties: closed form, stated masses distributed uniformly. -->
<robot name="diff_drive">
"""
    mats = [("dd_body", (0.1, 0.3, 0.6, 1.0)), ("dd_wheel", (0.08, 0.08, 0.08, 1.0))]
    text = header + materials_xml(mats) + "".join(links) + "".join(joints) + "</robot>\n"
    (d / "diff_drive.urdf").write_text(text)
    return total


# ----------------------------------------------------------------------------------------------
# table mesh
# ----------------------------------------------------------------------------------------------

TABLE_TOP = (1.2, 0.8, 0.04)  # m; top surface at z = 0.75
TABLE_HEIGHT = 0.75
TABLE_LEG = 0.05              # square legs, inset 0.05 m from the edges


def build_table(out: Path):
    d = out / "data/meshes"
    d.mkdir(parents=True, exist_ok=True)
    a, b, t = TABLE_TOP
    parts = [box_mesh((-a / 2, -b / 2, TABLE_HEIGHT - t), (a / 2, b / 2, TABLE_HEIGHT))]
    for sx in (-1, 1):
        for sy in (-1, 1):
            cx = sx * (a / 2 - 0.05 - TABLE_LEG / 2)
            cy = sy * (b / 2 - 0.05 - TABLE_LEG / 2)
            h = TABLE_LEG / 2
            parts.append(box_mesh((cx - h, cy - h, 0.0), (cx + h, cy + h, TABLE_HEIGHT - t)))
    for part in parts:
        mesh_mass_properties(part, 1.0)  # asserts: closed, outward
    write_stl(d / "table.stl", Mesh.concatenate(parts).quantized())


# ----------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output-dir", type=Path, default=REPO,
                    help="root below which data/... is written (default: the repository)")
    args = ap.parse_args(argv)
    out = args.output_dir
    arm = build_arm(out)
    quad, h = build_quadruped(out)
    pend = build_pendulum(out)
    dd = build_diff_drive(out)
    build_table(out)
    print(f"arm7 {arm:.3f} kg, quadruped {quad:.3f} kg (touchdown trunk height {h:.6f} m), "
          f"pendulum {pend:.3f} kg, diff_drive {dd:.3f} kg -> {out / 'data'}")


if __name__ == "__main__":
    main()
