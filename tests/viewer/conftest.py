"""Fixtures of the viewer tests: a headless chromium (tests/viewer/headless_browser.py).

    def test_page(browser):            # skips, naming what is missing, where chromium is absent
        browser.get(viewer.url)
"""
import pytest

from headless_browser import BrowserError, missing_reason, start_browser, stop_browser


@pytest.fixture
def browser():
    """A selenium WebDriver of a headless chromium with working software WebGL, quit and
    killed by PID afterwards."""
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
