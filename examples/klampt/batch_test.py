# Port of Klamp't Python/docs/examples/batch_test.py (https://github.com/krishauser/Klampt,
# commit 8a49c3b3e2912d48f01469ff4050e42d1cc06e92).
# Copyright (c) 2017, the Trustees of Duke University. All rights reserved.
# BSD 3-clause licence: see LICENSE.klampt in this directory.
# Changes: `klampt` -> `sim_node` in the imports; Python 2 print statement written as a print()
# call; `from klampt.model import map` dropped (unused here, and not part of sim_node); the
# world "world1.xml" (the documentation's one-link pendulum, not in the repository) is
# sim_node's data/worlds/pendulum.yaml, found relative to this file.
# Needs: sim_node.sim.batch (monteCarloSim), SimRobotController PID.
from sim_node import *
from sim_node.sim import batch
import random, math
import os

world = WorldModel()
fn = os.path.join(os.path.dirname(os.path.abspath(__file__)),"..","..","data","worlds","pendulum.yaml")
res = world.readFile(fn)
if not res:
    raise RuntimeError("Unable to load world "+fn)

item = 'robots[0].config[0]'
itemsampler = lambda: random.uniform(-math.pi, math.pi)
initialConditionSamplers = {item:itemsampler}
initialConditionSamplers['args'] = lambda:(random.uniform(-0.5, 0.5),)

def simInitFun(sim,targetAngle):
    controller = sim.controller(0)
    controller.setPIDCommand([targetAngle],[0])
    kP = 20
    kI = 8
    kD = 5
    controller.setPIDGains([kP],[kI],[kD])

returnItems = ['robots[0].config']
duration = 5
N = 100
res = batch.monteCarloSim(world,duration,initialConditionSamplers,N,returnItems, simInit=simInitFun)

f = open('result.txt', 'w')
for i in range(N):
    initialCond,results = res[i]
    #print results
    startConfig = initialCond['robots[0].config[0]']
    endConfig = results[returnItems[0]]
    print("from",startConfig,"to",initialCond["args"][0],"->",endConfig)
    f.write('%lf\n'%(endConfig[0]))
f.close()

