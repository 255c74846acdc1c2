#!/usr/bin/env python3
"""Drives a reviewer snapshot (an `imprint export-snapshot` HTML file) in a headless browser.

Chromium (default): Debian's chromium + chromium-driver through PyPI's selenium. Firefox
(`--browser firefox`): Debian's firefox-esr through PyPI's marionette-driver (Firefox's own
remote protocol, no geckodriver). Both from .venv-peers. Used by
Tests/ImprintSnapshotTests (ViewerBrowserTests, ReviewLinkTests) and `imprint-bench snapshot`.

    review_browser.py (--page review.html | --url URL) --steps steps.json --out result.json
                      [--serve] [--shots DIR] [--downloads DIR]

`--serve` serves the page's folder from a real HTTP server on 127.0.0.1 (a random port) and
opens it over HTTP instead of file://; `--url` opens a URL as it is (a review link served by
imprint-server). Each step is an object with "do":

    unlock {password}            type the password, submit, wait for the page to settle
    settle                       wait until the page is open or has failed (a link loading)
    paste_link {link}            paste a review link into a link-form file's box, open it
    wait_status {text}           wait until the status line contains text (a comment posted)
    read                         the title, the document's text, state, error, status line
    comment {quote, text, author?, occurrence?}
                                 select the quote in the rendered text, comment on it
    reply {index, text}          reply to the index-th comment in the list
    resolve {index}              resolve the index-th comment
    download                     click "Download comments", return the file's name and text
    reload                       reload the page (same browser profile: storage survives)
    comments                     the comment list as the page shows it
    network                      every URL the browser requested (Chromium: its performance log,
                                 every request; Firefox: the page's performance entries)
    marks                        the page's performance marks and measures (ms)
    shot {name}                  a screenshot into --shots

The result is {"steps": [ {...}, ... ]}; a step that fails stops the run with {"error"}.
"""
import argparse
import functools
import http.server
import json
import os
import pathlib
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse


SETTLE_JS = "return document.body.dataset.state"

SELECT_JS = r"""
const [quote, occurrence] = arguments;
const root = document.getElementById('doc-body');
const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
const nodes = []; let text = '';
for (let n = walker.nextNode(); n; n = walker.nextNode()) { nodes.push([n, text.length]); text += n.data; }
let at = -1;
for (let k = 0; k <= occurrence; k++) { at = text.indexOf(quote, at + 1); if (at < 0) return 'not found: ' + quote; }
const end = at + quote.length;
function point(offset, isEnd) {
  for (let i = nodes.length - 1; i >= 0; i--) {
    const [n, s] = nodes[i];
    if (isEnd ? s < offset : s <= offset) return [n, offset - s];
  }
  return [nodes[0][0], 0];
}
const [sn, so] = point(at, false), [en, eo] = point(end, true);
const range = document.createRange(); range.setStart(sn, so); range.setEnd(en, eo);
const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
document.dispatchEvent(new Event('selectionchange'));
return 'ok';
"""

COMMENTS_JS = r"""
return Array.from(document.querySelectorAll('#comment-list > li.comment')).map((li) => ({
  id: li.dataset.commentId,
  quote: (li.querySelector('.quote') || {}).textContent || '',
  text: li.querySelector('.comment-text').textContent,
  meta: li.querySelector('.meta').textContent,
  resolved: li.classList.contains('resolved'),
  pending: !!li.querySelector(':scope > .pending'),
  replies: Array.from(li.querySelectorAll('.replies .comment-text')).map((r) => r.textContent),
}));
"""

MARKS_JS = r"""
const out = {};
for (const e of performance.getEntries()) if (e.entryType === 'mark') out[e.name] = e.startTime;
out.navigationStart = 0;
return out;
"""


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(directory):
    handler = functools.partial(QuietHandler, directory=directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class ChromiumPage:
    """Headless Chromium through selenium and chromedriver."""

    def __init__(self, downloads, profile):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--window-size=1200,900", f"--user-data-dir={profile}", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-default-apps", "--disable-extensions", "--metrics-recording-only"):
            options.add_argument(arg)
        options.add_experimental_option("prefs", {
            "download.default_directory": downloads, "download.prompt_for_download": False,
            "safebrowsing.enabled": False})
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
        self.driver = webdriver.Chrome(options=options, service=service)
        self.driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})

    def get(self, url):
        self.driver.get(url)

    def refresh(self):
        self.driver.refresh()

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def element(self, element_id):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.ID, element_id)

    def screenshot(self, path):
        self.driver.save_screenshot(path)

    def network(self):
        urls = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                urls.append(message["params"]["request"]["url"])
        return urls, [e.get("message", "") for e in self.driver.get_log("browser")]

    def quit(self):
        self.driver.quit()


