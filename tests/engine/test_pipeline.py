"""The staged step (engine/pipeline) against the single-class engine it replaced, bit for bit,
and the per-stage profile's bookkeeping.

The reference (data/pipeline_reference.npz) was recorded by pipeline_cases.py from the engine
before the split (commit 46ea8a8's scene.pyx): same floating-point operations in the same order
must give the same bytes. The quadruped case was re-recorded when a free joint's step changed
to move its body's centre of mass on a straight line (pipeline/integration.pyx; its q moved by
8e-5 at most over the 500 steps); the other cases' bytes did not change."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import pipeline_cases as cases  # noqa: E402


@pytest.fixture(scope="module")
def reference():
    with np.load(cases.REFERENCE) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("case", cases.CASES)
def test_the_staged_step_reproduces_the_recorded_run_bit_for_bit(case, reference):
    run = cases.trace(case)
    expected = {k: v for k, v in reference.items() if k.startswith(case + "/")}
    assert sorted(run) == sorted(expected)
    for key, value in expected.items():
        assert run[key].dtype == value.dtype and run[key].shape == value.shape, key
        # bytes, not values: -0.0 vs 0.0 or a differently rounded last bit is a failure
        assert run[key].tobytes() == value.tobytes(), f"{key} differs"


STAGES = ("kinematics", "broadphase", "narrowphase", "clustering", "actuation", "dynamics",
          "constraints", "solve", "integration", "record", "feedback")


def test_profiling_times_every_stage_of_every_step_and_changes_nothing(tmp_path, reference):
    # the box pile with feedback on: every stage runs once per step; the profiled run's
    # states stay bit for bit the recorded ones
    scene, steps, _ = cases.build("box_pile", tmp_path)
    scene.set_profile(True)
    scene.reset_counters()
    scene.step(cases.DT, 100)
    assert scene.get_state() == reference["box_pile/state100"].tobytes()
    calls = scene.stage_calls()
    assert tuple(calls) == STAGES
    assert calls == {name: 100 for name in STAGES}
    profile = scene.stage_profile()
    assert tuple(profile) == STAGES and all(seconds > 0.0 for seconds in profile.values())
    # off again: nothing more is timed; reset_counters zeroes times, calls and work counters
    scene.set_profile(False)
    scene.step(cases.DT, 10)
    assert scene.stage_calls() == calls
    scene.reset_counters()
    assert set(scene.stage_calls().values()) == {0} and set(scene.stage_profile().values()) == {0.0}
    assert scene.count_shape_pairs == scene.count_contacts == scene.count_row_updates == 0


def test_the_feedback_stage_runs_only_when_feedback_is_asked_for(tmp_path):
    scene, _, _ = cases.build("quadruped", tmp_path)
    scene.set_profile(True)
    scene.step(cases.DT, 20)
    calls = scene.stage_calls()
    assert calls["feedback"] == 0 and calls["solve"] == 20
    scene.enable_feedback(0, 1, True)
    scene.step(cases.DT, 5)
    assert scene.stage_calls()["feedback"] == 5


def test_a_step_that_fails_is_retried_in_halves_and_profiles_each_attempt(tmp_path):
    # a 0.5 m/s-per-step rule: a box thrown at 600 m/s moves 0.6 m in a 1 ms step, so the
    # step fails at the velocity check and is retried as halves until 0.3 m, 0.15 m ... fit
    import sim_node
    from sim_node.model.scene import build_scene

    world = sim_node.WorldModel()
    (tmp_path / "w.yaml").write_text("""rigid_objects:
  - name: box
    geometry: {box: [0.1, 0.1, 0.1]}
    mass: 1.0
    pose: {position: [0, 0, 1]}
""")
    world.readFile(str(tmp_path / "w.yaml"))
    scene = build_scene(world).scene
    scene.free_state[0, 7] = 600.0
    scene.set_profile(True)
    status = scene.step(cases.DT)
    calls = scene.stage_calls()
    # 1 ms fails (0.6 m), 0.5 ms fits (0.3 m) twice: three attempts reach the solve, two pass
    assert status == 1 and scene.time == pytest.approx(cases.DT)
    assert calls["dynamics"] == 3 and calls["integration"] == 2 and calls["kinematics"] == 3
    assert scene.free_state[0, 0] == pytest.approx(600.0 * cases.DT)
