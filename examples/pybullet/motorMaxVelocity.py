# bullet3 examples/pybullet/examples/motorMaxVelocity.py (pybullet 3.2.7 wheel:
# pybullet_examples/), zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import;
# GUI -> DIRECT; real-time simulation and sleeps -> stepSimulation, STEPS loop passes (env
# PYBULLET_EXAMPLE_STEPS), printing every 60th pass (the original printed every pass).
import os
import sim_node.pybullet as p
import time
import pybullet_data

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "480"))
p.connect(p.DIRECT)
p.setAdditionalSearchPath(pybullet_data.getDataPath())
cartpole = p.loadURDF("cartpole.urdf")
p.setRealTimeSimulation(0)
p.setJointMotorControl2(cartpole,
                        1,
                        p.POSITION_CONTROL,
                        targetPosition=1000,
                        targetVelocity=0,
                        force=1000,
                        positionGain=1,
                        velocityGain=0,
                        maxVelocity=0.5)
for step in range(STEPS):
  p.setGravity(0, 0, -10)
  p.stepSimulation()
  js = p.getJointState(cartpole, 1)
  if step % 60 == 59:
    print("position=", js[0], "velocity=", js[1])
