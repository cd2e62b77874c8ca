"""Klamp't XML worlds: the same file loaded by Klamp't 0.10.1 (in a subprocess) and by us gives
the same link, object and terrain placements; our saved .xml loads in Klamp't likewise; worlds
Klamp't saves in its own formats are refused by name; YAML and XML round trips; hostile files
fail with a WorldFileError and leave the world unchanged."""
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import sim_node
from sim_node.model.errors import ModelLoadError, WorldFileError
from klampt_reference import run_klampt

KLAMPT_STATE = """
w = WorldModel()
assert w.loadFile(WORLD)
out = {"robots": {}, "objects": {}, "terrains": {}}
for i in range(w.numRobots()):
    r = w.robot(i)
    out["robots"][r.getName()] = {r.link(k).getName(): [list(x) for x in r.link(k).getTransform()]
                                  for k in range(r.numLinks())}
for i in range(w.numRigidObjects()):
    o = w.rigidObject(i)
    m = o.getMass()
    out["objects"][o.getName()] = [list(o.getTransform()[0]), list(o.getTransform()[1]),
                                   m.getMass(), list(m.getCom()), list(o.geometry().getBBTight()[0]),
                                   list(o.geometry().getBBTight()[1])]
for i in range(w.numTerrains()):
    t = w.terrain(i)
    bb = t.geometry().getBBTight()
    out["terrains"][t.getName()] = [list(bb[0]), list(bb[1])]
emit(out)
"""


def _data(*parts):
    pybullet_data = pytest.importorskip("pybullet_data")
    return os.path.join(pybullet_data.getDataPath(), *parts)


def _world_xml(tmp_path):
    text = f"""<?xml version="1.0"?>
<world>
  <display background="0 0 1 1"/>
  <robot name="arm" file="{_data('kuka_iiwa', 'model.urdf')}" translation="1 2 3"
         rotateRPY="0.1 0.2 0.3" config="13 0 0 0 0 0 0 0.5 0.1 0 -0.4 0 0 0.2"/>
  <robot name="panda" file="{_data('franka_panda', 'panda.urdf')}" rotateZ="0.4"/>
  <rigidObject name="link" position="0.5 0 1" rotateZ="0.5">
    <geometry mesh="{_data('kuka_iiwa', 'meshes', 'link_2.stl')}" scale="2"/>
    <physics mass="3" automass="1"/>
  </rigidObject>
  <terrain name="floor" file="{_data('kuka_iiwa', 'meshes', 'link_0.stl')}"
           translation="0 0 -1" rotateX="0.1" scale="3 3 0.5" kFriction="0.7"/>
</world>
"""
    path = tmp_path / "world.xml"
    path.write_text(text)
    return path


def _ours_state(world):
    out = {"robots": {}, "objects": {}, "terrains": {}}
    for i in range(world.numRobots()):
        r = world.robot(i)
        out["robots"][r.getName()] = {l.getName(): l.getTransform() for l in r.links()}
    for i in range(world.numRigidObjects()):
        o = world.rigidObject(i)
        lo, hi = o.geometry().getBB()
        out["objects"][o.getName()] = [*o.getTransform(), o.getMass().getMass(),
                                       o.getMass().getCom(), lo, hi]
    for i in range(world.numTerrains()):
        t = world.terrain(i)
        out["terrains"][t.getName()] = list(t.geometry().getBB())
    return out


def _compare(ours, theirs, atol=1e-9):
    assert set(ours["robots"]) == set(theirs["robots"])
    for name, links in ours["robots"].items():
        for link, (R, t) in links.items():
            R_k, t_k = theirs["robots"][name][link]
            np.testing.assert_allclose(R, np.reshape(R_k, (3, 3)).T, atol=atol, err_msg=link)
            np.testing.assert_allclose(t, t_k, atol=atol, err_msg=link)
    assert set(ours["objects"]) == set(theirs["objects"])
    for name, (R, t, m, com, lo, hi) in ours["objects"].items():
        R_k, t_k, m_k, com_k, lo_k, hi_k = theirs["objects"][name]
        np.testing.assert_allclose(R, np.reshape(R_k, (3, 3)).T, atol=1e-9)
        np.testing.assert_allclose(t, t_k, atol=1e-9)
        assert m == pytest.approx(m_k)
        np.testing.assert_allclose(lo, lo_k, atol=1e-5)
        np.testing.assert_allclose(hi, hi_k, atol=1e-5)
    assert set(ours["terrains"]) == set(theirs["terrains"])
    for name, (lo, hi) in ours["terrains"].items():
        np.testing.assert_allclose(lo, theirs["terrains"][name][0], atol=1e-5)
        np.testing.assert_allclose(hi, theirs["terrains"][name][1], atol=1e-5)


