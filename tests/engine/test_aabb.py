"""queries/aabb.pyx: the bodies' world bounding boxes against closed-form geometry."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sim_node

REPO = Path(__file__).resolve().parents[2]


def _pile():
    world = sim_node.WorldModel()
    world.readFile(str(REPO / "data" / "worlds" / "box_pile.yaml"))
    return world, sim_node.Simulator(world)


def _box_aabb(R, t, half):
    # a box centred at t with axes R: half-widths along the world axes sum |R_kj| h_j
    reach = np.abs(R) @ half
    return np.stack([t - reach, t + reach])


def test_a_tumbling_box_s_aabb_is_its_rotated_extent():
    world, sim = _pile()
    sim.simulate(0.15)                 # mid-fall and first impacts: boxes turned every way
    boxes = sim.engine.body_aabbs()
    half = np.full(3, 0.05)
    for i in range(world.numRigidObjects()):
        obj = world.rigidObject(i)
        R, t = sim.body(obj).getTransform()
        b = sim.layout.body_of_id[obj.getID()]
        np.testing.assert_allclose(boxes[b], _box_aabb(np.asarray(R), np.asarray(t), half),
                                   atol=1e-12)
    ground = sim.layout.body_of_id[world.terrain(0).getID()]
    # the ground plane z = 0 bounds the half-space below it
    np.testing.assert_array_equal(boxes[ground], [[-np.inf] * 3, [np.inf, np.inf, 0.0]])


def test_out_is_filled_in_place_and_a_wrong_out_is_refused():
    world, sim = _pile()
    n = sim.engine.model.nbody
    out = np.zeros((n, 2, 3))
    assert sim.engine.body_aabbs(out=out) is out
    np.testing.assert_array_equal(out, sim.engine.body_aabbs())
    for bad in (np.zeros((n, 3, 2)), np.zeros((n, 2, 3), np.float32),
                np.zeros((n, 3, 2)).transpose(0, 2, 1), [[0.0] * 3] * 2):
        with pytest.raises(ValueError, match=r"out must be a C-contiguous float64 array"):
            sim.engine.body_aabbs(out=bad)


def test_the_query_changes_no_bit_of_the_run():
    # a query reads; a run queried every step ends bit for bit like one never queried
    _, quiet = _pile()
    _, asked = _pile()
    for _ in range(50):
        quiet.simulate(0.002)
        asked.simulate(0.002)
        asked.engine.body_aabbs()
    assert quiet.getState() == asked.getState()
