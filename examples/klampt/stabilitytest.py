# Port of Klamp't Python/testing/stabilitytest.py (https://github.com/krishauser/Klampt, commit
# 8c26ae27423e0d6f4f734c5ed52ea92fa48e1d36).
# Copyright (c) 2017, the Trustees of Duke University. All rights reserved.
# BSD 3-clause licence: see LICENSE.klampt in this directory.
# Changes: `klampt` -> `sim_node` in the imports; Python 2 print statements written as print()
# calls; `from klampt import vis` dropped; the second half (a simulation of the ATHLETE robot of
# Klampt-examples' data/athlete_plane.xml shown in a vis window, printing the equilibrium torques
# of simContactMap / contactMapHolds each frame) dropped: athlete is a Klamp't .rob robot (no
# URDF exists) and simContactMap / contactMapHolds are not part of sim_node.
# Needs: sim_node.model.contact (ContactPoint, forceClosure, comEquilibrium, supportPolygon).
from sim_node import *
from sim_node.math import *
from sim_node.model.contact import *
import time

#these form a square + a downward facing point
fc_contacts = [ContactPoint([-1,-1,0],[0,0,1],0.5),
				ContactPoint([1,-1,0],[0,0,1],0.5),
				ContactPoint([1,1,0],[0,0,1],0.5),
				ContactPoint([-1,1,0],[0,0,1],0.5),
				ContactPoint([0,0,1],[0,0,-1],0.5)]

#these form a square
stable_contacts = [ContactPoint([-1,-1,0],[0,0,1],0.5),
				ContactPoint([1,-1,0],[0,0,1],0.5),
				ContactPoint([1,1,0],[0,0,1],0.5),
				ContactPoint([-1,1,0],[0,0,1],0.5)]

#these form two points pointing in strange directions
unstable_contacts = [ContactPoint([-1,-1,0],[0,1,0],0.5),
				ContactPoint([1,1,0],[1,0,0],0.5)]

print("Force closure (should be True)",forceClosure(fc_contacts))
print("Force closure (should be False)",forceClosure(stable_contacts))	
print("Stable COM (should be list of forces)",comEquilibrium(stable_contacts,[0,0,-1],(0,0,0)))
print("Stable COM (should be same list of forces)",comEquilibrium(stable_contacts,[0,0,-1],(0,0,10)))
print("Stable COM (should be None)",comEquilibrium(stable_contacts,[0,0,-1],(2,0,10)))
print("Any stable (should be True)",comEquilibrium(stable_contacts,[0,0,-1],None))
print("Any stable (should be False)",comEquilibrium(unstable_contacts,[0,0,-1],None))
print("Support polygon planes (should be a square)",supportPolygon(stable_contacts))
print("Support polygon planes (should be entire plane)",supportPolygon(fc_contacts))
print("Support polygon planes (should be invalid)",supportPolygon(unstable_contacts))

"""
h = Hold()
h.contacts = fc_contacts
vis.add("Hold",h)
vis.dialog()
vis.clear();
h.contacts = unstable_contacts
vis.add("Hold",h)
vis.dialog()
vis.clear();
"""
