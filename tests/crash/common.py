"""What the crash loops share (tests/crash/crash_loop.py, cluster_kill_loop.py): HTTP calls that
never follow a redirect (a click's 302 is its acknowledgement), waiting for a condition, and the
CLI's JSON answers."""
import json, subprocess, time, urllib.error, urllib.request

# A browser's User-Agent: the crawler checks stay on and the loops' clicks stay valid.
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k): return None


OPENER = urllib.request.build_opener(NoRedirect)


def http(port, method, path, body=None, headers=None, raw=None):
    """(status, headers, body bytes) of one request to 127.0.0.1:port; errors are answers too."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data,
                                 {"User-Agent": BROWSER, **(headers or {})}, method=method)
    try:
        r = OPENER.open(req, timeout=5)
        return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def wait_for(cond, timeout, what):
    """cond()'s first truthy value within `timeout` seconds (an exception counts as not yet)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            v = cond()
            if v: return v
        except Exception:
            pass
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def cli_json(adserver, data, *a, env=None):
    """The JSON of the last line `adserver ... --data DATA` prints; RuntimeError if it fails."""
    r = subprocess.run([adserver, *a, "--data", data], capture_output=True, text=True, env=env)
    if r.returncode != 0: raise RuntimeError(f"{a}: {r.stdout} {r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])
