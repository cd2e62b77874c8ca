"""The engine's face (engine/api.pyx): the Scene delegates to its SceneModel and SceneData,
and `contact_arrays(out=)` refills a caller's arrays."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import pipeline_cases as cases  # noqa: E402

from sim_node.engine.scene_data import SceneData  # noqa: E402
from sim_node.engine.scene_model import SceneModel  # noqa: E402


def test_contact_arrays_refill_the_arrays_given_back_while_the_count_stays(tmp_path):
    scene, _, _ = cases.build("box_pile", tmp_path)
    scene.step(cases.DT, 300)                        # settled: the contact count holds
    first = scene.contact_arrays()
    arrays = {k: v for k, v in first.items()}
    scene.step(cases.DT)
    fresh = scene.contact_arrays()
    again = scene.contact_arrays(out=first)
    assert again is first and all(again[k] is arrays[k] for k in arrays)
    assert fresh.keys() == again.keys()
    for key in fresh:
        assert fresh[key].tobytes() == again[key].tobytes()
    # a different count: new arrays, the given ones untouched
    stale = {k: v[:-1].copy() for k, v in fresh.items()}
    other = scene.contact_arrays(out=stale)
    assert other is not stale and len(other["point"]) == scene.ncontact


def test_the_scene_is_a_model_and_a_data_it_delegates_to(tmp_path):
    scene, _, _ = cases.build("quadruped", tmp_path)
    assert isinstance(scene.model, SceneModel) and isinstance(scene.data, SceneData)
    assert scene.data.model is scene.model
    assert scene.robot_q is scene.data.robot_q and scene.free_state is scene.data.free_state
    scene.max_iterations = 7                         # settings live in the model
    assert scene.model.max_iterations == 7
    scene.set_gravity([0.0, 0.0, -1.0])
    assert np.array_equal(scene.get_gravity(), [0.0, 0.0, -1.0])
    t = scene.time
    scene.step(cases.DT)                             # state lives in the data
    assert scene.data.time == t + cases.DT
