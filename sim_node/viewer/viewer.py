"""Viewer: a live web view of an in-process Simulator (Klamp't ``vis``-like: add, show, update).

Threads and the rate rule: the thread that steps the simulation only *copies* the state it
needs into a Snapshot (link frames, object poses, contacts, time) and swaps a reference — no
lock, no drawing; the viewer's own drawing thread reads the newest snapshot at most ``rate``
times a second (<= 30 Hz) and sends it to the browsers. A slow browser or network therefore
never slows the physics: it only sees fewer frames. ``run()`` publishes snapshots at most
``rate`` times a second of wall time (and after every single step while paused); code that
steps the simulator itself calls ``publish()`` (cheap) or ``update()`` (publish and draw now).

Controls in the page act on the simulator only through ``run()``: the buttons set flags that
the stepping thread reads between steps (Pause / Resume, Step one ``dt``, Reset to the state
the Simulator started in), and the RTF slider sets the pacing (0 = as fast as possible).
"""
from __future__ import annotations

import contextlib
import io
import math
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from sim_node.viewer.scene import ViewerScene, wxyz_of_matrix

MAX_RATE = 30.0          # [Hz] the drawing thread's ceiling (issue 15)
DEFAULT_PORT = 8080
MAX_RTF = 1e3            # DESIGN.md §8: real_time_factor 0 or [1e-3, 1e3]
MIN_RTF = 1e-3
RTF_WINDOW = 0.5         # [s of wall time] over which the measured RTF is averaged


@dataclass
class Snapshot:
    """What the drawing thread needs of one simulated instant (copies, never live views).

    robots: name -> (R (nlinks, 3, 3), p (nlinks, 3)) link frames in the world;
    objects: name -> (x, y, z, qx, qy, qz, qw); contacts: point (N, 3), normal (N, 3),
    normal force (N,) [N]; entities: the world's (name, model) pairs at that instant."""
    seq: int
    time: float
    status: str
    rtf: float
    robots: dict = field(default_factory=dict)
    objects: dict = field(default_factory=dict)
    contact_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    contact_normals: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    contact_forces: np.ndarray = field(default_factory=lambda: np.zeros(0))
    entities: tuple = ()
    cameras: dict = field(default_factory=dict)    # "robot/sensor" -> (xyz, wxyz, fov_y, aspect)
    lidars: dict = field(default_factory=dict)     # "robot/sensor" -> points (N, 3) world [m]


def quiet_server(host: str, port: int):
    """A viser server on host:port (0: any free port; a busy one moves to the next) that
    prints nothing: viser 1.1.1 prints a boxed banner even with verbose=False, and the
    viewer's rule is one line with the URL."""
    import viser

    with contextlib.redirect_stdout(io.StringIO()):
        return viser.ViserServer(host=host, port=port, verbose=False)


def stop_quietly(server) -> None:
    """Stop a viser server without its "Server stopped" line."""
    with contextlib.redirect_stdout(io.StringIO()):
        server.stop()


def _wxyz_of_xyzw(q) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    return q[..., [3, 0, 1, 2]]


