# bullet3 examples/pybullet/examples/sceneAabb.py (pybullet 3.2.7 wheel: pybullet_examples/),
# zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import; GUI -> DIRECT; the
# endless stepping loop -> STEPS steps (env PYBULLET_EXAMPLE_STEPS) without sleeps, after which
# the scene's AABB is printed again (the sphere has fallen onto the plane).
import os
import sim_node.pybullet as p
import time
import numpy as np

import pybullet_data

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "480"))
p.connect(p.DIRECT)
p.setAdditionalSearchPath(pybullet_data.getDataPath())
p.loadURDF("plane.urdf")
p.loadURDF("sphere2.urdf",[0,0,2])

dt = 1./240.
p.setTimeStep(dt)

def getSceneAABB():
  aabbMins=[]
  aabbMaxs=[]

  for i in range(p.getNumBodies()):
    uid = p.getBodyUniqueId(i)
    aabb = p.getAABB(uid)
    aabbMins.append(np.array(aabb[0]))
    aabbMaxs.append(np.array(aabb[1]))

  if len(aabbMins):
    sceneAABBMin = aabbMins[0]
    sceneAABBMax = aabbMaxs[0]

    for aabb in aabbMins:
      sceneAABBMin = np.minimum(sceneAABBMin,aabb)
    for aabb in aabbMaxs:
      sceneAABBMax = np.maximum(sceneAABBMax,aabb)

    print("sceneAABBMin=",sceneAABBMin)
    print("sceneAABBMax=",sceneAABBMax)
 
getSceneAABB()

for step in range(STEPS):
  p.stepSimulation()

print("sphere aabb", p.getAABB(1))
