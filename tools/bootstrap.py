#!/usr/bin/env python3
"""One-command development setup for sim_node (run with the system python3; ./dev calls it).

    python3 tools/bootstrap.py [-v]

Steps, each skipped when a stamp (a hash of its inputs) says it is up to date:

  a. .venv                 python3 -m venv (CPython 3.11: the ROS 2 Kilted wheels are cp311 only)
  b. Python requirements   pip install -r requirements/ros.txt -r requirements/dev.txt
  c. sim_node              editable pip install of this tree (entry points, Cython engine);
                           the in-place Cython build itself runs every time (it is incremental);
                           colcon (requirements/colcon.txt) in its own venv .venv/ros/colcon
  d. ROS interfaces        plain cmake builds into the prefix .venv/ros/install:
                             tf2_msgs, simulation_interfaces (vendor/; only if the wheels lack them)
                             sim_node (-DSIM_NODE_INTERFACES_ONLY=ON): its msg/srv, and the rest
                             of a complete ament prefix: lib/sim_node/sim_node (a launcher of
                             the venv's python), share/sim_node/{package.xml,launch,data}
                             (copies: rerun when data/ or launch/ change)
  e. wiring                _sim_node_ros_env.pth + module in the venv's site-packages, so that
                           .venv/bin/python finds all of it without any environment variables
  f. browser               Debian's chromium + chromium-driver (apt-get, as root) for the viewer's
                           browser tests, only when /usr/bin/chromium or /usr/bin/chromedriver is
                           missing; elsewhere (no apt-get, not root) those tests skip, saying why

Stamps live in .venv/ros/stamps; delete .venv to start from scratch. A failing step prints the
command and its output and exits non-zero; -v streams all output.
"""
import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
VENV_PYTHON = VENV / "bin" / "python"
ROS = VENV / "ros"                  # everything built by cmake lives below here
PREFIX = ROS / "install"            # install prefix of the interface packages
STAMPS = ROS / "stamps"
LOGS = ROS / "logs"
FIX_FILE = ROOT / "cmake" / "pip_wheels_fix.cmake"
REQUIREMENTS = [ROOT / "requirements" / "ros.txt", ROOT / "requirements" / "dev.txt"]
COLCON_REQUIREMENTS = ROOT / "requirements" / "colcon.txt"
COLCON_VENV = ROS / "colcon"        # colcon in a venv of its own (tests/ros/test_interfaces.py)
SITE_PACKAGES = VENV / "lib" / "python3.11" / "site-packages"
PACKAGING_FILES = [ROOT / "setup.py", ROOT / "setup.cfg", ROOT / "pyproject.toml"]
# Upstream interface packages that the ROS pip wheels do not provide, built from vendor/ when
# `import <name>.msg` fails with the wheels alone.
VENDORED = ["tf2_msgs", "simulation_interfaces"]
# The headless browser of the viewer tests (tests/viewer/conftest.py looks for these paths).
BROWSER_FILES = [Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")]
BROWSER_PACKAGES = ["chromium", "chromium-driver"]
# Name of the startup hook: sorts after __editable__*.pth, before ros_wheels_bootstrapper.pth.
HOOK_NAME = "_sim_node_ros_env"

VERBOSE = False


class SetupError(Exception):
    pass


def say(message):
    print(f"[setup] {message}", flush=True)


def run(command, log_name, env=None, cwd=ROOT):
    """Run a command; on failure raise SetupError with its output (kept in .venv/ros/logs)."""
    command = [str(part) for part in command]
    if VERBOSE:
        print("$ " + " ".join(command), flush=True)
        result = subprocess.run(command, cwd=cwd, env=env)
        output = ""
    else:
        result = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
        output = result.stdout
        if LOGS.parent.is_dir():
            LOGS.mkdir(exist_ok=True)
            (LOGS / f"{log_name}.log").write_text(output)
    if result.returncode != 0:
        message = f"command failed (exit {result.returncode}):\n  {' '.join(command)}"
        if not VERBOSE:
            tail = "\n".join(output.splitlines()[-200:])
            message += (f"\n--- output (last 200 lines; full log: .venv/ros/logs/{log_name}.log)"
                        f" ---\n{tail}")
        raise SetupError(message)
    return output


def digest(paths, *extra):
    """sha256 over the given files (recursing into directories) and extra strings."""
    sha = hashlib.sha256()
    for path in sorted(paths):
        if path.is_dir():
            files = sorted(p for p in path.rglob("*")
                           if p.is_file() and "__pycache__" not in p.parts)
        else:
            files = [path] if path.exists() else []
        for file in files:
            sha.update(str(file.relative_to(ROOT)).encode() + b"\0" + file.read_bytes() + b"\0")
    for item in extra:
        sha.update(str(item).encode() + b"\0")
    return sha.hexdigest()


class Stamp:
    """A step is up to date when its stamp file holds the digest of its current inputs."""

    def __init__(self, name, value):
        self.path = STAMPS / name
        self.value = value

    def current(self):
        return self.path.is_file() and self.path.read_text() == self.value

    def write(self):
        STAMPS.mkdir(parents=True, exist_ok=True)
        self.path.write_text(self.value)


def step(title, stamp, action, extra_ok=True):
    """Run action() unless stamp is current (and extra_ok); then record the stamp."""
    if stamp.current() and extra_ok:
        say(f"{title} (skipped: up to date)")
        return
    start = time.monotonic()
    say(f"{title} ...")
    action()
    stamp.write()
    say(f"{title}: done in {time.monotonic() - start:.0f} s")


def venv_env():
    """Environment for commands that use the venv and the prefix."""
    env = dict(os.environ)
    env["VIRTUAL_ENV"] = str(VENV)
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    prefixes = os.pathsep.join([str(PREFIX), str(VENV)])
    env["AMENT_PREFIX_PATH"] = prefixes
    env["CMAKE_PREFIX_PATH"] = prefixes
    env.pop("PYTHONPATH", None)   # nothing from the caller's shell may leak into the builds
    return env


# --- a. venv --------------------------------------------------------------------------------

def ensure_venv():
    if sys.version_info[:2] != (3, 11):
        raise SetupError(f"needs CPython 3.11 (the ROS 2 Kilted pip wheels are cp311 only); "
                         f"this is {sys.executable} {sys.version.split()[0]}")
    if VENV_PYTHON.exists():
        say(".venv (skipped: exists)")
        return
    say("creating .venv ...")
    run([sys.executable, "-m", "venv", VENV], "venv")


# --- b. + c. Python packages ----------------------------------------------------------------

def install_requirements():
    stamp = Stamp("requirements", digest(REQUIREMENTS, sys.version))
    command = [VENV_PYTHON, "-m", "pip", "install"]
    for requirement in REQUIREMENTS:
        command += ["-r", requirement]
    step("Python requirements (pip)", stamp, lambda: run(command, "pip-requirements"))


def install_sim_node():
    # Dependencies come from requirements/*.txt (pinned), hence --no-deps; without build
    # isolation the build uses the venv's pinned Cython and NumPy.
    stamp = Stamp("editable", digest(PACKAGING_FILES, digest(REQUIREMENTS)))
    command = [VENV_PYTHON, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
               "-e", ROOT, "--config-settings", "editable_mode=compat"]
    # The editable install compiles the engine in a throw-away directory, after which the
    # in-place build below (which checks build/lib.*) would compile everything again. An extra
    # distutils config file (DIST_EXTRA_CONFIG) points it at the build directories that
    # `setup.py build_ext` uses by default in this tree, so the second build finds it done.
    plat = f"{sysconfig.get_platform()}-{sys.implementation.cache_tag}"
    build_config = ROS / "editable-build.cfg"
    env = dict(venv_env(), DIST_EXTRA_CONFIG=str(build_config))

    def editable_install():
        build_config.write_text(f"[build_ext]\nbuild_lib = {ROOT}/build/lib.{plat}\n"
                                f"build_temp = {ROOT}/build/temp.{plat}\n")
        run(command, "pip-editable", env=env)

    installed = any(SITE_PACKAGES.glob("__editable__.sim_node-*.pth"))
    step("sim_node editable install", stamp, editable_install, extra_ok=installed)
    # Always: rebuild changed .pyx in place (fast when nothing changed).
    start = time.monotonic()
    run([VENV_PYTHON, "setup.py", "--quiet", "build_ext", "--inplace", "--parallel",
         str(os.cpu_count() or 1)], "cython", env=venv_env())
    say(f"Cython engine in place: {time.monotonic() - start:.1f} s")


def install_colcon():
    stamp = Stamp("colcon", digest([COLCON_REQUIREMENTS], sys.version))

    def install():
        run([sys.executable, "-m", "venv", "--clear", COLCON_VENV], "colcon-venv")
        run([COLCON_VENV / "bin" / "python", "-m", "pip", "install", "-r", COLCON_REQUIREMENTS],
            "colcon-pip")

    step("colcon (test tool, own venv)", stamp, install,
         extra_ok=(COLCON_VENV / "bin" / "colcon").exists())


# --- d. ROS interface packages ----------------------------------------------------------------

def missing_from_wheels(names):
    """Which of the packages `import <name>.msg` cannot find without our prefix."""
    code = ("import importlib, sys\n"
            f"sys.path[:] = [p for p in sys.path if not p.startswith({str(PREFIX)!r})]\n"
            f"for name in {names!r}:\n"
            "    try:\n"
            "        importlib.import_module(name + '.msg')\n"
            "    except ImportError:\n"
            "        print(name)\n")
    return run([VENV_PYTHON, "-c", code], "import-check", env=venv_env()).split()


def cmake_package(name, source, inputs, options=(), installs=(), interfaces=None):
    """Configure, build and install one ament_cmake package into PREFIX (stamped). installs:
    files (relative to PREFIX) besides share/<name>/package.xml whose absence means a rerun;
    interfaces: the directories of its interface definitions (default: the directories among
    inputs), whose set of files changing means a build from scratch."""
    build = ROS / "build" / name
    stamp = Stamp(f"cmake-{name}",
                  digest(inputs + [FIX_FILE, REQUIREMENTS[0]], PREFIX, *options))
    installed = all((PREFIX / path).exists()
                    for path in [f"share/{name}/package.xml", *installs])

    # rosidl leaves the generated code of a deleted interface in the build directory (and
    # installs it again), so a changed set of files means a build from scratch.
    file_set = Stamp(f"files-{name}", digest([], *sorted(
        str(p.relative_to(ROOT)) for path in (inputs if interfaces is None else interfaces)
        if path.is_dir() for p in path.rglob("*"))))

    def build_and_install():
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        remove_installed_files(build)   # what the previous build installed
        if not file_set.current():
            shutil.rmtree(build, ignore_errors=True)
        build.mkdir(parents=True, exist_ok=True)
        env = venv_env()
        run(["cmake", "-S", source, "-B", build, *generator,
             f"-DCMAKE_INSTALL_PREFIX={PREFIX}",
             f"-DCMAKE_PROJECT_INCLUDE={FIX_FILE}",
             f"-DPython3_EXECUTABLE={VENV_PYTHON}",
             "-DBUILD_TESTING=OFF", *options], f"cmake-{name}-configure", env=env)
        run(["cmake", "--build", build, "--parallel", str(os.cpu_count() or 1)],
            f"cmake-{name}-build", env=env)
        run(["cmake", "--install", build], f"cmake-{name}-install", env=env)
        file_set.write()

    step(f"ROS interfaces: {name} (cmake)", stamp, build_and_install, extra_ok=installed)


def remove_installed_files(build):
    manifest = build / "install_manifest.txt"
    if manifest.is_file():
        for line in manifest.read_text().splitlines():
            Path(line).unlink(missing_ok=True)


def forget_package(name):
    build = ROS / "build" / name
    if build.is_dir():
        remove_installed_files(build)
        shutil.rmtree(build)
    for stamp in (STAMPS / f"cmake-{name}", STAMPS / f"files-{name}"):
        stamp.unlink(missing_ok=True)


def build_interfaces():
    missing = missing_from_wheels(VENDORED)
    for name in VENDORED:
        if name in missing:
            package = ROOT / "vendor" / name
            cmake_package(name, package, [package])
        else:
            forget_package(name)   # a copy built earlier would now only get in the way
            say(f"ROS interfaces: {name} (skipped: importable without a local build)")
    interfaces = [ROOT / "msg", ROOT / "srv", ROOT / "action"]
    cmake_package("sim_node", ROOT,
                  [*interfaces, ROOT / "CMakeLists.txt", ROOT / "package.xml",
                   ROOT / "cmake" / "sim_node_launcher.sh.in", ROOT / "launch", ROOT / "data"],
                  options=["-DSIM_NODE_INTERFACES_ONLY=ON"],
                  installs=["lib/sim_node/sim_node", "share/sim_node/launch/sim.launch.py",
                            "share/sim_node/data/worlds/default.yaml"],
                  interfaces=interfaces)


# --- e. wiring --------------------------------------------------------------------------------

def wire_environment():
    """Install the startup hook into the venv (rewritten only when its content changes)."""
    files = {
        SITE_PACKAGES / f"{HOOK_NAME}.pth": f"import {HOOK_NAME}\n",
        SITE_PACKAGES / f"{HOOK_NAME}.py": (ROOT / "tools" / "ros_env_hook.py").read_text(),
    }
    changed = False
    for path, content in files.items():
        if not path.is_file() or path.read_text() != content:
            path.write_text(content)
            changed = True
    say("environment hook " + ("installed" if changed else "(skipped: up to date)"))


# --- f. browser -------------------------------------------------------------------------------

def install_browser():
    if all(path.exists() for path in BROWSER_FILES):
        say("browser: chromium + chromedriver (skipped: present)")
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        say("browser: chromium + chromedriver missing and not installable here (needs apt-get as "
            "root); the viewer's browser tests will skip")
        return
    start = time.monotonic()
    say("browser: apt-get install chromium chromium-driver ...")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    # Several worktrees may set up at once: wait for apt's locks instead of failing on them.
    apt = ["apt-get", "-o", "DPkg::Lock::Timeout=600", "-o", "Acquire::Retries=3"]
    install = [*apt, "install", "-y", "--no-install-recommends", *BROWSER_PACKAGES]
    try:
        run(install, "apt-browser", env=env)
    except SetupError:
        # A fresh machine has no (or stale) package lists.
        run([*apt, "update"], "apt-update", env=env)
        run(install, "apt-browser", env=env)
    missing = [str(path) for path in BROWSER_FILES if not path.exists()]
    if missing:
        raise SetupError(f"apt-get installed {' '.join(BROWSER_PACKAGES)} but {', '.join(missing)} "
                         f"is still missing")
    say(f"browser: done in {time.monotonic() - start:.0f} s")


def check():
    """The promise of this script: plain .venv/bin/python imports everything."""
    code = ("import rclpy, sim_node; from tf2_msgs.msg import TFMessage; "
            "from sim_node.msg import Contacts; from simulation_interfaces.srv import SpawnEntity")
    clean_env = {key: value for key, value in os.environ.items()
                 if key not in ("AMENT_PREFIX_PATH", "LD_LIBRARY_PATH", "PYTHONPATH",
                                "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    run([VENV_PYTHON, "-c", code], "check", env=clean_env, cwd="/")


def main():
    global VERBOSE
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="stream all command output")
    VERBOSE = parser.parse_args().verbose
    # A shell that sourced env.sh has PYTHONPATH set for foreign interpreters; the venv's own
    # tools (pip, the colcon venv) must not import through it.
    os.environ.pop("PYTHONPATH", None)
    start = time.monotonic()
    try:
        if shutil.which("cmake") is None:
            raise SetupError("cmake not found (apt-get install cmake g++)")
        VENV.mkdir(exist_ok=True)
        with open(VENV / ".setup.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)   # concurrent ./dev calls wait for each other
            ensure_venv()
            ROS.mkdir(exist_ok=True)
            install_requirements()
            install_sim_node()
            install_colcon()
            wire_environment()
            build_interfaces()
            install_browser()
            check()
    except SetupError as error:
        print(f"[setup] FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    say(f"ready in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
