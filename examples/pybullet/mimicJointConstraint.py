#a mimic joint can act as a gear between two joints
#you can control the gear ratio in magnitude and sign (>0 reverses direction)
# bullet3 examples/pybullet/examples/mimicJointConstraint.py (pybullet 3.2.7 wheel:
# pybullet_examples/), zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import;
# GUI -> DIRECT; real-time simulation and sleeps -> one stepSimulation per loop pass, STEPS passes
# (env PYBULLET_EXAMPLE_STEPS); the GUI's mouse drag of a wheel -> a velocity motor on joint 1 for
# the first half (then released); prints the wheel joints' velocities, which the gears tie.

import os
import sim_node.pybullet as p
import time
import pybullet_data

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "240"))
p.connect(p.DIRECT)
p.setAdditionalSearchPath(pybullet_data.getDataPath())
p.loadURDF("plane.urdf", 0, 0, -2)
wheelA = p.loadURDF("differential/diff_ring.urdf", [0, 0, 0])
for i in range(p.getNumJoints(wheelA)):
  print(p.getJointInfo(wheelA, i))
  p.setJointMotorControl2(wheelA, i, p.VELOCITY_CONTROL, targetVelocity=0, force=0)

c = p.createConstraint(wheelA,
                       1,
                       wheelA,
                       3,
                       jointType=p.JOINT_GEAR,
                       jointAxis=[0, 1, 0],
                       parentFramePosition=[0, 0, 0],
                       childFramePosition=[0, 0, 0])
p.changeConstraint(c, gearRatio=1, maxForce=10000)

c = p.createConstraint(wheelA,
                       2,
                       wheelA,
                       4,
                       jointType=p.JOINT_GEAR,
                       jointAxis=[0, 1, 0],
                       parentFramePosition=[0, 0, 0],
                       childFramePosition=[0, 0, 0])
p.changeConstraint(c, gearRatio=-1, maxForce=10000)

c = p.createConstraint(wheelA,
                       1,
                       wheelA,
                       4,
                       jointType=p.JOINT_GEAR,
                       jointAxis=[0, 1, 0],
                       parentFramePosition=[0, 0, 0],
                       childFramePosition=[0, 0, 0])
p.changeConstraint(c, gearRatio=-1, maxForce=10000)

p.setRealTimeSimulation(0)
p.setJointMotorControl2(wheelA, 1, p.VELOCITY_CONTROL, targetVelocity=1, force=100)
for step in range(STEPS):
  if step == STEPS // 2:
    print("driven: joint velocities", [s[1] for s in p.getJointStates(wheelA, [1, 2, 3, 4])])
    p.setJointMotorControl2(wheelA, 1, p.VELOCITY_CONTROL, targetVelocity=0, force=0)
  p.setGravity(0, 0, -10)
  p.stepSimulation()
print("released: joint velocities", [s[1] for s in p.getJointStates(wheelA, [1, 2, 3, 4])])
print("constraints", p.getNumConstraints())
#p.removeConstraint(c)
