"""The browser fixture itself: WebGL draws where a test expects it, screenshots show it, and
stopping leaves no chromium process behind."""
import os

import numpy as np
import pytest

from headless_browser import _children, distinct_colours, screenshot_rgb, stop_browser

# A 200x100 WebGL canvas at the page's top-left corner: left half red, right half blue
# (scissored clears), drawn once; preserveDrawingBuffer keeps it for the screenshot.
PAGE = """data:text/html,<body style="margin:0;background:rgb(0,255,0)">
<canvas id="c" width="200" height="100" style="display:block"></canvas><script>
const gl = document.getElementById('c').getContext('webgl2', {preserveDrawingBuffer: true});
gl.enable(gl.SCISSOR_TEST);
gl.scissor(0, 0, 100, 100); gl.clearColor(1, 0, 0, 1); gl.clear(gl.COLOR_BUFFER_BIT);
gl.scissor(100, 0, 100, 100); gl.clearColor(0, 0, 1, 1); gl.clear(gl.COLOR_BUFFER_BIT);
</script></body>"""


def test_webgl_canvas_appears_in_the_screenshot_where_it_was_drawn(browser):
    browser.get(PAGE)
    canvas = browser.find_element("id", "c")
    rgb = screenshot_rgb(browser, canvas)
    assert rgb.shape == (100, 200, 3)
    assert distinct_colours(rgb) == 2
    np.testing.assert_array_equal(rgb[50, 50], [255, 0, 0])
    np.testing.assert_array_equal(rgb[50, 150], [0, 0, 255])
    page = screenshot_rgb(browser)
    np.testing.assert_array_equal(page[150, 50], [0, 255, 0])   # below the canvas: the body


def test_webgl_renderer_is_software_swiftshader(browser):
    renderer = browser.execute_script(
        "const gl = document.createElement('canvas').getContext('webgl2');"
        "const info = gl.getExtension('WEBGL_debug_renderer_info');"
        "return gl.getParameter(info.UNMASKED_RENDERER_WEBGL);")
    assert "SwiftShader" in renderer


def test_stop_browser_leaves_no_process(browser):
    driver_pid = browser.service.process.pid
    started = _children(driver_pid)
    assert started, "chromedriver started no chromium"
    stop_browser(browser)
    for pid in [driver_pid, *started]:
        assert not _alive(pid), f"process {pid} survived stop_browser"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"   # a zombie is gone
    except FileNotFoundError:
        return False


def test_a_viser_scene_draws_in_the_headless_browser(browser):
    """The whole chain the viewer tests rely on: viser's client (served from its wheel, no
    network) loads, connects and three.js draws a red box at the middle of its canvas."""
    import viser

    from headless_browser import wait_until

    server = viser.ViserServer(port=0, verbose=False)     # port 0: a free port
    try:
        server.scene.add_box("/box", dimensions=(1.0, 1.0, 1.0), color=(255, 0, 0))
        browser.get(f"http://localhost:{server.get_port()}")
        canvas = wait_until(lambda: browser.find_elements("tag name", "canvas"),
                            what="viser's canvas")[0]

        def red_at_centre():
            rgb = screenshot_rgb(browser, canvas).astype(int)
            h, w, _ = rgb.shape
            r, g, b = rgb[h // 2, w // 2]
            return r > 150 and g < 100 and b < 100 and distinct_colours(rgb) > 10

        wait_until(red_at_centre, what="the red box drawn at the canvas centre")
    finally:
        server.stop()
