#!/usr/bin/env python3
"""The admin console in a real browser (issue 28): headless Chromium driven by Selenium.

Starts the real gateway (a filesystem route, the built-in lock API, an admin key so that the
login is exercised), logs in through the console's form, and then:
  - loads every page (overview, fences, a fence, rejections, locks, cluster) and fails on any
    message the browser logged at level SEVERE (script errors, CSP violations, failed loads);
  - makes a zombie write through the gateway (token 5, then token 3 on the same file) while the
    rejections page is open, and waits at most 2 s for it in the live list (server-sent events);
  - filters the list by reason (a missing_token refusal must hide the stale_token one and back);
  - follows the zombie's fence key to the fence page and reads its highest token (5);
  - acquires a lock through the lock API and force-releases it from the locks page, through the
    confirmation dialog (lock name typed, reason), and sees the release in the audit trail.
Every wait is for an element's state (WebDriverWait), never a sleep. Screenshots of each page go
to OUTPUT_DIR; with --update-docs they are also copied to docs/console/ (checked in).

  console_test.py FENCEGATE_BINARY OUTPUT_DIR [--update-docs]
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from free_port import free_port  # noqa: E402
from wait_until import wait_until  # noqa: E402

ADMIN_KEY = "console-browser-key-4b8e1f"
ZOMBIE = "/files/reports/q3.csv"
ZOMBIE_KEY = "files:" + ZOMBIE
LOCK = "nightly-export"
WAIT = 10  # seconds any page state may take; the live row has its own 2 s bound


def request(port, method, path, body=None, headers=None):
    data = body.encode() if isinstance(body, str) else body
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def put(port, path, token, body="data"):
    headers = {} if token is None else {"Fencing-Token": str(token)}
    return request(port, "PUT", path, body, headers)[0]


def start_gateway(binary, root):
    import hashlib
    traffic, admin = free_port(), free_port()
    os.makedirs(os.path.join(root, "files"))
    config = f"""listen: 127.0.0.1:{traffic}
admin_listen: 127.0.0.1:{admin}
data_dir: {root}/data
backends:
  files:
    kind: filesystem
    root: {root}/files
routes:
  - name: files
    prefix: /files/
    backend: files
    fence_key: "files:{{path}}"
locks:
  enabled: true
  prefix: /locks/
admin:
  principals:
    - name: console-operator
      api_key_sha256: ["{hashlib.sha256(ADMIN_KEY.encode()).hexdigest()}"]