def _load(path):
    world = sim_node.WorldModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert world.loadFile(path)
    return world


def test_a_klampt_world_file_loads_with_klampts_placements(tmp_path):
    path = _world_xml(tmp_path)
    theirs = run_klampt(f"WORLD = {str(path)!r}\n" + KLAMPT_STATE, tmp_path)
    world = _load(path)
    _compare(_ours_state(world), theirs)
    robot = world.robot("arm")
    assert robot.driver("lbr_iiwa_link_1").getValue() == 0.5
    assert robot.driver("lbr_iiwa_link_4").getValue() == -0.4
    assert world.terrain("floor").settings.surface.kFriction == 0.7
    # automass: the scaled mesh's inertia at uniform density, 3 kg
    assert world.rigidObject("link").getMass().getMass() == 3.0


def test_configs_of_branching_and_floating_robots_read_as_klampt(tmp_path):
    # romeo (example-robot-data: branching, 82 links, mimic hands) and panda (floating base
    # here and in Klamp't): Klamp't sets random driver values and base coordinates, and the
    # config it reports, written into a world file, gives us its link placements
    import importlib.metadata
    from pathlib import Path
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    romeo = str(Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))
                / "romeo_description" / "urdf" / "romeo.urdf")
    panda = _data("franka_panda", "panda.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours_romeo = sim_node.WorldModel().loadRobot(romeo)
    # our mimic followers: Klamp't leaves some as free drivers; give them the mimic values
    followers = {}
    for d in ours_romeo.getDrivers():
        links = [ours_romeo.link(k).getName() for k in d.getAffectedLinks()]
        for link, scale, offset in list(zip(links, *d.getAffineCoeffs()))[1:]:
            followers[link] = (links[0], scale, offset)
    plain = tmp_path / "plain.xml"
    plain.write_text(f'<world><robot name="romeo" file="{romeo}" translation="0.1 0.2 0.9"/>'
                     f'<robot name="panda" file="{panda}" rotateZ="0.4"/></world>')
    theirs = run_klampt(f"""
import random
random.seed(5)
WORLD = {str(plain)!r}
FOLLOWERS = {followers!r}
w = WorldModel(); assert w.loadFile(WORLD)
configs = {{}}
for r in (w.robot(0), w.robot(1)):
    for i in range(r.numDrivers()):
        d = r.driver(i)
        lo, hi = d.getLimits()
        if d.getName() not in FOLLOWERS:
            d.setValue(random.uniform(max(lo, -2), min(hi, 2)))
    q = r.getConfig()
    for link, (master, scale, offset) in FOLLOWERS.items():
        if r.getName() == "romeo":
            q[r.link(link).getIndex()] = scale * q[r.link(master).getIndex()] + offset
    q[:6] = [random.uniform(-1, 1) for _ in range(6)]
    r.setConfig(q)
    configs[r.getName()] = [len(q)] + q
""" + KLAMPT_STATE.replace("w = WorldModel()\nassert w.loadFile(WORLD)\n", "")
                        .replace("emit(out)", "out['configs'] = configs\nemit(out)"), tmp_path)
    configured = tmp_path / "configured.xml"
    c = {k: " ".join([str(v[0])] + [repr(x) for x in v[1:]]) for k, v in theirs["configs"].items()}
    configured.write_text(
        f'<world><robot name="romeo" file="{romeo}" translation="0.1 0.2 0.9" '
        f'config="{c["romeo"]}"/><robot name="panda" file="{panda}" rotateZ="0.4" '
        f'config="{c["panda"]}"/></world>')
    world = _load(configured)
    assert world.robot("romeo").isFloatingBase() and world.robot("panda").isFloatingBase()
    # (romeo's hand axes are unit to 2e-7 only, "0.121869 -0.992546 -4.37114e-08": Klamp't and
    # we normalise them differently, 1e-7 apart)
    _compare(_ours_state(world), theirs, atol=1e-6)


def test_our_saved_world_loads_in_klampt_with_the_same_placements(tmp_path):
    world = _load(_world_xml(tmp_path))
    q = world.robot("arm").getConfig()
    q[2] = 1.1
    world.robot("arm").setConfig(q)
    world.rigidObject("link").setTransform(np.eye(3), [4, 5, 6])
    panda = world.robot("panda")        # floating: a base pose and joint values of its own
    qp = panda.getConfig()
    qp[:7] = [0.3, -0.2, 0.5, 0.1, 0.2, 0.3, 0.9]
    qi, _ = panda.getDriverIndices()
    qp[qi] = [0.1, -0.3, 0.2, -1.5, 0.4, 1.2, 0.5, 0.02]
    panda.setConfig(qp)
    saved = tmp_path / "saved" / "ours.xml"
    saved.parent.mkdir()
    assert world.saveFile(saved)
    theirs = run_klampt(f"WORLD = {str(saved)!r}\n" + KLAMPT_STATE, tmp_path)
    _compare(_ours_state(world), theirs)
    # and back into ours: the same world
    again = _load(saved)
    _compare(_ours_state(again), _as_klampt(_ours_state(world)))
    np.testing.assert_allclose(again.robot("arm").getConfig(), q, atol=1e-12)
    np.testing.assert_allclose(again.robot("panda").getConfig(), panda.getConfig(), atol=1e-12)


def _as_klampt(state):
    # our state in the reference's list forms (column-major R), to reuse _compare
    out = {"robots": {}, "objects": {}, "terrains": {}}
    for name, links in state["robots"].items():
        out["robots"][name] = {l: [R.T.reshape(9).tolist(), t.tolist()] for l, (R, t) in links.items()}
    for name, (R, t, m, com, lo, hi) in state["objects"].items():
        out["objects"][name] = [R.T.reshape(9).tolist(), t.tolist(), m, com.tolist(), lo.tolist(),
                                hi.tolist()]
    out["terrains"] = {k: [v[0].tolist(), v[1].tolist()] for k, v in state["terrains"].items()}
    return out


def test_yaml_round_trip_keeps_the_world(tmp_path):
    world = _load(_world_xml(tmp_path))
    path = tmp_path / "world.yaml"
    assert world.saveFile(path)
    again = _load(path)
    _compare(_ours_state(again), _as_klampt(_ours_state(world)))
    np.testing.assert_allclose(again.robot("arm").getConfig(), world.robot("arm").getConfig())
    assert again.terrain("floor").settings.surface.kFriction == 0.7
    assert again.robot("arm").isFloatingBase() == world.robot("arm").isFloatingBase()
    np.testing.assert_allclose(again.rigidObject("link").getMass().getInertia(),
                               world.rigidObject("link").getMass().getInertia(), rtol=1e-9)


def test_yaml_save_refuses_mass_properties_it_cannot_say(tmp_path):
    world = _load(_world_xml(tmp_path))
    obj = world.rigidObject("link")
    mass = obj.getMass()
    obj.setMass(sim_node.Mass(mass.getMass(), mass.getCom() + 0.1, mass.getInertia()))
    with pytest.raises(ValueError, match="rigid object 'link'.*uniform density"):
        world.saveFile(tmp_path / "w.yaml")
    assert not (tmp_path / "w.yaml").exists()


def test_worlds_klampt_saves_in_its_own_formats_are_refused_by_name(tmp_path):
    urdf = _data("kuka_iiwa", "model.urdf")
    run_klampt(f"""
w = WorldModel(); w.loadRobot({urdf!r}); w.loadTerrain({_data('plane.obj')!r})
emit(w.saveFile({str(tmp_path / 'k' / 'world.xml')!r}))
""", tmp_path)
    world = sim_node.WorldModel()
    with pytest.raises(WorldFileError, match=r"model\.rob.*Klamp't's \.rob robot format.*URDF"):
        world.loadFile(tmp_path / "k" / "world.xml")
    assert world.numRobots() == world.numTerrains() == 0
    with pytest.raises(ModelLoadError, match=r"plane\.env.*\.env terrain format"):
        world.loadFile(tmp_path / "k" / "world" / "plane.env")


def test_saving_what_klampt_xml_cannot_say_is_an_error_naming_it(tmp_path):
    world = sim_node.WorldModel()
    world.loadRobot("""<robot name="stringy"><link name="a"/></robot>""")
    with pytest.raises(ValueError, match="robot 'stringy' was not loaded from a URDF file"):
        world.saveFile(tmp_path / "w.xml")
    assert not (tmp_path / "w.xml").exists()
    with pytest.raises(ValueError, match=r"expected a \.xml .* or \.yaml"):
        world.saveFile(tmp_path / "w.txt")


GOOD = """<world>
  <robot name="arm" file="{arm}"/>
  <terrain name="floor" file="{mesh}"/>
</world>"""


@pytest.mark.parametrize("text, message", [
    ("<world><robot", "XML"),
    ("<robots/>", "root element must be <world>"),
    ("<world><spaceship/></world>", "unknown element.*valid"),
    ("<world><robot/></world>", "missing attribute 'file'"),
    ('<world><robot file="{arm}" translation="0 nan 0"/></world>', "finite"),
    ('<world><robot file="{arm}" translation="0 0"/></world>', "expected 3 numbers"),
    ('<world><robot file="{arm}" rotateZ="x"/></world>', "expected numbers"),
    ('<world><robot file="http://example.com/a.urdf"/></world>', "URLs are not read"),
    ('<world><robot file="missing.urdf"/></world>', "no such file"),
    ('<world><robot file="{mesh}"/></world>', "must be a URDF"),
    ('<world><robot file="{arm}" config="3 0 0 0"/></world>', "a Klamp't config has"),
    ('<world><robot file="{arm}" config="2 0 0 0"/></world>', "'n' followed by n numbers"),
    ('<world><terrain file="{mesh}" scale="0"/></world>', "positive"),
    ('<world><rigidObject name="x"/></world>', "needs a 'file' attribute or a <geometry>"),
    ('<world><rigidObject><geometry mesh="{mesh}"/><physics mass="-1"/></rigidObject></world>',
     "positive"),
    ('<world><terrain file="{mesh}" kFriction="-2"/></world>', "kFriction"),
    # a "billion laughs" entity bomb: refused by the parser, at once
    ('<!DOCTYPE world [<!ENTITY a0 "xxxxxxxxxx">' + "".join(
        f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10))
     + ']><world><robot name="&a9;" file="{arm}"/></world>', "XML.*amplification"),
])
def test_hostile_world_files_fail_clearly_and_add_nothing(tmp_path, text, message):
    arm = tmp_path / "arm.urdf"
    from klampt_reference import ARM_URDF
    arm.write_text(ARM_URDF)
    mesh = _data("kuka_iiwa", "meshes", "link_0.stl")
    path = tmp_path / "bad.xml"
    # a good robot first: the failure must not leave it half-loaded
    body = text.format(arm=arm, mesh=mesh)
    if body.startswith("<world>"):
        body = body.replace("<world>", GOOD.format(arm=arm, mesh=mesh)[:-len("</world>")], 1)
    path.write_text(body)
    world = sim_node.WorldModel()
    with pytest.raises(WorldFileError, match=message) as info:
        world.loadFile(path)
    assert str(path) in str(info.value)
    assert world.numRobots() == world.numTerrains() == world.numRigidObjects() == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda s: ("<world>" + s).encode()))
