#!/usr/bin/env python3
"""`proftrace view` end to end, with a real HTTP client and a real browser.

Records memory_phases under proflaunch, then runs `proftrace view` as a user
would and talks to it over HTTP (urllib):

- a missing file is an error naming it;
- the trace is converted next to the input, served byte for byte with CORS
  for the UI's origin, and `view` exits 0 once it has been fetched in full
  (a HEAD, a byte range and refused requests do not end it);
- the printed link is the UI's `#!/?url=` link (self-hosted --origin), paths
  other than the trace get 404, other methods 405, other origins and Host
  names 403;
- a second view reuses the conversion; Ctrl-C ends it with status 130;
- a port in use moves to the next one and serves the page that hands the
  trace to the UI; ten ports in use is an error; --timeout gives up;
- a file name with a space is percent-encoded in the URL.

With --browser (needs node, /usr/bin/chromium and `npm ci` in tests/browser,
else SKIP): tests/browser/view_test.mjs checks in headless Chromium that a
page on https://ui.perfetto.dev fetches the trace through CORS and another
origin cannot, and that the page served on other ports hands the trace to a
stand-in UI by postMessage.

    view_test.py --proflaunch P --proftrace T --program memory_phases
        --library-path LD_PATH [--browser --browser-dir tests/browser]
"""
import argparse
import hashlib
import os
import queue
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

SKIP = 77
CHROMIUM = "/usr/bin/chromium"
UI = "https://ui.perfetto.dev"
failures = []


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)


def run(command, env=None):
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def free_ports(count):
    """A base port with `count` free ports from it (bound and released)."""
    for _ in range(200):
        base = random.randint(20000, 60000 - count)
        sockets = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                s.bind(("127.0.0.1", port))
                sockets.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    sys.exit("no free ports")


