# bullet3 examples/pybullet/examples/collisionFilter.py (pybullet 3.2.7 wheel: pybullet_examples/),
# zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import; GUI -> DIRECT;
# real-time simulation and sleeps -> one stepSimulation per loop pass, STEPS passes (env
# PYBULLET_EXAMPLE_STEPS); prints where the cube came to rest (the GUI showed it) and its contacts.
import os
import sim_node.pybullet as p
import time
import pybullet_data

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "720"))
p.connect(p.DIRECT)
p.setAdditionalSearchPath(pybullet_data.getDataPath())
planeId = p.loadURDF("plane.urdf", useMaximalCoordinates=False)
cubeId = p.loadURDF("cube_collisionfilter.urdf", [0, 0, 3], useMaximalCoordinates=False)

collisionFilterGroup = 0
collisionFilterMask = 0
p.setCollisionFilterGroupMask(cubeId, -1, collisionFilterGroup, collisionFilterMask)

enableCollision = 1
p.setCollisionFilterPair(planeId, cubeId, -1, -1, enableCollision)

p.setRealTimeSimulation(0)
p.setGravity(0, 0, -10)
for step in range(STEPS):
  p.stepSimulation()
  p.setGravity(0, 0, -10)
print("cube position", list(p.getBasePositionAndOrientation(cubeId)[0]))
print("cube-plane contacts", len(p.getContactPoints(cubeId, planeId)) > 0)
