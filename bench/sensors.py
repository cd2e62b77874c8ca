"""Sensor benchmark: camera frames of sim_node against PyBullet on issue 12's scenes, in this one
process. (Helper R's `rays` section lands in this file too; this copy holds `camera`.)

Scenes: "S3 + kuka": S3's 20-box pile (data/worlds/box_pile.yaml) on the plane z = 0 with
pybullet_data's kuka iiwa (fixed base, its visual meshes) beside it at (0.6, 0, 0); "default":
the embedded default world (data/worlds/default.yaml: table mesh, 7-DOF arm, objects, mobile
base). Each is seen from a fixed camera with 60 degrees vertical field of view, near 0.05 m,
far 10 m.

camera  frames/s of an RGB + depth + segmentation frame at 640 x 480 and 320 x 240:
        sim_node's Camera.render (the snapshot of the instance poses included) on 1 and 2
        threads; PyBullet's getCameraImage (ER_TINY_RENDERER, DIRECT; no OpenGL here) on the
        same scene: every instance of sim_node's render model given to PyBullet as a visual
        mesh at its pose, so both draw the same triangles; and, with embreex installed
        (requirements/bench.txt), the BVH ray-casting alternative: Embree's scene rebuilt from
        the instances' world triangles (the bodies move every frame) and one primary ray per
        pixel (depth and ids only, no shading). Timing: best of 5 runs of repeated frames after
        a warm-up.

    python bench/sensors.py [--only camera]        (./dev bench sensors)
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: idle OpenBLAS threads spin

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

KUKA_POSITION = (0.6, 0.0, 0.0)
CAMERA_VIEWS = {   # scene -> (eye, target) [m], z up
    "S3 + kuka": ((1.7, 1.3, 1.2), (0.2, 0.0, 0.3)),
    "default": ((2.2, -2.2, 1.9), (0.0, -0.4, 0.6)),
}
CAMERA_SIZES = ((640, 480), (320, 240))
CAMERA_FOV_Y, CAMERA_NEAR, CAMERA_FAR = 60.0, 0.05, 10.0
CAMERA_REFERENCE = {(640, 480): 19.0, (320, 240): 70.0}   # issue 12: PyBullet frames/s here


def _best(call, repeats: int, runs: int = 5) -> float:
    """Seconds per call: the best of `runs` timed runs of `repeats` calls, after one warm-up."""
    call()
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(repeats):
            call()
        best = min(best, (time.perf_counter() - t0) / repeats)
    return best


def camera_world(name: str):
    import pybullet_data

    import sim_node

    world = sim_node.WorldModel()
    if name == "S3 + kuka":
        world.readFile(str(REPO / "data" / "worlds" / "box_pile.yaml"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # the kuka base's zero mass is repaired
            world.loadRobot(str(Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf"),
                            fixed_base=True, t=KUKA_POSITION)
    else:
        world.readFile(str(REPO / "data" / "worlds" / "default.yaml"))
    return sim_node.Simulator(world)


def _instances_world(snapshot):
    """Every instance's triangles in the world: (vertices (V, 3), faces (F, 3) int32) of the
    render model at the snapshot's poses, and per instance (vertices, faces) in its frame."""
    model = snapshot.model
    v, vi, f, fi = (np.asarray(a) for a in model.arrays)
    world_v = np.einsum("nij,nj->ni", snapshot.R[vi], v) + snapshot.t[vi]
    return world_v, f