def occupy(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the TIME_WAIT of earlier views
    s.bind(("127.0.0.1", port))
    s.listen(1)
    return s


class View:
    """`proftrace view` running in the background; stdout read by a thread."""

    def __init__(self, proftrace, args, cwd):
        self.process = subprocess.Popen([proftrace, "view", "--no-browser", *args], cwd=cwd, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = queue.Queue()
        self.stdout = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line)

    def wait_for_line(self, pattern, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None and self.lines.empty():
                    break
                continue
            self.stdout.append(line)
            match = re.search(pattern, line)
            if match:
                return match
        sys.exit(f"proftrace view never printed /{pattern}/; printed:\n{''.join(self.stdout)}\n"
                 f"stderr:\n{self.process.stderr.read() if self.process.poll() is not None else '(running)'}")

    def started(self):
        """Waits for the "Waiting" line; returns (trace URL, link)."""
        url = self.wait_for_line(r"^proftrace: serving .* at (\S+)$").group(1)
        link = self.wait_for_line(r"^    (\S+)$").group(1)
        self.wait_for_line(r"^Waiting for the UI")
        return url, link

    def finish(self, timeout=15):
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None, ""
        rest = self.process.stdout.read() if not self.process.stdout.closed else ""
        while not self.lines.empty():
            self.stdout.append(self.lines.get())
        return self.process.returncode, self.process.stderr.read() + "".join(self.stdout) + rest

    def running_after(self, seconds):
        time.sleep(seconds)
        return self.process.poll() is None


def request(url, method="GET", headers=None):
    """(status, headers, body) for one request; errors are answers too."""
    req = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def http_checks(args, work, trace):
    run_pftrace = os.path.join(work, "run.pftrace")

    # A missing file.
    missing = subprocess.run([args.proftrace, "view", "--no-browser", "nope.trace"], cwd=work,
                             capture_output=True, text=True, timeout=60)
    check(missing.returncode == 1 and "nope.trace" in missing.stderr and "No such file" in missing.stderr,
          f"a missing file: exit {missing.returncode}, {missing.stderr.strip()!r}")

    # Converts, serves, prints the UI link (self-hosted UI origin: fetched directly on any port).
    # What a conversion killed half way left behind is not taken for a result.
    leftover = os.path.join(work, "run.converting.pftrace")
    with open(leftover, "wb") as f:
        f.write(b"half a conversion")
    port = free_ports(1)
    origin = "http://localhost:10000"
    view = View(args.proftrace, [trace, "--port", str(port), "--origin", origin], work)
    url, link = view.started()
    check(os.path.isfile(run_pftrace), "the trace was converted to run.pftrace next to it")
    check(not os.path.exists(leftover), "under a temporary name, renamed when complete")
    check(url == f"http://127.0.0.1:{port}/run.pftrace", f"the trace URL {url}")
    check(link == f"{origin}/#!/?url={url}", f"the UI link {link}")
    check(any(f"ssh -L {port}:127.0.0.1:{port}" in line for line in view.stdout), "the ssh -L hint")
    expected = open(run_pftrace, "rb").read()
    # What it serves follows the importer's rules and loads in Perfetto's own
    # importer (pftrace_check.py; TRACE_PROCESSOR), as every e2e trace does.
    if os.environ.get("PFTRACE_CHECKER"):
        checked = subprocess.run([os.environ.get("PYTHON3", sys.executable), os.environ["PFTRACE_CHECKER"],
                                  run_pftrace], capture_output=True, text=True, timeout=300)
        check(checked.returncode == 0, f"the served trace breaks a rule: {checked.stderr[-2000:]}")

    status, _, _ = request(f"http://127.0.0.1:{port}/status")
    check(status == 404, f"another path: {status}")
    status, _, _ = request(f"http://127.0.0.1:{port}/", headers={"Origin": origin})
    check(status == 404, f"the root on a port the UI fetches from directly: {status}")
    status, _, _ = request(f"http://127.0.0.1:{port}/../run.trace")
    check(status == 404, f"a path leaving the served file: {status}")
    status, headers, _ = request(url, method="POST")
    check(status == 405 and "GET" in headers.get("Allow", ""), f"POST: {status}, Allow: {headers.get('Allow')}")
    status, headers, _ = request(url, headers={"Origin": "https://elsewhere.example"})
    check(status == 403 and headers.get("Access-Control-Allow-Origin") is None, f"another origin: {status}")
    status, _, _ = request(url, headers={"Host": f"attacker.example:{port}"})
    check(status == 403, f"another Host (DNS rebinding): {status}")
    status, headers, body = request(url, method="OPTIONS", headers={
        "Origin": origin, "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Private-Network": "true"})
    check(status == 204 and headers.get("Access-Control-Allow-Origin") == origin
          and headers.get("Access-Control-Allow-Private-Network") == "true", f"the preflight: {status}")
    status, headers, body = request(url, method="HEAD")
    check(status == 200 and int(headers.get("Content-Length", -1)) == len(expected), f"HEAD: {status}")
    status, _, body = request(url, headers={"Range": "bytes=0-99"})
    check(status == 206 and body == expected[:100], f"a byte range: {status}, {len(body)} bytes")
    check(view.running_after(0.3), "still serving after HEAD, a range and refused requests")

    status, headers, body = request(url, headers={"Origin": origin})
    check(status == 200 and body == expected, f"GET: {status}, {len(body)} bytes, the file has {len(expected)}")
    check(headers.get("Access-Control-Allow-Origin") == origin, f"CORS for {headers.get('Access-Control-Allow-Origin')}")
    code, output = view.finish()
    check(code == 0 and "fetched" in output, f"exits 0 once fetched (exit {code})")
    check("converted" in output and "run.pftrace" in output and "converting" not in output,
          "says what it converted, under the final name")

    # Again: the conversion is reused; Ctrl-C ends it.
    view = View(args.proftrace, [trace, "--port", str(port)], work)
    view.started()
    view.process.send_signal(signal.SIGINT)
    code, output = view.finish()
    check("newer than the trace: serving it" in output, "a second view reuses the conversion")
    check(code == 130 and "stopped before" in output, f"Ctrl-C: exit {code}")

    # A port in use: the next one, with the page that hands the trace to the UI.
    base = free_ports(11)
    held = occupy(base)
    view = View(args.proftrace, [run_pftrace, "--port", str(base)], work)
    url, link = view.started()
    check(url == f"http://127.0.0.1:{base + 1}/run.pftrace", f"moved to the next port: {url}")
    check(link == f"http://127.0.0.1:{base + 1}/", f"and links its page: {link}")
    status, headers, page = request(link)
    check(status == 200 and b'data-trace="/run.pftrace"' in page and headers.get_content_type() == "text/html",
          f"the page: {status}")
    check(view.running_after(0.2), "still serving after the page")
    status, _, body = request(url)
    code, output = view.finish()
    check(body == expected and code == 0, f"the trace from the next port, exit {code}")
    check(f"port {base} is in use" in output and f"serving on {base + 1}" in output, "says the port was in use")

    # Ten ports in use.
    holds = [occupy(p) for p in range(base + 1, base + 10)]
    all_busy = subprocess.run([args.proftrace, "view", "--no-browser", run_pftrace, "--port", str(base)],
                              cwd=work, capture_output=True, text=True, timeout=60)
    check(all_busy.returncode == 1 and f"ports {base}-{base + 9} are all in use" in all_busy.stderr,
          f"ten ports in use: exit {all_busy.returncode}, {all_busy.stderr.strip()!r}")
    for s in [held, *holds]:
        s.close()

    # Nobody fetches: --timeout.
    timed = subprocess.run([args.proftrace, "view", "--no-browser", run_pftrace, "--port", str(free_ports(1)),
                            "--timeout", "0.5"], cwd=work, capture_output=True, text=True, timeout=60)
    check(timed.returncode == 1 and "nothing fetched" in timed.stderr, f"--timeout: exit {timed.returncode}")

    # A name that needs encoding, served as it is.
    spaced = os.path.join(work, "my run.pftrace")
    shutil.copy(run_pftrace, spaced)
    view = View(args.proftrace, [spaced, "--port", str(free_ports(1))], work)
    url, _ = view.started()
    check(url.endswith("/my%20run.pftrace"), f"percent-encoded: {url}")
    status, _, body = request(url)
    code, _ = view.finish()
    check(status == 200 and body == expected and code == 0, f"fetched by its encoded name: {status}, exit {code}")


def browser_checks(args, work, trace):
    node = shutil.which("node")
    if node is None:
        sys.exit(print("SKIP: node is not installed (scripts/install-deps.sh installs it)") or SKIP)
    if not os.access(CHROMIUM, os.X_OK):
        sys.exit(print(f"SKIP: {CHROMIUM} is missing (scripts/install-deps.sh installs it)") or SKIP)
    if not os.path.isdir(os.path.join(args.browser_dir, "node_modules", "playwright-core")):
        sys.exit(print(f"SKIP: playwright-core is missing: `npm ci` in {args.browser_dir}") or SKIP)
    script = os.path.join(args.browser_dir, "view_test.mjs")
    pftrace = os.path.join(work, "run.pftrace")
    for mode in ("direct", "opener"):
        view = View(args.proftrace, [trace, "--port", str(free_ports(1))], work)
        url, link = view.started()
        target = url if mode == "direct" else link
        result = subprocess.run([node, script, mode, target, sha256(pftrace), str(os.path.getsize(pftrace))],
                                cwd=args.browser_dir, timeout=120)
        check(result.returncode == 0, f"{mode}: the browser checks passed")
        code, output = view.finish()
        check(code == 0 and "fetched" in output, f"{mode}: view exits 0 once the browser fetched the trace ({code})")


def main():
    parser = argparse.ArgumentParser()
    for name in ("proflaunch", "proftrace", "program", "library_path"):
        parser.add_argument("--" + name.replace("_", "-"), required=True)
    parser.add_argument("--browser", action="store_true")
    parser.add_argument("--browser-dir")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "run.trace")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROFLAUNCH_") and k != "LD_PRELOAD"}
        env.update(LD_LIBRARY_PATH=args.library_path, SIMGPU_DEVICE_MEMORY_MIB="2048")
        run([args.proflaunch, "-q", "-o", trace, "--", args.program], env)
        if args.browser:
            browser_checks(args, work, trace)
        else:
            http_checks(args, work, trace)
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")


if __name__ == "__main__":
    main()
