"""Random kinematic trees as URDF strings, and the Pinocchio twin of a sim_node robot.

Used by the engine tests to compare every algorithm against Pinocchio on robots that exercise
all joint types (revolute, continuous, prismatic; spherical, planar, floating anywhere in the
tree), arbitrary axes and origins, branching, fixed joints (merged bodies), mimic joints and
floating bases.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
from transforms3d.euler import euler2mat

SCALAR_TYPES = ("revolute", "continuous", "prismatic")
MULTI_DOF_TYPES = ("spherical", "planar", "floating")


def _fmt(values):
    return " ".join(f"{v:.17g}" for v in values)


def random_inertia(rng, mass):
    # a physically valid inertia: principal moments from a random box-like mass distribution
    half = rng.uniform(0.02, 0.3, 3)
    moments = mass / 3.0 * np.array([half[1] ** 2 + half[2] ** 2,
                                     half[0] ** 2 + half[2] ** 2,
                                     half[0] ** 2 + half[1] ** 2])
    R = euler2mat(*rng.uniform(-np.pi, np.pi, 3))
    return R @ np.diag(moments) @ R.T


def random_urdf(rng: np.random.Generator, n_movable: int, n_fixed: int = 0, *,
                mimic_prob=0.0, world_root=False, branching=0.5, axis_aligned_prob=0.4,
                multi_dof_prob=0.0):
    """A random tree robot as a URDF string: movable joints with n_movable DOFs in all, each a
    revolute / continuous / prismatic joint (a fraction of them mimic joints) or, with
    probability multi_dof_prob where it fits, a spherical (3 DOFs), planar (3) or floating (6)
    joint; and n_fixed fixed joints; in random order, each attached to the last link (chains)
    or, with probability `branching`, to a random earlier link."""
    links = ["world" if world_root else "root"]
    lines = ['<robot name="random">']
    joints = []

    def link_xml(name, massless=False):
        if massless:
            return f'<link name="{name}"/>'
        mass = rng.uniform(0.2, 5.0)
        I = random_inertia(rng, mass)
        com = rng.uniform(-0.2, 0.2, 3)
        rpy = rng.uniform(-np.pi, np.pi, 3) * (rng.random() < 0.5)
        # express the inertia in the rotated <origin> frame (the parser rotates it back)
        Io = euler2mat(*rpy).T @ I @ euler2mat(*rpy)
        return (f'<link name="{name}"><inertial><origin xyz="{_fmt(com)}" rpy="{_fmt(rpy)}"/>'
                f'<mass value="{mass:.17g}"/><inertia ixx="{Io[0,0]:.17g}" ixy="{Io[0,1]:.17g}" '
                f'ixz="{Io[0,2]:.17g}" iyy="{Io[1,1]:.17g}" iyz="{Io[1,2]:.17g}" '
                f'izz="{Io[2,2]:.17g}"/></inertial></link>')

    lines.append(link_xml(links[0], massless=world_root))
    types, dofs = ["fixed"] * n_fixed, 0
    if not multi_dof_prob:      # (the same draws as before multi-DOF joints existed)
        types += [str(t) for t in rng.choice(SCALAR_TYPES, size=n_movable)]
        dofs = n_movable
    while dofs < n_movable:
        jtype = str(rng.choice(MULTI_DOF_TYPES)) if rng.random() < multi_dof_prob else ""
        if not jtype or dofs + {"floating": 6}.get(jtype, 3) > n_movable:
            jtype = str(rng.choice(SCALAR_TYPES))
        types.append(jtype)
        dofs += {"floating": 6, "spherical": 3, "planar": 3}.get(jtype, 1)
    rng.shuffle(types)
    movable = []
    for k, jtype in enumerate(types):
        parent = links[-1] if rng.random() > branching else links[rng.integers(len(links))]
        child = f"l{k}"
        if rng.random() < axis_aligned_prob:
            axis = np.eye(3)[rng.integers(3)] * rng.choice([-1, 1])
        else:
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
        xyz = rng.uniform(-0.5, 0.5, 3)
        rpy = rng.uniform(-np.pi, np.pi, 3) * (rng.random() < 0.7)
        body = [f'<joint name="j{k}" type="{jtype}"><parent link="{parent}"/>'
                f'<child link="{child}"/><origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>'
                f'<axis xyz="{_fmt(axis)}"/>']
        if jtype in ("revolute", "prismatic") or (jtype == "planar" and rng.random() < 0.5):
            body.append('<limit lower="-3" upper="3" effort="100" velocity="10"/>')
        mimic_ok = [m for m in movable if m[1] in SCALAR_TYPES
                    and (m[1] == "prismatic") == (jtype == "prismatic")]
        if jtype in SCALAR_TYPES and mimic_ok and rng.random() < mimic_prob:
            target = mimic_ok[rng.integers(len(mimic_ok))][0]
            body.append(f'<mimic joint="{target}" multiplier="{rng.uniform(-2, 2):.17g}" '
                        f'offset="{rng.uniform(-0.5, 0.5):.17g}"/>')
        elif jtype != "fixed":
            movable.append((f"j{k}", jtype))
        body.append("</joint>")
        joints.append("".join(body))
        lines.append(link_xml(child))
        links.append(child)
    lines += joints
    lines.append("</robot>")
    return "\n".join(lines)


def _floats(text, n, default):
    return np.array([float(x) for x in text.split()]) if text is not None else np.array(default)


def planar_basis(n):
    """The in-plane axes (e1, e2) of a planar joint with unit normal n, by the rule sim_node
    documents (README): e1 = e_{k+1 mod 3} for the largest |n_k|, projected and normalised."""
    k = int(np.argmax(np.abs(n)))
    e1 = np.eye(3)[(k + 1) % 3]
    e1 = e1 - (e1 @ n) * n
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


def build_pinocchio_model(urdf_xml: str, floating: bool, composite: bool = True):
    """A Pinocchio model of the URDF text built joint by joint (read here with ElementTree, not
    by sim_node's parser): JointModelRevoluteUnaligned / PrismaticUnaligned for scalar joints,
    JointModelSpherical, JointModelFreeFlyer for floating joints and a floating base,
    JointModelComposite(Prismatic e1, Prismatic e2, Revolute n) for planar joints (Pinocchio's
    URDF parser reads no spherical joint, and its JointModelPlanar ignores <axis>); with
    composite=False a planar joint is three joints "<name>#0", "#1", "#2" through two massless
    bodies instead. Links are frames named as in the URDF; fixed links are merged into their
    joint's body."""
    import pinocchio as pin

    root_el = ET.fromstring(urdf_xml)

    def origin(el):
        o = el.find("origin")
        xyz = _floats(o.get("xyz") if o is not None else None, 3, (0, 0, 0))
        rpy = _floats(o.get("rpy") if o is not None else None, 3, (0, 0, 0))
        return pin.SE3(pin.rpy.rpyToMatrix(*rpy), xyz)

    inertias = {}
    for link in root_el.findall("link"):
        el = link.find("inertial")
        if el is None:
            inertias[link.get("name")] = None
            continue
        M = origin(el)
        i = el.find("inertia")
        I = np.array([[float(i.get("ixx")), float(i.get("ixy")), float(i.get("ixz"))],
                      [float(i.get("ixy")), float(i.get("iyy")), float(i.get("iyz"))],
                      [float(i.get("ixz")), float(i.get("iyz")), float(i.get("izz"))]])
        inertias[link.get("name")] = pin.Inertia(float(el.find("mass").get("value")),
                                                 M.translation, M.rotation @ I @ M.rotation.T)
    joints = root_el.findall("joint")
    children = {}
    for j in joints:
        children.setdefault(j.find("parent").get("link"), []).append(j)
    child_links = {j.find("child").get("link") for j in joints}
    root = next(l.get("name") for l in root_el.findall("link") if l.get("name") not in child_links)

    model = pin.Model()
    where = {}     # link -> (pin joint, placement of the link frame in that joint's frame)

    def add_link(name, joint_id, placement):
        where[name] = (joint_id, placement)
        if inertias[name] is not None:
            model.appendBodyToJoint(joint_id, inertias[name], placement)
        model.addFrame(pin.Frame(name, joint_id, placement, pin.FrameType.BODY))

    if floating:
        add_link(root, model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(),
                                      "root_joint"), pin.SE3.Identity())
    else:
        add_link(root, 0, pin.SE3.Identity())
    stack = list(reversed(children.get(root, [])))
    while stack:
        j = stack.pop()
        parent_joint, parent_placement = where[j.find("parent").get("link")]
        placement = parent_placement * origin(j)
        axis_el = j.find("axis")
        axis = _floats(axis_el.get("xyz") if axis_el is not None else None, 3, (1, 0, 0))
        axis = axis / np.linalg.norm(axis)
        jtype, child = j.get("type"), j.find("child").get("link")
        if jtype == "fixed":
            add_link(child, parent_joint, placement)
        else:
            if jtype in ("revolute", "continuous"):
                jm = pin.JointModelRevoluteUnaligned(axis)
            elif jtype == "prismatic":
                jm = pin.JointModelPrismaticUnaligned(axis)
            elif jtype == "spherical":
                jm = pin.JointModelSpherical()
            elif jtype == "floating":
                jm = pin.JointModelFreeFlyer()
            else:   # planar
                e1, e2 = planar_basis(axis)
                parts = [pin.JointModelPrismaticUnaligned(e1), pin.JointModelPrismaticUnaligned(e2),
                         pin.JointModelRevoluteUnaligned(axis)]
                if composite:
                    jm = pin.JointModelComposite()
                    for part in parts:
                        jm.addJoint(part)
                else:
                    for k, part in enumerate(parts[:2]):
                        parent_joint = model.addJoint(parent_joint, part, placement,
                                                      f"{j.get('name')}#{k}")
                        placement = pin.SE3.Identity()
                    jm = parts[2]
            name = j.get("name") + ("#2" if jtype == "planar" and not composite else "")
            add_link(child, model.addJoint(parent_joint, jm, placement, name), pin.SE3.Identity())
        stack.extend(reversed(children.get(child, [])))
    return model