def _pybullet_scene(snapshot):
    """A PyBullet DIRECT client holding every instance of sim_node's render model as a visual
    mesh at its pose (chunks of at most 8,000 vertices: PyBullet's command limit)."""
    import pybullet
    from scipy.spatial.transform import Rotation

    client = pybullet.connect(pybullet.DIRECT)
    model = snapshot.model
    v, vi, f, fi = (np.asarray(a) for a in model.arrays)
    for i in range(len(model.sources)):
        faces = f[fi == i]
        q = Rotation.from_matrix(snapshot.R[i]).as_quat().tolist()
        for start in range(0, len(faces), 2500):
            chunk = faces[start:start + 2500]
            used, local = np.unique(chunk, return_inverse=True)
            shape = pybullet.createVisualShape(
                pybullet.GEOM_MESH, vertices=v[used].tolist(),
                indices=local.astype(int).ravel().tolist(), physicsClientId=client)
            pybullet.createMultiBody(0, -1, shape, basePosition=snapshot.t[i].tolist(),
                                     baseOrientation=q, physicsClientId=client)
    return pybullet, client


def camera(args) -> None:
    from sim_node.sim import camera as cam_mod

    print("camera: frames/s of RGB + depth + segmentation (best of 5 runs)")
    try:
        from embreex import rtcore_scene as embree_scene
        from embreex.mesh_construction import TriangleMesh
    except ImportError:
        embree_scene = None
        print("  (embreex not installed: no ray-casting row; pip install -r "
              "requirements/bench.txt)")
    rows = []
    for scene_name, (eye, target) in CAMERA_VIEWS.items():
        sim = camera_world(scene_name)
        view = cam_mod.view_matrix(eye, target, (0.0, 0.0, 1.0))
        for width, height in CAMERA_SIZES:
            proj = cam_mod.projection_matrix_fov(CAMERA_FOV_Y, width / height, CAMERA_NEAR,
                                                 CAMERA_FAR)
            R, t, K, (near, far) = cam_mod.camera_from_matrices(width, height, view, proj)
            cam = cam_mod.Camera(sim, width, height, K=K, near=near, far=far)
            snap = cam.snapshot()
            ntri = snap.model.rasterizer.ntriangle
            repeats = 20 if width * height <= 320 * 240 else 8
            row = {"scene": scene_name, "size": f"{width}x{height}", "triangles": ntri}
            for threads in (1, 2):
                row[f"ours {threads}t"] = 1.0 / _best(
                    lambda: cam.render(R, t, rgb=True, depth=True, segmentation=True,
                                       threads=threads), repeats)
            pb, client = _pybullet_scene(snap)
            row["PyBullet"] = 1.0 / _best(
                lambda: pb.getCameraImage(width, height, view, proj,
                                          renderer=pb.ER_TINY_RENDERER, physicsClientId=client),
                2 if width * height > 320 * 240 else 4, runs=3)
            pb.disconnect(physicsClientId=client)
            if embree_scene is not None:
                u, v = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
                rays_C = np.stack([(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1],
                                   np.ones_like(u)], -1).reshape(-1, 3)
                directions = np.ascontiguousarray(rays_C @ R.T, dtype=np.float32)
                origins = np.ascontiguousarray(np.broadcast_to(t, directions.shape),
                                               dtype=np.float32)

                def embree_frame():
                    world_v, faces = _instances_world(cam.snapshot())
                    scene = embree_scene.EmbreeScene()
                    TriangleMesh(scene, world_v.astype(np.float32), faces)
                    return scene.run(origins, directions, output=1)

                row["Embree rays"] = 1.0 / _best(embree_frame, repeats // 2)
            rows.append(row)
            print("  " + ", ".join(f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                                   for k, v in row.items()), flush=True)
    print()
    print("| scene | image | triangles | sim_node 1 thread | sim_node 2 threads | PyBullet "
          "TinyRenderer | ratio (2 threads) | Embree rays (2 threads) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        embree = f"{row['Embree rays']:.1f}" if "Embree rays" in row else "-"
        print(f"| {row['scene']} | {row['size']} | {row['triangles']:,} | {row['ours 1t']:.1f} "
              f"| {row['ours 2t']:.1f} | {row['PyBullet']:.1f} | "
              f"{row['ours 2t'] / row['PyBullet']:.1f}x | {embree} |")


SECTIONS = {"camera": camera}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), default=sorted(SECTIONS))
    args = parser.parse_args(argv)
    for name in args.only:
        SECTIONS[name](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
