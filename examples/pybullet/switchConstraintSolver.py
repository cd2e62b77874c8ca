# bullet3 examples/pybullet/examples/switchConstraintSolver.py (pybullet 3.2.7 wheel:
# pybullet_examples/), zlib licence (LICENSE.bullet3). Altered for sim_node, headless: import;
# GUI -> DIRECT; the endless stepping loop -> STEPS steps (env PYBULLET_EXAMPLE_STEPS) without
# sleeps; prints the stack of cubes at the end (the GUI showed it).
import os
import sim_node.pybullet as p
import time
import pybullet_data

STEPS = int(os.environ.get("PYBULLET_EXAMPLE_STEPS", "480"))
p.connect(p.DIRECT)
p.setAdditionalSearchPath(pybullet_data.getDataPath())
#p.setPhysicsEngineParameter(constraintSolverType=p.CONSTRAINT_SOLVER_LCP_PGS, globalCFM = 0.0001)
p.setPhysicsEngineParameter(constraintSolverType=p.CONSTRAINT_SOLVER_LCP_DANTZIG,
                            globalCFM=0.000001)
#p.setPhysicsEngineParameter(constraintSolverType=p.CONSTRAINT_SOLVER_LCP_PGS, globalCFM = 0.0001)

p.loadURDF("plane.urdf")
radius = 0.025
distance = 1.86
yaw = 135
pitch = -11
targetPos = [0, 0, 0]

p.setPhysicsEngineParameter(solverResidualThreshold=0.001, numSolverIterations=200)
p.resetDebugVisualizerCamera(distance, yaw, pitch, targetPos)
objectId = -1

for i in range(10):
  objectId = p.loadURDF("cube_small.urdf", [1, 1, radius + i * 2 * radius])

p.changeDynamics(objectId, -1, 100)

timeStep = 1. / 240.
p.setGravity(0, 0, -10)
for step in range(STEPS):
  p.stepSimulation()
print("top cube mass", p.getDynamicsInfo(objectId, -1)[0])
for body in range(1, p.getNumBodies()):
  print("cube", body, "position", list(p.getBasePositionAndOrientation(body)[0]))
