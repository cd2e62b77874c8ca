"""The node's own viewer (parameters ``viewer:=true``, ``viewer_port``): the page served from the
simulation node's process, fed with what the node publishes (sim_node/ros/view.py translates).

The node hands every message it publishes to `NodeViewer.tap` (on the publishing thread: the
simulation thread for the per-step topics). The tap keeps a reference to the newest message
of each kind and nothing else: no copy, no deserialization, no lock. The drawing thread reads
those at most `rate` (the node's viewer_rate, <= MAX_RATE) times a second of wall time and
draws them; the simulation never waits for it. Bodies are drawn from the node's own models
(every visual mesh, objects and terrains included), taken when the node publishes
/tf_static: at start and after every spawn, delete and reset, on the thread that changed the
world.

The buttons and the RTF slider call the node's services and real_time_factor parameter from a
client node of the viewer (`sim_viewer`, its own executor thread), as `sim_node view` does.
"""
from __future__ import annotations

import threading

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from sim_node.ros.namespaces import robot_prefix
from sim_node.ros.view import (CAMERA_INFO_TYPE, CLOUD_TYPE, MAX_RATE, SCAN_TYPE, DrawingThread,
                               Latest, RosScene, ServiceControls, serve, stop_server)

DEFAULT_PORT = 8080
STATIC_QOS = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                        reliability=ReliabilityPolicy.RELIABLE)
SENSOR_TYPES = {"CameraInfo": CAMERA_INFO_TYPE, "LaserScan": SCAN_TYPE,
                "PointCloud2": CLOUD_TYPE}


class NodeViewer:
    """The viewer of SimNode `node` on http://`host`:`port` (0: any free port; host 127.0.0.1:
    this machine only, 0.0.0.0: every interface). Prints the URL on one line. ValueError for
    a malformed host or port, OSError (naming the port) when it cannot be served there."""

    def __init__(self, node, port: int = DEFAULT_PORT, host: str = "127.0.0.1",
                 rate: float = MAX_RATE):
        if not 0.0 < rate <= MAX_RATE:      # before anything is served
            raise ValueError(f"parameter viewer_rate must be in (0, {MAX_RATE:g}] Hz, got "
                             f"{rate!r}")
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        from sim_node.viewer.scene import ViewerScene

        self.node = node
        name = node.get_fully_qualified_name()
        self._contacts_topic = f"{name}/contacts"
        self._status_topic = f"{name}/status"
        self.server = serve(host, port, "parameter viewer_host / viewer_port")
        self.scene = ViewerScene(self.server)        # lights without shadows (cheap pages)
        self.latest = Latest()
        self._tf: dict = {}             # publisher -> its newest /tf message
        self.idle_without_pages = True  # draw only while a browser has the page open
        logger = node.get_logger()
        self.ros_scene = RosScene(self.scene, self.latest, log=logger.warning)
        self.ros_scene.status_word = "starting"
        self._client = rclpy.create_node("sim_viewer", namespace=node.get_namespace(),
                                         context=node.context)
        self.controls = ServiceControls(self._client, name, self.ros_scene, log=logger.warning)
        self.controls.attach(self.scene)
        self._executor = SingleThreadedExecutor(context=node.context)
        self._executor.add_node(self._client)
        self._stop = threading.Event()
        self._spinner = threading.Thread(target=self._spin, name="sim_node viewer controls",
                                         daemon=True)
        self._spinner.start()
        # what the node published before its viewer existed: its static frames, the bodies;
        # and every /tf_static publisher's last message (plugins' too: a camera's optical
        # frame), transient local, through the client node
        self.latest.tf_static.append(node.frames.static(node.sim.getTime()))
        self._client.create_subscription(TFMessage, "/tf_static", self._static_frames,
                                         STATIC_QOS, raw=True)
        self.world_changed()
        self.drawing = DrawingThread(self.draw, rate, log=logger.warning)
        self.drawing.start()
        print(f"sim_node viewer: {self.scene.url}", flush=True)

    @property
    def url(self) -> str:
        return self.scene.url

    def _spin(self):
        while not self._stop.is_set() and self.node.context.ok():
            try:
                self._executor.spin_once(timeout_sec=0.1)
            except Exception:       # noqa: BLE001 (the context is going down)
                return

    # -- the publishing side (keep references only) -------------------------------------------
    def tap(self, topic: str, msg_type, message, publisher) -> None:
        """A message the node just published on `topic` (resolved name)."""
        latest = self.latest
        if topic == "/tf":
            self._tf[publisher] = message       # each publisher sends its whole set
        elif topic == "/clock":
            latest.clock = message
        elif topic == "/tf_static":
            # the node sends it at start and after every change of the world (spawn, delete,
            # reset), from the thread that made the change: the world is whole here
            latest.tf_static.append(message)
            self.world_changed()
        elif topic == self._contacts_topic:
            latest.contacts = message
        elif topic == self._status_topic:
            latest.status = message
        else:
            kind = SENSOR_TYPES.get(msg_type.__name__)
            if kind is not None:
                latest.sensors[topic] = (kind, message, msg_type)

    def _static_frames(self, data: bytes) -> None:
        self.latest.tf_static.append(data)

    def world_changed(self) -> None:
        """Take the world's bodies (on the thread that changed it)."""
        world = self.node.world
        entities = [("robot", world.robot(i).getName(), world.robot(i),
                     robot_prefix(world.robot(i))) for i in range(world.numRobots())]
        entities += [("object", world.rigidObject(i).getName(), world.rigidObject(i), "")
                     for i in range(world.numRigidObjects())]
        entities += [("terrain", world.terrain(i).getName(), world.terrain(i), "")
                     for i in range(world.numTerrains())]
        self.latest.entities = tuple(entities)

    # -- the drawing side ----------------------------------------------------------------------
    def draw(self):
        """Draw what the node published since the last draw (the drawing thread); nothing while
        no page is open (idle_without_pages): a page opened later gets the scene as last drawn
        and then the changes since."""
        if self.idle_without_pages and not self.server.get_clients():
            return
        for publisher in list(self._tf):
            message = self._tf.pop(publisher, None)
            if message is not None:
                self.latest.tf.append(message)
        self.ros_scene.draw()

    def close(self) -> None:
        self.drawing.stop()
        self.node.get_logger().info(self.drawing.summary())
        self._stop.set()
        self._spinner.join(timeout=5.0)
        self._executor.shutdown()
        self._client.destroy_node()
        stop_server(self.server)

