#!/usr/bin/env python3
"""The admin API's worst bodies (issue 39 item 1): server time per body and per 100 KB.

Usage: bench/admin_bodies.py BINARY [--repeat N]

Starts BINARY (`adserver serve`) on a fresh data directory with an operator token, creates a
community and a publisher, then sends bodies built to be expensive to validate, each as large as
the default admin body limit allows (just under 1 MiB; a larger one is refused with 413 before
validation) and also at 40,000 slugs as in the issue's report (an older binary with a 64 MiB limit
reads it whole):
  - POST /admin/v1/campaigns, targeting.projects of unknown slugs;
  - the same with targeting.excludeProjects repeating the targeted ones;
  - POST /admin/v1/campaigns with unknown top-level keys;
  - PATCH /admin/v1/publishers/{id} with unknown keys;
  - a deeply nested array.
Prints one line per body: bytes, status, answer bytes, the best of N wall times on the loopback
(the server's time: one request at a time, nothing else running) and ms per 100 KB. The target
is at most 10 ms per 100 KB (docs/BENCHMARKS.md).
"""
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

TOKEN = "bench-admin-token-0123456789"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(port, method, path, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    start = time.perf_counter()
    conn.request(method, path, body=data, headers={
        "Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    r = conn.getresponse()
    answer = r.read()
    elapsed = time.perf_counter() - start
    conn.close()
    return r.status, answer, elapsed


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    work = tempfile.mkdtemp(prefix="adserver-admin-bodies.")
    port = free_port()
    env = dict(os.environ, ADSERVER_ADMIN_TOKEN=TOKEN)
    log = open(os.path.join(work, "server.log"), "w")
    server = subprocess.Popen([binary, "serve", "--data", os.path.join(work, "data"),
                               "--listen", "127.0.0.1:%d" % port], env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    try:
        for _ in range(300):
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                conn.request("GET", "/readyz")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            print("server did not start; see " + work, file=sys.stderr)
            return 1
        status, answer, _ = call(port, "POST", "/admin/v1/communities",
                                 {"name": "Bench", "logoUrl": "https://cdn.example/b.png"})
        community = json.loads(answer)["id"]
        status, answer, _ = call(port, "POST", "/admin/v1/publishers", {"name": "Bench"})
        publisher = json.loads(answer)["id"]
        limit = 1024 * 1024 - 1024

        def campaign(extra):
            body = {"communityId": community, "name": "B", "status": "active",
                    "pricing": {"model": "CPM", "bid": 1}}
            body.update(extra)
            return body

        def fill(make, n):
            """The largest n (halving down) whose body fits the limit."""
            while len(json.dumps(make(n)).encode()) > limit:
                n = n * 9 // 10
            return make(n)

        slugs = lambda n: campaign({"targeting": {"projects": ["no-such-%d" % i for i in range(n)]}})
        both = lambda n: campaign({"targeting": {
            "projects": ["no-such-%d" % i for i in range(n // 2)],
            "excludeProjects": ["no-such-%d" % i for i in range(n // 2)]}})
        keys = lambda n: campaign({"k%d" % i: 1 for i in range(n)})
        pub_keys = lambda n: {"k%d" % i: 1 for i in range(n)}
        cases = [
            ("campaign, 40,000 unknown slugs", "POST", "/admin/v1/campaigns", slugs(40000)),
            ("campaign, unknown slugs (1 MiB)", "POST", "/admin/v1/campaigns", fill(slugs, 80000)),
            ("campaign, slugs targeted and excluded (1 MiB)", "POST", "/admin/v1/campaigns",
             fill(both, 80000)),
            ("campaign, unknown keys (1 MiB)", "POST", "/admin/v1/campaigns", fill(keys, 150000)),
            ("publisher PATCH, unknown keys (1 MiB)", "PATCH", "/admin/v1/publishers/%d" % publisher,
             fill(pub_keys, 150000)),
            ("nested arrays (1 MiB)", "POST", "/admin/v1/campaigns",
             b"[" * (limit // 2) + b"]" * (limit // 2)),
        ]
        print("| body | bytes | status | answer bytes | ms (best of %d) | ms per 100 KB |" % repeat)
        print("|---|---:|---:|---:|---:|---:|")
        for name, method, path, body in cases:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            best = None
            for _ in range(repeat):
                status, answer, elapsed = call(port, method, path, data)
                best = elapsed if best is None else min(best, elapsed)
            ms = best * 1000
            print("| %s | %d | %d | %d | %.1f | %.2f |" % (
                name, len(data), status, len(answer), ms, ms / (len(data) / 102400)))
    finally:
        server.terminate()
        server.wait()
        log.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
