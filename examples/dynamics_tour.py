"""A tour of the dynamics API on the shipped 7-DOF arm: load, set a state, ask for the terms of
B(q) qdd + C(q, qd) + G(q) = tau, Jacobians, and the batch form for many states at once.

    python examples/dynamics_tour.py
"""
import numpy as np

import sim_node

np.set_printoptions(linewidth=120)
from sim_node.engine import batched
from sim_node.resources import data_path

world = sim_node.WorldModel()
arm = world.loadRobot(str(data_path("robots", "arm7", "arm7.urdf")))   # root link 'world': fixed
print(arm, "joints:", arm.getJointNames())

lower, upper = arm.getJointLimits()
q = 0.5 * (lower + upper) + 0.2
arm.setConfig(q)
arm.setVelocity(np.full(arm.model.nv, 0.3))

B = arm.getMassMatrix()                       # joint-space inertia
C = arm.getCoriolisForces()                   # Coriolis and centrifugal forces at (q, qd)
G = arm.getGravityForces((0, 0, -9.81))       # generalized gravity
print("B diagonal [kg m^2]:", np.round(np.diag(B), 4))
print("gravity torques [N m]:", np.round(G, 3))

# the torque that produces a desired acceleration, and back (gravity added explicitly)
ddq = np.linspace(-1, 1, arm.model.nv)
tau = arm.torquesFromAccel(ddq) + G
print("torques for ddq:", np.round(tau, 3))
error = np.abs(arm.accelFromTorques(tau - G) - ddq).max()
print(f"accelFromTorques recovers ddq to {error:.1e}")

# Jacobian of the tool centre point: rows [angular; linear] in world axes
tcp = arm.link("tcp")
J = tcp.getJacobian([0, 0, 0])
print("tcp at", np.round(tcp.getTransform()[1], 4), "moves at", np.round(J[3:] @ arm.getVelocity(), 4), "m/s")
print("centre of mass:", np.round(arm.getCom(), 4), "of", round(arm.getTotalMass(), 3), "kg")

# batch form: inverse dynamics for 10 000 states in one call
rng = np.random.default_rng(0)
Q = rng.uniform(lower, upper, (10000, arm.model.nq))
V = rng.normal(size=(10000, arm.model.nv))
A = rng.normal(size=(10000, arm.model.nv))
TAU = batched.rnea(arm.model, Q, V, A, gravity=(0, 0, -9.81))
print("batch RNEA:", TAU.shape, "max |tau|", round(float(np.abs(TAU).max()), 2), "N m")
