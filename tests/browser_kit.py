"""A real headless Chromium for the web page's tests: Debian's `chromium` driven by Playwright (no browser download).

Without a chromium binary the tests skip with the reason, except where MNEMO_REQUIRE_BROWSER=1 (CI's .ci/run sets
it): there a missing browser fails the run. Screenshots go to build/screenshots/ (or MNEMO_SCREENSHOTS).
"""
from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The chromium binary: MNEMO_CHROMIUM, else the first one on PATH."""
    given = os.environ.get("MNEMO_CHROMIUM")
    if given:
        return given
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


def screenshots() -> Path:
    """Where the screenshots of the pages go (made if missing)."""
    folder = Path(os.environ.get("MNEMO_SCREENSHOTS", ROOT / "build" / "screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def phone_page(executable: str) -> AsyncIterator[object]:
    """A page in a fresh headless Chromium with a phone's viewport (for a fixture)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, headless=True,
                                           args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        context = await browser.new_context(viewport={"width": 412, "height": 860}, device_scale_factor=2,
                                            locale="de-DE")
        page = await context.new_page()
        try:
            yield page
        finally:
            await context.close()
            await browser.close()


def need_chromium() -> str:
    """The chromium binary, or skip (fail under MNEMO_REQUIRE_BROWSER=1) saying how to get one."""
    path = chromium_path()
    if path is None:
        reason = "no chromium: apt-get install chromium (or set MNEMO_CHROMIUM)"
        if os.environ.get("MNEMO_REQUIRE_BROWSER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return path
