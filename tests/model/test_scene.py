"""Building the engine scene from a world (sim_node.model.scene): convex mesh faces."""
import importlib.metadata
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sim_node.model.scene import _facet_polygon, convex_mesh_arrays


def test_a_facet_polygon_is_the_counter_clockwise_hull_of_its_vertices():
    # a bow tie: two triangles meeting at one vertex (4), plus a vertex inside (5); walking
    # boundary edges has no single successor at 4, the facet's convex hull is well defined
    verts = np.array([[0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [1, 1, 0], [0.5, 1, 0]], float)
    triangles = np.array([[0, 1, 4], [2, 3, 4], [0, 4, 5]])
    loop = _facet_polygon(verts, triangles, np.array([0.0, 0.0, 1.0]))
    assert sorted(loop) == [0, 1, 2, 3]
    assert _signed_area_xy(verts[loop]) == pytest.approx(4.0)    # counter-clockwise about +z
    flipped = _facet_polygon(verts, triangles, np.array([0.0, 0.0, -1.0]))
    assert sorted(flipped) == [0, 1, 2, 3]
    assert _signed_area_xy(verts[flipped]) == pytest.approx(-4.0)  # ... and about -z


def _signed_area_xy(polygon):
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)


def test_convex_mesh_faces_are_planar_convex_polygons_with_outward_normals():
    rng = np.random.default_rng(3)
    points = rng.normal(size=(200, 3))
    arrays = convex_mesh_arrays(points)
    verts = arrays["verts"].reshape(-1, 3)
    starts, face_verts = arrays["face_start"], arrays["face_verts"]
    normals = arrays["face_normals"].reshape(-1, 3)
    centre = verts.mean(axis=0)
    for k in range(len(starts) - 1):
        face = verts[face_verts[starts[k]:starts[k + 1]]]
        n = normals[k]
        # planar up to trimesh's facet tolerance (it merges nearly coplanar hull triangles)
        assert np.ptp(face @ n) < 1e-2 * np.ptp(verts)
        assert (face[0] - centre) @ n > 0                      # outward
        for i in range(len(face)):                             # convex, counter-clockwise
            a, b, c = face[i], face[(i + 1) % len(face)], face[(i + 2) % len(face)]
            assert np.cross(b - a, c - b) @ n > -1e-9


def test_unitree_g1_from_example_robot_data_builds_in_bounded_memory():
    # the G1's logo mesh has a hull facet whose boundary walk never ended: 24 GB, then the OOM
    # killer. Built in a child process held to 2 GB of address space.
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    urdf = Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots/g1_description/"
                                 "urdf/g1_29dof_rev_1_0.urdf"))
    script = textwrap.dedent(f"""
        import resource, warnings
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        warnings.simplefilter("ignore")
        import sim_node
        world = sim_node.WorldModel()
        world.loadRobot({str(urdf)!r})
        sim = sim_node.Simulator(world)
        sim.simulate(0.01)
        print("built", sim.getStatus())
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "built" in result.stdout
