"""Viewer benchmark: does the node's own viewer slow the simulation? (issue 15: < 10 %)

The node (`python -m sim_node`, bench/node.py's process and client) runs the default world as
shipped (both robots, the camera at 30 Hz, the lidar at 10 Hz) with real_time_factor 0 (as
fast as possible) in three set-ups, measured alike:
  off        no viewer
  viewer     viewer:=true, no page open
  browser    viewer:=true and the page open in a headless chromium (tests/viewer/
             headless_browser.py: software WebGL, on the same machine) that has drawn the
             world before the run starts
RTF = sim time over wall time between the ~/status messages (2 Hz) of a window of --seconds
after a warm-up of 0.5 s of sim time, as bench/node.py's N1. The set-ups take turns, --runs
times (so that a change of the machine's load hits them alike); the medians are compared.
Besides (less sensitive to the machine's load than the RTF): the node process's CPU time per
second of sim time over the same window (/proc/PID/stat: every thread, viser's included), and
the drawing thread's own CPU time per frame (the node logs it when it stops), and the cores the
browser's own processes take meanwhile (software rendering competes with the node for them).

    python bench/viewer.py [--seconds 10] [--runs 3] [--json out.json]
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
SETUPS = ("off", "viewer", "browser")


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


def run(setup: str, seconds: float) -> tuple:
    """(RTF, node CPU seconds per second of sim time, the Node) of one set-up (module
    docstring)."""
    from sim_node.msg import SimStatus

    params = dict(real_time_factor=0.0, paused=True, status_rate=2.0)
    if setup != "off":
        params.update(viewer=True, viewer_port=0)
    node = Node(**params)
    client = Client()
    browser = None
    try:
        if setup == "browser":
            from headless_browser import scene_node_names, start_browser, triangles_drawn

            browser = start_browser()
            browser.get(_url(node))
            deadline = time.monotonic() + START_TIMEOUT
            while not (any(n.startswith("/world/arm/") for n in scene_node_names(browser))
                       and triangles_drawn(browser) > 1000):
                if time.monotonic() > deadline:
                    raise TimeoutError("the page did not draw the world")
                time.sleep(0.2)
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
        return sim / (wall1 - wall0), (cpu1 - cpu0) / sim, node
    finally:
        if browser is not None:
            from headless_browser import stop_browser

            stop_browser(browser)
        client.close()
        node.text = node.stop()
        if "Traceback" in node.text:
            print(node.text, file=sys.stderr)


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured wall time per run")
    parser.add_argument("--runs", type=int, default=3, help="runs of each set-up")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    rtf = {setup: [] for setup in SETUPS}
    cpu = {setup: [] for setup in SETUPS}
    draw = {setup: [] for setup in SETUPS[1:]}
    browser_cores = []
    for k in range(args.runs):
        for setup in SETUPS:
            value, cpu_per_sim, node = run(setup, args.seconds)
            rtf[setup].append(value)
            cpu[setup].append(cpu_per_sim)
            if setup != "off":
                draw[setup].append(_draw_cost(node.text))
            if setup == "browser":
                browser_cores.append(node.browser_cores)
            print(f"run {k + 1}/{args.runs} {setup:8s} RTF {value:.2f}, node CPU "
                  f"{cpu_per_sim:.3f} s per s of sim time"
                  + (f", {draw[setup][-1]} ms per frame drawn" if setup != "off" else "")
                  + (f", browser {node.browser_cores:.2f} cores" if setup == "browser"
                     else ""), flush=True)
    median = {setup: statistics.median(values) for setup, values in rtf.items()}
    print(f"\nnode RTF, default world, real_time_factor 0, {args.runs} runs of "
          f"{args.seconds:g} s, median (all runs):")
    for setup in SETUPS:
        drop = 100.0 * (1.0 - median[setup] / median["off"])
        print(f"  {setup:8s} {median[setup]:6.2f}  "
              f"({', '.join(f'{v:.2f}' for v in rtf[setup])})"
              + ("" if setup == "off" else f"   drop {drop:+.1f} %  (goal < 10 %)"))
    print("node CPU time per second of sim time, median:")
    cpu_median = {setup: statistics.median(values) for setup, values in cpu.items()}
    for setup in SETUPS:
        more = 100.0 * (cpu_median[setup] / cpu_median["off"] - 1.0)
        print(f"  {setup:8s} {cpu_median[setup]:6.3f} s"
              + ("" if setup == "off" else f"   {more:+.1f} %"))
    for setup, values in draw.items():
        known = [v for v in values if v is not None]
        if known:
            print(f"drawing thread ({setup}): {statistics.median(known):.2f} ms of CPU per "
                  f"frame (median)")
    print(f"the browser's processes (software WebGL): {statistics.median(browser_cores):.2f} "
          f"cores (median) of the machine's {os.cpu_count()}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rtf": rtf, "median": median, "cpu": cpu,
                                               "draw_ms": draw,
                                               "browser_cores": browser_cores}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
