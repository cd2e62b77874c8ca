# Port of Klampt-examples Python3/testing/io/worldiotest.py
# (https://github.com/krishauser/Klampt-examples, commit 0c1d75460649dab57d681e16035776dc20223e9a).
# Klampt-examples carries no licence file of its own; it is the example collection of Klamp't,
# Copyright (c) 2017, the Trustees of Duke University, BSD 3-clause: see LICENSE.klampt here.
# Changes: `klampt` -> `sim_node` in the imports; WORLD_FN is data/klampt_world.xml beside this
# file (a Klamp't XML world with a URDF robot) instead of Klampt-examples'
# ../../../data/baxter_apc.xml (its robot is a .rob file). Like the original, it saves into
# SAVE_DIR = 'worldio_tmp' under the current directory, which must exist.
# Needs: WorldModel.readFile / saveFile (Klamp't .xml worlds).
from pytest import fixture
import os
import time
from sim_node import *

WORLD_FN = os.path.join(os.path.dirname(os.path.abspath(__file__)),"data","klampt_world.xml")
SAVE_DIR = 'worldio_tmp'
N = 100

def test_save_world():
    w0 = WorldModel()
    assert w0.readFile(WORLD_FN)
    w0.saveFile(os.path.join(SAVE_DIR,"temp_world.xml"))
    w1 = WorldModel()
    assert w1.readFile(os.path.join(SAVE_DIR,"temp_world.xml")),"Could not load previously saved world XML file"

def test_many_world():
    w0 = WorldModel()
    assert w0.readFile(WORLD_FN)
    w0.saveFile(os.path.join(SAVE_DIR,"temp_world.xml"))
    #this line takes all the geometries out of the cache
    #w0 = None

    t0 = time.time()
    for i in range(N):
        world = WorldModel()
        world.readFile(WORLD_FN)
    t1 = time.time()
    test1time = t1-t0

    w1 = WorldModel()
    assert w1.readFile(os.path.join(SAVE_DIR,"temp_world.xml")),"Could not load previously saved world XML file"
    #this line takes all the geometries out of the cache
    #w1 = None
    t0 = time.time()
    for i in range(N):
        world = WorldModel()
        assert world.readFile(os.path.join(SAVE_DIR,"temp_world.xml")),"Could not load previously saved world XML file"
    t1 = time.time()
    test2time = t1-t0
    print("Time to load",N,"worlds, raw:",test1time)
    print("Time to load",N,"worlds, after saving:",test2time)

if __name__ == '__main__':
    test_save_world()