def _coordinate_map(model, structure):
    """(G, joints, quaternions) mapping sim_node's q, v onto those of a Pinocchio model:
    v_pin = G v; joints: (pin idx_q, pin nq, our q idx, multiplier, offset, block) per
    Pinocchio joint; quaternions: pin q indices where quaternions start."""
    G = np.zeros((model.nv, structure.model.nv))
    joints, quaternions = [], []
    for j in range(1, model.njoints):
        joint = model.joints[j]
        if joint.nv == 0:
            continue
        name = model.names[j]
        if joint.nq in (4, 7):
            quaternions.append(joint.idx_q + joint.nq - 4)
        if name == "root_joint":                # the free flyer of a floating base
            G[joint.idx_v:joint.idx_v + 6, 0:6] = np.eye(6)
            joints.append((joint.idx_q, 7, 0, 1.0, 0.0, True))
            continue
        if "#" in name:                         # one of the three joints of a split planar
            name, part = name.split("#")
            vi, qi = structure.joint_v_index[name] + int(part), structure.joint_q_index[name] + int(part)
            G[joint.idx_v, vi] = 1.0
            joints.append((joint.idx_q, 1, qi, 1.0, 0.0, True))
            continue
        if joint.nv > 1:                        # spherical, floating, planar composite
            vi = structure.joint_v_index[name]
            G[joint.idx_v:joint.idx_v + joint.nv, vi:vi + joint.nv] = np.eye(joint.nv)
            joints.append((joint.idx_q, joint.nq, structure.joint_q_index[name], 1.0, 0.0, True))
            continue
        if name in structure.mimic_joints:
            master, mult, offset = structure.mimic_joints[name]
        else:
            master, mult, offset = name, 1.0, 0.0
        G[joint.idx_v, structure.joint_v_index[master]] = mult
        joints.append((joint.idx_q, joint.nq, structure.joint_q_index[master], mult, offset,
                       False))
    return G, joints, quaternions


