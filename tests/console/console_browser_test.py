#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The moderation console in a real browser (headless Chromium via Selenium).

Fills a SQLite DLQ with `llmdlq process`, starts `llmdlq console` on a free
loopback port, and works the queue as an operator would; every action is
checked in the database too, so an action that was not carried out fails the
test. Then checks the refusals (no CSRF token, no session), the security
headers, that no page holds inline script or style, and that the HTML report
renders its charts from file:// without a single network request.

usage: console_browser_test.py LLMDLQ OUTPUT_DIR
Exit 77 (ctest: Skipped) when Chromium, chromedriver or Selenium is missing.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

SKIP = 77
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
EXPECTED_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "total": {"type": "number", "minimum": 0}},
    "required": ["name", "total"],
}
RESPONSES = [
    {"id": 1, "response": '{"name": 5, "total": 3}'},  # schema: /name is a number
    {"id": 2, "response": "[1, 2"},  # truncated
    {"id": 3, "response": '{"name": "<script>alert(1)</script></textarea>\\"", "total": -4}'},  # hostile text
    {"id": 4, "response": "nope"},  # syntax
]


def skip(reason):
    print(f"skipped: {reason}")
    sys.exit(SKIP)


def check(condition, message):
    if not condition:
        raise AssertionError(message)


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    skip("python3-selenium is not installed")
for program in (CHROMIUM, CHROMEDRIVER):
    if not os.access(program, os.X_OK):
        skip(f"{program} is missing")


def db_row(db, dlq_id):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        row = connection.execute(
            "SELECT status, claimed_by, operator_log, resolution FROM dead_letters WHERE dlq_id = ?",
            (dlq_id,)).fetchone()
    check(row is not None, f"{dlq_id} is not in the DLQ")
    return {"status": row[0], "claimed_by": row[1], "log": row[2], "resolution": row[3]}


def start_console(llmdlq, db, schema, token_file):
    console = subprocess.Popen([llmdlq, "console", f"sqlite:{db}", "--listen", "127.0.0.1:0", "--schema", schema,
                                "--token-file", token_file], stdout=subprocess.PIPE, text=True)
    line = console.stdout.readline()
    match = re.match(r"listening on (http://127\.0\.0\.1:\d+)/", line)
    if not match:
        console.kill()
        raise AssertionError(f"the console did not start: {line!r}")
    return console, match.group(1)


def http(url, data=None, cookie=None, headers=None):
    """(status, headers, body) of a request made outside the browser."""
    request = urllib.request.Request(url, data=urllib.parse.urlencode(data).encode() if data is not None else None,
                                     headers=dict(headers or {}))
    if cookie:
        request.add_header("Cookie", cookie)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers, refused.read().decode()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--disable-gpu", "--window-size=1280,1400", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(5)  # elements of a page still loading
    return driver


def submit(driver, button):
    """Clicks a form's button and waits until the page it leads to replaced this one.

    The old page is marked with a window property a new document does not have.
    Asking for an element of a page mid-navigation can fail in ways other than
    "stale" (chromedriver: "Node with given id does not belong to the document"),
    so any error while asking means "not loaded yet", never "failed"."""
    driver.execute_script("window.llmdlqPageBeforeSubmit = true")
    button.click()

    def replaced(driver):
        try:
            return driver.execute_script(
                "return window.llmdlqPageBeforeSubmit === undefined && document.readyState === 'complete'")
        except WebDriverException:
            return False

    WebDriverWait(driver, 15).until(replaced)


def requested_urls(driver):
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def no_inline_code(driver, page):
    found = driver.execute_script("""
        const bad = [];
        for (const s of document.querySelectorAll('script')) if (!s.src || s.textContent.trim()) bad.push('inline script');
        if (document.querySelectorAll('style').length) bad.push('style element');
        for (const e of document.querySelectorAll('*'))
          for (const a of e.attributes)
            if (a.name === 'style' || a.name.startsWith('on') || a.value.trim().toLowerCase().startsWith('javascript:'))
              bad.push(e.tagName + ' ' + a.name);
        return bad;""")
    check(not found, f"{page} holds inline code: {found}")


