"""SimLogger and SimLogPlayback (seed 000): a logged run of the default world played back
through a second Simulator reproduces the original run's states, and the contact log holds the
resting objects' weights."""
import csv

import numpy as np
import pytest

import sim_node
from sim_node.resources import data_path, default_world
from sim_node.sim.simlog import SimLogger, SimLogPlayback, state_columns

G = 9.81
STEPS, DT = 100, 0.01          # a 1 s run at the controller rate


def new_sim(path=None):
    world = sim_node.WorldModel()
    world.readFile(path or default_world())
    return world, sim_node.Simulator(world)


def object_states(sim, world):
    return [(*sim.body(world.rigidObject(i)).getObjectTransform(),
             *sim.body(world.rigidObject(i)).getVelocity()) for i in range(world.numRigidObjects())]


def world_states(world):
    """What updateWorld() wrote into the world: robot q and v, object transforms."""
    return ([(world.robot(r).getConfig(), world.robot(r).getVelocity())
             for r in range(world.numRobots())]
            + [world.rigidObject(i).getTransform() for i in range(world.numRigidObjects())])


@pytest.fixture(scope="module")
def logged_run(tmp_path_factory):
    """The default world simulated for 1 s, logged after every simulate(0.01) (and once at
    t = 0), with the original run's states recorded alongside."""
    folder = tmp_path_factory.mktemp("simlog")
    world, sim = new_sim()
    run = []
    with SimLogger(sim, folder / "state.csv", folder / "contact.csv") as log:
        for k in range(STEPS + 1):
            if k:
                sim.simulate(DT)
            log.saveStep()
            sim.updateWorld()
            run.append((sim.getTime(), [sim.getActualConfig(r) for r in range(world.numRobots())],
                        [sim.getActualVelocity(r) for r in range(world.numRobots())],
                        object_states(sim, world), world_states(world)))
    return folder, world, run


def test_playback_reproduces_every_logged_state_of_the_original_run(logged_run):
    folder, _, run = logged_run
    world, sim = new_sim()
    playback = SimLogPlayback(sim, folder / "state.csv")
    assert len(playback.times) == STEPS + 1
    for k, (time, q, v, objects, in_world) in enumerate(run):
        assert playback.updateSim() == k
        assert sim.getTime() == time                    # repr-formatted floats read back exactly
        for r in range(world.numRobots()):
            np.testing.assert_array_equal(sim.getActualConfig(r), q[r])
            np.testing.assert_array_equal(sim.getActualVelocity(r), v[r])
        for (R, t, w, v_com), (R0, t0, w0, v0) in zip(object_states(sim, world), objects):
            np.testing.assert_array_equal(t, t0)
            np.testing.assert_array_equal(w, w0)
            np.testing.assert_array_equal(v_com, v0)
            # the orientation goes matrix -> quaternion (log) -> matrix -> quaternion (engine
            # state) -> matrix: a few roundings of entries of size 1
            np.testing.assert_allclose(R, R0, rtol=0, atol=1e-14)
        # updateSim ends with updateWorld: the world shows what the original run's showed
        for (a, b), (a0, b0) in zip(world_states(world), in_world):
            np.testing.assert_allclose(a, a0, rtol=0, atol=1e-14)
            np.testing.assert_array_equal(b, b0)


