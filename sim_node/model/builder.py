"""From a parsed URDF to the engine's Model: bodies, DOF layout, limits.

Links joined by fixed joints are merged into one body (their inertias combined); every movable
joint starts a new body. Bodies are numbered depth-first in the URDF's joint order, which is
also the order of q and v. Base handling (DESIGN.md §3):
  * fixed base: the root link (and everything welded to it) is attached to the world at the
    robot's base placement;
  * floating base: a free joint attaches the root link to the world; q starts with the base
    position and quaternion (x, y, z, w), v with the base linear and angular velocity in base axes.
Joint types and their coordinates (q entries / v entries, in the joint's order):
  * revolute, continuous, prismatic: 1 / 1;
  * spherical (the pybullet_data extension): a ball joint, quaternion xyzw / angular velocity in
    child axes (4 / 3), Pinocchio's JointModelSpherical;
  * floating (anywhere in the tree): a free joint, [position, quaternion xyzw] of the child in
    the joint frame / [linear, angular velocity] in child axes (7 / 6), Pinocchio's free flyer;
    unactuated, as a floating base;
  * planar (motion in the plane perpendicular to `axis`): [x, y, theta] / their rates (3 / 3),
    a translation x e1 + y e2 in the joint frame followed by a rotation theta about the axis n.
    The engine realises it as two prismatic joints (e1, e2) and a revolute joint (n) through two
    massless intermediate bodies. In-plane basis: with k the index of the largest |n_k| (the
    first on ties), e1 is the coordinate axis e_{k+1 mod 3} projected onto the plane and
    normalised, e2 = n x e1; so a plane normal to z moves along x and y.
Mimic joints get a body and a motion-subspace column but no DOF of their own (scalar joints only).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from transforms3d.quaternions import mat2quat

from sim_node.engine.api import JointType, Model
from sim_node.model.errors import URDFError
from sim_node.model.urdf import URDFRobot

JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_FREE, JOINT_SPHERICAL = (int(t) for t in JointType)

# URDF joint type -> (q entries, v entries)
JOINT_SIZES = {"revolute": (1, 1), "continuous": (1, 1), "prismatic": (1, 1),
               "spherical": (4, 3), "planar": (3, 3), "floating": (7, 6)}
SCALAR_TYPES = ("revolute", "continuous", "prismatic")


@dataclass
class LinkFrame:
    body: int            # -1: welded to the world
    R: np.ndarray        # rotation body -> link (world -> link when body is -1)
    p: np.ndarray        # link origin in body (or world) coordinates [m]


@dataclass
class RobotStructure:
    """Everything the API needs besides the engine Model."""
    model: Model
    floating: bool
    joint_names: list        # URDF movable joints with coordinates, in q/v order (base excluded)
    joint_q_index: dict      # joint name -> index of its first entry in q
    joint_v_index: dict      # joint name -> index of its first entry in v
    joint_nq: dict           # joint name -> number of its q entries (1, 3 planar, 4 spherical,
                             # 7 floating)
    joint_nv: dict           # joint name -> number of its v entries (DOFs: 1, 3 or 6)
    joint_type: dict         # joint name -> URDF type
    mimic_joints: dict       # joint name -> (master joint, multiplier, offset)
    link_names: list         # every URDF link, depth-first
    link_parent: list        # parent link index (-1 for the root)
    link_joint: list         # name of the joint attaching each link ('' for the root)
    link_frames: list        # LinkFrame per link
    body_links: list         # links merged into each body
    body_link: list          # the link each body stands for: its first link, or for the
                             # intermediate bodies of a planar joint the joint's child link
    body_adjacent: list      # the body each body is adjacent to for collision filtering: its
                             # parent, skipping the intermediate bodies of planar joints
    dof_q: np.ndarray        # (nv) q index of each actuated DOF's coordinate (a spherical
                             # joint's three DOFs: its quaternion's); -1: free joints (unactuated)
    quaternions: list        # q indices where unit quaternions start (bases, free, spherical)
    q_lower: np.ndarray      # (nq) position limits (-inf / inf where there are none)
    q_upper: np.ndarray
    velocity_limit: np.ndarray   # (nv)
    effort_limit: np.ndarray     # (nv)
    damping: np.ndarray          # (nv) viscous friction [N m s/rad or N s/m]
    friction: np.ndarray         # (nv) dry friction [N m or N]
    q_default: np.ndarray        # (nq) base at its placement, joints at 0 clamped to limits,
                                 # quaternions at the identity


def _combine(parts):
    """Mass properties of rigidly joined parts [(mass, com, inertia about com)], same frame."""
    mass = sum(m for m, _, _ in parts)
    if mass <= 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    com = sum(m * c for m, c, _ in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, I in parts:
        d = c - com
        inertia += I + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, inertia


def _axis_kind(axis) -> int:
    """+-1, +-2, +-3 when the joint axis is exactly +-e_x, e_y, e_z (a faster kernel path)."""
    for k in range(3):
        for sign in (1, -1):
            if np.array_equal(axis, sign * np.eye(3)[k]):
                return sign * (k + 1)
    return 0


def planar_basis(normal) -> tuple[np.ndarray, np.ndarray]:
    """(e1, e2): the in-plane axes of a planar joint with unit normal n (module docstring)."""
    n = np.asarray(normal, dtype=float)
    k = int(np.argmax(np.abs(n)))
    e1 = np.eye(3)[(k + 1) % 3]
    e1 = e1 - (e1 @ n) * n
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


def _check_mimic(urdf: URDFRobot, joint):
    if joint.mimic is None:
        return
    master = urdf.joints[joint.mimic.joint]
    for j in (joint, master):
        if j.type not in SCALAR_TYPES:
            raise URDFError(urdf.source, f"joint '{joint.name}' <mimic>",
                            f"joint '{j.name}' is {j.type}; only revolute, continuous and "
                            "prismatic joints can mimic or be mimicked")


def build_robot(urdf: URDFRobot, fixed_base: bool | None = None,
                base_R=np.eye(3), base_p=np.zeros(3)) -> RobotStructure:
    """Build the engine Model of `urdf` placed at (base_R, base_p) in the world."""
    base_R = np.asarray(base_R, dtype=float)
    base_p = np.asarray(base_p, dtype=float)
    root = urdf.root
    children = {}
    for joint in urdf.joints.values():
        children.setdefault(joint.parent, []).append(joint)
        _check_mimic(urdf, joint)

    floating_link = None         # the link a free joint attaches to the world
    floating_R, floating_p = base_R, base_p
    if root == "world":
        if fixed_base is False:
            kids = children.get("world", [])
            if len(kids) != 1 or kids[0].type != "fixed":
                raise URDFError(urdf.source, "link 'world'", "fixed_base=False needs the world "
                                "link to have exactly one child, attached by a fixed joint")
            floating_link = kids[0].child
            floating_R = base_R @ kids[0].origin.R
            floating_p = base_p + base_R @ kids[0].origin.p
    elif not fixed_base:
        floating_link = root

    # -- bodies, depth first (an explicit stack: any depth) -------------------------------
    # body dicts: parent, jtype, joint (urdf Joint or None), axis, R_tree, p_tree, and
    # part: the index of the body within its joint (planar: 0, 1, 2; else 0)
    bodies = []
    link_names, link_parent, link_joint, link_frames = [], [], [], []
    link_index = {}

    def add_link(name, parent_idx, joint_name, frame):
        link_index[name] = len(link_names)
        link_names.append(name)
        link_parent.append(parent_idx)
        link_joint.append(joint_name)
        link_frames.append(frame)

    def add_body(parent, jtype, joint, axis, R_tree, p_tree, part=0):
        bodies.append(dict(parent=parent, jtype=jtype, joint=joint, axis=axis, R_tree=R_tree,
                           p_tree=p_tree, part=part))
        return len(bodies) - 1

    def attach(joint):
        # the body (or the body it is welded to) carrying joint.child
        frame = link_frames[link_index[joint.parent]]
        R_j = frame.R @ joint.origin.R
        p_j = frame.p + frame.R @ joint.origin.p
        zero = np.zeros(3)
        if joint.child == floating_link:
            body = add_body(-1, JOINT_FREE, None, zero, np.eye(3), zero)
        elif joint.type == "fixed":
            return LinkFrame(frame.body, R_j, p_j)
        elif joint.type == "planar":
            e1, e2 = planar_basis(joint.axis)
            b = add_body(frame.body, JOINT_PRISMATIC, joint, e1, R_j, p_j, 0)
            b = add_body(b, JOINT_PRISMATIC, joint, e2, np.eye(3), zero, 1)
            body = add_body(b, JOINT_REVOLUTE, joint, joint.axis, np.eye(3), zero, 2)
        else:
            jtype = {"prismatic": JOINT_PRISMATIC, "spherical": JOINT_SPHERICAL,
                     "floating": JOINT_FREE}.get(joint.type, JOINT_REVOLUTE)
            axis = joint.axis if jtype in (JOINT_REVOLUTE, JOINT_PRISMATIC) else zero
            body = add_body(frame.body, jtype, joint, axis, R_j, p_j)
        return LinkFrame(body, np.eye(3), np.zeros(3))

    if floating_link == root:
        add_body(-1, JOINT_FREE, None, np.zeros(3), np.eye(3), np.zeros(3))
        add_link(root, -1, "", LinkFrame(0, np.eye(3), np.zeros(3)))
    else:
        add_link(root, -1, "", LinkFrame(-1, base_R, base_p))
    # pre-order: a joint's subtree before its next sibling, siblings in URDF order
    stack = list(reversed(children.get(root, [])))
    while stack:
        joint = stack.pop()
        add_link(joint.child, link_index[joint.parent], joint.name, attach(joint))
        stack.extend(reversed(children.get(joint.child, [])))

    # -- DOFs: in body order; mimic joints last refer to their master -----------------------
    nq = nv = 0
    iq, ncolb = [], []
    joint_names, joint_q_index, joint_v_index = [], {}, {}
    joint_nq, joint_nv, joint_type = {}, {}, {}
    quaternions = []
    body_dof = {}
    ncol_of = {JOINT_REVOLUTE: 1, JOINT_PRISMATIC: 1, JOINT_SPHERICAL: 3, JOINT_FREE: 6}
    for b, body in enumerate(bodies):
        joint = body["joint"]
        ncolb.append(ncol_of[body["jtype"]])
        if joint is not None and joint.mimic is not None:
            iq.append(-1)
            continue
        if joint is not None and body["part"] == 0:
            name = joint.name
            joint_names.append(name)
            joint_q_index[name], joint_v_index[name] = nq, nv
            joint_nq[name], joint_nv[name] = JOINT_SIZES[joint.type]
            joint_type[name] = joint.type
        iq.append(nq)
        body_dof[b] = list(range(nv, nv + ncolb[b]))
        if body["jtype"] == JOINT_FREE:
            quaternions.append(nq + 3)
            nq += 7
        elif body["jtype"] == JOINT_SPHERICAL:
            quaternions.append(nq)
            nq += 4
        else:
            nq += 1
        nv += ncolb[b]
    mimic_mult = np.ones(len(bodies))
    mimic_offset = np.zeros(len(bodies))
    mimic_joints = {}
    mimic_bodies = set()
    for b, body in enumerate(bodies):
        if body["joint"] is not None and body["joint"].mimic is not None:
            mimic_bodies.add(b)
            mimic = body["joint"].mimic
            iq[b] = joint_q_index[mimic.joint]
            body_dof[b] = [joint_v_index[mimic.joint]]
            mimic_mult[b], mimic_offset[b] = mimic.multiplier, mimic.offset
            mimic_joints[body["joint"].name] = (mimic.joint, mimic.multiplier, mimic.offset)

    icol = np.concatenate([[0], np.cumsum(ncolb)[:-1]]).astype(int) if bodies else np.zeros(0)
    col_body = [b for b in range(len(bodies)) for _ in range(ncolb[b])]
    col_dof = [d for b in range(len(bodies)) for d in body_dof[b]]
    dof_body = [0] * nv
    for b, dofs in body_dof.items():
        if b not in mimic_bodies:
            for d in dofs:
                dof_body[d] = b
    has_mimic = bool(mimic_joints)
    dof_parent = list(range(-1, nv - 1))     # dense chain: always valid
    if not has_mimic:
        for d in range(nv):
            b = dof_body[d]
            if d > 0 and dof_body[d - 1] == b:
                continue                      # within a multi-DOF joint
            anc = bodies[b]["parent"]
            dof_parent[d] = body_dof[anc][-1] if anc >= 0 else -1

    # -- mass properties per body; links welded to the world only count for the COM -------
    body_parts = [[] for _ in bodies]
    body_links = [[] for _ in bodies]
    link_mass = np.zeros(len(link_names))
    link_com_W = np.zeros((len(link_names), 3))
    for l, name in enumerate(link_names):
        inertial = urdf.links[name].inertial
        frame = link_frames[l]
        if frame.body >= 0:
            body_links[frame.body].append(l)
        if inertial is None:
            continue
        com = frame.p + frame.R @ inertial.com
        if frame.body >= 0:
            body_parts[frame.body].append((inertial.mass, com, frame.R @ inertial.inertia @ frame.R.T))
        else:
            link_mass[l], link_com_W[l] = inertial.mass, com
    body_mass = [_combine(parts) for parts in body_parts]
    # planar intermediates (parts 0 and 1) stand for the joint's child link, two bodies on
    body_link = [links[0] if links else body_links[b + 2 - bodies[b]["part"]][0]
                 for b, links in enumerate(body_links)]
    body_adjacent = []
    for b, body in enumerate(bodies):
        a = body["parent"]
        if body["part"] == 2:
            a = bodies[bodies[a]["parent"]]["parent"]
        body_adjacent.append(a)

    nb = len(bodies)
    R_tree = np.array([b["R_tree"] for b in bodies]).reshape(nb, 3, 3)
    axes = np.array([b["axis"] for b in bodies]).reshape(nb, 3)
    model = Model(
        nq=nq, nv=nv,
        parent=[b["parent"] for b in bodies],
        jtype=[b["jtype"] for b in bodies],
        iq=iq, icol=icol, ncolb=ncolb,
        mimic_mult=mimic_mult, mimic_offset=mimic_offset,
        axis=axes,
        R_tree=R_tree,
        p_tree=np.array([b["p_tree"] for b in bodies]).reshape(nb, 3),
        tree_rot_identity=[int(np.array_equal(R, np.eye(3))) for R in R_tree],
        axis_kind=[_axis_kind(a) for a in axes],
        mass=[m for m, _, _ in body_mass],
        com=np.array([c for _, c, _ in body_mass]).reshape(nb, 3),
        inertia=np.array([I for _, _, I in body_mass]).reshape(nb, 3, 3),
        col_body=col_body, col_dof=col_dof,
        dof_parent=dof_parent, dof_body=dof_body,
        link_body=[f.body for f in link_frames],
        link_R=np.array([f.R for f in link_frames]),
        link_p=np.array([f.p for f in link_frames]),
        link_mass=link_mass, link_com_W=link_com_W,
    )

    # -- limits, actuation and the default configuration ------------------------------------
    q_lower, q_upper = np.full(nq, -math.inf), np.full(nq, math.inf)
    velocity_limit, effort_limit = np.full(nv, math.inf), np.full(nv, math.inf)
    damping, friction = np.zeros(nv), np.zeros(nv)
    dof_q = np.full(nv, -1, dtype=np.int32)
    if floating_link is not None:
        effort_limit[:6] = 0.0      # nothing actuates the base
    for name in joint_names:
        joint = urdf.joints[name]
        qi, vi, n = joint_q_index[name], joint_v_index[name], joint_nv[name]
        q_span, v_span = slice(qi, qi + joint_nq[name]), slice(vi, vi + n)
        if joint.type == "floating":
            effort_limit[v_span] = 0.0       # unactuated, as a floating base
            continue
        dof_q[v_span] = qi if joint.type == "spherical" else np.arange(qi, qi + n)
        damping[v_span] = joint.damping
        if joint.type == "spherical":
            continue                         # no position limits, no dry friction
        friction[v_span] = joint.friction
        if joint.limit is not None:
            q_lower[q_span], q_upper[q_span] = joint.limit.lower, joint.limit.upper
            velocity_limit[v_span], effort_limit[v_span] = joint.limit.velocity, joint.limit.effort
    q_default = np.clip(np.zeros(nq), q_lower, q_upper)
    for k in quaternions:
        q_default[k:k + 4] = [0.0, 0.0, 0.0, 1.0]
    if floating_link is not None:
        w, x, y, z = mat2quat(floating_R)
        q_default[:7] = [*floating_p, x, y, z, w]

    return RobotStructure(
        model=model, floating=floating_link is not None, joint_names=joint_names,
        joint_q_index=joint_q_index, joint_v_index=joint_v_index, joint_nq=joint_nq,
        joint_nv=joint_nv, joint_type=joint_type, mimic_joints=mimic_joints,
        link_names=link_names, link_parent=link_parent, link_joint=link_joint,
        link_frames=link_frames, body_links=body_links, body_link=body_link,
        body_adjacent=body_adjacent, dof_q=dof_q, quaternions=quaternions,
        q_lower=q_lower, q_upper=q_upper,
        velocity_limit=velocity_limit, effort_limit=effort_limit, damping=damping,
        friction=friction, q_default=q_default)


def body_mass_properties(structure: RobotStructure, body: int, inertials: dict):
    """Combined (mass, com, inertia) of a body from the current per-link inertials
    {link index: (mass, com_L, inertia_L)} (used when a link's Mass changes)."""
    parts = []
    for l in structure.body_links[body]:
        if l in inertials:
            mass, com_L, inertia_L = inertials[l]
            frame = structure.link_frames[l]
            parts.append((mass, frame.p + frame.R @ com_L, frame.R @ inertia_L @ frame.R.T))
    return _combine(parts)
