"""Fixtures of the viewer tests: a headless chromium (tests/viewer/headless_browser.py).

    def test_page(browser):            # skips, naming what is missing, where chromium is absent
        browser.get(viewer.url)
"""
import pytest

from headless_browser import browser_session


@pytest.fixture
def browser():
    """A selenium WebDriver of a headless chromium with working software WebGL, quit and
    killed by PID afterwards."""
    yield from browser_session()
