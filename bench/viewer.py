"""Viewer benchmark: does the node's own viewer slow the simulation? (issue 15: < 10 %)

The node (`python -m sim_node`, bench/node.py's process and client) runs the default world as
shipped (both robots, the camera at 30 Hz, the lidar at 10 Hz) with real_time_factor 0 (as
fast as possible) in these set-ups, measured alike:
  off          no viewer
  viewer       viewer:=true, no page open
  page         viewer:=true and the page open in a headless chromium (tests/viewer/
               headless_browser.py: software WebGL, on the same machine, a --window canvas)
               that has drawn the world before the run starts: what a user of a machine with
               this many cores sees (the browser and the node share the cores)
  off-pinned   no viewer, the node's threads pinned to core 0 (taskset's sched_setaffinity)
  page-pinned  the page open, the node pinned to core 0 and the browser's processes to the
               other cores: the node's own cost of serving a page (drawing thread, viser's
               sender), compared with off-pinned, apart from the browser's rendering
  busy-pinned  no viewer on the node (pinned to core 0), while on the other cores the browser
               renders a live page of the same world served by THIS process (an in-process
               sim_node.viewer.Viewer of its own simulation, published at 30 Hz): what a
               browser rendering beside a pinned node costs it through the machine (shared
               caches, memory bandwidth, the hypervisor), without any work of the node's.
               page-pinned against busy-pinned is the node's own cost of its viewer.
RTF = sim time over wall time between the ~/status messages (2 Hz) of a window of --seconds
after a warm-up of 0.5 s of sim time, as bench/node.py's N1. The set-ups take turns, --runs
times (so that a change of the machine's load hits them alike); the medians are compared.
Besides (less sensitive to the machine's load than the RTF): the node process's CPU time per
second of sim time over the same window (/proc/PID/stat: every thread; page-pinned against
off-pinned is what serving a page costs the node: drawing thread, viser's sender, the GIL
they take), the cores the node and the browser's processes take (CPU seconds per second of
wall time), and the drawing thread's CPU time per frame (the node logs it when it stops).
Python threads carry no OS name, so viser's sender is not measured apart.

    python bench/viewer.py [--seconds 10] [--runs 3] [--window 800x600] [--json out.json]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: idle OpenBLAS threads spin

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "tests" / "viewer"))

from node import START_TIMEOUT, WARM_UP_NS, Client, Node, ns  # noqa: E402

URL_LINE = re.compile(r"sim_node viewer: (http://localhost:\d+)")
SETUPS = ("off", "viewer", "page", "off-pinned", "busy-pinned", "page-pinned")
BASELINE = {"viewer": "off", "page": "off", "busy-pinned": "off-pinned",
            "page-pinned": "busy-pinned"}
NODE_CORE = 0                  # the pinned set-ups' node core; the browser gets the others


def _url(node: Node) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        node.log.seek(0)
        match = URL_LINE.search(node.log.read())
        if match:
            return match.group(1)
        if node.process.poll() is not None:
            raise RuntimeError(f"the node exited: {node.stop()}")
        time.sleep(0.1)
    raise TimeoutError("no viewer URL from the node")


def _pin(pid: int, cores: set) -> None:
    """Every thread of process `pid` onto `cores` (threads made later inherit it)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            os.sched_setaffinity(int(task.name), cores)
        except OSError:         # ended meanwhile
            pass


def _pin_browser(driver, cores: set) -> None:
    from headless_browser import _children

    for pid in [driver.service.process.pid, *_children(driver.service.process.pid)]:
        try:
            _pin(pid, cores)
        except OSError:
            pass


def run(setup: str, seconds: float, window: tuple) -> tuple:
    """(RTF, node CPU seconds per second of sim time, the Node) of one set-up (module
    docstring); the Node carries cores and browser_cores (CPU seconds per second of wall
    time of the node's and the browser's processes) and text (its log)."""
    from sim_node.msg import SimStatus

    params = dict(real_time_factor=0.0, paused=True, status_rate=2.0)
    pinned = setup.endswith("-pinned")
    if not setup.startswith("off"):
        params.update(viewer=True, viewer_port=0)
    node = Node(**params)
    client = Client()
    browser = busy = None
    others = set(range(os.cpu_count() or 1)) - {NODE_CORE}
    if pinned and not others:
        raise RuntimeError("the pinned set-ups need two cores or more")
    try:
        if pinned:
            _pin(node.process.pid, {NODE_CORE})
        if setup == "busy-pinned":
            busy = _BusyPage(others)
        if setup.startswith("page") or busy is not None:
            from headless_browser import scene_node_names, start_browser, triangles_drawn

            browser = start_browser(window)
            if pinned:
                _pin_browser(browser, others)
            browser.get(busy.url if busy is not None else _url(node))
            deadline = time.monotonic() + START_TIMEOUT
            while not (any(n.startswith("/world/arm/") for n in scene_node_names(browser))
                       and triangles_drawn(browser) > 1000):
                if time.monotonic() > deadline:
                    raise TimeoutError("the page did not draw the world")
                time.sleep(0.2)
            if pinned:
                _pin(node.process.pid, {NODE_CORE})     # threads the node made meanwhile
                _pin_browser(browser, others)           # the renderer and GPU processes
        elif setup == "viewer":
            _url(node)
        status = []
        client.node.create_subscription(
            SimStatus, "/sim/status", lambda m: status.append((time.monotonic(), m)), 100)
        client.play()
        deadline = time.monotonic() + START_TIMEOUT
        while not any(ns(m.sim_time) >= WARM_UP_NS for _, m in status):
            if time.monotonic() > deadline:
                raise TimeoutError("no ~/status past the warm-up")
            time.sleep(0.05)
        start = len(status)
        cpu0, browser0 = _cpu_seconds(node.process.pid), _browser_cpu(browser)
        time.sleep(seconds)
        (wall0, first), (wall1, last) = status[start - 1], status[-1]
        cpu1, browser1 = _cpu_seconds(node.process.pid), _browser_cpu(browser)
        sim = (ns(last.sim_time) - ns(first.sim_time)) * 1e-9
        node.browser_cores = (browser1 - browser0) / (wall1 - wall0)
        node.cores = (cpu1 - cpu0) / (wall1 - wall0)
        return sim / (wall1 - wall0), (cpu1 - cpu0) / sim, node
    finally:
        if browser is not None:
            from headless_browser import stop_browser

            stop_browser(browser)
        if busy is not None:
            busy.close()
            os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
        client.close()
        node.text = node.stop()
        if "Traceback" in node.text:
            print(node.text, file=sys.stderr)