def test_fuzzed_world_files_load_or_raise_world_file_errors(tmp_path, data):
    path = tmp_path / "fuzz.xml"
    path.write_bytes(data)
    world = sim_node.WorldModel()
    try:
        world.loadFile(path)
    except WorldFileError:
        assert world.numRobots() == world.numTerrains() == world.numRigidObjects() == 0


def test_package_uris_resolve_as_for_urdfs_and_missing_ones_list_the_places(tmp_path):
    package = tmp_path / "my_robot"
    package.mkdir()
    (package / "package.xml").write_text("<package><name>my_robot</name></package>")
    from klampt_reference import ARM_URDF
    (package / "arm.urdf").write_text(ARM_URDF)
    path = tmp_path / "w.xml"
    path.write_text('<world><robot name="a" file="package://my_robot/arm.urdf"/></world>')
    world = _load(path)
    assert world.robot("a").urdf.source.endswith("arm.urdf")
    path.write_text('<world><robot name="a" file="package://nowhere_pkg/arm.urdf"/></world>')
    with pytest.raises(WorldFileError, match="file not found: package://nowhere_pkg.*looked in"):
        sim_node.WorldModel().loadFile(path)


attribute_value = st.one_of(
    st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                       st.integers(-10**30, 10**30)), max_size=5).map(
        lambda xs: " ".join(repr(x) for x in xs)),
    st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["translation", "position", "rotateRPY", "rotateMoment", "rotateX",
                        "rotateY", "rotateZ", "config", "scale", "kFriction", "name"]),
       st.sampled_from(["robot", "terrain", "rigidObject"]), attribute_value)
