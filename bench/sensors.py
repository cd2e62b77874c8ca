"""Sensor benchmark: ray casts and camera frames of sim_node against PyBullet and MuJoCo on issue
12's scenes, in this one process.

Ray scene: S3's 20-box pile (data/worlds/box_pile.yaml, the boxes where the world file places them)
on the plane z = 0, with pybullet_data's kuka iiwa (fixed base, collision meshes as convex
hulls in both sim_node and PyBullet) standing beside it at (0.6, 0, 0). MuJoCo gets the pile
only (as in the issue's reference numbers: mj_multiRay on its pile).

rays   1,000 and 100,000 rays from a point 1.5 m above the pile's centre to random points of
       the square |x|, |y| <= 1.5 m at z = -0.5 (every ray crosses the plane): sim_node's
       Simulator.rayCast, PyBullet's rayTestBatch (DIRECT, batches of its maximum 16,384 rays),
       MuJoCo's mj_multiRay (same origin and directions, cutoff the segment's longest length);
       on 1 and 2 threads where the engine has threads (mj_multiRay has none). And the lidar
       plugin's full 3D sweep: 16 rings (-15 deg to +15 deg) x 1,800 azimuths, 30 m, from
       (1.5, 1.0, 0.4). Timing: best of 5 runs of repeated calls, after a warm-up; the table
       gives µs per 1,000 rays and ms per 100,000. Also: the share of the 1,000 rays whose
       hit body agrees with PyBullet's (a sanity check, not a test).

Camera scenes: "S3 + kuka": S3's 20-box pile (data/worlds/box_pile.yaml) on the plane z = 0 with
pybullet_data's kuka iiwa (fixed base, its visual meshes) beside it at (0.6, 0, 0); "default":
the embedded default world (data/worlds/default.yaml: table mesh, 7-DOF arm, objects, mobile
base). Each is seen from a fixed camera with 60 degrees vertical field of view, near 0.05 m,
far 10 m.

camera  frames/s of an RGB + depth + segmentation frame at 640 x 480 and 320 x 240:
        sim_node's Camera.render (the snapshot of the instance poses included) on 1 and 2
        threads (a pool of Python threads running the nogil kernel); PyBullet's getCameraImage
        (ER_TINY_RENDERER, DIRECT; no OpenGL here) on the
        same scene: every instance of sim_node's render model given to PyBullet as a visual
        mesh at its pose, so both draw the same triangles; and, with embreex installed
        (requirements/bench.txt), the BVH ray-casting alternative: Embree's scene rebuilt from
        the instances' world triangles (the bodies move every frame) and one primary ray per
        pixel (depth and ids only, no shading). Timing: best of 5 runs of repeated frames after
        a warm-up.

    python bench/sensors.py [--only rays camera]        (./dev bench sensors)
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: idle OpenBLAS threads spin

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import scenes  # noqa: E402

KUKA_POSITION = (0.6, 0.0, 0.0)
RAY_ORIGIN = (0.0, 0.0, 1.5)
LIDAR_ORIGIN = (1.5, 1.0, 0.4)
LIDAR_RINGS, LIDAR_AZIMUTHS, LIDAR_RANGE = 16, 1800, 30.0
CAMERA_VIEWS = {   # scene -> (eye, target) [m], z up
    "S3 + kuka": ((1.7, 1.3, 1.2), (0.2, 0.0, 0.3)),
    "default": ((2.2, -2.2, 1.9), (0.0, -0.4, 0.6)),
}
CAMERA_SIZES = ((640, 480), (320, 240))
CAMERA_FOV_Y, CAMERA_NEAR, CAMERA_FAR = 60.0, 0.05, 10.0
CAMERA_REFERENCE = {(640, 480): 19.0, (320, 240): 70.0}   # issue 12: PyBullet frames/s here

ISSUE_REFERENCE = {   # issue 12, measured on this kind of machine: µs per 1k, ms per 100k
    ("PyBullet", 1): (4000.0, 443.0), ("PyBullet", 2): (2100.0, None),
    ("MuJoCo", 1): (124.0, 12.6)}


def _kuka_urdf() -> Path:
    import pybullet_data
    return Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf"


def fan_rays(n: int, seed: int = 0):
    """n rays from RAY_ORIGIN to random points of the square |x|, |y| <= 1.5 at z = -0.5."""
    rng = np.random.default_rng(seed)
    ends = np.column_stack([rng.uniform(-1.5, 1.5, (n, 2)), np.full(n, -0.5)])
    return np.ascontiguousarray(np.tile(RAY_ORIGIN, (n, 1)), dtype=float), ends


def lidar_rays():
    """The 16 x 1,800 sweep: origins, ends (28,800, 3)."""
    elevation = np.radians(np.linspace(-15.0, 15.0, LIDAR_RINGS))
    azimuth = np.linspace(-math.pi, math.pi, LIDAR_AZIMUTHS, endpoint=False)
    el, az = np.meshgrid(elevation, azimuth, indexing="ij")
    d = np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)], -1).reshape(-1, 3)
    origins = np.ascontiguousarray(np.tile(LIDAR_ORIGIN, (len(d), 1)), dtype=float)
    return origins, np.ascontiguousarray(origins + LIDAR_RANGE * d)


def ours_scene():
    """S3's world file with the kuka added (a temporary world file beside nothing else)."""
    import tempfile

    import yaml

    import sim_node

    text = yaml.safe_load(scenes.BOX_PILE_WORLD.read_text())
    text["robots"] = [{"name": "kuka", "urdf": str(_kuka_urdf()), "fixed_base": True,
                       "pose": {"position": list(KUKA_POSITION)}}]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pile_and_kuka.yaml"
        path.write_text(yaml.safe_dump(text))
        world = sim_node.WorldModel()
        world.readFile(str(path))
    return world, sim_node.Simulator(world)