class Viewer:
    """A live web view of `sim` (a sim_node Simulator) on http://host:port (module docstring).

    port: 8080 by default; 0 picks a free port (a busy port moves on to the next free one);
    host: "127.0.0.1" (this machine only) or "0.0.0.0" (every interface); rate: drawing rate
    ceiling [Hz] in (0, 30]; controls: show the Pause / Step / Reset buttons and the RTF
    slider (they act through run(); off when the stepping happens elsewhere, e.g. PyBullet's
    stepSimulation)."""

    def __init__(self, sim, port: int = DEFAULT_PORT, host: str = "127.0.0.1",
                 rate: float = MAX_RATE, controls: bool = True):
        rate = float(rate)
        if not (0.0 < rate <= MAX_RATE):
            raise ValueError(f"Viewer: rate must be in (0, {MAX_RATE:g}] Hz, got {rate!r}")
        port = int(port)
        if not 0 <= port <= 65535:
            raise ValueError(f"Viewer: port must be in 0..65535 (0: any free port), got {port}")
        self.sim = sim
        self.port, self.host, self.rate = port, str(host), rate
        self.controls = bool(controls)
        self.server = None
        self.scene: ViewerScene | None = None
        self._extras: dict = {}           # name -> (kind, item, options) added by the user
        self._snapshot: Snapshot | None = None
        self._seq = 0
        self._last_publish = -math.inf    # [s, perf_counter] of publish_at_rate's last copy
        self._drawn_seq = -1
        self._drawn_entities: dict = {}   # name -> model drawn
        self._thread = None
        self._stop = threading.Event()
        # flags the page's buttons set and run() reads (single attribute writes: no lock)
        self.paused = False
        self._step_requests = 0
        self._reset_requested = False
        self._rtf = 1.0
        self._rtf_from_code = False       # rtf's setter is moving the slider
        self._measured_rtf = float("nan")
        self.state = "idle"             # run(): "running", "paused"; "idle" outside run()

    # -- what to show -------------------------------------------------------------------------
    def add(self, name: str, item, color=None) -> None:
        """Show an extra item besides the simulated world: a RobotModel (drawn at its model
        configuration), a RigidObjectModel / TerrainModel / shape / GeometryElements (at its
        model transform), points (N, 3) [m], or a frame (R (3, 3), t (3,)). color: RGB in
        [0, 1]. The simulated world's robots, objects and terrains are shown without add."""
        name = str(name)
        if name in self._extras:
            self.remove(name)
        self._extras[name] = (item, color)
        if self.scene is not None:
            self._draw_extra(name, item, color)

    def remove(self, name: str) -> None:
        """Remove an item added with add()."""
        if self._extras.pop(name, None) is not None and self.scene is not None:
            self.scene.remove(name)
            self.scene.remove_debug(name)

    def _draw_extra(self, name, item, color):
        from sim_node.model.bodies import RigidObjectModel, TerrainModel
        from sim_node.model.robot import RobotModel

        scene = self.scene
        if isinstance(item, RobotModel):
            scene.set_robot(name, item)
            poses = {}
            for link in item.links():
                R, t = link.getTransform()
                poses[f"{name}/{link.getName()}"] = (t, wxyz_of_matrix(R))
            scene.update_poses(poses)
            return
        if isinstance(item, (RigidObjectModel, TerrainModel)):
            R, t = item.getTransform()
            scene.set_object(name, item, color=color, pose=(t, wxyz_of_matrix(R)))
            return
        if isinstance(item, tuple) and len(item) == 2 and np.shape(item[0]) == (3, 3):
            R, t = item
            scene.update_frames({name: (np.asarray(t, float), wxyz_of_matrix(R))})
            return
        if isinstance(item, np.ndarray) or (isinstance(item, list) and item
                                            and np.ndim(item) == 2):
            points = np.asarray(item, dtype=float).reshape(-1, 3)
            rgb = (0.1, 0.6, 0.1) if color is None else color
            scene.add_debug_points(name, points, np.tile(np.asarray(rgb[:3], float),
                                                         (len(points), 1)), size=2.0)
            return
        scene.set_object(name, item, color=color)

    # -- server -----------------------------------------------------------------------------
    @property
    def url(self) -> str | None:
        return None if self.scene is None else self.scene.url

    def show(self) -> str:
        """Start the web server and the drawing thread, print the URL on one line and return
        it (at once: the page stays live while the program runs)."""
        if self.scene is not None:
            return self.url
        self.server = quiet_server(self.host, self.port)
        self.scene = ViewerScene(self.server)
        if self.controls:
            self.scene.add_controls(on_pause=self._on_pause, on_step=self._on_step,
                                    on_reset=self._on_reset, on_rtf=self._on_rtf, rtf=self.rtf)
        for name, (item, color) in self._extras.items():
            self._draw_extra(name, item, color)
        self.publish()
        self._draw(self._snapshot)
        self._frame_world(self._snapshot)
        self._stop.clear()
        self._thread = threading.Thread(target=self._drawing_loop, name="sim_node viewer",
                                        daemon=True)
        self._thread.start()
        print(f"sim_node viewer: {self.url}", flush=True)
        return self.url

    def _frame_world(self, snap: Snapshot) -> None:
        """Point the browsers' initial camera at the robots and objects, from the front right
        and above, far enough to see them all."""
        points = [p for _, p in snap.robots.values()] + [
            np.asarray([row[:3] for row in snap.objects.values()]).reshape(-1, 3)]
        points = np.concatenate(points) if points else np.zeros((0, 3))
        if len(points) == 0:
            centre, radius = np.array([0.0, 0.0, 0.5]), 1.0
        else:
            centre = (points.min(axis=0) + points.max(axis=0)) / 2
            radius = max(0.5, float(np.linalg.norm(points - centre, axis=1).max()))
        direction = np.array([1.0, -1.0, 0.7]) / np.linalg.norm([1.0, -1.0, 0.7])
        self.scene.set_camera(centre + 2.5 * radius * direction, centre)

    def close(self) -> None:
        """Stop the drawing thread and the server (run() returns at its next step)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None
        if self.server is not None:
            stop_quietly(self.server)
            self.server = None
        self.scene = None

    def __enter__(self):
        self.show()
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the stepping side: snapshots ---------------------------------------------------------
    def publish(self) -> None:
        """Copy the simulator's current state into a new snapshot for the drawing thread (call
        it from the thread that steps the simulator, between steps)."""
        sim = self.sim
        world = sim.getWorld()
        robots = {}
        for r in range(world.numRobots()):
            robot = world.robot(r)
            robots[robot.getName()] = sim.getLinkTransforms(robot)
        poses = sim.getRigidObjectPoses()
        objects = {world.rigidObject(i).getName(): poses[i]
                   for i in range(world.numRigidObjects())}
        c = sim.getAllContacts()
        normals = np.asarray(c["normal"], dtype=float).reshape(-1, 3)
        force = np.asarray(c["force"], dtype=float).reshape(-1, 3)
        entities = tuple((e.getName(), e) for e in _entities(world))
        cameras, lidars = _sensors(sim)
        self._seq += 1
        self._snapshot = Snapshot(
            seq=self._seq, time=sim.getTime(), status=self._status_word(), rtf=self._measured_rtf,
            robots=robots, objects=objects,
            contact_points=np.array(c["point"], dtype=float).reshape(-1, 3),
            contact_normals=normals.copy(),
            # the force arrow shows the normal (pressing) part of the force on body 1
            contact_forces=np.abs(np.einsum("ij,ij->i", force, normals)),
            entities=entities, cameras=cameras, lidars=lidars)

    def publish_at_rate(self) -> None:
        """publish() unless one was published less than 1 / rate s of wall time ago (for
        stepping loops that call it after every step)."""
        now = time.perf_counter()
        if now - self._last_publish >= 1.0 / self.rate:
            self._last_publish = now
            self.publish()

    def update(self, timeout: float = 5.0) -> None:
        """Publish the current state and return once it is drawn (by the drawing thread, so
        that one thread draws; at most `timeout` s of waiting)."""
        self.publish()
        seq = self._snapshot.seq
        if self._thread is None:
            if self.scene is not None:
                self._draw(self._snapshot)
            return
        deadline = time.monotonic() + timeout
        while self._drawn_seq < seq and time.monotonic() < deadline and self.scene is not None:
            time.sleep(0.2 / self.rate)

    def _status_word(self) -> str:
        status = self.sim.getStatusString()
        if status != "normal":          # the engine's warning wins over running / paused
            return status
        return self.state

    # -- the drawing side ---------------------------------------------------------------------
    def _drawing_loop(self):
        period = 1.0 / self.rate
        while not self._stop.wait(period):
            snapshot = self._snapshot          # one reference read: the newest published
            if snapshot is not None and snapshot.seq != self._drawn_seq:
                try:
                    self._draw(snapshot)
                except Exception as exc:      # a closed server mid-draw; report, keep going
                    if self._stop.is_set():
                        return
                    print(f"sim_node viewer: drawing failed: {exc}", flush=True)

    def _draw(self, snap: Snapshot) -> None:
        scene = self.scene
        if scene is None or snap is None:
            return
        # one batch per frame: the browsers apply it at once, viser's sender wakes once
        with scene.server.atomic():
            self._draw_frame(scene, snap)
        self._drawn_seq = snap.seq

    def _draw_frame(self, scene: ViewerScene, snap: Snapshot) -> None:
        self._sync_entities(snap.entities)
        poses = {}
        for name, (R, p) in snap.robots.items():
            model = self._drawn_entities.get(name)
            if model is None:
                continue
            wxyz = wxyz_of_matrix(R)
            for i, link in enumerate(model.links()):
                poses[f"{name}/{link.getName()}"] = (p[i], wxyz[i])
        for name, row in snap.objects.items():
            poses[name] = (row[:3], _wxyz_of_xyzw(row[3:7]))
        scene.update_poses(poses)
        scene.update_contacts(snap.contact_points, snap.contact_normals, snap.contact_forces)
        if snap.cameras or snap.lidars:
            scene.update_sensors(snap.cameras, snap.lidars)
        scene.update_status(snap.time, snap.rtf, snap.status)

    def _sync_entities(self, entities) -> None:
        """Draw entities that appeared since the last frame (spawn), remove those gone."""
        from sim_node.model.bodies import TerrainModel
        from sim_node.model.robot import RobotModel

        current = dict(entities)
        for name in [n for n, m in self._drawn_entities.items() if current.get(n) is not m]:
            self.scene.remove(name)
            del self._drawn_entities[name]
        for name, model in current.items():
            if name in self._drawn_entities:
                continue
            if isinstance(model, RobotModel):
                self.scene.set_robot(name, model)
            elif isinstance(model, TerrainModel):
                R, t = model.getTransform()
                self.scene.set_terrain(name, model, pose=(t, wxyz_of_matrix(R)))
            else:
                self.scene.set_object(name, model)
            self._drawn_entities[name] = model

    # -- the page's buttons (viser threads: set flags only) ---------------------------------
    def _on_pause(self, paused: bool):
        self.paused = bool(paused)

    def _on_step(self):
        self._step_requests += 1

    def _on_reset(self):
        self._reset_requested = True

    def _on_rtf(self, rtf: float):
        if not self._rtf_from_code:
            self._rtf = _valid_rtf(rtf)

    @property
    def rtf(self) -> float:
        """The pacing of run(): simulated seconds per wall second, 0 = as fast as possible
        (DESIGN.md §8: 0 or [1e-3, 1e3]; a value in between is clamped). Set from code, it
        moves the page's RTF slider (to its end, 10, for a larger value); the slider sets it."""
        return self._rtf

    @rtf.setter
    def rtf(self, value: float) -> None:
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"Viewer.rtf must be a number (0: as fast as possible, or "
                             f"[{MIN_RTF:g}, {MAX_RTF:g}]), got {value!r}") from None
        if math.isnan(value) or value < 0.0:
            raise ValueError(f"Viewer.rtf must be 0 (as fast as possible) or in "
                             f"[{MIN_RTF:g}, {MAX_RTF:g}], got {value!r}")
        self._rtf = _valid_rtf(value)
        slider = self.scene.controls.get("rtf") if self.scene is not None else None
        if slider is not None:
            # the slider's own callback would clamp to its range: it ignores this move
            self._rtf_from_code = True
            try:
                slider.value = min(self._rtf, float(slider.max))
            finally:
                self._rtf_from_code = False

    def pause(self, paused: bool = True) -> None:
        """Pause (or resume) run() from code; the page shows it."""
        self.paused = bool(paused)
        if self.scene is not None:
            self.scene.set_paused(self.paused)

    # -- the runner -------------------------------------------------------------------------
    def run(self, duration: float | None = None, dt: float | None = None, control=None):
        """Step the simulator in the caller's thread until `duration` more seconds of
        simulated time have passed (None: until close()), honouring the page's controls:
        while paused no time passes and Step advances exactly one dt; Reset restores the
        state the Simulator started in (Simulator.reset); the RTF slider paces simulated
        against wall time (0: as fast as possible). dt: the step [s] (default: the
        simulator's getSimStep()); control(sim) is called before each step (a controller).
        Returns the simulated time at the end."""
        sim = self.sim
        dt = sim.getSimStep() if dt is None else float(dt)
        if not (0.0 < dt < math.inf):
            raise ValueError(f"Viewer.run: dt must be a positive time [s], got {dt!r}")
        if duration is not None and not (0.0 <= float(duration) < math.inf):
            raise ValueError(f"Viewer.run: duration must be a time >= 0 [s] or None, got "
                             f"{duration!r}")
        end = None if duration is None else sim.getTime() + float(duration)
        period = 1.0 / self.rate
        self.state = "running"
        pace_wall, pace_sim, pace_rtf = time.perf_counter(), sim.getTime(), self.rtf
        window = [(pace_wall, pace_sim)]
        try:
            while not self._stop.is_set():
                if end is not None and sim.getTime() >= end - 0.5 * dt:
                    break
                if self._reset_requested:
                    self._reset_requested = False
                    sim.reset()
                    end = None if duration is None else sim.getTime() + float(duration)
                    pace_wall, pace_sim = time.perf_counter(), sim.getTime()
                    window = [(pace_wall, pace_sim)]
                    self.publish()
                    continue
                if self.paused:
                    if self.state != "paused":
                        self.state = "paused"
                        self.publish()          # the page shows "paused" at once
                    if self._step_requests > 0:
                        self._step_requests -= 1
                        self._step(sim, dt, control)
                        self.publish()
                    else:
                        self._stop.wait(period / 4)
                    pace_wall, pace_sim = time.perf_counter(), sim.getTime()
                    window = [(pace_wall, pace_sim)]
                    continue
                self._step_requests = 0     # Step only means something while paused
                self.state = "running"
                self._step(sim, dt, control)
                now = time.perf_counter()
                if self.rtf != pace_rtf:
                    pace_wall, pace_sim, pace_rtf = now, sim.getTime(), self.rtf
                if pace_rtf > 0.0:          # sleep until wall time catches up with sim time
                    ahead = pace_wall + (sim.getTime() - pace_sim) / pace_rtf - now
                    if ahead > 0.0:
                        self._stop.wait(ahead)
                        now = time.perf_counter()
                window.append((now, sim.getTime()))
                while len(window) > 2 and now - window[0][0] > RTF_WINDOW:
                    window.pop(0)
                if now - window[0][0] > 0.0:
                    self._measured_rtf = (window[-1][1] - window[0][1]) / (now - window[0][0])
                self.publish_at_rate()
        finally:
            self.state = "idle"
            if self.scene is not None or self._snapshot is not None:
                self.publish()
        return sim.getTime()

    @staticmethod
    def _step(sim, dt, control):
        if control is not None:
            control(sim)
        sim.simulate(dt)


