# Port of Klamp't Python/exercises/rotations/ex1.py (https://github.com/krishauser/Klampt,
# commit 5550a3992cb6eae3042785313956c7c707df6799).
# Copyright (c) 2017, the Trustees of Duke University. All rights reserved.
# BSD 3-clause licence: see LICENSE.klampt in this directory.
# Changes: `klampt` -> `sim_node` in the imports; `from klampt import vis` dropped and the
# __main__ block's vis window (pure display: it drew the frames and animated the interpolated
# one over a 3 s period of wall-clock time) replaced by printing the interpolated frame at
# u = 0, 1/6, ..., 1. Needs: sim_node.math (vectorops, so3, se3).
from sim_node.math import vectorops,so3,se3
import math
import time

def interpolate_linear(a,b,u):
    """Interpolates linearly in cartesian space between a and b."""
    return vectorops.madd(a,vectorops.sub(b,a),u)

def interpolate_euler_angles(ea,eb,u,convention='zyx'):
    """Interpolates between the two euler angles.
    TODO: The default implementation interpolates linearly.  Can you
    do better?
    """
    return interpolate_linear(ea,eb,u)

def euler_angle_to_rotation(ea,convention='zyx'):
    """Converts an euler angle representation to a rotation matrix.
    Can use arbitrary axes specified by the convention
    arguments (default is 'zyx', or roll-pitch-yaw euler angles).  Any
    3-letter combination of 'x', 'y', and 'z' are accepted.
    """
    axis_names_to_vectors = dict([('x',(1,0,0)),('y',(0,1,0)),('z',(0,0,1))])
    axis0,axis1,axis2=convention
    R0 = so3.rotation(axis_names_to_vectors[axis0],ea[0])
    R1 = so3.rotation(axis_names_to_vectors[axis1],ea[1])
    R2 = so3.rotation(axis_names_to_vectors[axis2],ea[2])
    return so3.mul(R0,so3.mul(R1,R2))

#TODO: play around with these euler angles
ea = (math.pi/4,0,0)
eb = (math.pi*7/4,0,0)
Ta = [euler_angle_to_rotation(ea),[-1,0,1]]
Tb = [euler_angle_to_rotation(eb),[1,0,1]]


def update_interpolation(u):
    #linear interpolation with euler angles
    e = interpolate_euler_angles(ea,eb,u)
    t = interpolate_linear(Ta[1],Tb[1],u)
    return (euler_angle_to_rotation(e),t)


if __name__ == "__main__":
    # (port) one period of the animation, printed instead of drawn
    for k in range(7):
        u = k/6.0
        T = update_interpolation(u)
        print("u",u,"R",list(T[0]),"t",list(T[1]))
