"""A real headless browser for the viewer tests: Debian's chromium driven through selenium.

WebGL renders on the CPU (SwiftShader through ANGLE), so the viewer's three.js canvas draws on
machines without a GPU or a display server. `start_browser` checks that it really does: a WebGL
canvas cleared to red must read back red, or it raises `BrowserError` saying so.

`stop_browser` quits the driver and then kills, by PID, every process chromedriver had started
that is still alive (a crashed renderer or a hung quit must not leave chromium running).
"""
from __future__ import annotations

import io
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import numpy as np

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WINDOW = (1024, 768)          # CSS pixels; the device scale factor is forced to 1
SCREENSHOT_ATTEMPTS = 3

# --headless=new: the real browser without a window; --no-sandbox: tests run as root;
# --disable-dev-shm-usage: small /dev/shm in containers; the ANGLE/SwiftShader pair gives a
# software WebGL 2 (Chromium no longer falls back to SwiftShader on its own).
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--use-angle=swiftshader",
    "--use-gl=angle",
    "--enable-unsafe-swiftshader",
    "--ignore-gpu-blocklist",
    "--force-device-scale-factor=1",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--mute-audio",
)


class BrowserError(RuntimeError):
    pass


def missing_reason() -> str | None:
    """Why no browser test can run here, or None when chromium, chromedriver and selenium are
    present."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        return (f"headless browser not installed ({', '.join(missing)} missing): `./dev setup` "
                f"installs Debian's chromium and chromium-driver with apt-get when run as root")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (requirements/dev.txt; run ./dev setup)"
    return None


def _children(pid: int) -> list[int]:
    """PIDs of every descendant of `pid` (from /proc; the process tree at this moment)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # the command name (field 2) may hold spaces and parentheses: split after its ')'
            parents[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent:
                found.append(child)
                frontier.append(child)
    return found


def start_browser(window: tuple[int, int] = WINDOW):
    """A headless chromium WebDriver whose WebGL is known to draw. Raises BrowserError."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    profile = tempfile.mkdtemp(prefix="sim_node_chromium_")
    for flag in (*CHROMIUM_FLAGS, f"--window-size={window[0]},{window[1]}",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    # The driver named explicitly: selenium never tries to download one.
    service = Service(executable_path=str(CHROMEDRIVER))
    try:
        driver = webdriver.Chrome(options=options, service=service)
    except Exception as error:
        shutil.rmtree(profile, ignore_errors=True)
        raise BrowserError(f"chromium did not start under chromedriver: {error}") from error
    driver.sim_node_profile = profile
    try:
        pixel = driver.execute_script(_WEBGL_PROBE)
    except Exception:
        stop_browser(driver)
        raise
    if pixel != [255, 0, 0, 255]:
        stop_browser(driver)
        raise BrowserError(f"WebGL does not draw in headless chromium (a canvas cleared to red "
                           f"read back {pixel}); flags: {' '.join(CHROMIUM_FLAGS)}")
    return driver


_WEBGL_PROBE = """
const canvas = document.createElement('canvas'); canvas.width = canvas.height = 8;
const gl = canvas.getContext('webgl2');
if (!gl) return null;
gl.clearColor(1, 0, 0, 1); gl.clear(gl.COLOR_BUFFER_BIT);
const pixel = new Uint8Array(4); gl.readPixels(4, 4, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
return Array.from(pixel);
"""


def stop_browser(driver) -> None:
    """Quit the driver, then SIGKILL whatever chromedriver had started and is still alive."""
    process = getattr(driver.service, "process", None)
    leftovers = _children(process.pid) if process is not None else []
    try:
        driver.quit()
    except Exception:
        pass                   # killed below either way
    for pid in [*leftovers, *([process.pid] if process is not None else [])]:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if process is not None:
        try:
            process.wait(timeout=10)
        except Exception:
            pass
    shutil.rmtree(getattr(driver, "sim_node_profile", ""), ignore_errors=True)


def browser_session():
    """Generator behind the `browser` fixtures (tests/viewer/conftest.py and the ROS viewer
    tests): skips naming what is missing, fails when WebGL does not draw, always stops the
    browser."""
    import pytest

    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    try:
        driver = start_browser()
    except BrowserError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield driver
    finally:
        stop_browser(driver)


def scene_node_names(driver) -> list[str]:
    """The names of the nodes of the viser page's scene tree (its client's test hook)."""
    return driver.execute_script(
        "const tree = window.__viserSceneTree;"
        "return tree ? Object.keys(tree.getState()) : [];")


def triangles_drawn(driver) -> int:
    """Triangles three.js drew in the page's last frame (its client's test hook)."""
    return driver.execute_script(
        "const t = window.__viserTestpoints;"
        "return t ? t.rendererInfo.render.triangles : 0;")


def click_button(driver, label: str) -> None:
    """Click the page's button whose text is `label`."""
    driver.find_element("xpath", f"//button[normalize-space(.)='{label}']").click()


def screenshot_rgb(driver, element=None) -> np.ndarray:
    """The page as rendered (composited, so WebGL canvases included), (H, W, 3) uint8;
    cropped to `element`'s box when given."""
    from PIL import Image
    from selenium.common.exceptions import TimeoutException

    # a software-rendered WebGL frame on a loaded machine can take chromedriver's 10 s
    for attempt in range(SCREENSHOT_ATTEMPTS):
        try:
            png = driver.get_screenshot_as_png()
            break
        except TimeoutException:
            if attempt == SCREENSHOT_ATTEMPTS - 1:
                raise
    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    if element is None:
        return image
    box = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return [r.left, r.top, r.right, r.bottom];", element)
    left, top, right, bottom = (int(round(v)) for v in box)
    return image[max(top, 0):bottom, max(left, 0):right]


def distinct_colours(rgb: np.ndarray) -> int:
    """How many different RGB values an image holds (a blank canvas has one)."""
    return len(np.unique(rgb.reshape(-1, 3), axis=0))


def wait_until(predicate, timeout: float = 30.0, interval: float = 0.2, what: str = "condition"):
    """Poll `predicate()` until it returns something truthy; return it. Raises TimeoutError
    naming `what`. (A wait for the page to load, never a timing assertion.)"""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except Exception as error:      # the page may still be loading
            last_error = error
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not reached within {timeout:.0f} s"
                               + (f" (last error: {last_error})" if last_error else ""))
        time.sleep(interval)