"""
    path = os.path.join(root, "fencegate.yaml")
    with open(path, "w") as f:
        f.write(config)
    log = open(os.path.join(root, "fencegate.log"), "w")
    process = subprocess.Popen([binary, "--config", path], stdout=log, stderr=subprocess.STDOUT)

    def ready():
        if process.poll() is not None:
            raise AssertionError(f"fencegate exited with {process.returncode}; see {root}/fencegate.log")
        try:
            return request(admin, "GET", "/readyz")[0] == 200
        except OSError:
            return False

    wait_until(ready, "fencegate to be ready", 30)
    return process, traffic, admin


def start_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


class ConsoleCheck:
    def __init__(self, driver, admin_port, output_dir):
        self.driver = driver
        self.base = f"http://127.0.0.1:{admin_port}"
        self.output_dir = output_dir
        self.screenshots = []
        self.errors = []

    def wait(self, condition, what, timeout=WAIT):
        try:
            return WebDriverWait(self.driver, timeout).until(condition)
        except Exception as error:
            self.shot("failure")
            raise AssertionError(f"waiting for {what}: {error!r}") from error

    def visible(self, css, what, timeout=WAIT):
        return self.wait(EC.visibility_of_element_located((By.CSS_SELECTOR, css)), what, timeout)

    def click(self, css, what):
        """Finds and clicks in one step, again if the page re-rendered the element in between.

        A page fills its tables anew when an event arrives (a lock grant reloads the locks
        page), so an element found a moment ago may be gone; a person would click the new one.
        """
        def clicked(driver):
            try:
                element = driver.find_element(By.CSS_SELECTOR, css)
                if not (element.is_displayed() and element.is_enabled()):
                    return False
                element.click()
                return True
            except StaleElementReferenceException:
                return False

        self.wait(clicked, what)

    def text_is(self, css, text, what):
        self.wait(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text), what)

    def go(self, hash_route):
        self.driver.get(self.base + "/ui/" + hash_route)

    def shot(self, name):
        path = os.path.join(self.output_dir, name + ".png")
        self.driver.save_screenshot(path)
        self.screenshots.append(path)

    def collect_log(self, page):
        for entry in self.driver.get_log("browser"):
            if entry["level"] == "SEVERE":
                self.errors.append(f"{page}: {entry['message']}")

    def no_errors(self, page):
        self.collect_log(page)
        assert not self.errors, "the browser logged errors:\n" + "\n".join(self.errors)


def run(binary, output_dir):
    with tempfile.TemporaryDirectory(prefix="fencegate-browser-") as root:
        gateway, traffic, admin = start_gateway(binary, root)
        driver = None
        try:
            # Traffic for the overview before the browser looks: admitted writes, one refusal.
            for token in (1, 2, 3):
                assert put(traffic, "/files/demo/orders.json", token) in (200, 201, 204)
            assert put(traffic, "/files/demo/orders.json", 2) == 409
            driver = start_browser()
            check = ConsoleCheck(driver, admin, output_dir)

            # Login: the page without a session shows the form; the key logs in.
            check.go("")
            check.visible("#login-key", "the login form")
            check.shot("login")
            check.no_errors("login")
            driver.find_element(By.ID, "login-key").send_keys(ADMIN_KEY)
            driver.find_element(By.ID, "login-submit").click()
            check.visible("#nav", "the navigation after login")
            check.text_is("#who", "console-operator", "the logged-in principal")

            # Overview: the summary's charts and tables.
            check.go("#/overview")
            check.visible("#page-overview", "the overview")
            check.text_is("#build-info", "fencegate", "the summary to load")
            check.visible("#top-keys a.fence-link", "the top zombie keys")
            check.shot("overview")
            check.no_errors("overview")

            # Fences: listed by prefix.
            check.go("#/fences?prefix=files%3A%2Ffiles%2Fdemo")
            check.visible("#fence-list a.fence-link", "the fence listing")
            check.shot("fences")
            check.no_errors("fences")

            # Rejections, live: the zombie shows up within 2 s of its refusal.
            check.go("#/rejections")
            check.text_is("#live-state", "live", "the event stream to connect")
            assert put(traffic, ZOMBIE, 5) in (200, 201, 204)
            assert put(traffic, ZOMBIE, 3) == 409
            zombie_row = f'tr.rejection-row[data-fence-key="{ZOMBIE_KEY}"]'
            check.visible(zombie_row, "the zombie write in the live list", timeout=2)
            assert put(traffic, "/files/reports/unfenced.csv", None) == 428

            # Filter by reason: missing_token hides the zombie, stale_token brings it back.
            Select(driver.find_element(By.ID, "filter-reason")).select_by_visible_text("missing_token")
            check.click("#filter-apply", "the filter's apply button")
            check.visible('tr.rejection-row[data-reason="missing_token"]', "the missing_token refusal")
            check.wait(EC.invisibility_of_element_located((By.CSS_SELECTOR, zombie_row)),
                       "the zombie to be filtered out")
            reasons = {row.get_attribute("data-reason")
                       for row in driver.find_elements(By.CSS_SELECTOR, "tr.rejection-row")}
            assert reasons == {"missing_token"}, reasons
            Select(driver.find_element(By.ID, "filter-reason")).select_by_visible_text("stale_token")
            check.click("#filter-apply", "the filter's apply button")
            check.visible(zombie_row, "the zombie under reason stale_token")
            reasons = {row.get_attribute("data-reason")
                       for row in driver.find_elements(By.CSS_SELECTOR, "tr.rejection-row")}
            assert reasons == {"stale_token"}, reasons
            check.shot("rejections")
            check.no_errors("rejections")

            # Click through to the fence: its highest token is the one the zombie lost to.
            check.click(zombie_row + " a.fence-link", "the zombie's fence link")
            check.text_is("#fence-key", ZOMBIE_KEY, "the fence page")
            check.text_is("#fence-highest", "5", "the fence's highest token")
            check.visible("#fence-refusals tr", "the fence's refusals")
            check.shot("fence")
            check.no_errors("fence")

            # Locks: a lock acquired through the API, force-released through the page.
            status, body = request(traffic, "POST", "/locks/" + LOCK, json.dumps({"ttl_ms": 600000}))
            assert status == 200, body
            token = json.loads(body)["fencing_token"]
            check.go("#/locks")
            release = f'button.release[data-lock="{LOCK}"]'
            check.visible(release, "the held lock's release button")
            check.shot("locks")
            check.click(release, "the release button")
            check.visible("#release-dialog", "the confirmation dialog")
            submit = driver.find_element(By.ID, "release-submit")
            assert not submit.is_enabled(), "the release needs the lock name typed first"
            driver.find_element(By.ID, "release-reason").send_keys("stuck export; owner host is down")
            driver.find_element(By.ID, "release-confirm").send_keys(LOCK[:-1])
            assert not submit.is_enabled(), "a name that is not the lock's confirms nothing"
            driver.find_element(By.ID, "release-confirm").send_keys(LOCK[-1])
            check.wait(EC.element_to_be_clickable((By.ID, "release-submit")), "the confirmed release")
            check.shot("locks-release-dialog")
            check.click("#release-submit", "the confirmed release")
            check.wait(EC.invisibility_of_element_located((By.CSS_SELECTOR, release)),
                       "the lock to be free")
            audit = check.visible("#lock-audit tr.audit-row", "the forced release in the audit")
            assert LOCK in audit.text and "console-operator" in audit.text, audit.text
            status, body = request(admin, "GET", f"/admin/locks/{LOCK}",
                                   headers={"Authorization": "Bearer " + ADMIN_KEY})
            assert status == 200 and json.loads(body)["holder"] is None, body
            assert json.loads(body)["last_token"] > token, body
            check.no_errors("locks")

            # Cluster: this gateway runs alone.
            check.go("#/cluster")
            check.visible("#cluster-off", "the cluster page")
            check.shot("cluster")
            check.no_errors("cluster")
            return check.screenshots
        finally:
            if driver is not None:
                driver.quit()
            gateway.terminate()
            gateway.wait(timeout=30)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, output_dir = sys.argv[1], sys.argv[2]
    os.makedirs(output_dir, exist_ok=True)
    screenshots = run(binary, output_dir)
    if "--update-docs" in sys.argv[3:]:
        docs = os.path.join(HERE, "..", "..", "docs", "console")
        os.makedirs(docs, exist_ok=True)
        for path in screenshots:
            if not path.endswith("failure.png"):
                shutil.copy(path, docs)
    print("console browser test passed; screenshots:", " ".join(screenshots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