def pybullet_scene():
    scenes._import_pybullet_quietly()
    import pybullet as pb

    pile = scenes.read_box_pile(scenes.BOX_PILE_WORLD)
    client = pb.connect(pb.DIRECT)
    scenes._bullet_ground(pb, client, pile.ground_friction)
    for p_W, quat, half in zip(pile.position_W, pile.quat_xyzw_W, pile.half_extents):
        shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=half.tolist(), physicsClientId=client)
        pb.createMultiBody(baseMass=0.5, baseCollisionShapeIndex=shape, basePosition=p_W.tolist(),
                           baseOrientation=quat.tolist(), physicsClientId=client)
    pb.loadURDF(str(_kuka_urdf()), basePosition=KUKA_POSITION, useFixedBase=True,
                physicsClientId=client)
    return pb, client


def _best(call, repeats: int, runs: int = 5) -> float:
    """Best over `runs` of the mean seconds per call over `repeats` calls (after a warm-up)."""
    call()
    best = math.inf
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        best = min(best, (time.perf_counter() - start) / repeats)
    return best


def rays(args) -> None:
    """The ray table: µs per 1,000 rays, ms per 100,000, ms per lidar sweep."""
    rows = []
    small, large, sweep = fan_rays(1000), fan_rays(100_000, seed=1), lidar_rays()
    world, sim = ours_scene()
    for threads in (1, 2):
        cast = sim.rayCast
        rows.append(("sim_node", threads,
                     _best(lambda: cast(*small, threads=threads), 200) * 1e6,
                     _best(lambda: cast(*large, threads=threads), 3) * 1e3,
                     _best(lambda: cast(*sweep, threads=threads), 5) * 1e3))
    ours_small = sim.rayCast(*small, threads=1)
    try:
        pb, client = pybullet_scene()
    except ImportError:
        pb = None
    if pb is not None:
        batch = pb.MAX_RAY_INTERSECTION_BATCH_SIZE

        def bullet(o, e, threads):
            out = []
            for s in range(0, len(o), batch):
                out += pb.rayTestBatch(o[s:s + batch], e[s:s + batch], numThreads=threads,
                                       physicsClientId=client)
            return out

        lists = [(o.tolist(), e.tolist()) for o, e in (small, large, sweep)]
        for threads in (1, 2):
            rows.append(("PyBullet", threads,
                         _best(lambda: bullet(*lists[0], threads), 10) * 1e6,
                         _best(lambda: bullet(*lists[1], threads), 1, 3) * 1e3,
                         _best(lambda: bullet(*lists[2], threads), 1, 3) * 1e3))
        hits = bullet(*lists[0], 1)
        theirs = np.array([h[0] >= 0 for h in hits])
        agree = np.mean(theirs == (ours_small.body >= 0))
        close = np.abs(np.array([h[2] for h in hits]) - ours_small.fraction)
        print(f"sanity: hit/no-hit of the 1,000 rays agrees with PyBullet on {agree:.1%}; "
              f"median |fraction difference| {np.median(close):.2e}")
        pb.disconnect(physicsClientId=client)
    try:
        import mujoco
    except ImportError:
        mujoco = None
    if mujoco is not None:
        sim_mj = scenes.mujoco_s3(scenes.read_box_pile(scenes.BOX_PILE_WORLD))
        model, data = _mujoco_model_data(sim_mj)
        mujoco.mj_forward(model, data)

        def multiray(o, e):
            v = e - o
            length = np.linalg.norm(v, axis=1)
            vec = np.ascontiguousarray(v / length[:, None]).reshape(-1)
            geomid = np.empty(len(o), np.int32)
            dist = np.empty(len(o))
            cutoff = float(length.max())
            # (mujoco 4: pnt, vec, geomgroup, flg_static, bodyexclude, geomid, dist, normal,
            # nray, cutoff)
            return lambda: mujoco.mj_multiRay(model, data, np.asarray(o[0]), vec, None, 1, -1,
                                              geomid, dist, None, len(o), cutoff)

        rows.append(("MuJoCo (pile only)", 1, _best(multiray(*small), 200) * 1e6,
                     _best(multiray(*large), 3) * 1e3, _best(multiray(*sweep), 5) * 1e3))
    print(f"\nRays from {RAY_ORIGIN} onto S3's pile + kuka iiwa (MuJoCo: pile only); "
          f"lidar {LIDAR_RINGS} x {LIDAR_AZIMUTHS}, {LIDAR_RANGE:g} m")
    print(f"{'engine':<20} {'threads':>7} {'µs / 1k rays':>13} {'ms / 100k':>10} "
          f"{'ms / lidar sweep':>17} {'issue (1k, 100k)':>18}")
    for name, threads, us_1k, ms_100k, ms_lidar in rows:
        ref = ISSUE_REFERENCE.get((name.split(" ")[0], threads))
        ref_text = (f"{ref[0]:.0f} µs, " + (f"{ref[1]:.1f} ms" if ref[1] else "-")) if ref else ""
        print(f"{name:<20} {threads:>7} {us_1k:>13.1f} {ms_100k:>10.2f} {ms_lidar:>17.2f} "
              f"{ref_text:>18}")


def _mujoco_model_data(sim):
    # scenes.mujoco_s3 keeps its model and data in the step closure
    names = sim.step.__code__.co_freevars
    cells = dict(zip(names, (c.cell_contents for c in sim.step.__closure__)))
    return cells["model"], cells["data"]


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
          "TinyRenderer | sim_node (best) / PyBullet | Embree rays |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        embree = f"{row['Embree rays']:.1f}" if "Embree rays" in row else "-"
        best = max(row["ours 1t"], row["ours 2t"])
        print(f"| {row['scene']} | {row['size']} | {row['triangles']:,} | {row['ours 1t']:.1f} "
              f"| {row['ours 2t']:.1f} | {row['PyBullet']:.1f} | "
              f"{best / row['PyBullet']:.1f}x | {embree} |")


SECTIONS = {"rays": rays, "camera": camera}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), default=sorted(SECTIONS))
    args = parser.parse_args(argv)
    for name in args.only:
        SECTIONS[name](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