class _BusyPage:
    """This process, pinned to `cores`, serving a live page of the default world: its own
    Simulator stepped and published at 30 Hz by a thread, through the in-process Viewer."""

    def __init__(self, cores: set):
        import threading

        import sim_node
        from sim_node.viewer import Viewer

        os.sched_setaffinity(0, cores)          # this thread; the ones made below inherit it
        world = sim_node.WorldModel()
        world.readFile(str(BENCH.parent / "data" / "worlds" / "default.yaml"))
        self.sim = sim_node.Simulator(world)
        self.viewer = Viewer(self.sim, port=0, controls=False)
        self.url = self.viewer.show()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(1 / 30):
            self.sim.simulate(1 / 30)
            self.viewer.publish()

    def close(self):
        self._stop.set()
        self._thread.join()
        self.viewer.close()


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, every thread [s]."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _browser_cpu(driver) -> float:
    """CPU time of every process of the browser (chromedriver's descendants) [s]."""
    if driver is None:
        return 0.0
    from headless_browser import _children

    total = 0.0
    for pid in _children(driver.service.process.pid):
        try:
            total += _cpu_seconds(pid)
        except OSError:         # ended meanwhile
            pass
    return total


def _draw_cost(log: str) -> float | None:
    """[ms] of the drawing thread's CPU per frame, from the node's log line."""
    match = re.search(r"viewer: \d+ frames drawn in \d+ s, ([\d.]+) ms of CPU per frame", log)
    return float(match.group(1)) if match else None


def _window(text: str) -> tuple:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--window: WIDTHxHEIGHT in CSS pixels, got "
                                         f"{text!r}") from None
    return width, height


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured wall time per run")
    parser.add_argument("--runs", type=int, default=3, help="runs of each set-up")
    parser.add_argument("--window", type=_window, default=(800, 600),
                        help="the browser's window, WIDTHxHEIGHT CSS pixels (default 800x600)")
    parser.add_argument("--setups", default=",".join(SETUPS),
                        help=f"comma-separated, of {', '.join(SETUPS)} (default: all)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    setups = [s for s in args.setups.split(",") if s]
    unknown = [s for s in setups if s not in SETUPS]
    if unknown:
        parser.error(f"--setups: unknown {unknown}; known: {', '.join(SETUPS)}")
    keys = ("rtf", "cpu", "cores", "browser", "draw")
    results = {setup: {key: [] for key in keys} for setup in setups}
    for k in range(args.runs):
        for setup in setups:
            value, cpu_per_sim, node = run(setup, args.seconds, args.window)
            r = results[setup]
            r["rtf"].append(value)
            r["cpu"].append(cpu_per_sim)
            r["cores"].append(node.cores)
            r["browser"].append(node.browser_cores)
            r["draw"].append(_draw_cost(node.text))
            print(f"run {k + 1}/{args.runs} {setup:11s} RTF {value:6.2f}, node "
                  f"{cpu_per_sim:.3f} CPU s per s of sim time, {node.cores:.2f} cores, "
                  f"browser {node.browser_cores:.2f} cores, drawing "
                  f"{r['draw'][-1]} ms per frame", flush=True)

    def med(setup, key):
        values = [v for v in results[setup][key] if v is not None]
        return statistics.median(values) if values else None

    print(f"\ndefault world, real_time_factor 0, browser window {args.window[0]}x"
          f"{args.window[1]}, {args.runs} runs of {args.seconds:g} s, medians; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end")
    print(f"{'set-up':12s} {'RTF':>7s} {'drop':>8s} {'CPU s/sim s':>12s} {'node cores':>11s} "
          f"{'browser cores':>14s} {'draw ms/frame':>14s}")
    for setup in setups:
        base = BASELINE.get(setup)
        rtf = med(setup, "rtf")
        drop = (f"{100.0 * (1.0 - rtf / med(base, 'rtf')):+7.1f}%"
                if base in results else "")
        draw = med(setup, "draw")
        print(f"{setup:12s} {rtf:7.2f} {drop:>8s} {med(setup, 'cpu'):12.3f} "
              f"{med(setup, 'cores'):11.2f} {med(setup, 'browser'):14.2f} "
              + (f"{draw:14.2f}" if draw is not None else f"{'':>14s}"))
    print("drop: against BASELINE (viewer, page: off; busy-pinned: off-pinned; page-pinned: "
          "busy-pinned, the node's own cost); goal < 10 %")
    if args.json:
        Path(args.json).write_text(json.dumps({"window": args.window, "results": results},
                                              indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
