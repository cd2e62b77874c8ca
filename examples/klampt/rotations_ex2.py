# Port of Klamp't Python/exercises/rotations/ex2.py (https://github.com/krishauser/Klampt,
# commit 4a85fdb96b3c5ef128374aae969fc3ec8b789371).
# Copyright (c) 2017, the Trustees of Duke University. All rights reserved.
# BSD 3-clause licence: see LICENSE.klampt in this directory.
# Changes: `klampt` -> `sim_node` in the imports; Python 2 print statements written as print()
# calls; `from klampt import vis` dropped and the __main__ block's vis window (pure display: it
# drew the frames and animated the interpolated one over a 3 s period of wall-clock time)
# replaced by printing the interpolated transform at u = 0, 1/6, ..., 1.
# Needs: sim_node.math (vectorops, so3, se3).
from sim_node.math import vectorops,so3,se3
import math
import time

def interpolate_linear(a,b,u):
    """Interpolates linearly in cartesian space between a and b."""
    return vectorops.madd(a,vectorops.sub(b,a),u)

def interpolate_rotation(R1,R2,u):
    """Interpolate linearly between the two rotations R1 and R2.
    TODO: the current implementation doesn't work properly.  Why? """
    m1 = so3.moment(R1)
    m2 = so3.moment(R2)
    mu = interpolate_linear(m1,m2,u)
    angle = vectorops.norm(mu)
    axis = vectorops.div(mu,angle)
    return so3.rotation(axis,angle)

def interpolate_transform(T1,T2,u):
    """Interpolate linearly between the two transformations T1 and T2."""
    return (interpolate_rotation(T1[0],T2[0],u),interpolate_linear(T1[1],T2[1],u))


Ra = so3.rotation((0,1,0),math.pi*-0.9)
Rb = so3.rotation((0,1,0),math.pi*0.9)
print("Angle between")
print(so3.matrix(Ra))
print("and")
print(so3.matrix(Rb))
print("is",so3.distance(Ra,Rb))
Ta = [Ra,[-1,0,1]]
Tb = [Rb,[1,0,1]]


if __name__ == "__main__":
    # (port) one period of the animation, printed instead of drawn; u = 1/2 is left out: there
    # the interpolated moment is zero and the exercise's interpolate_rotation divides by zero
    for k in (0,1,2,4,5,6):
        u = k/6.0
        T = interpolate_transform(Ta,Tb,u)
        print("u",u,"R",list(T[0]),"t",list(T[1]))
