# Port of Klamp't Python/docs/examples/traj-test.py (https://github.com/krishauser/Klampt,
# commit 20c0c27b893986f3241a38c4589ede7ca3c0d5cb).
# Copyright (c) 2017, the Trustees of Duke University. All rights reserved.
# BSD 3-clause licence: see LICENSE.klampt in this directory.
# Changes: `klampt` -> `sim_node` in the imports; Python 2 print statements written as print()
# calls; the vis calls (pure display: a point animated along each trajectory, the trajectories
# drawn) dropped and `from klampt import vis` with them; the spline they showed is still
# computed, and the last line prints what the window would have shown (its discretization);
# traj2.configTrajectory() (the Klamp't of 2017) is traj2 itself in Klamp't 0.10.1, whose
# HermiteTrajectory.discretize and eval give the configuration part; the timed trajectory
# `path_to_trajectory(traj,vmax=2,amax=4)`, computed only to be animated, is dropped:
# sim_node.model.trajectory has no path_to_trajectory.
# Needs: sim_node.model.trajectory (Trajectory, HermiteTrajectory).
from sim_node.model import trajectory

#milestones = [[0,0,0],[0,0,0],[1,0,0],[2,0,1],[2.2,0,1.5],[3,0,1],[4,0,-0.3]]
milestones = [[0,0,0],[0.02,0,0],[1,0,0],[2,0,1],[2.2,0,1.5],[3,0,1],[4,0,-0.3]]

traj = trajectory.Trajectory(milestones=milestones)

#prints milestones 0-5
print(0,":",traj.eval(0))
print(1,":",traj.eval(1))
print(2,":",traj.eval(2))
print(3,":",traj.eval(3))
print(4,":",traj.eval(4))
print(5,":",traj.eval(5))
print(6,":",traj.eval(6))
#print some interpolated points
print(0.5,":",traj.eval(0.5))
print(2.5,":",traj.eval(2.5))
#print some stuff after the end of trajectory
print(7,":",traj.eval(6))
print(100.3,":",traj.eval(100.3))
print(-2,":",traj.eval(-2))

traj2 = trajectory.HermiteTrajectory()
traj2.makeSpline(traj)

traj2_discretized = traj2.discretize(0.1)

# (port) what the window showed
print("spline milestones",len(traj2_discretized.milestones),"at 2.5 :",traj2.eval(2.5))
