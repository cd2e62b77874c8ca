"""Collision filtering (adjacent links, opt-in self-collision, pairs, group/mask) and the contact
feedback recorded per body pair (touched, penetrated, separated, forces)."""
import numpy as np
import pytest
from scene_helpers import DT, ground

import sim_node
from sim_node.model.scene import build_scene

# A fixed-base chain whose geometry overlaps everywhere: base (welded to the world) - l1 - l2.
# l1 and l2 are each adjacent to their parent; l2 and the base are not adjacent.
CHAIN = """<robot name="chain">
  <link name="world"/>
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="l2"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 -0.06"/><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <joint name="weld" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 0.5"/></joint>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.06"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.06"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def chain_scene(tmp_path, self_collision):
    (tmp_path / "chain.urdf").write_text(CHAIN)
    (tmp_path / "w.yaml").write_text(f"""robots:
  - name: chain
    urdf: chain.urdf
    self_collision: {str(self_collision).lower()}
""")
    world = sim_node.WorldModel()
    world.readFile(tmp_path / "w.yaml")
    layout = build_scene(world)
    layout.scene.step(DT)
    robot = world.robot(0)
    pairs = {(layout.id_of_body[a], layout.id_of_body[b])
             for a, b in zip(*[layout.scene.pair_arrays()[k] for k in ("body_a", "body_b")])}
    names = {frozenset(world.getName(i).split("/")[-1] for i in pair) for pair in pairs}
    return names, robot


def test_adjacent_links_never_collide_and_self_collision_is_opt_in(tmp_path):
    names, _ = chain_scene(tmp_path, self_collision=False)
    assert names == set()
    names, _ = chain_scene(tmp_path, self_collision=True)
    # l2 overlaps the base (not adjacent): reported; base-l1 and l1-l2 are adjacent: never
    assert names == {frozenset({"base", "l2"})}


STACK = ground() + """rigid_objects:
  - name: lower
    geometry: {box: [0.1, 0.1, 0.1]}
    mass: 0.5
    pose: {position: [0, 0, 0.0505]}
  - name: upper
    geometry: {box: [0.1, 0.1, 0.1]}
    mass: 0.5
    pose: {position: [0, 0, 0.151]}
"""


def test_disabling_a_pair_lets_the_upper_box_fall_through_the_lower(make_scene):
    world, _, scene = make_scene(STACK)
    scene.set_pair_enabled(world.rigidObject("lower").getID(), world.rigidObject("upper").getID(), False)
    assert scene.disabled_pairs() == [(world.rigidObject("lower").getID(), world.rigidObject("upper").getID())]
    scene.step(DT, 1000)
    assert abs(scene.free_state[1, 2] - 0.0505) < 1e-3      # resting on the ground, inside 'lower'
    scene.set_pair_enabled(world.rigidObject("upper").getID(), world.rigidObject("lower").getID(), True)
    assert scene.disabled_pairs() == []


def test_group_and_mask_filter_like_pybullet(make_scene):
    world, layout, scene = make_scene(STACK)
    upper = layout.body_of_id[world.rigidObject("upper").getID()]
    ground_body = layout.body_of_id[world.terrain("ground").getID()]
    # (group_a & mask_b) and (group_b & mask_a): upper in group 2 masks out group 1 (everyone else)
    scene.set_collision_filter(upper, 2, 0xFFFFFFFF & ~1)
    scene.step(DT, 1000)
    assert scene.free_state[1, 2] < 0.0                       # fell through both
    assert scene.free_state[0, 2] == pytest.approx(0.0505, abs=1e-4)
    scene.set_collision_filter(ground_body, 1 | 2, 0xFFFFFFFF)  # the ground now meets group 2
    scene.free_state[1, :3] = [0.5, 0.0, 0.3]
    scene.free_state[1, 7:] = 0.0
    scene.step(DT, 1000)
    assert scene.free_state[1, 2] == pytest.approx(0.0505, abs=1e-4)


def test_a_pair_override_beats_group_and_mask_and_clears_back_to_them(make_scene):
    # upper masks out group 1 (lower, the ground): with the pair (lower, upper) enabled by
    # override it rests on lower (centre 0.151: 0.0505 + 0.1 + the rest gap); cleared (None),
    # the masks rule again and it falls through both
    world, layout, scene = make_scene(STACK)
    lower, upper = world.rigidObject("lower").getID(), world.rigidObject("upper").getID()
    scene.set_collision_filter(layout.body_of_id[upper], 2, 0xFFFFFFFF & ~1)
    scene.set_pair_enabled(upper, lower, True)
    assert scene.enabled_pairs() == [(lower, upper)] and scene.disabled_pairs() == []
    scene.step(DT, 1000)
    assert scene.free_state[1, 2] == pytest.approx(0.151, abs=1e-3)
    scene.set_pair_enabled(lower, upper, None)
    assert scene.enabled_pairs() == [] and scene.disabled_pairs() == []
    scene.step(DT, 1000)
    assert scene.free_state[1, 2] < 0.0
    with pytest.raises(TypeError, match="enabled must be True, False or None"):
        scene.set_pair_enabled(lower, upper, 1)


def test_feedback_flags_touch_separation_and_penetration_of_a_bouncing_ball(make_scene):
    world, layout, scene = make_scene(ground(restitution=0.8) + """rigid_objects:
  - name: ball
    geometry: {sphere: 0.05}
    mass: 1.0
    pose: {position: [0, 0, 0.3]}
    surface: {kRestitution: 0.8}
""")
    ball = layout.body_of_id[world.rigidObject("ball").getID()]
    touched, separated = [], []
    for k in range(600):
        scene.step(DT)
        pairs = scene.pair_arrays()
        touched.append(bool(np.any(pairs["touched"])))
        if (ball, layout.body_of_id[world.terrain("ground").getID()]) in scene.separated_pairs():
            separated.append(k)
        if np.any(pairs["touched"]):
            # the normal force points up on the ball, from the ground
            assert pairs["impulse"][0][2] >= 0.0
            assert not np.any(pairs["penetrated"])
    starts = [k for k in range(1, len(touched)) if touched[k] and not touched[k - 1]]
    assert len(starts) >= 2                                   # two bounces in 0.6 s
    assert [s for s in separated] and all(touched[s - 1] and not touched[s] for s in separated)
    # starting overlapped: penetration is flagged
    scene.free_state[0, :3] = [0, 0, 0.04]
    scene.free_state[0, 7:] = 0.0
    scene.step(DT)
    assert np.any(scene.pair_arrays()["penetrated"])


def test_contact_forces_balance_the_weight_of_a_resting_box(make_scene):
    _, _, scene = make_scene(STACK)
    scene.step(DT, 500)
    pairs = scene.pair_arrays()
    total = pairs["impulse"].sum(axis=0) / DT
    # ground carries both boxes; the box-box pair carries the upper one (either orientation)
    forces = sorted(abs(f[2]) for f in pairs["impulse"] / DT)
    assert forces == pytest.approx([0.5 * 9.81, 1.0 * 9.81], rel=1e-3)
