"""Klamp't's math modules with its list conventions (vectorops, so2, so3, se3; spline and
geodesic for the trajectories).

A layer of its own at the bottom of the package (beside ``sim_node.resources``): it imports
nothing from sim_node, so the model layer may read Klamp't-style rotations through it.
"""
__all__ = ["vectorops", "so2", "so3", "se3"]
