"""sim_node.model.contact, the public face: ContactPoint, the contact-list forms Klamp't takes,
both spellings of the stability tests, hostile input, Hold and Stance with Klamp't's text
format."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from sim_node.model import contact
from sim_node.model.contact import (ContactPoint, Hold, Stance, com_equilibrium, contact_array,
                                    force_closure, read_hold, read_stance, support_polygon,
                                    write_hold, write_stance)

TABLE = [[x, y, 0.0, 0.0, 0.0, 1.0, 0.5] for x in (-1.0, 1.0) for y in (-1.0, 1.0)]


def test_contact_point_reflect_and_klampt_transform_forms():
    c = ContactPoint((0.1, 0.2, 0.3), (0.0, 0.6, 0.8), 0.5)
    c.object1, c.object2 = "a", "b"
    r = c.reflect()
    np.testing.assert_allclose(r.n, [0, -0.6, -0.8])
    assert (r.object1, r.object2, r.kFriction) == ("b", "a", 0.5)
    R = Rotation.from_euler("zyx", [0.3, -0.2, 0.5]).as_matrix()
    t = [1.0, 2.0, -0.5]
    klampt_R = R.T.reshape(9).tolist()              # Klamp't's column-major so3 element
    d = ContactPoint((0.1, 0.2, 0.3), (0.0, 0.6, 0.8), 0.5)
    d.transform((klampt_R, t))                      # klampt: transform(xform)
    np.testing.assert_allclose(d.x, R @ [0.1, 0.2, 0.3] + t, atol=1e-15)
    np.testing.assert_allclose(d.n, R @ [0.0, 0.6, 0.8], atol=1e-15)
    with pytest.raises(ValueError, match="rigid transform"):
        d.transform(5.0)


def test_every_contact_list_form_gives_the_same_rows():
    points = [ContactPoint(r[0:3], r[3:6], r[6]) for r in TABLE]
    h1, h2 = Hold(), Hold()
    h1.link, h1.contacts = 3, points[:2]
    h2.link, h2.contacts = 5, points[2:]
    forms = [TABLE, np.array(TABLE), points, [points[:1], [points[1:3]], points[3]], [h1, h2],
             Stance([h2, h1]), [h1, points[2:]],
             (np.array(TABLE)[:, 0:3], np.array(TABLE)[:, 3:6], 0.5),
             (np.array(TABLE)[:, 0:3], np.array(TABLE)[:, 3:6], [0.5] * 4)]
    for form in forms:
        np.testing.assert_array_equal(contact_array(form), TABLE)
    np.testing.assert_array_equal(contact_array(points[0]), [TABLE[0]])
    np.testing.assert_array_equal(contact_array(([1, 2, 3], [0, 0, 1], 0.2)), [[1, 2, 3, 0, 0, 1, 0.2]])
    assert contact_array([]).shape == (0, 7)


def test_both_spellings_are_the_same_functions():
    assert contact.forceClosure is contact.force_closure
    assert contact.comEquilibrium is contact.com_equilibrium
    assert contact.supportPolygon is contact.support_polygon
    assert contact.equilibriumTorques is contact.equilibrium_torques


def test_klampt_return_forms():
    forces = com_equilibrium(TABLE, (0, 0, -1), [0.2, 0.1, 1.0])
    assert isinstance(forces, list) and len(forces) == 4 and all(len(f) == 3 for f in forces)
    np.testing.assert_allclose(np.sum(forces, axis=0), [0, 0, 1], atol=1e-9)
    assert com_equilibrium(TABLE, (0, 0, -1), [2.0, 0.1, 1.0]) is None
    assert com_equilibrium(TABLE) is True
    assert com_equilibrium([]) is False and com_equilibrium([], com=[0, 0, 1]) is None
    assert force_closure(TABLE) is False and force_closure([]) is False
    planes = support_polygon(TABLE)
    assert isinstance(planes, list) and all(isinstance(p, list) and len(p) == 3 for p in planes)
    assert support_polygon([]) == [[0, 0, -1]]


@pytest.mark.parametrize("bad, message", [
    ([[0, 0, 0, 0, 0, 1, float("nan")]], "finite"),
    ([[0, float("inf"), 0, 0, 0, 1, 0.5]], "finite"),
    ([[0, 0, 0, 0, 0, 0, 0.5]], r"unit vector, got \[0.0, 0.0, 0.0\] \(length 0\)"),
    ([[0, 0, 0, 0, 0, 2, 0.5]], "unit vector"),
    ([[0, 0, 0, 0, 0, 1, -0.1]], "kFriction must be >= 0"),
    ([[0, 0, 0, 0, 0, 1]], "7 numbers"),
    ([TABLE[0], [0, 0, 0, 1, 0, 0, 0.5, 9]], r"contacts\[1\]: a contact is 7 numbers"),
    ([["a", 0, 0, 0, 0, 1, 0.5]], r"contacts\[0\]\[0\]: expected contacts, got a string"),
    ("table", "string"),
    ({1: 2}, "Stance"),
    (np.zeros((2, 7, 1)), r"\(N, 7\)"),
    (None, "expected a ContactPoint, Hold, Stance"),
])
def test_hostile_contacts_are_refused_naming_the_contact(bad, message):
    for function in (force_closure, com_equilibrium, support_polygon):
        with pytest.raises((ValueError, TypeError), match=message):
            function(bad)


def test_hostile_fext_and_com_are_refused():
    with pytest.raises(ValueError, match="fext must be 3 finite numbers"):
        com_equilibrium(TABLE, (0, 0, float("nan")))
    with pytest.raises(ValueError, match="com must be 3 finite numbers"):
        com_equilibrium(TABLE, (0, 0, -1), [0, 0])
    with pytest.raises(ValueError, match="com must be 3 finite numbers"):
        com_equilibrium(TABLE, (0, 0, -1), "up")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                   st.integers(-3, 3), st.text(max_size=2), st.none()),
                         max_size=9), max_size=4))
def test_garbage_contacts_raise_value_or_type_errors_only(rows):
    for function in (force_closure, com_equilibrium, support_polygon):
        try:
            function(rows)
        except (ValueError, TypeError) as e:
            assert "contact" in str(e)


# -- Hold and Stance -------------------------------------------------------------------------

def make_hold(link=3):
    h = Hold()
    h.link = link
    h.contacts = [ContactPoint((0.1 * i, -0.2, 0.05 * i), (0.0, 0.6, 0.8), 0.4 + 0.1 * i)
                  for i in range(3)]
    return h


def test_stance_is_a_dict_of_holds_by_link_and_flattens_in_link_order():
    a, b = make_hold(5), make_hold(2)
    s = Stance([a, b])
    assert sorted(s) == [2, 5] and s[2] is b and s.isValid()
    assert s.contacts() == b.contacts + a.contacts
    assert s.remove(2) and not s.remove(2) and list(s) == [5]
    s[7] = make_hold(6)
    assert not s.isValid()
    with pytest.raises(ValueError, match="Hold with its link set"):
        s.insert(Hold())


def test_hold_text_round_trip_keeps_contacts_and_constraint(tmp_path):
    pytest.importorskip("sim_node.model.ik")
    h = make_hold()
    h.setupFixedIKConstraint([0.1, 0.0, -0.05], Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix())
    path = tmp_path / "foot.hold"
    h.save(path)
    g = Hold()
    g.load(path)
    assert g.link == 3
    np.testing.assert_allclose([c.tolist() for c in g.contacts], [c.tolist() for c in h.contacts])
    for got, want in zip(g.ikConstraint.getPosition(), h.ikConstraint.getPosition()):
        np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose(g.ikConstraint.getRotation(), h.ikConstraint.getRotation(),
                               atol=1e-12)
    s = Stance([h, make_hold(8)])
    s[8].setupPointIKConstraint([0.0, 0.0, 0.0])
    t = read_stance(write_stance(s))
    assert sorted(t) == [3, 8] and t[8].ikConstraint.numRotDims() == 0


def test_hold_format_errors_name_the_line():
    text = "begin hold\nlink = 3\ncontacts = 0 0 0 0 0 1\nposition = 0 0 0 0 0 0\nend\n"
    with pytest.raises(ValueError, match=r"<hold>:3: contacts are 7 numbers each, got 6"):
        read_hold(text)
    with pytest.raises(ValueError, match="starts with 'begin hold'"):
        read_hold("link = 3\n")
    with pytest.raises(ValueError, match=r":2: unknown hold item 'lnk'"):
        read_hold("begin hold\nlnk = 3\nend\n")
    with pytest.raises(ValueError, match="no 'position"):
        read_hold("begin hold\nlink = 3\ncontacts = 0 0 0 0 0 1 0.5\nend\n")
    with pytest.raises(ValueError, match=r":2: expected 1 finite numbers"):
        read_hold("begin hold\nlink = nan\nend\n")
    with pytest.raises(ValueError, match="no closing 'end'"):
        read_stance("begin stance\n")
    with pytest.raises(ValueError, match="needs its link and ikConstraint"):
        write_hold(Hold())


def test_hold_transform_moves_contacts_in_klampt_form():
    h = make_hold()
    before = [c.x.copy() for c in h.contacts]
    R = Rotation.from_rotvec([0, 0, math.pi / 2]).as_matrix()
    h.transform((R.T.reshape(9).tolist(), [1.0, 0.0, 0.0]))
    for c, x in zip(h.contacts, before):
        np.testing.assert_allclose(c.x, R @ x + [1, 0, 0], atol=1e-15)


def test_friction_cone_edges_setting_accepts_klampts_default_only():
    """Klamp't programs call set_friction_cone_approximation_edges(4) (its default) before the
    stability tests; our cones have 4 edges, so 4 is accepted and another count refused."""
    import sim_node

    sim_node.set_friction_cone_approximation_edges(4)
    square = [ContactPoint([x, y, 0], [0, 0, 1], 0.5) for x in (-1, 1) for y in (-1, 1)]
    assert contact.force_closure(square) is False
    with pytest.raises(ValueError, match=r"have 4 edges.*not supported"):
        sim_node.set_friction_cone_approximation_edges(8)
    with pytest.raises(TypeError, match="integer"):
        sim_node.set_friction_cone_approximation_edges(4.0)