class FirefoxPage:
    """Headless Firefox ESR through Marionette (marionette-driver starts and stops it)."""

    def __init__(self, downloads, profile):
        from marionette_driver.marionette import Marionette
        prefs = {
            "browser.download.folderList": 2, "browser.download.dir": downloads,
            "browser.download.useDownloadDir": True, "browser.download.always_ask_before_handling_new_types": False,
            "browser.helperApps.neverAsk.saveToDisk": "application/json,application/octet-stream,text/plain",
            "browser.download.manager.showWhenStarting": False, "network.proxy.type": 0,
        }
        binary = shutil.which("firefox-esr") or shutil.which("firefox") or "/usr/bin/firefox-esr"
        # Firefox's own log (default: gecko.log in the working directory) goes to a folder of
        # our own, removed with the browser.
        self.log_dir = tempfile.mkdtemp(prefix="imprint-gecko-")
        self.client = Marionette(bin=binary, headless=True, port=free_port(), profile=profile, prefs=prefs,
                                 startup_timeout=90, verbose=0, gecko_log=os.path.join(self.log_dir, "gecko.log"))
        self.client.start_session()
        self.client.set_window_rect(width=1200, height=900)

    def get(self, url):
        self.client.navigate(url)

    def refresh(self):
        self.client.refresh()

    def js(self, script, *args):
        return self.client.execute_script(script, script_args=list(args), sandbox=None)

    def element(self, element_id):
        from marionette_driver.by import By
        return self.client.find_element(By.ID, element_id)

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(self.client.screenshot(format="binary"))

    def network(self):
        urls = self.js("return performance.getEntries().filter(e => e.entryType === 'navigation' || e.entryType === 'resource').map(e => e.name)")
        return urls, []

    def quit(self):
        try:
            self.client.delete_session()
        finally:
            self.client.cleanup()
            shutil.rmtree(self.log_dir, ignore_errors=True)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout=30.0, interval=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError("timed out")


def page_state(driver):
    return driver.js(
        "return {state: document.body.dataset.state, error: document.body.dataset.error || null,"
        " status: document.getElementById('status').textContent, title: document.title}")


