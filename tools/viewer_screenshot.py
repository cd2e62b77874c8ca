"""Take docs/viewer.png: the default world in the live viewer, in headless chromium.

    ./dev python tools/viewer_screenshot.py [out.png]

Runs the default world for 2 s of simulated time, pauses, loads the page (tests/viewer's
headless browser helpers), closes viser's "software WebGL" notice and saves a 1280 x 800 shot.
"""
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "viewer"))

from headless_browser import start_browser, stop_browser, wait_until  # noqa: E402

from sim_node import Simulator, WorldModel  # noqa: E402
from sim_node.resources import default_world  # noqa: E402
from sim_node.viewer import Viewer  # noqa: E402


def main(out: Path) -> None:
    world = WorldModel()
    world.readFile(str(default_world()))
    viewer = Viewer(Simulator(world), port=0)
    viewer.show()
    viewer.rtf = 0.0
    viewer.run(duration=2.0, dt=0.01)
    viewer.pause()
    thread = threading.Thread(target=viewer.run, daemon=True)
    thread.start()
    driver = start_browser((1280, 800))
    try:
        driver.get(viewer.url)
        wait_until(lambda: "status paused" in driver.find_element("tag name", "body").text,
                   timeout=120, what="the page")
        for button in driver.find_elements(
                "xpath", "//*[contains(@class, 'Notification')]//button"):
            driver.execute_script("arguments[0].click();", button)
        time.sleep(3.0)                      # let the software renderer finish its frames
        driver.save_screenshot(str(out))
    finally:
        stop_browser(driver)
        viewer.close()
        thread.join(timeout=10)
    print(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "viewer.png")
