"""Neo4j Browser for real: headless Chromium (Debian's chromium and chromium-driver, installed
by `make browser-deps`) driven by Selenium opens the Browser URL the local server prints, logs
in with `kgrag server credentials`, pastes `:params` lines and statements and reads the result,
as a person would. The server is the demo's (namespace demo, tests/conftest.py).

Set KGRAG_BROWSER_SCREENSHOTS to a folder to keep the screenshots (docs/img/ holds one)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgrag_neo4j.browser import EXPLORE
from kgrag_neo4j.cli import cli
from kgrag_neo4j.cypher_registry import load_registry

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: the machine has no outside network: without these Chromium hangs on lookups of its own
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)
LOCAL_ONLY = {"NEO4J_URI": None, "NEO4J_PASSWORD": None, "NEO4J_USERNAME": None, "KGRAG_NAMESPACE": None}
WAIT = 90


def kgrag(server, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--data-dir", str(server.data_dir), *args], catch_exceptions=False, env=LOCAL_ONLY)
    assert result.exit_code == 0, result.output
    return result.stdout


def _chromium_installed() -> bool:
    return os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)


@pytest.fixture(scope="module")
def chrome(tmp_path_factory):
    pytest.importorskip("selenium", reason='Selenium comes with the dev extra: pip install -e ".[dev]"')
    if not _chromium_installed() and shutil.which("make"):
        subprocess.run(["make", "-s", "-C", str(ROOT), "browser-deps"], check=False)
    if not _chromium_installed():
        message = (
            "chromium and chromium-driver are missing: apt-get install chromium chromium-driver (or make browser-deps as root)"
        )
        if os.environ.get("CI") or os.geteuid() == 0:
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT)
    yield driver
    driver.quit()


class BrowserPage:
    """Neo4j Browser as a user works it: the login form, the editor, the result frames."""

    def __init__(self, driver, shots: Path):
        self.driver = driver
        self.shots = shots

    def find(self, css: str, *, clickable: bool = False):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        condition = ec.element_to_be_clickable if clickable else ec.presence_of_element_located
        return WebDriverWait(self.driver, WAIT).until(condition((By.CSS_SELECTOR, css)))

    def login(self, url: str, user: str, password: str) -> None:
        self.driver.get(url)
        self.find("[data-testid=username]", clickable=True).send_keys(user)
        self.find("[data-testid=password]").send_keys(password)
        self.find("[data-testid=connect]", clickable=True).click()
        # connected: the connect frame is replaced by the "connected as" one
        self.wait_for(lambda: "You are connected as user" in self.driver.page_source, "the login")

    def wait_for(self, ready, what: str) -> None:
        deadline = time.monotonic() + WAIT
        from selenium.common.exceptions import StaleElementReferenceException

        while time.monotonic() < deadline:
            try:
                if ready():
                    return
            except StaleElementReferenceException:
                pass  # Browser redrew the frame between finding an element and reading it
            time.sleep(0.25)
        self.screenshot("timeout")
        raise AssertionError(f"Neo4j Browser: {what} did not finish within {WAIT}s")

    def frames(self):
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.CSS_SELECTOR, "[data-testid=frame]")

    def _frames_of(self, ran: str) -> list:
        from selenium.webdriver.common.by import By

        out = []
        for frame in self.frames():  # newest first
            command = frame.find_elements(By.CSS_SELECTOR, "[data-testid=frameCommand]")
            if command and " ".join(command[0].text.split()).startswith(ran):
                out.append(frame)
        return out

    def run(self, text: str) -> str:
        """Paste ``text`` into the editor, run it and return its frame's text once done (found
        by its command: Browser adds frames of its own, e.g. after connecting)."""
        from selenium.webdriver.common.by import By

        ran = " ".join(text.split())[:60]
        before = len(self._frames_of(ran))
        self.find(".monaco-editor textarea").click()
        # inserted as a paste is: typed keys would trip the editor's auto-closing brackets
        self.driver.execute_cdp_cmd("Input.insertText", {"text": text})
        self.find("[data-testid=editor-Run]", clickable=True).click()

        def done() -> bool:
            mine = self._frames_of(ran)
            if len(mine) <= before:
                return False
            status = mine[0].find_elements(By.CSS_SELECTOR, "[data-testid=frameStatusbar]")
            # a table or text result has a status bar; a graph result says what it displays
            if any(s.text.strip() for s in status) or "ERROR" in mine[0].text or "Displaying" in mine[0].text:
                self.last_frame = mine[0]
                return True
            return False

        self.wait_for(done, f"running {text[:40]!r}")
        return self.last_frame.text

    def screenshot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.driver.save_screenshot(str(path))
        keep = os.environ.get("KGRAG_BROWSER_SCREENSHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep) / path.name)
        return path


@pytest.fixture(scope="module")
def browser(chrome, demo_server, tmp_path_factory):
    status = json.loads(kgrag(demo_server, "server", "status", "--json"))
    creds = json.loads(kgrag(demo_server, "server", "credentials", "--json"))
    assert status["browser_url"] == creds["browser_url"] and status["browser_url"].startswith("http://127.0.0.1:")
    page = BrowserPage(chrome, tmp_path_factory.mktemp("browser-shots"))
    page.login(status["browser_url"], creds["user"], creds["password"])
    return page


def test_params_line_and_list_documents_in_browser(browser):
    query = load_registry()["documents/list_documents"]
    params = browser.run(query.browser)
    assert "Successfully set your parameters" in params and '"namespace": "demo"' in params
    result = browser.run(query.text)
    assert "ERROR" not in result, result
    assert re.search(r"Started streaming \d+ records", result), result
    for title in ("retrieval.md", "README.md", "architecture.md"):
        assert f'"{title}"' in result, f"{title} not in the result:\n{result[:2000]}"


def test_graph_retrieve_with_the_printed_params_line_in_browser(browser, demo_server):
    line = kgrag(
        demo_server, "cypher", "params", "graph/retrieve", "--namespace", "demo", "--query", "how does expansion work?"
    ).strip()
    params = browser.run(line)
    assert "Successfully set your parameters" in params, params[:500]
    result = browser.run(load_registry()["graph/retrieve"].text)
    assert "ERROR" not in result, result
    # the line's top_k is 5: five chunks came back, found by the vector index and the graph
    assert "Started streaming 5 records" in result, result[-500:]
    assert len(set(re.findall(r"chk_[0-9a-f]{32}", result))) >= 5


SHOTS = ("chunk-graph", "entity-neighbourhood", "community")


@pytest.mark.parametrize("shot, explore", list(zip(SHOTS, EXPLORE)), ids=SHOTS)
def test_kgrag_graphs_draw_with_captions_in_browser(browser, shot, explore):
    assert len(SHOTS) == len(EXPLORE)
    from selenium.webdriver.common.by import By

    browser.run(explore.params)
    result = browser.run(explore.statement)
    assert "ERROR" not in result, result
    frame = browser.last_frame
    browser.wait_for(lambda: len(frame.find_elements(By.CSS_SELECTOR, "svg g.node")) >= 3, "drawing the graph")
    time.sleep(2)  # let the layout settle for the picture
    node_captions = " ".join(t.text for t in frame.find_elements(By.CSS_SELECTOR, "svg g.node text"))
    edge_captions = {t.text for t in frame.find_elements(By.CSS_SELECTOR, "svg g.relationship text")}
    if "Document" in explore.statement:
        # chunks are captioned "title #index", chunk edges with their relation kind
        assert "retrieval.md" in node_captions and "#" in node_captions, node_captions[:500]
        assert edge_captions & {"sequence", "similar_to"}, edge_captions
    if "RELATED_TO" in explore.statement:
        # entity relationships with their type, not the RELATED_TO every one of them has
        assert "RELATED_TO" not in edge_captions and "CO_OCCURS" in edge_captions, edge_captions
    path = browser.shots / f"browser-{shot}.png"
    frame.screenshot(str(path))
    keep = os.environ.get("KGRAG_BROWSER_SCREENSHOTS")
    if keep:
        shutil.copy(path, Path(keep) / path.name)
    assert path.stat().st_size > 10_000
