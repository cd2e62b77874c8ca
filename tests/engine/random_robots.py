"""Random kinematic trees as URDF strings, and the Pinocchio twin of a sim_node robot.

Used by the engine tests to compare every algorithm against Pinocchio on robots that exercise
all joint types, arbitrary axes and origins, branching, fixed joints (merged bodies), mimic
joints and floating bases.
"""
from __future__ import annotations

import numpy as np
from transforms3d.euler import euler2mat


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
                mimic_prob=0.0, world_root=False, branching=0.5, axis_aligned_prob=0.4):
    """A random tree robot as a URDF string: n_movable revolute / continuous / prismatic joints
    (a fraction of them mimic joints) and n_fixed fixed joints, in random order, each attached
    to the last link (chains) or, with probability `branching`, to a random earlier link."""
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
    types = ["fixed"] * n_fixed + list(rng.choice(["revolute", "continuous", "prismatic"],
                                                  size=n_movable))
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
        if jtype in ("revolute", "prismatic"):
            body.append('<limit lower="-3" upper="3" effort="100" velocity="10"/>')
        mimic_ok = [m for m in movable if (m[1] == "prismatic") == (jtype == "prismatic")]
        if jtype != "fixed" and mimic_ok and rng.random() < mimic_prob:
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


class PinocchioTwin:
    """The same robot in Pinocchio, built with every joint independent (mimic=False).

    sim_node's reduced coordinates map to Pinocchio's full ones by q_full = q(q_ours) (mimic
    joints: multiplier * master + offset; continuous joints as (cos, sin)) and
    v_full = G v_ours with a constant matrix G. The reduced dynamics then follow exactly:
    B = G^T B_full G, tau = G^T tau_full(q, G v, G a), C = G^T C_full G, g = G^T g_full,
    J = J_full G. Without mimic joints G is a permutation.
    """

    def __init__(self, urdf_xml: str, structure):
        import pinocchio as pin

        self.pin = pin
        if structure.floating:
            self.model = pin.buildModelFromXML(urdf_xml, pin.JointModelFreeFlyer())
        else:
            self.model = pin.buildModelFromXML(urdf_xml)
        self.data = self.model.createData()
        self.structure = structure
        m = self.model
        nv_ours = structure.model.nv
        self.G = np.zeros((m.nv, nv_ours))
        self.joints = []          # (pin idx_q, pin nq, our q idx, multiplier, offset)
        for j in range(1, m.njoints):
            joint = m.joints[j]
            if joint.nv == 0:
                continue
            name = m.names[j]
            if joint.nv == 6:                       # the free flyer
                self.G[joint.idx_v:joint.idx_v + 6, 0:6] = np.eye(6)
                self.joints.append((joint.idx_q, 7, 0, 1.0, 0.0))
                continue
            if name in structure.mimic_joints:
                master, mult, offset = structure.mimic_joints[name]
            else:
                master, mult, offset = name, 1.0, 0.0
            self.G[joint.idx_v, structure.joint_v_index[master]] = mult
            self.joints.append((joint.idx_q, joint.nq, structure.joint_q_index[master], mult, offset))

    def q(self, q_ours):
        out = np.zeros(self.model.nq)
        for pq, pnq, oq, mult, offset in self.joints:
            if pnq == 7:
                out[pq:pq + 7] = q_ours[oq:oq + 7]
            else:
                value = mult * q_ours[oq] + offset
                if pnq == 2:                        # unbounded revolute: (cos, sin)
                    out[pq:pq + 2] = np.cos(value), np.sin(value)
                else:
                    out[pq] = value
        return out

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
        C = self.pin.computeCoriolisMatrix(self.model, self.data, self.q(q), self.v(v))
        return self.G.T @ C @ self.G

    def aba(self, q, v, tau, gravity):
        if np.array_equal(np.abs(self.G).sum(axis=0), np.ones(self.G.shape[1])) and \
                np.all(np.abs(self.G).sum(axis=1) == 1):
            self.model.gravity.linear[:] = gravity
            ddq_full = self.pin.aba(self.model, self.data, self.q(q), self.v(v), self.G @ tau)
            return self.G.T @ ddq_full
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