def main():
    llmdlq, output_dir = sys.argv[1], sys.argv[2]
    os.makedirs(output_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="llmdlq-console-")
    console = driver = None
    try:
        schema = os.path.join(work, "schema.json")
        with open(schema, "w") as f:
            json.dump(SCHEMA, f)
        db = os.path.join(work, "dlq.db")
        processed = subprocess.run([llmdlq, "process", "--schema", schema, "--sink", f"sqlite:{db}"], text=True,
                                   input="".join(json.dumps(r) + "\n" for r in RESPONSES), capture_output=True)
        check(processed.returncode == 0, f"llmdlq process failed: {processed.stderr}")
        ids = [json.loads(line)["dlq_id"] for line in processed.stdout.splitlines()]
        check(len(ids) == len(RESPONSES), "not every response was dead-lettered")
        token = os.urandom(32).hex()
        token_file = os.path.join(work, "token")
        with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(token + "\n")
        console, base = start_console(llmdlq, db, schema, token_file)
        driver = browser()

        # Log in: the queue sends a stranger to /login.
        driver.get(base + "/")
        check(driver.current_url == base + "/login", f"not sent to /login but {driver.current_url}")
        driver.find_element(By.NAME, "operator").send_keys("alice")
        driver.find_element(By.NAME, "token").send_keys(token)
        submit(driver, driver.find_element(By.CSS_SELECTOR, "form button[type=submit]"))
        check(driver.current_url == base + "/", f"login did not lead to the queue: {driver.current_url} {driver.page_source[-800:]}")
        cookie = driver.get_cookie("llmdlq_session")
        check(cookie and cookie["httpOnly"] and cookie.get("sameSite") == "Strict", f"session cookie: {cookie}")

        # The queue lists every pending record.
        queue_text = driver.find_element(By.CSS_SELECTOR, "table.queue").text
        for dlq_id in ids:
            check(dlq_id in queue_text, f"{dlq_id} is not in the pending queue")
        no_inline_code(driver, "the queue")

        # A record: its error span highlighted.
        submit(driver, driver.find_element(By.LINK_TEXT, ids[0]))
        marks = driver.find_elements(By.CSS_SELECTOR, "pre.raw mark")
        check([m.text for m in marks] == ["5"], f"the highlighted spans are {[m.text for m in marks]}, not the 5 at /name")
        check("/name" in marks[0].get_attribute("title"), "the mark does not name its JSON Pointer")
        check("/name" in driver.find_element(By.CSS_SELECTOR, "table.errors").text, "the errors table lacks /name")
        no_inline_code(driver, "a record page")

        # Claim.
        submit(driver, driver.find_element(By.CSS_SELECTOR, "button[value=claim]"))
        check(driver.find_element(By.ID, "status").text == "claimed", "the page does not show the record claimed")
        row = db_row(db, ids[0])
        check(row["status"] == "claimed" and row["claimed_by"] == "alice", f"claim was not stored: {row}")

        # An invalid correction is refused, and nothing is stored.
        textarea = driver.find_element(By.ID, "corrected")
        textarea.clear()
        textarea.send_keys('{"name": 7, "total": 1}')
        submit(driver, driver.find_element(By.CSS_SELECTOR, "form.resolve button"))
        refusal = driver.find_element(By.ID, "refusal").text
        check("refused" in refusal and "/name" in refusal, f"the invalid correction was not refused: {refusal}")
        row = db_row(db, ids[0])
        check(row["status"] == "claimed" and row["resolution"] is None, f"the invalid correction changed the DLQ: {row}")

        # A valid correction resolves it, and it leaves the pending queue.
        textarea = driver.find_element(By.ID, "corrected")
        textarea.clear()
        textarea.send_keys('{"name": "widget", "total": 3}')
        driver.find_element(By.NAME, "note").send_keys("fixed by hand")
        submit(driver, driver.find_element(By.CSS_SELECTOR, "form.resolve button"))
        check(driver.find_element(By.ID, "status").text == "resolved", "the page does not show the record resolved")
        driver.get(base + "/?status=pending")
        check(ids[0] not in driver.find_element(By.TAG_NAME, "main").text, "the resolved record is still pending")
        row = db_row(db, ids[0])
        check(row["status"] == "resolved", f"resolve was not stored: {row}")
        check(json.loads(row["resolution"]) == {"name": "widget", "total": 3}, f"resolution: {row['resolution']}")
        check("alice" in row["log"] and "resolve" in row["log"] and "claim" in row["log"],
              f"the operator log lacks alice's actions: {row['log']}")

        # Refused POSTs change nothing: without the CSRF token, with a wrong
        # one, from another origin, and without a session.
        session = f"llmdlq_session={cookie['value']}"
        before = db_row(db, ids[1])
        discard = f"{base}/records/{ids[1]}/discard"
        csrf = driver.find_element(By.NAME, "csrf").get_attribute("value")
        for label, status, data, cookie_header, headers in [
                ("no CSRF token", 403, {"do": "discard"}, session, {}),
                ("a wrong CSRF token", 403, {"csrf": "0" * 64}, session, {}),
                ("another origin", 403, {"csrf": csrf}, session, {"Origin": "http://evil.example"}),
                ("an opaque origin", 403, {"csrf": csrf}, session, {"Origin": "null"}),
                ("another host name (DNS rebinding)", 421, {"csrf": csrf}, session,
                 {"Host": "rebound.example:" + base.rsplit(":", 1)[1]}),
                ("no session", 401, {"csrf": csrf}, None, {})]:
            got, _, _ = http(discard, data, cookie_header, headers)
            check(got == status, f"a POST with {label} got {got}, not {status}")
            check(db_row(db, ids[1]) == before, f"a POST with {label} changed the record")
        check(before["status"] == "pending", f"record 2 is {before['status']}")

        # A lost race: bob (an API client holding the token) claims record 4
        # while alice looks at it; her claim is refused and names bob.
        driver.get(f"{base}/records/{ids[3]}")
        got, _, _ = http(f"{base}/records/{ids[3]}/claim", {"operator": "bob"},
                         headers={"Authorization": f"Bearer {token}"})
        check(got == 303, f"bob's claim with the bearer token got {got}")
        submit(driver, driver.find_element(By.CSS_SELECTOR, "button[value=claim]"))
        refusal = driver.find_element(By.ID, "refusal").text
        check("claimed by bob" in refusal, f"the lost race does not say who acted: {refusal}")
        row = db_row(db, ids[3])
        check(row["claimed_by"] == "bob" and "alice" not in row["log"], f"alice's lost claim changed the record: {row}")
        got, _, _ = http(f"{base}/records/{ids[3]}/discard", {"operator": "bob"},
                         headers={"Authorization": "Bearer " + "f" * 64})
        check(got == 401 and db_row(db, ids[3]) == row, f"a wrong bearer token got {got}")

        # The security headers, on a page and on an asset.
        for path in ("/", f"/records/{ids[2]}", "/assets/console.js"):
            got, headers, _ = http(base + path, cookie=session)
            check(got == 200, f"GET {path}: {got}")
            check(headers["Content-Security-Policy"] == EXPECTED_CSP, f"{path} CSP: {headers['Content-Security-Policy']}")
            check(headers["X-Content-Type-Options"] == "nosniff", f"{path}: no nosniff")
            check(headers["Referrer-Policy"] == "same-origin", f"{path}: Referrer-Policy")
            check(headers["Cache-Control"] == "no-store", f"{path}: Cache-Control")

        # The hostile record is shown as text, and screenshotted.
        driver.get(f"{base}/records/{ids[2]}")
        raw = driver.find_element(By.CSS_SELECTOR, "pre.raw").text
        check("<script>alert(1)</script></textarea>" in raw, f"the hostile text is not shown as text: {raw}")
        check(driver.find_elements(By.CSS_SELECTOR, "pre.raw script") == [], "record text became a script element")
        no_inline_code(driver, "the hostile record page")
        driver.get(f"{base}/records/{ids[0]}")
        screenshot = os.path.join(output_dir, "console-record.png")
        check(driver.save_screenshot(screenshot), "the screenshot was not written")
        print(f"screenshot: {screenshot}")

        # The charts page draws bars.
        driver.get(base + "/charts")
        check(driver.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar"), "the charts page has no bars")
        no_inline_code(driver, "the charts page")

        # The report: self-contained, drawn from file:// without a request.
        report = os.path.join(output_dir, "console-report.html")
        made = subprocess.run([llmdlq, "report", f"sqlite:{db}", "--html", report], capture_output=True, text=True)
        check(made.returncode == 0, f"llmdlq report failed: {made.stderr}")
        with open(report, encoding="utf-8") as f:
            html = f.read()
        check(not re.search(r"https?:", html), "the report names an http(s) URL")
        check("<script" not in html.lower(), "the report holds a script")
        driver.get_log("performance")  # forget the console's requests
        driver.get("file://" + report)
        bars = driver.execute_script(
            "return Array.from(document.querySelectorAll('svg.chart rect.bar')).map(r => r.getBBox().height);")
        check(bars and all(h > 0 for h in bars), f"the report's chart bars do not render: {bars}")
        others = [u for u in requested_urls(driver) if u != "file://" + report]
        check(not others, f"the report made network requests: {others}")
        print(f"report: {report}")
        print("console browser test: passed")
        return 0
    finally:
        if driver:
            driver.quit()
        if console:
            console.terminate()
            try:
                console.wait(timeout=10)
            except subprocess.TimeoutExpired:
                console.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as failure:
        print(f"FAILED: {failure}")
        sys.exit(1)
