"""Microseconds per Python call of every dynamics algorithm, sim_node vs Pinocchio, in one run.

Robots: the data/ arm as a 7-DOF arm (its gripper joints locked: Pinocchio's ABA does not take
mimic joints) and the 12-joint floating-base quadruped (nv = 18). Both engines load the same
URDF text and are called on the same random states; each timing is the best of several
repeats of many calls. The batch rows time sim_node's N-states-per-call form, per state.

    python bench/dynamics.py [--quick] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import timeit
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sim_node.engine import aba, batched, coriolis, crba, kinematics, ltdl, rnea  # noqa: E402
from sim_node.engine.model import Data  # noqa: E402
from sim_node.model.builder import build_robot  # noqa: E402
from sim_node.model.urdf import parse_urdf  # noqa: E402

GRAVITY = np.array([0.0, 0.0, -9.81])
TARGET_RATIO = 1.5          # per call, vs Pinocchio (issue 2)
TARGET_BATCH_RNEA_US = 0.5  # per state, 7-DOF arm


def arm7_locked() -> tuple[str, Path]:
    path = REPO / "data" / "robots" / "arm7" / "arm7.urdf"
    xml = path.read_text()
    for joint in ("finger_joint1", "finger_joint2"):
        xml = re.sub(rf'(<joint name="{joint}" type=")\w+(")', r"\1fixed\2", xml)
    xml = re.sub(r"<mimic[^>]*/>", "", xml)
    return xml, path


def quadruped() -> tuple[str, Path]:
    path = REPO / "data" / "robots" / "quadruped" / "quadruped.urdf"
    return path.read_text(), path


def best_us(fn, number: int, repeat: int = 7) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


class Robot:
    def __init__(self, name: str, xml: str, path: Path):
        import pinocchio as pin

        self.name = name
        # our loader resolves the relative mesh paths against the file's directory
        tmp = path.parent / f".bench_{name}.urdf"
        tmp.write_text(xml)
        try:
            self.structure = build_robot(parse_urdf(tmp))
        finally:
            tmp.unlink()
        self.model = self.structure.model
        self.data = Data(self.model)
        floating = self.structure.floating
        self.pin = pin
        self.pm = (pin.buildModelFromXML(xml, pin.JointModelFreeFlyer()) if floating
                   else pin.buildModelFromXML(xml))
        self.pd = self.pm.createData()
        self.pm_nograv = self.pm.copy()
        self.pm_nograv.gravity.linear[:] = 0.0
        self.pd_nograv = self.pm_nograv.createData()
        assert self.pm.nv == self.model.nv, (self.pm.nv, self.model.nv)
        rng = np.random.default_rng(0)
        self.q = rng.uniform(-1, 1, self.model.nq)
        if floating:
            self.q[3:7] /= np.linalg.norm(self.q[3:7])
        self.v = rng.normal(size=self.model.nv)
        self.a = rng.normal(size=self.model.nv)
        # the same state in Pinocchio's coordinates (continuous joints would be (cos, sin))
        assert self.pm.nq == self.model.nq, "bench robots have no continuous joints"
        perm_q, perm_v = np.zeros(self.pm.nq, int), np.zeros(self.pm.nv, int)
        for j in range(1, self.pm.njoints):
            joint = self.pm.joints[j]
            if joint.nv == 6:
                perm_q[joint.idx_q:joint.idx_q + 7] = range(7)
                perm_v[joint.idx_v:joint.idx_v + 6] = range(6)
            elif joint.nv == 1:
                name = self.pm.names[j]
                perm_q[joint.idx_q] = self.structure.joint_q_index[name]
                perm_v[joint.idx_v] = self.structure.joint_v_index[name]
        self.pq, self.pv, self.pa = self.q[perm_q], self.v[perm_v], self.a[perm_v]
        self.ee = len(self.structure.link_names) - 1
        self.ee_frame = self.pm.getFrameId(self.structure.link_names[self.ee])
        self._check_same_dynamics(perm_v)

    def _check_same_dynamics(self, perm_v):
        pin = self.pin
        ours = rnea.inverse_dynamics(self.model, self.data, self.q, self.v, self.a, GRAVITY)
        ref = pin.rnea(self.pm, self.pd, self.pq, self.pv, self.pa)
        assert np.allclose(ours[perm_v], ref, rtol=1e-9, atol=1e-9), "robots differ"

    def cases(self):
        pin, m, d, pm, pd = self.pin, self.model, self.data, self.pm, self.pd
        q, v, a, pq, pv, pa = self.q, self.v, self.a, self.pq, self.pv, self.pa
        zero_p = np.zeros(pm.nv)
        lwa = pin.LOCAL_WORLD_ALIGNED
        return [
            ("forward kinematics (all frames)", lambda: kinematics.frames(m, d, q),
             lambda: pin.framesForwardKinematics(pm, pd, pq)),
            ("centre of mass", lambda: kinematics.com(m, d, q),
             lambda: pin.centerOfMass(pm, pd, pq)),
            ("Jacobian (end link, world axes)", lambda: kinematics.jacobian(m, d, q, self.ee),
             lambda: pin.computeFrameJacobian(pm, pd, pq, self.ee_frame, lwa)),
            ("mass matrix (CRBA)", lambda: crba.mass_matrix(m, d, q), lambda: pin.crba(pm, pd, pq)),
            ("inverse mass matrix", lambda: ltdl.mass_matrix_inverse(m, d, q),
             lambda: pin.computeMinverse(pm, pd, pq)),
            ("inverse dynamics (RNEA)", lambda: rnea.inverse_dynamics(m, d, q, v, a, GRAVITY),
             lambda: pin.rnea(pm, pd, pq, pv, pa)),
            ("generalized gravity", lambda: rnea.generalized_gravity(m, d, q, GRAVITY),
             lambda: pin.computeGeneralizedGravity(pm, pd, pq)),
            ("Coriolis forces C(q,v)", lambda: rnea.coriolis_forces(m, d, q, v),
             lambda: pin.rnea(self.pm_nograv, self.pd_nograv, pq, pv, zero_p)),
            ("Coriolis matrix", lambda: coriolis.coriolis(m, d, q, v),
             lambda: pin.computeCoriolisMatrix(pm, pd, pq, pv)),
            ("forward dynamics (ABA)", lambda: aba.forward_dynamics(m, d, q, v, a, GRAVITY),
             lambda: pin.aba(pm, pd, pq, pv, pa)),
        ]

    def batch_cases(self, n: int):
        m = self.model
        rng = np.random.default_rng(1)
        Q = rng.uniform(-1, 1, (n, m.nq))
        if self.structure.floating:
            Q[:, 3:7] /= np.linalg.norm(Q[:, 3:7], axis=1, keepdims=True)
        V, A = rng.normal(size=(n, m.nv)), rng.normal(size=(n, m.nv))
        return [
            ("batch RNEA", lambda: batched.rnea(m, Q, V, A, GRAVITY)),
            ("batch RNEA, 1 thread", lambda: batched.rnea(m, Q, V, A, GRAVITY, threads=1)),
            ("batch ABA", lambda: batched.aba(m, Q, V, A, GRAVITY)),
            ("batch CRBA", lambda: batched.crba(m, Q)),
            ("batch Jacobian", lambda: batched.jacobian(m, Q, self.ee)),
        ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        print("Pinocchio (pip package 'pin') is not installed: nothing to compare with")
        return 1
    number = 2000 if args.quick else 20000
    n_batch = 1000 if args.quick else 10000
    results = {}
    worst = 0.0
    for name, (xml, path) in (("arm7 (7 DOF)", arm7_locked()), ("quadruped (nv 18)", quadruped())):
        robot = Robot(name.split()[0], xml, path)
        print(f"\n{name}: nq={robot.model.nq} nv={robot.model.nv}")
        print(f"  {'algorithm':34s} {'sim_node':>9s} {'Pinocchio':>10s} {'ratio':>7s}")
        rows = {}
        for label, ours, theirs in robot.cases():
            t_ours, t_pin = best_us(ours, number), best_us(theirs, number)
            ratio = t_ours / t_pin
            worst = max(worst, ratio)
            rows[label] = {"sim_node_us": t_ours, "pinocchio_us": t_pin, "ratio": ratio}
            flag = "" if ratio <= TARGET_RATIO else "  > target"
            print(f"  {label:34s} {t_ours:8.3f}  {t_pin:9.3f}  {ratio:6.2f}{flag}")
        for label, fn in robot.batch_cases(n_batch):
            per_state = best_us(fn, 1, repeat=5 if args.quick else 9) / n_batch
            rows[label] = {"sim_node_us_per_state": per_state}
            print(f"  {label + f' (N={n_batch})':34s} {per_state:8.3f}  {'':9s}  per state")
        results[name] = rows
    arm_batch = results["arm7 (7 DOF)"]["batch RNEA"]["sim_node_us_per_state"]
    print(f"\nworst per-call ratio {worst:.2f} (target <= {TARGET_RATIO}); "
          f"arm batch RNEA {arm_batch:.3f} us/state (target <= {TARGET_BATCH_RNEA_US})")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
