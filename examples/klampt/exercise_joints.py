# Port of Klampt-examples Python3/demos/model/exercise_joints.py
# (https://github.com/krishauser/Klampt-examples, commit 54f3fe000c73f80818ba352baf5026f5bd0de76e).
# Klampt-examples carries no licence file of its own; it is the example collection of Klamp't,
# Copyright (c) 2017, the Trustees of Duke University, BSD 3-clause: see LICENSE.klampt here.
# Changes: `klampt` -> `sim_node` in the imports; `from klampt import vis` and
# `from klampt.io import loader` dropped with the vis calls (pure display: the robot drawn and its
# joints plotted) and the config-file option (io.load / io.read of Klamp't .config files, which
# sim_node does not read); the display loop `while vis.shown()` runs one sweep over the drivers
# on a clock advanced by the loop's own 0.01 s sleep instead of the wall clock, and prints each
# driver's name, the range it swept and the joint values at its extremes. The default robot
# (Klampt-examples' data/arm_robots/kinova_gen3_7dof.urdf) is not shipped: give a robot file as
# the first argument (the test gives pybullet_data's kuka_iiwa/model.urdf).
# Needs: RobotModel.numDrivers / driver (RobotModelDriver getType, getAffectedLink(s),
# getAffineCoeffs, getValue / setValue), getJointLimits, randomizeConfig.
from sim_node import *
import time
import math
import sys

if len(sys.argv) > 1:
    fn = sys.argv[1]
else:
    fn = "../../../data/arm_robots/kinova_gen3_7dof.urdf"

if len(sys.argv) > 2:
    config = sys.argv[2]
else:
    config = None

print("-------------------------------------------------------------------")
print("exercise_joints.py: This example moves between all of a robot's")
print("joint extrema.")
print()
print("Usage: python exercise_joints.py [robot_or_world_file] [config]")
print()
print("You can also specify 'random' for the config.")
print()
print("-------------------------------------------------------------------")

w = WorldModel()
if not w.readFile(fn):
    print("Unable to read file",fn)
    exit(1)

r = w.robot(0)
if config == 'random':
    r.randomizeConfig()

d0 = [r.driver(i).getValue() for i in range(r.numDrivers())]
qmin,qmax = r.getJointLimits()
index = 0
period = 5
clock = 0.0
period_start = clock
swept = []
while index < r.numDrivers():
    t = clock
    u = (t - period_start)/period
    
    driver = r.driver(index)
    if driver.getType()=='affine':
        dmin=float('inf')
        dmax=-float('inf')
        s,c = driver.getAffineCoeffs()
        for l in driver.getAffectedLinks():
            if s > 0:
                dmin = min(dmin,(qmin[l]-c)/s)
                dmax = min(dmin,(qmax[l]-c)/s)
            elif s < 0:
                dmin = min(dmin,(qmax[l]-c)/s)
                dmax = min(dmin,(qmin[l]-c)/s)
    else:
        dmin=qmin[driver.getAffectedLink()]
        dmax=qmax[driver.getAffectedLink()]
        if dmax - dmin > math.pi*2:
            if d0[index] > math.pi:
                dmin = 0
                dmax = math.pi*2
            else:
                dmin = -math.pi
                dmax = math.pi
    uswitch1 = (dmax - d0[index])/(dmax-dmin)*0.5
    uswitch2 = uswitch1 + 0.5
    if u < uswitch1:
        driver.setValue(d0[index]+u/uswitch1*(dmax-d0[index]))
    elif u < uswitch2:
        driver.setValue(dmax+(u-uswitch1)/0.5*(dmin-dmax))
    elif u < 1:
        driver.setValue(dmin+(u-uswitch1-0.5)/(1-uswitch1-0.5)*(d0[index]-dmin))
    else:
        driver.setValue(d0[index])
    swept.append(driver.getValue())
    if u > 1:
        # (port) what the plot showed for this driver
        print("driver",index,driver.getName(),"limits",dmin,dmax,"swept",min(swept),max(swept),"back to",driver.getValue())
        swept = []
        index += 1
        period_start += period
    clock += 0.01
