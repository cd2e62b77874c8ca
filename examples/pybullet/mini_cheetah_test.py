# bullet3 examples/pybullet/gym/pybullet_envs/examples/mini_cheetah_test.py (pybullet 3.2.7
# wheel: pybullet_envs/examples/), zlib licence (LICENSE.bullet3). Altered for sim_node,
# headless: import; GUI -> DIRECT; the endless loop -> STEPS steps (env PYBULLET_EXAMPLE_STEPS)
# without sleeps; prints where the robot stands at the end (the GUI showed it).
import os
import sim_node.pybullet as p
import pybullet_data as pd
import time

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "480"))
p.connect(p.DIRECT)
p.setGravity(0,0,-9.8)
p.setAdditionalSearchPath(pd.getDataPath())
floor = p.loadURDF("plane.urdf")
startPos = [0,0,0.5]
robot = p.loadURDF("mini_cheetah/mini_cheetah.urdf",startPos)
numJoints = p.getNumJoints(robot)
p.changeVisualShape(robot,-1,rgbaColor=[1,1,1,1])
for j in range (numJoints):
	p.changeVisualShape(robot,j,rgbaColor=[1,1,1,1])
	force=200
	pos=0
	p.setJointMotorControl2(robot,j,p.POSITION_CONTROL,pos,force=force)
dt = 1./240.
p.setTimeStep(dt)
for step in range(STEPS):
  p.stepSimulation()
print("base position", list(p.getBasePositionAndOrientation(robot)[0]))
print("joint positions", [s[0] for s in p.getJointStates(robot, range(numJoints))])