def _valid_rtf(rtf: float) -> float:
    return 0.0 if rtf <= 0.0 else min(max(float(rtf), MIN_RTF), MAX_RTF)


def _entities(world):
    for i in range(world.numRobots()):
        yield world.robot(i)
    for i in range(world.numRigidObjects()):
        yield world.rigidObject(i)
    for i in range(world.numTerrains()):
        yield world.terrain(i)


def _sensors(sim):
    """The robots' camera frustums {"robot/sensor": (xyz, wxyz, fov_y [rad], aspect)} and
    lidar points {"robot/sensor": (N, 3) world [m], the last scan's hits} (sim_node.sim.sensors;
    a camera's sensor frame is the optical one: z forward, x right, y down)."""
    cameras, lidars = {}, {}
    world = sim.getWorld()
    for r in range(world.numRobots()):
        controller = sim.controller(r)
        for sensor in controller.getSensors():
            kind = sensor.type()
            if kind not in ("CameraSensor", "LaserRangeSensor"):
                continue
            key = f"{world.robot(r).getName()}/{sensor.name()}"
            R, p = sensor.getTransformWorld()
            if kind == "CameraSensor":
                aspect = float(sensor.getSetting("xres")) / float(sensor.getSetting("yres"))
                cameras[key] = (np.array(p), wxyz_of_matrix(R),
                                float(sensor.getSetting("yfov")), aspect)
                continue
            ranges = np.asarray(sensor.getMeasurements(), dtype=float)
            directions = sensor.directions()
            if len(ranges) != len(directions):      # before the first scan
                continue
            hit = np.isfinite(ranges) & (ranges < float(sensor.getSetting("depthMaximum")))
            lidars[key] = p + (directions[hit] * ranges[hit, None]) @ np.asarray(R).T
    return cameras, lidars
