# bullet3 examples/pybullet/examples/constraint.py (pybullet 3.2.7 wheel: pybullet_examples/),
# zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import; GUI -> DIRECT;
# real-time simulation and sleeps -> one stepSimulation per loop pass, STEPS passes (env
# PYBULLET_EXAMPLE_STEPS); prints the cube's pose against the pivot at the end (the GUI showed it).
import os
import sim_node.pybullet as p
import time
import math

import pybullet_data
STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "300"))
p.connect(p.DIRECT)
p.setAdditionalSearchPath(pybullet_data.getDataPath())

p.loadURDF("plane.urdf")
cubeId = p.loadURDF("cube_small.urdf", 0, 0, 1)
p.setGravity(0, 0, -10)
p.setRealTimeSimulation(0)
cid = p.createConstraint(cubeId, -1, -1, -1, p.JOINT_FIXED, [0, 0, 0], [0, 0, 0], [0, 0, 1])
print(cid)
print(p.getConstraintUniqueId(0))
a = -math.pi
for step in range(STEPS):
  a = a + 0.01
  if (a > math.pi):
    a = -math.pi
  p.stepSimulation()
  p.setGravity(0, 0, -10)
  pivot = [a, 0, 1]
  orn = p.getQuaternionFromEuler([a, 0, 0])
  p.changeConstraint(cid, pivot, jointChildFrameOrientation=orn, maxForce=50)

for step in range(60):
  p.stepSimulation()
pos, orn = p.getBasePositionAndOrientation(cubeId)
print("pivot", pivot, "euler", [a, 0, 0])
print("cube position", list(pos), "euler", list(p.getEulerFromQuaternion(orn)))
p.removeConstraint(cid)
print("constraints after removeConstraint", p.getNumConstraints())