def test_any_attribute_value_loads_or_raises_a_world_file_error(tmp_path, attr, tag, value):
    from xml.sax.saxutils import quoteattr
    from klampt_reference import ARM_URDF
    arm = tmp_path / "arm.urdf"
    arm.write_text(ARM_URDF)
    mesh = _data("kuka_iiwa", "meshes", "link_0.stl")
    inner = {"robot": f'<robot file="{arm}" {attr}={quoteattr(value)}/>',
             "terrain": f'<terrain file="{mesh}" {attr}={quoteattr(value)}/>',
             "rigidObject": f'<rigidObject {attr}={quoteattr(value)}><geometry mesh="{mesh}"/>'
                            '</rigidObject>'}[tag]
    path = tmp_path / "w.xml"
    path.write_text(f'<world><robot name="first" file="{arm}"/>{inner}</world>')
    world = sim_node.WorldModel()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            world.loadFile(path)
    except WorldFileError as error:
        assert str(path) in str(error)
        assert world.numRobots() == world.numTerrains() == world.numRigidObjects() == 0
        return
    for i in range(world.numRobots()):
        assert np.all(np.isfinite(world.robot(i).getConfig()))
    for i in range(world.numTerrains()):
        assert np.all(np.isfinite(world.terrain(i).getTransform()[1]))


