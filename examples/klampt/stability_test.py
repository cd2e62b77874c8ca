# Port of Klampt-examples Python3/testing/pytest/stability_test.py
# (https://github.com/krishauser/Klampt-examples, commit 724525693065dcd5244059b466d147e94a8eeba4).
# Klampt-examples carries no licence file of its own; it is the example collection of Klamp't,
# Copyright (c) 2017, the Trustees of Duke University, BSD 3-clause: see LICENSE.klampt here.
# Changes: `klampt` -> `sim_node` in the imports; `from klampt import vis` dropped (used only by
# vis_sim_contacts, dropped); test_sim_contacts and vis_sim_contacts (a simulation of the ATHLETE
# robot of Klampt-examples' data/athlete_plane.xml, a Klamp't .rob robot, through
# sim_contact_map / contact_map_holds, which sim_node does not have) dropped with their imports.
# Run with pytest. Needs: sim_node.model.contact (ContactPoint, force_closure, com_equilibrium,
# support_polygon), sim_node.set_friction_cone_approximation_edges.
from pytest import fixture
from sim_node import WorldModel, Simulator, set_friction_cone_approximation_edges
from sim_node.math import se3,so3,vectorops
from sim_node.model.contact import ContactPoint, force_closure, com_equilibrium, support_polygon, equilibrium_torques
import time

#these form a square + a downward facing point
@fixture
def fc_contacts():
	return [ContactPoint([-1,-1,0],[0,0,1],0.5),
					ContactPoint([1,-1,0],[0,0,1],0.5),
					ContactPoint([1,1,0],[0,0,1],0.5),
					ContactPoint([-1,1,0],[0,0,1],0.5),
					ContactPoint([0,0,1],[0,0,-1],0.5)]

#these form a square
@fixture
def stable_contacts():
	return [ContactPoint([-1,-1,0],[0,0,1],0.5),
					ContactPoint([1,-1,0],[0,0,1],0.5),
					ContactPoint([1,1,0],[0,0,1],0.5),
					ContactPoint([-1,1,0],[0,0,1],0.5)]

#these form two points pointing in strange directions
@fixture
def unstable_contacts():
	return [ContactPoint([-1,-1,0],[0,1,0],0.5),
						ContactPoint([1,1,0],[1,0,0],0.5)]


def test_force_closure(fc_contacts, stable_contacts, unstable_contacts):
	set_friction_cone_approximation_edges(4)
	assert force_closure(fc_contacts) == True,"force closure not detected in force closure contacts"
	assert force_closure(stable_contacts) == False,"force closure detected in stable contacts"
	assert force_closure(unstable_contacts) == False,"force closure detected in unstable contacts"

def test_com_equilibrium(fc_contacts, stable_contacts, unstable_contacts):
	forces = com_equilibrium(stable_contacts,[0,0,-1],(0,0,0))
	assert forces is not None
	assert len(forces) == len(stable_contacts)
	assert vectorops.distance(vectorops.add(*forces),[0,0,1]) < 1e-6
	forces2 = com_equilibrium(stable_contacts,[0,0,-1],(0,0,10))
	assert forces2 == forces2
	assert com_equilibrium(stable_contacts,[0,0,-1],(2,0,10)) == None, "Infeasible com equilibrium wasn't detected"
	assert com_equilibrium(stable_contacts,[0,0,-1],None) == True, "Any stable configuration wasn't detected"
	assert com_equilibrium(unstable_contacts,[0,0,-1],None) == False, "Unstable configuration wasn't detected"

def test_support_polygon(fc_contacts, stable_contacts, unstable_contacts):
	sp = support_polygon(stable_contacts)
	#keep only unique points
	nunique = 0
	for i in range(len(sp)):
		j = (i+1)%len(sp)  
		if vectorops.distance(sp[i],sp[j]) > 1e-7:
			nunique += 1
	assert nunique == 4,"Stable contacts didn't give a square"
	assert len(support_polygon(fc_contacts)) == 0,"Force closure contacts should have a support polygon that is the whole plane"
	sp = support_polygon(unstable_contacts)
	assert len(sp) == 1 and sp[0][0] == sp[0][1] == 0, "Unstable contacts should have a support polygon that is invalid"

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
