# Port of Klamp't Python/testing/settletest.py (https://github.com/krishauser/Klampt, commit
# dabbd481f5e9e37ccadd0f7f06c24cc96ffdca19).
# Copyright (c) 2017, the Trustees of Duke University. All rights reserved.
# BSD 3-clause licence: see LICENSE.klampt in this directory.
# Changes: `klampt` -> `sim_node` in the imports; Python 2 print statements and xrange written
# for Python 3; `from klampt import vis` dropped (unused); the world ../../data/tx90cups.xml
# (a .rob robot) is data/tx90cups.yaml beside this file (sim_node's arm, four objects above a
# table); the two raw_input("Press enter to continue") pauses removed (headless); each settled
# transform is printed after its timing line (the original only printed the timing).
# Needs: sim_node.sim.settle, sim_node.math (vectorops, so3).
import sys
import os
from sim_node import *
from sim_node.math import vectorops,so3
from sim_node.sim import settle
import time
import math
import random

def rand_rotation():
    q = [random.gauss(0,1),random.gauss(0,1),random.gauss(0,1),random.gauss(0,1)]
    q = vectorops.unit(q)
    return so3.from_quaternion(q)

if __name__ == "__main__":
    print("settletest.py: This example demonstrates how to run the settling process")
    
    #creates a world and loads all the items on the command line
    world = WorldModel()
    fn = os.path.join(os.path.dirname(os.path.abspath(__file__)),"data","tx90cups.yaml")
    res = world.readFile(fn)
    if not res:
        raise RuntimeError("Unable to load model "+fn)

    t0 = time.time()
    T = settle.settle(world,world.robot(0).link(7),forcedir=(0,0,-2),perturb=0.0,settletol=1e-3,debug=False)
    t1 = time.time()
    print("Settling robot link took time",t1-t0)
    print("  link",world.robot(0).link(7).getName(),"settled at R",so3.from_matrix(T[0][0]),"t",[float(x) for x in T[0][1]],"touching",sorted(world.getName(id) for id in T[1]))
    for i in range(world.numRigidObjects()):
        obj = world.rigidObject(i)
        obj.setTransform(rand_rotation(),obj.getTransform()[1])
    for i in range(world.numRigidObjects()):
        obj = world.rigidObject(i)
        t0 = time.time()
        T,touched = settle.settle(world,obj,perturb=0.0,orientationDamping=0,settletol=1e-3,debug=False)
        obj.setTransform(*T)
        t1 = time.time()
        print("Settling object",i,"took time",t1-t0)
        print("  object",obj.getName(),"settled at R",so3.from_matrix(T[0]),"t",[float(x) for x in T[1]],"touching",sorted(world.getName(id) for id in touched))