def test_read_file_is_load_file_for_klampt_worlds(tmp_path):
    """Klamp't's readFile and loadFile are one function: Klamp't programs read .xml worlds with
    readFile. Ours gives the same world as loadFile, and refuses Klamp't's own formats alike."""
    path = _world_xml(tmp_path)
    read = sim_node.WorldModel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert read.readFile(path)
    mine, theirs = _ours_state(read), _ours_state(_load(path))
    assert {k: set(v) for k, v in mine.items()} == {k: set(v) for k, v in theirs.items()}
    for kind in ("objects", "terrains"):
        for name, values in mine[kind].items():
            for a, b in zip(values, theirs[kind][name]):
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    for name, links in mine["robots"].items():
        for link, (R, t) in links.items():
            np.testing.assert_array_equal(R, theirs["robots"][name][link][0])
            np.testing.assert_array_equal(t, theirs["robots"][name][link][1])
    robot = tmp_path / "robot.rob"
    robot.write_text("links 1\n")
    with pytest.raises(ModelLoadError, match=r"robot\.rob.*Klamp't's \.rob robot format"):
        sim_node.WorldModel().readFile(robot)


def test_a_urdf_rooted_at_world_is_fixed_in_klampt_without_that_link(tmp_path):
    """Klamp't fixes a URDF whose root link is named 'world' and drops that link (no virtual
    base links): a config has one entry per other link. Our arm (rooted at 'world') saved with
    joint values loads in Klamp't with every link where ours is, and a config of that size
    written by hand reads into ours as into Klamp't."""
    from sim_node.resources import data_path

    urdf = str(data_path("robots", "arm7", "arm7.urdf"))
    world = sim_node.WorldModel()
    robot = world.loadRobot(urdf, name="arm", t=[-0.45, 0.2, 0.75])
    assert robot.link(0).getName() == "world" and not robot.isFloatingBase()
    q = robot.getConfig()
    q[:7] = [0.3, -0.5, 0.2, -1.4, 0.6, 1.0, -0.7]
    robot.setConfig(q)
    saved = tmp_path / "ours.xml"
    assert world.saveFile(saved)
    assert 'config="13 ' in saved.read_text()           # 14 links of ours, less 'world'
    theirs = run_klampt(f"WORLD = {str(saved)!r}\n" + KLAMPT_STATE, tmp_path)
    ours = _ours_state(world)
    assert set(theirs["robots"]["arm"]) == set(ours["robots"]["arm"]) - {"world"}
    for name, (R_k, t_k) in theirs["robots"]["arm"].items():
        R, t = ours["robots"]["arm"][name]
        np.testing.assert_allclose(R, np.reshape(R_k, (3, 3)).T, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(t, t_k, atol=1e-9, err_msg=name)
    again = _load(saved)
    np.testing.assert_allclose(again.robot("arm").getConfig(), q, atol=1e-12)
    # a 13-entry config by hand: Klamp't's link order puts joint1..joint7 on entries 1..7
    by_hand = tmp_path / "by_hand.xml"
    by_hand.write_text(f'<world><robot name="arm" file="{urdf}" '
                       f'config="13 0 0.1 0.2 0.3 -0.4 0.5 0.6 0.7 0 0 0 0 0"/></world>')
    theirs = run_klampt(f"WORLD = {str(by_hand)!r}\n" + KLAMPT_STATE, tmp_path)
    ours = _ours_state(_load(by_hand))
    for name, (R_k, t_k) in theirs["robots"]["arm"].items():
        np.testing.assert_allclose(ours["robots"]["arm"][name][1], t_k, atol=1e-9, err_msg=name)
    with pytest.raises(WorldFileError, match="rooted at 'world'.*13 links"):
        by_hand.write_text(f'<world><robot name="arm" file="{urdf}" '
                           f'config="18 {" ".join(["0"] * 18)}"/></world>')
        sim_node.WorldModel().loadFile(by_hand)