def run(args):
    page = pathlib.Path(args.page).resolve() if args.page else None
    steps = json.loads(pathlib.Path(args.steps).read_text())
    downloads = args.downloads or tempfile.mkdtemp(prefix="imprint-dl-")
    os.makedirs(downloads, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="imprint-chromium-")
    server = serve(str(page.parent)) if args.serve and page else None
    if args.url:
        url = args.url
    elif server:
        url = f"http://127.0.0.1:{server.server_address[1]}/{urllib.parse.quote(page.name)}"
    else:
        url = page.as_uri()
    results = []
    driver = (FirefoxPage if args.browser == "firefox" else ChromiumPage)(downloads, profile)
    try:
        driver.get(url)
        wait_for(lambda: driver.js(SETTLE_JS) != "loading", 20)
        results.append({"do": "open", "url": url, "browser": args.browser, **page_state(driver)})
        for step in steps:
            kind = step["do"]
            out = {"do": kind}
            if kind == "unlock":
                box = driver.element("password")
                box.clear()
                box.send_keys(step["password"])
                driver.element("open").click()
                wait_for(lambda: driver.js(
                    "return document.getElementById('status').textContent !== 'Opening…'"
                    " && !document.getElementById('open').disabled"), 60)
                out.update(page_state(driver))
            elif kind == "settle":
                wait_for(lambda: driver.js(SETTLE_JS) in ("open", "failed"), 60)
                out.update(page_state(driver))
            elif kind == "paste_link":
                box = driver.element("link-text")
                box.clear()
                box.send_keys(step["link"])
                driver.element("link-open").click()
                wait_for(lambda: driver.js(SETTLE_JS) in ("open", "failed")
                         or "not a whole review link" in driver.js(
                             "return document.getElementById('status').textContent"), 60)
                out.update(page_state(driver))
            elif kind == "wait_status":
                wait_for(lambda: step["text"] in driver.js(
                    "return document.getElementById('status').textContent"), 30)
                out.update(page_state(driver))
            elif kind == "read":
                out.update(page_state(driver))
                out["pwned"] = driver.js("return document.body.dataset.pwned || null")
                out["heading"] = driver.js("return document.getElementById('doc-heading').textContent")
                out["text"] = driver.js("return document.getElementById('doc-body').innerText")
                out["html"] = driver.js("return document.getElementById('doc-body').innerHTML")
                out["images"] = driver.js(
                    "return Array.from(document.querySelectorAll('#doc-body img')).map(i => ({alt: i.alt,"
                    " loaded: i.complete && i.naturalWidth > 0}))")
                out["links"] = driver.js(
                    "return Array.from(document.querySelectorAll('#doc-body a')).map(a => a.getAttribute('href'))")
            elif kind == "comment":
                selected = driver.js(SELECT_JS, step["quote"], step.get("occurrence", 0))
                if selected != "ok":
                    raise RuntimeError(selected)
                driver.element("comment").click()
                author = driver.element("comment-author")
                author.clear()
                author.send_keys(step.get("author", ""))
                driver.element("comment-text").send_keys(step["text"])
                driver.element("save").click()
                wait_for(lambda: driver.js("return document.getElementById('comment-form').hidden"), 10)
                out.update(page_state(driver))
            elif kind in ("reply", "resolve"):
                label = "Reply" if kind == "reply" else "Resolve"
                clicked = driver.js(
                    "const li = document.querySelectorAll('#comment-list > li.comment')[arguments[0]];"
                    " const b = li && Array.from(li.querySelectorAll('.actions button')).find(x => x.textContent === arguments[1]);"
                    " if (!b) return false; b.click(); return true;", step["index"], label)
                if not clicked:
                    raise RuntimeError(f"no {label} button on comment {step['index']}")
                if kind == "reply":
                    driver.element("comment-text").send_keys(step["text"])
                    driver.element("save").click()
                    wait_for(lambda: driver.js("return document.getElementById('comment-form').hidden"), 10)
                time.sleep(0.2)
                out.update(page_state(driver))
            elif kind == "download":
                before = set(os.listdir(downloads))
                driver.element("download").click()

                def finished():
                    # Chromium writes name.crdownload then renames; Firefox creates an empty
                    # name at once and writes name.part beside it: done when neither remains.
                    names = set(os.listdir(downloads))
                    if any(n.endswith((".crdownload", ".part")) for n in names):
                        return None
                    new = [n for n in names - before if not n.startswith(".")
                           and os.path.getsize(os.path.join(downloads, n)) > 0]
                    return new[0] if new else None
                name = wait_for(finished, 20)
                out["name"] = name
                out["path"] = os.path.join(downloads, name)
                out["text"] = pathlib.Path(out["path"]).read_text()
                out.update(page_state(driver))
            elif kind == "reload":
                driver.refresh()
                wait_for(lambda: driver.js(SETTLE_JS) != "loading", 20)
                out.update(page_state(driver))
            elif kind == "comments":
                out["comments"] = driver.js(COMMENTS_JS)
            elif kind == "network":
                out["urls"], out["console"] = driver.network()
            elif kind == "marks":
                out["marks"] = driver.js(MARKS_JS)
            elif kind == "shot":
                if args.shots:
                    os.makedirs(args.shots, exist_ok=True)
                    path = os.path.join(args.shots, step["name"] + ".png")
                    driver.screenshot(path)
                    out["path"] = path
            else:
                raise RuntimeError(f"unknown step {kind}")
            results.append(out)
    except Exception as error:  # reported to the Swift test, which fails on it
        results.append({"do": "error", "error": f"{type(error).__name__}: {error}"})
    finally:
        driver.quit()
        if server:
            server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    pathlib.Path(args.out).write_text(json.dumps({"steps": results}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--page")
    source.add_argument("--url")
    parser.add_argument("--steps", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--browser", choices=("chromium", "firefox"), default="chromium")
    parser.add_argument("--shots")
    parser.add_argument("--downloads")
    run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
