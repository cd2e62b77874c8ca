"""Mass properties of the primitive shapes against trimesh's numeric integration of finely
tessellated solids (an independent computation), and mesh loading."""
import numpy as np
import pytest
import trimesh

from sim_node.model import geometry as geo

CASES = [
    (geo.Box((0.3, 0.2, 0.1)), lambda: trimesh.creation.box(extents=(0.3, 0.2, 0.1)), 1e-12),
    (geo.Sphere(0.2), lambda: trimesh.creation.icosphere(subdivisions=6, radius=0.2), 2e-3),
    (geo.Cylinder(0.1, 0.5), lambda: trimesh.creation.cylinder(radius=0.1, height=0.5, sections=512), 2e-4),
    (geo.Capsule(0.1, 0.3), lambda: trimesh.creation.capsule(height=0.3, radius=0.1, count=[256, 256]), 2e-3),
]


@pytest.mark.parametrize("shape, reference, rtol", CASES, ids=lambda c: type(c).__name__)
def test_primitive_inertia_matches_tessellated_solid(shape, reference, rtol):
    mesh = reference()
    props = geo.mass_properties(shape, 2.0)
    expected = mesh.moment_inertia * (2.0 / mesh.mass)
    np.testing.assert_allclose(props.inertia, expected, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(props.com, mesh.center_mass, atol=1e-9)


def test_mesh_mass_properties_use_the_solid_and_its_hull_when_open(tmp_path):
    box = trimesh.creation.box(extents=(0.4, 0.2, 0.1))
    box.apply_translation([1.0, 0.0, 0.0])
    path = tmp_path / "box.stl"
    box.export(path)
    mesh = geo.load_mesh(str(path))
    props = geo.mass_properties(mesh, 3.0)
    # binary STL stores float32 vertices: agreement to ~1e-7
    np.testing.assert_allclose(props.com, [1.0, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(props.inertia, np.diag([3 * 0.05 / 12, 3 * 0.17 / 12, 3 * 0.2 / 12]),
                               rtol=1e-6, atol=1e-9)
    open_box = trimesh.Trimesh(box.vertices, box.faces[:-2])      # one face removed
    open_path = tmp_path / "open.stl"
    open_box.export(open_path)
    hull = geo.mass_properties(geo.load_mesh(str(open_path)), 3.0)
    np.testing.assert_allclose(hull.inertia, props.inertia, rtol=1e-9, atol=1e-12)


def test_mesh_scale_and_missing_file(tmp_path):
    box = trimesh.creation.box(extents=(1, 1, 1))
    path = tmp_path / "unit.obj"
    box.export(path)
    mesh = geo.load_mesh(str(path), (0.5, 2.0, 1.0))
    np.testing.assert_allclose(mesh.vertices.max(0) - mesh.vertices.min(0), [0.5, 2.0, 1.0])
    with pytest.raises(FileNotFoundError):
        geo.load_mesh(str(tmp_path / "missing.stl"))
    with pytest.raises(ValueError, match="no volume"):
        geo.mass_properties(geo.Plane((0, 0, 1), 0.0), 1.0)
