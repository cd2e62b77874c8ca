"""Fixtures of the scene tests (helpers live in scene_helpers.py)."""
import pytest
from scene_helpers import world_from_yaml

from sim_node.model.scene import build_scene


@pytest.fixture
def make_scene(tmp_path):
    """make(world_yaml, **scene_options) -> (world, layout, scene)"""
    def make(text, **options):
        world = world_from_yaml(text, tmp_path)
        layout = build_scene(world, **options)
        return world, layout, layout.scene
    return make
