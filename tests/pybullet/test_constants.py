"""sim_node.pybullet.constants: every upper-case constant of the real PyBullet 3.2.7, same value."""
import pybullet as pb
import pytest

import sim_node.pybullet as p
from sim_node.pybullet import constants

PYBULLET_CONSTANTS = sorted(n for n in dir(pb) if n.isupper())


def test_the_reference_is_pybullet_3_2_7():
    # The constant table was written from 3.2.7; another version may add or renumber names.
    from importlib.metadata import version
    assert version("pybullet") == "3.2.7"


@pytest.mark.parametrize("name", PYBULLET_CONSTANTS)
def test_constant_equals_pybullets(name):
    ours = getattr(p, name)
    theirs = getattr(pb, name)
    assert type(ours) is type(theirs)
    assert ours == theirs


def test_all_lists_exactly_pybullets_constants():
    assert sorted(constants.__all__) == PYBULLET_CONSTANTS
    assert len(PYBULLET_CONSTANTS) == 162