def test_the_state_log_holds_the_original_values_under_their_column_names(logged_run):
    folder, world, run = logged_run
    with open(folder / "state.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, last = rows[0], [float(x) for x in rows[-1]]
    assert header == state_columns(world)
    assert len(rows) == STEPS + 2
    col = {name: k for k, name in enumerate(header)}
    time, q, v, objects, _ = run[-1]
    assert last[col["time"]] == time
    assert last[col["arm_q[joint4]"]] == q[0][3]
    assert [last[col[f"mobile_base_q[base_{c}]"]] for c in ("pz", "qw")] == [q[1][2], q[1][6]]
    assert last[col["mobile_base_dq[right_wheel_joint]"]] == v[1][7]
    assert last[col["red_box_z"]] == objects[0][1][2]
    # the arm's PID holds its initial configuration: commanded = world-file initial config
    assert last[col["arm_qcmd[joint2]"]] == 0.5
    assert last[col["arm_dqcmd[joint2]"]] == 0.0


def test_updatesim_picks_rows_by_time_by_index_and_in_sequence(logged_run):
    folder, _, run = logged_run
    _, sim = new_sim()
    playback = SimLogPlayback(sim, folder / "state.csv")
    assert playback.updateSim(time=0.505) == 50
    assert sim.getTime() == run[50][0]
    assert playback.updateSim() == 51
    assert playback.updateSim(timestep=7) == 7
    assert playback.updateSim(timestep=10 * STEPS) == STEPS
    assert playback.updateSim() == STEPS                # stays at the last row
    assert playback.updateSim(time=0.0) == 0


def test_the_contact_log_holds_each_resting_objects_weight_on_the_table(logged_run):
    folder, world, _ = logged_run
    _, sim = new_sim()
    playback = SimLogPlayback(sim, folder / "state.csv", folder / "contact.csv")
    playback.updateSim(timestep=STEPS)
    records = {(c.name1, c.name2): c for c in playback.contacts()}
    table = world.terrain("table").getID()
    expected_contacts = {"red_box": 4, "blue_ball": 1, "yellow_capsule": 2}
    for i in range(world.numRigidObjects()):
        obj = world.rigidObject(i)
        c = records[("table", obj.getName())]
        assert (c.id1, c.id2) == (table, obj.getID())
        weight = obj.getMass().getMass() * G
        # on the table (id1), from the object resting on it: its weight, downwards
        np.testing.assert_allclose(c.mean_force, [0, 0, -weight], rtol=0, atol=1e-3 * weight)
        np.testing.assert_allclose(c.force, [0, 0, -weight], rtol=0, atol=1e-3 * weight)
        assert c.in_contact and not c.had_penetration
        if obj.getName() in expected_contacts:
            assert c.num_contacts == expected_contacts[obj.getName()]
    assert ("ground", "mobile_base/left_wheel") in records
    with open(folder / "contact.csv", newline="") as f:
        assert next(csv.reader(f))[:6] == ["time", "id1", "id2", "name1", "name2",
                                          "num_contacts"]


def test_a_colliding_list_logs_and_enables_only_its_pairs(tmp_path):
    world, sim = new_sim()
    with SimLogger(sim, None, tmp_path / "contact.csv", colliding=["red_box", "table"]) as log:
        for _ in range(20):
            sim.simulate(DT)
            log.saveStep()
    with open(tmp_path / "contact.csv", newline="") as f:
        pairs = {(row[3], row[4]) for row in list(csv.reader(f))[1:]}
    assert pairs == {("table", "red_box")}
    with pytest.raises(RuntimeError, match="not enabled"):
        sim.inContact(world.rigidObject("blue_ball").getID(), world.terrain("table").getID())
    with pytest.raises(ValueError, match="unknown entity 'tabel'"):
        SimLogger(sim, None, tmp_path / "c2.csv", colliding=["tabel"])


def test_extra_columns_and_a_log_without_header(tmp_path):
    world, sim = new_sim(data_path("worlds", "pendulum.yaml"))
    with SimLogger(sim, tmp_path / "with.csv") as log, \
            SimLogger(sim, tmp_path / "without.csv", saveheader=False) as bare:
        for k in range(3):
            sim.simulate(DT)
            log.saveStep(extra=(k, 2.5 * k))
            bare.saveStep(extra=(k, 2.5 * k))
        with pytest.raises(ValueError, match="1 extra values, the log has 2"):
            log.saveStep(extra=(1.0,))
    _, sim2 = new_sim(data_path("worlds", "pendulum.yaml"))
    for name in ("with.csv", "without.csv"):
        playback = SimLogPlayback(sim2, tmp_path / name)
        assert playback.extra_names == ["extra[0]", "extra[1]"]
        np.testing.assert_array_equal(playback.extra, [[0, 0], [1, 2.5], [2, 5]])
        playback.updateSim(timestep=2)
        np.testing.assert_array_equal(sim2.getActualConfig(0), sim.getActualConfig(0))


def test_playing_a_log_of_another_world_raises(tmp_path):
    _, sim = new_sim(data_path("worlds", "pendulum.yaml"))
    with SimLogger(sim, tmp_path / "state.csv") as log:
        log.saveStep()
    _, other = new_sim()
    with pytest.raises(ValueError, match=r"column 1 is 'pendulum_q\[joint1\]', expected "
                                         r"'arm_q\[joint1\]'"):
        SimLogPlayback(other, tmp_path / "state.csv")


def test_a_robot_with_multi_dof_joints_logs_a_column_per_coordinate_and_plays_back(tmp_path):
    urdf = """<robot name="mixed"><link name="world"/>
  <link name="a"><inertial><origin xyz="0.1 0 -0.2"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0.1 -0.1"/><mass value="0.7"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ball" type="spherical"><parent link="world"/><child link="a"/><origin xyz="0 0 2"/></joint>
  <joint name="hinge" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 -0.3"/>
    <axis xyz="1 0 0"/><limit lower="-2" upper="2" effort="20" velocity="2"/></joint>
</robot>"""
    world = sim_node.WorldModel()
    robot = world.loadRobot(urdf)
    robot.setVelocity([0.5, -0.3, 0.2, 1.0])
    sim = sim_node.Simulator(world)
    sim.controller(0).setTorqueCommand(np.zeros(4))
    states = []
    with SimLogger(sim, tmp_path / "state.csv") as log:
        for _ in range(20):
            sim.simulate(DT)
            log.saveStep()
            states.append((sim.getActualConfig(0), sim.getActualVelocity(0)))
    header = state_columns(world)
    assert header[1:6] == [f"mixed_q[ball.{c}]" for c in ("qx", "qy", "qz", "qw")] + ["mixed_q[hinge]"]
    assert header[6:10] == [f"mixed_dq[ball.{c}]" for c in ("wx", "wy", "wz")] + ["mixed_dq[hinge]"]
    assert header[10:15] == [f"mixed_qcmd[ball.{c}]" for c in ("qx", "qy", "qz", "qw")] + ["mixed_qcmd[hinge]"]
    assert header[15:19] == [f"mixed_dqcmd[ball.{c}]" for c in ("wx", "wy", "wz")] + ["mixed_dqcmd[hinge]"]
    assert len(header) == 1 + 5 + 4 + 5 + 4 + 4
    world2 = sim_node.WorldModel()
    world2.loadRobot(urdf)
    sim2 = sim_node.Simulator(world2)
    playback = SimLogPlayback(sim2, tmp_path / "state.csv")
    for k, (q, v) in enumerate(states):
        assert playback.updateSim(timestep=k) == k
        np.testing.assert_array_equal(sim2.getActualConfig(0), q)
        np.testing.assert_array_equal(sim2.getActualVelocity(0), v)