def _map_q(joints, nq, q_ours):
    out = np.zeros(nq)
    for pq, pnq, oq, mult, offset, block in joints:
        if block:
            out[pq:pq + pnq] = q_ours[oq:oq + pnq]
        else:
            value = mult * q_ours[oq] + offset
            if pnq == 2:                        # unbounded revolute: (cos, sin)
                out[pq:pq + 2] = np.cos(value), np.sin(value)
            else:
                out[pq] = value
    return out


class PinocchioTwin:
    """The same robot in Pinocchio, built with every joint independent (mimic=False).

    sim_node's reduced coordinates map to Pinocchio's full ones by q_full = q(q_ours) (mimic
    joints: multiplier * master + offset; continuous joints as (cos, sin)) and
    v_full = G v_ours with a constant matrix G. The reduced dynamics then follow exactly:
    B = G^T B_full G, tau = G^T tau_full(q, G v, G a), C = G^T C_full G, g = G^T g_full,
    J = J_full G. Without mimic joints G is a permutation.

    Robots with only revolute, continuous, prismatic and fixed joints are read by Pinocchio's
    own URDF parser; with spherical, planar or floating joints the model is built joint by joint
    (build_pinocchio_model).
    """

    def __init__(self, urdf_xml: str, structure):
        import pinocchio as pin

        self.pin = pin
        multi_dof = any(t in MULTI_DOF_TYPES for t in structure.joint_type.values())
        if multi_dof:
            self.model = build_pinocchio_model(urdf_xml, structure.floating)
        elif structure.floating:
            self.model = pin.buildModelFromXML(urdf_xml, pin.JointModelFreeFlyer())
        else:
            self.model = pin.buildModelFromXML(urdf_xml)
        self.data = self.model.createData()
        self.structure = structure
        self.G, self.joints, self.quaternions = _coordinate_map(self.model, structure)
        # Pinocchio's computeCoriolisMatrix is wrong for composite joints (its C v differs from
        # its own RNEA): the Coriolis matrix of planar robots comes from a model with the planar
        # joints split into three joints through massless bodies, as sim_node builds them
        self.split = None
        if any(t == "planar" for t in structure.joint_type.values()):
            model = build_pinocchio_model(urdf_xml, structure.floating, composite=False)
            self.split = (model, model.createData(), *_coordinate_map(model, structure))

    def q(self, q_ours):
        return _map_q(self.joints, self.model.nq, q_ours)

    def v(self, v_ours):
        return self.G @ np.asarray(v_ours)

    # reference values at (q, v, a) given in sim_node's coordinates
    def mass_matrix(self, q):
        M = self.pin.crba(self.model, self.data, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return self.G.T @ M @ self.G

    def rnea(self, q, v, a, gravity):
        self.model.gravity.linear[:] = gravity
        return self.G.T @ self.pin.rnea(self.model, self.data, self.q(q), self.v(v), self.v(a))

    def gravity(self, q, gravity):
        self.model.gravity.linear[:] = gravity
        return self.G.T @ self.pin.computeGeneralizedGravity(self.model, self.data, self.q(q))

    def coriolis_matrix(self, q, v):
        if self.split is not None:
            model, data, G, joints, _ = self.split
            C = self.pin.computeCoriolisMatrix(model, data, _map_q(joints, model.nq, q), G @ v)
            return G.T @ C @ G
        C = self.pin.computeCoriolisMatrix(self.model, self.data, self.q(q), self.v(v))
        return self.G.T @ C @ self.G

    def aba(self, q, v, tau, gravity):
        if np.array_equal(np.abs(self.G).sum(axis=0), np.ones(self.G.shape[1])) and \
                np.all(np.abs(self.G).sum(axis=1) == 1):
            self.model.gravity.linear[:] = gravity
            ddq = self.G.T @ self.pin.aba(self.model, self.data, self.q(q), self.v(v), self.G @ tau)
            # one step of iterative refinement with Pinocchio's own RNEA and mass matrix: on
            # long chains of free and spherical joints (mass-matrix condition ~1e6) Pinocchio's
            # ABA alone leaves residuals ~1e-8 relative
            return ddq + np.linalg.solve(self.mass_matrix(q), tau - self.rnea(q, v, ddq, gravity))
        bias = self.rnea(q, v, np.zeros(len(tau)), gravity)
        return np.linalg.solve(self.mass_matrix(q), tau - bias)

    def frame_placement(self, q, link_name):
        fid = self.model.getFrameId(link_name)
        self.pin.framesForwardKinematics(self.model, self.data, self.q(q))
        oMf = self.data.oMf[fid]
        return oMf.rotation.copy(), oMf.translation.copy()

    def point_jacobian(self, q, link_name, point):
        """Rows [angular; linear] in world axes, for `point` in link coordinates."""
        pin = self.pin
        fid = self.model.getFrameId(link_name)
        qf = self.q(q)
        pin.computeJointJacobians(self.model, self.data, qf)
        pin.framesForwardKinematics(self.model, self.data, qf)
        J = pin.getFrameJacobian(self.model, self.data, fid, pin.LOCAL_WORLD_ALIGNED).reshape(6, -1)
        R = self.data.oMf[fid].rotation
        lin = J[:3] - np.cross(R @ point, J[3:].T).T     # shift from the frame origin to the point
        return np.vstack([J[3:], lin]) @ self.G

    def com(self, q):
        return self.pin.centerOfMass(self.model, self.data, self.q(q))

    def moving_mass(self):
        """Mass of the moving bodies (Pinocchio keeps links welded to the world in joint 0,
        outside its centre of mass)."""
        return sum(inertia.mass for inertia in self.model.inertias[1:])
