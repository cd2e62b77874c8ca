# bullet3 examples/pybullet/gym/pybullet_envs/examples/loadpanda.py (pybullet 3.2.7 wheel:
# pybullet_envs/examples/), zlib licence (LICENSE.bullet3); uses panda_sim.py beside it
# (unaltered). Altered for sim_node, headless: import (panda_sim from beside it); GUI -> DIRECT;
# the endless loop -> STEPS passes (env PYBULLET_EXAMPLE_STEPS) without sleeps; prints the
# panda's joints and its end effector against the IK target at the end (the GUI showed them).
import os
import sim_node.pybullet as p
import pybullet_data as pd
import math
import time
import numpy as np
import panda_sim

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "120"))
p.connect(p.DIRECT)
p.configureDebugVisualizer(p.COV_ENABLE_Y_AXIS_UP,1)
p.setAdditionalSearchPath(pd.getDataPath())

timeStep=1./60.
p.setTimeStep(timeStep)
p.setGravity(0,-9.8,0)
 
panda = panda_sim.PandaSim(p,[0,0,0])
for step in range(STEPS):
	panda.step()
	p.stepSimulation()
t = panda.t - 1. / 60.
print("target", [0.2 * math.sin(1.5 * t), 0.044, -0.6 + 0.1 * math.cos(1.5 * t)])
print("end effector", list(p.getLinkState(panda.panda, panda_sim.pandaEndEffectorIndex)[4]))
print("joint positions", [s[0] for s in p.getJointStates(panda.panda, range(panda_sim.pandaNumDofs))])
	
