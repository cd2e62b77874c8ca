"""From a parsed URDF to the engine's Model: bodies, DOF layout, limits.

Links joined by fixed joints are merged into one body (their inertias combined); every movable
joint starts a new body. Bodies are numbered depth-first in the URDF's joint order, which is
also the order of q and v. Base handling (DESIGN.md §3):
  * fixed base: the root link (and everything welded to it) is attached to the world at the
    robot's base placement;
  * floating base: a free joint attaches the root link to the world; q starts with the base
    position and quaternion (x, y, z, w), v with the base linear and angular velocity in base axes.
Mimic joints get a body and a motion-subspace column but no DOF of their own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from transforms3d.quaternions import mat2quat

from sim_node.engine.model import Model
from sim_node.model.errors import URDFError
from sim_node.model.urdf import URDFRobot

JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_FREE = 0, 1, 2


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
    joint_names: list        # independent movable joints in q/v order (base excluded)
    joint_q_index: dict      # joint name -> index in q
    joint_v_index: dict      # joint name -> index in v
    mimic_joints: dict       # joint name -> (master joint, multiplier, offset)
    link_names: list         # every URDF link, depth-first
    link_parent: list        # parent link index (-1 for the root)
    link_joint: list         # name of the joint attaching each link ('' for the root)
    link_frames: list        # LinkFrame per link
    body_links: list         # links merged into each body
    q_lower: np.ndarray      # (nq) position limits (floating base: -inf / inf)
    q_upper: np.ndarray
    velocity_limit: np.ndarray   # (nv)
    effort_limit: np.ndarray     # (nv)
    damping: np.ndarray          # (nv) viscous friction [N m s/rad or N s/m]
    friction: np.ndarray         # (nv) dry friction [N m or N]
    q_default: np.ndarray        # (nq) base at its placement, joints at 0 clamped to limits


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


def build_robot(urdf: URDFRobot, fixed_base: bool | None = None,
                base_R=np.eye(3), base_p=np.zeros(3)) -> RobotStructure:
    """Build the engine Model of `urdf` placed at (base_R, base_p) in the world."""
    base_R = np.asarray(base_R, dtype=float)
    base_p = np.asarray(base_p, dtype=float)
    root = urdf.root
    children = {}
    for joint in urdf.joints.values():
        children.setdefault(joint.parent, []).append(joint)

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

    # -- bodies, depth first --------------------------------------------------------------
    bodies = []          # dicts: parent, jtype, joint (urdf Joint or None), R_tree, p_tree
    link_names, link_parent, link_joint, link_frames = [], [], [], []
    link_index = {}

    def add_link(name, parent_idx, joint_name, frame):
        link_index[name] = len(link_names)
        link_names.append(name)
        link_parent.append(parent_idx)
        link_joint.append(joint_name)
        link_frames.append(frame)

    def visit(link_name):
        frame = link_frames[link_index[link_name]]
        for joint in children.get(link_name, []):
            R_j = frame.R @ joint.origin.R
            p_j = frame.p + frame.R @ joint.origin.p
            if joint.child == floating_link:
                bodies.append(dict(parent=-1, jtype=JOINT_FREE, joint=None,
                                   R_tree=np.eye(3), p_tree=np.zeros(3)))
                child_frame = LinkFrame(len(bodies) - 1, np.eye(3), np.zeros(3))
            elif joint.type == "fixed":
                child_frame = LinkFrame(frame.body, R_j, p_j)
            else:
                jtype = JOINT_PRISMATIC if joint.type == "prismatic" else JOINT_REVOLUTE
                bodies.append(dict(parent=frame.body, jtype=jtype, joint=joint,
                                   R_tree=R_j, p_tree=p_j))
                child_frame = LinkFrame(len(bodies) - 1, np.eye(3), np.zeros(3))
            add_link(joint.child, link_index[link_name], joint.name, child_frame)
            visit(joint.child)

    if floating_link == root:
        bodies.append(dict(parent=-1, jtype=JOINT_FREE, joint=None,
                           R_tree=np.eye(3), p_tree=np.zeros(3)))
        add_link(root, -1, "", LinkFrame(0, np.eye(3), np.zeros(3)))
    else:
        add_link(root, -1, "", LinkFrame(-1, base_R, base_p))
    visit(root)

    # -- DOFs: free joint, then independent joints in body order, then mimics -------------
    nq = nv = 0
    iq, ncolb = [], []
    joint_names, joint_q_index, joint_v_index = [], {}, {}
    body_dof = {}
    for b, body in enumerate(bodies):
        if body["jtype"] == JOINT_FREE:
            iq.append(nq)
            body_dof[b] = list(range(nv, nv + 6))
            nq, nv = nq + 7, nv + 6
        elif body["joint"].mimic is None:
            name = body["joint"].name
            iq.append(nq)
            body_dof[b] = [nv]
            joint_names.append(name)
            joint_q_index[name], joint_v_index[name] = nq, nv
            nq, nv = nq + 1, nv + 1
        else:
            iq.append(-1)
        ncolb.append(6 if body["jtype"] == JOINT_FREE else 1)
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
                continue                      # within the free joint's six DOFs
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

    nb = len(bodies)
    R_tree = np.array([b["R_tree"] for b in bodies]).reshape(nb, 3, 3)
    model = Model(
        nq=nq, nv=nv,
        parent=[b["parent"] for b in bodies],
        jtype=[b["jtype"] for b in bodies],
        iq=iq, icol=icol, ncolb=ncolb,
        mimic_mult=mimic_mult, mimic_offset=mimic_offset,
        axis=np.array([b["joint"].axis if b["joint"] is not None else np.zeros(3)
                       for b in bodies]).reshape(nb, 3),
        R_tree=R_tree,
        p_tree=np.array([b["p_tree"] for b in bodies]).reshape(nb, 3),
        tree_rot_identity=[int(np.array_equal(R, np.eye(3))) for R in R_tree],
        axis_kind=[_axis_kind(b["joint"].axis) if b["joint"] is not None else 0 for b in bodies],
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

    # -- limits and the default configuration ---------------------------------------------
    q_lower, q_upper = np.full(nq, -math.inf), np.full(nq, math.inf)
    velocity_limit, effort_limit = np.full(nv, math.inf), np.full(nv, math.inf)
    damping, friction = np.zeros(nv), np.zeros(nv)
    if floating_link is not None:
        effort_limit[:6] = 0.0      # nothing actuates the base
    for name in joint_names:
        joint = urdf.joints[name]
        qi, vi = joint_q_index[name], joint_v_index[name]
        if joint.limit is not None:
            q_lower[qi], q_upper[qi] = joint.limit.lower, joint.limit.upper
            velocity_limit[vi], effort_limit[vi] = joint.limit.velocity, joint.limit.effort
        damping[vi], friction[vi] = joint.damping, joint.friction
    q_default = np.clip(np.zeros(nq), q_lower, q_upper)
    if floating_link is not None:
        w, x, y, z = mat2quat(floating_R)
        q_default[:7] = [*floating_p, x, y, z, w]

    return RobotStructure(
        model=model, floating=floating_link is not None, joint_names=joint_names,
        joint_q_index=joint_q_index, joint_v_index=joint_v_index, mimic_joints=mimic_joints,
        link_names=link_names, link_parent=link_parent, link_joint=link_joint,
        link_frames=link_frames, body_links=body_links, q_lower=q_lower, q_upper=q_upper,
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
