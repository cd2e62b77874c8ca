# bullet3 examples/pybullet/examples/rollPitchYaw.py (pybullet 3.2.7 wheel: pybullet_examples/),
# zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import; SHARED_MEMORY/GUI ->
# DIRECT; a DIRECT client has no sliders (addUserDebugParameter gives -1 and
# readUserDebugParameter raises), so the endless loop -> one pass per preset slider setting,
# each printing the base pose it set.
import sim_node.pybullet as p
import time
import pybullet_data

cid = p.connect(p.DIRECT)

p.setAdditionalSearchPath(pybullet_data.getDataPath())
q = p.loadURDF("quadruped/quadruped.urdf", useFixedBase=True)
rollId = p.addUserDebugParameter("roll", -1.5, 1.5, 0)
pitchId = p.addUserDebugParameter("pitch", -1.5, 1.5, 0)
yawId = p.addUserDebugParameter("yaw", -1.5, 1.5, 0)
fwdxId = p.addUserDebugParameter("fwd_x", -1, 1, 0)
fwdyId = p.addUserDebugParameter("fwd_y", -1, 1, 0)
fwdzId = p.addUserDebugParameter("fwd_z", -1, 1, 0)
print("slider ids", [rollId, pitchId, yawId, fwdxId, fwdyId, fwdzId])

settings = [(0, 0, 0, 0, 0, 0), (0.3, -0.2, 1.1, 0.5, -0.25, 0.75), (-1.5, 1.5, -1.5, -1, 1, 1),
            (1.5, 0.7, 0.2, 0.1, 0.2, -1)]
for roll, pitch, yaw, x, y, z in settings:
  orn = p.getQuaternionFromEuler([roll, pitch, yaw])
  p.resetBasePositionAndOrientation(q, [x, y, z], orn)
  #p.stepSimulation()#not really necessary for this demo, no physics used
  pos, orn = p.getBasePositionAndOrientation(q)
  print("base position", list(pos), "orientation", list(orn))
  print("euler", list(p.getEulerFromQuaternion(orn)))
  print("matrix", list(p.getMatrixFromQuaternion(orn)))
  print("link 0 frame", list(p.getLinkState(q, 0)[4]), list(p.getLinkState(q, 0)[5]))
