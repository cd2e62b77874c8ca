# Port of Klamp't Python/testing/manyworldtest.py (https://github.com/krishauser/Klampt, commit
# 8c26ae27423e0d6f4f734c5ed52ea92fa48e1d36).
# Copyright (c) 2017, the Trustees of Duke University. All rights reserved.
# BSD 3-clause licence: see LICENSE.klampt in this directory.
# Changes: `klampt` -> `sim_node` in the imports; Python 2 print statements and xrange written
# for Python 3. Usage as the original: manyworldtest.py world_file N (the test gives it
# data/klampt_world.xml beside this file, a Klamp't XML world whose robot is a URDF file).
# Needs: WorldModel.readFile / saveFile (Klamp't .xml worlds).
import sys
import time
from sim_node import *


if __name__ == "__main__":
    print("manyworldtest.py: This example demonstrates loading of many worlds")
    if len(sys.argv)<=1:
        print("USAGE: manyworldtest.py world_file N")
        exit()

    N = int(sys.argv[2])

    w0 = WorldModel()
    w0.readFile(sys.argv[1])
    w0.saveFile("temp_world.xml")
    #this line takes all the geometries out of the cache
    #w0 = None

    t0 = time.time()
    for i in range(N):
        world = WorldModel()
        world.readFile(sys.argv[1])
    t1 = time.time()
    test1time = t1-t0

    w1 = WorldModel()
    w1.readFile("temp_world.xml")
    #this line takes all the geometries out of the cache
    #w1 = None
    t0 = time.time()
    for i in range(N):
        world = WorldModel()
        world.readFile("temp_world.xml")
    t1 = time.time()
    test2time = t1-t0
    print("Time to load",N,"worlds, raw:",test1time)
    print("Time to load",N,"worlds, after saving:",test2time)
