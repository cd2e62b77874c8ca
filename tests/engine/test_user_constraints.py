"""The engine's user constraint rows (pipeline/user_constraints.pyx, Scene.set_constraints):
internal forces conserve momentum, a kinematic side drags a body along, the warm starts are
state, and set_constraints checks its specs whole."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim_node
from sim_node.engine.api import ConstraintKind
from sim_node.model.scene import build_scene

DT = 1e-3


def two_boxes(tmp_path, gravity=(0, 0, 0)):
    """Two free boxes (1 kg and 3 kg) 0.5 m apart, no terrain, in `gravity`."""
    path = tmp_path / "boxes.yaml"
    path.write_text(f"""simulation: {{gravity: {list(gravity)}}}
rigid_objects:
  - name: a
    geometry: {{box: [0.1, 0.2, 0.1]}}
    mass: 1.0
    pose: {{position: [0, 0, 1]}}
  - name: b
    geometry: {{box: [0.3, 0.1, 0.1]}}
    mass: 3.0
    pose: {{position: [0.5, 0, 1]}}
""")
    world = sim_node.WorldModel()
    world.readFile(path)
    return build_scene(world).scene


def momentum(scene):
    """Total linear and angular momentum (about the origin) of the free bodies."""
    masses = np.array([1.0, 3.0])
    linear = angular = 0.0
    for i in range(2):
        s = scene.free_state[i]
        R = _rotation(s[3:7])
        inertia = [np.diag([0.2 ** 2 + 0.1 ** 2, 0.1 ** 2 + 0.1 ** 2, 0.1 ** 2 + 0.2 ** 2]) / 12,
                   3 * np.diag([0.1 ** 2 + 0.1 ** 2, 0.3 ** 2 + 0.1 ** 2, 0.3 ** 2 + 0.1 ** 2]) / 12][i]
        p = masses[i] * s[7:10]
        linear = linear + p
        angular = angular + np.cross(s[0:3], p) + R @ inertia @ R.T @ s[10:13]
    return linear, angular


def _rotation(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


@pytest.mark.parametrize("kind", list(ConstraintKind.__members__)[:2] + ["PRISMATIC"])
def test_a_constraint_between_two_free_bodies_conserves_momentum(tmp_path, kind):
    # internal forces only: total linear momentum stays exactly (equal and opposite
    # impulses); the angular one to 2e-4 of its size: the free bodies' integrator does not keep it
    # exactly, and each side's impulse acts at its own frame point, apart by the position error
    scene = two_boxes(tmp_path)
    scene.set_constraints([dict(kind=ConstraintKind[kind], body_a=0, body_b=1,
                                p_a=[0.25, 0, 0], p_b=[-0.25, 0, 0], axis=[1, 0, 0])])
    scene.free_state[0, 7:13] = [0.3, -0.2, 0.5, 1.0, 2.0, -0.5]
    scene.free_state[1, 7:13] = [-0.1, 0.4, 0.0, 0.0, -1.0, 3.0]
    before = momentum(scene)
    scene.step(DT, 500)
    after = momentum(scene)
    np.testing.assert_allclose(after[0], before[0], atol=1e-9)
    assert np.linalg.norm(after[1] - before[1]) < 2e-4 * np.linalg.norm(before[1])
    assert np.abs(scene.constraint_impulses()).max() > 0


def test_a_kinematic_side_drags_the_other_body_along_at_its_velocity(tmp_path):
    scene = two_boxes(tmp_path, gravity=(0, 0, -9.81))
    scene.set_free_body_kinematic(1, True)
    scene.free_state[1, 7:10] = [0.2, 0.0, 0.1]
    scene.set_constraints([dict(kind=ConstraintKind.FIXED, body_a=0, body_b=1,
                                p_a=[0.25, 0, 0], p_b=[-0.25, 0, 0])])
    scene.step(DT, 1000)
    np.testing.assert_allclose(scene.free_state[0, 0:3], [0.2, 0, 1.1], atol=1e-4)
    np.testing.assert_allclose(scene.free_state[0, 7:10], [0.2, 0, 0.1], atol=1e-4)


def test_the_impulses_are_state_and_a_scene_without_constraints_keeps_its_layout(tmp_path):
    scene = two_boxes(tmp_path, gravity=(0, 0, -9.81))
    plain = len(scene.get_state())
    scene.set_constraints([dict(kind=ConstraintKind.POINT2POINT, body_a=0, body_b=-1,
                                p_a=[0, 0, 0.1], p_b=[0, 0, 1.1], max_force=100.0)])
    assert len(scene.get_state()) == plain + 8 * 6
    scene.step(DT, 10)
    lam = scene.constraint_impulses()
    assert lam.shape == (1, 6)
    # holding 1 kg: the z row's impulse is m g dt, the unused rows 0
    assert lam[0, 2] == pytest.approx(9.81 * DT, rel=1e-3)
    assert np.all(lam[0, 3:] == 0)
    state = scene.get_state()
    scene.set_constraints([dict(kind=ConstraintKind.POINT2POINT, body_a=0, body_b=-1,
                                p_a=[0, 0, 0.1], p_b=[0, 0, 1.1], max_force=100.0)])
    assert np.all(scene.constraint_impulses() == 0)
    scene.set_state(state)
    np.testing.assert_array_equal(scene.constraint_impulses(), lam)
    scene.set_constraints([])
    assert len(scene.get_state()) == plain


def test_a_constraint_without_force_makes_no_rows_and_keeps_no_impulse(tmp_path):
    scene = two_boxes(tmp_path, gravity=(0, 0, -9.81))
    scene.set_constraints([dict(kind=ConstraintKind.FIXED, body_a=0, body_b=-1,
                                p_b=[0, 0, 1], max_force=0.0)])
    scene.step(DT, 100)
    assert scene.free_state[0, 2] == pytest.approx(1 - 0.5 * 9.81 * 0.1 ** 2, abs=1e-3)
    assert np.all(scene.constraint_impulses() == 0)


bad_number = st.sampled_from([float("nan"), float("inf"), -float("inf"), -1.0, 2.0])
fields = st.sampled_from(["kind", "body_a", "body_b", "R_a", "p_a", "p_b", "axis", "max_force",
                          "erp", "ratio", "dof_a", "lam", "same"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=fields, value=bad_number, kind=st.sampled_from(list(ConstraintKind)))
def test_set_constraints_refuses_bad_specs_whole(tmp_path, field, value, kind):
    scene = two_boxes(tmp_path)
    good = dict(kind=ConstraintKind.FIXED, body_a=0, body_b=-1)
    scene.set_constraints([good])
    spec = dict(kind=kind, body_a=0, body_b=1)
    if field == "kind":
        spec["kind"] = 17
    elif field in ("body_a", "body_b"):
        spec[field] = 9 if value > 0 else -5
    elif field == "R_a":
        spec["R_a"] = np.eye(3) * value
    elif field in ("p_a", "p_b"):
        spec[field] = [0, value, 0] if not np.isfinite(value) else [0, 0]
    elif field == "axis":
        spec["axis"] = [0, 0, 0] if np.isfinite(value) else [value, 0, 0]
    elif field == "max_force":
        spec["max_force"] = value if not value > 0 else float("nan")
    elif field == "erp":
        spec["erp"] = value if not 0 <= value <= 1 else 1.5
    elif field == "ratio":
        spec["ratio"] = value if not np.isfinite(value) else float("nan")
    elif field == "dof_a":
        spec["kind"] = ConstraintKind.GEAR     # free bodies have no joint DOFs
    elif field == "lam":
        spec["lam"] = [value] * 5
    else:
        spec["body_b"] = 0
    with pytest.raises(ValueError, match="constraint 1"):
        scene.set_constraints([good, spec])
    assert scene.nconstraint == 1
