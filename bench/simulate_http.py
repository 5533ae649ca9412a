#!/usr/bin/env python3
"""The decision-quality simulator end to end (issue 36 item 7): a scenario file of
bench/scenarios played through the real `adserver serve` over HTTP, not through the decision
code in-process (bench/sim does that, fast and with simulated time).

The scenario's campaigns are created with the CLI (CPM and CPC; CPA scenarios need onchain
conversions days later and are refused), each with one ad; every request is a POST /v1/ads for
a wallet of the one project they all target; a shown CPC ad is clicked with its true CTR
through the click redirect of its ctaUrl (GET /v1/click/{token}: a valid click, billed, which
is all the server learns from). A rate change of the scenario applies after that share of the
requests. Revenue is counted in expectation as in bench/sim: each impression earns its
campaign's true value, the oracle the largest true value. Time is real: the server redraws
every second of wall time, so a second holds --rate requests (250 by default, like a busy
network; at full speed, ~2,400/s on this machine, a 20,000-request run is 8 redraws long and
spends most of them at the prior).

Usage: simulate_http.py BUILD_DIR SCENARIO.json [--requests N] [--seed S] [--min-share X]
Prints the share of the oracle's revenue, by tenth, and per-campaign impressions; with
--min-share exits 1 below it (the CTest smoke).
"""
import argparse, http.client, json, os, random, shutil, signal, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("build")
parser.add_argument("scenario")
parser.add_argument("--requests", type=int, help="default: the scenario's")
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--min-share", type=float, default=0.0)
parser.add_argument("--rate", type=float, default=250,
                    help="requests per second (the server redraws each second: a faster run explores "
                         "in fewer, larger steps)")
args = parser.parse_args()
ADSERVER = os.path.join(args.build, "adserver")
ADMIN = "simulate-http-admin-token"
PUBLIC = "https://ads.example.test"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
PROJECT = "0x000000000000000000000000000000000000f00d"
WALLETS = 4096

scenario = json.load(open(args.scenario))
requests = args.requests or scenario.get("requests", 20000)
campaigns = scenario["campaigns"]
for c in campaigns:
    if c["model"] not in ("cpm", "cpc"):
        print(f"SKIP: {scenario['name']}: {c['model']} campaigns need onchain conversions (bench/sim only)")
        sys.exit(77)
    if c.get("start"):
        print(f"SKIP: {scenario['name']}: campaigns joining during the run are bench/sim only")
        sys.exit(77)
rng = random.Random(args.seed)


def true_rate(c, progress):
    rate = c.get("ctr", 0)
    for change in sorted(c.get("changes", []), key=lambda ch: ch["at"]):
        if progress >= change["at"]: rate = change["ctr"]
    return rate


def true_value(c, progress):
    return c["bid"] / 1000 if c["model"] == "cpm" else c["bid"] * true_rate(c, progress)


def cli(data, *a):
    r = subprocess.run([ADSERVER, *a, "--data", data], capture_output=True, text=True)
    if r.returncode != 0: raise RuntimeError(f"{a}: {r.stdout} {r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def wallet(i):
    return "0x" + ("%040x" % (0x51A0000000 + i))


def main():
    tmp = tempfile.mkdtemp(prefix="simulate-http-")
    server = None
    try:
        data = os.path.join(tmp, "data")
        book = {"projects": [{"slug": "app", "name": "The App", "contracts": [{"chainId": 1, "address": PROJECT}]}]}
        book_path = os.path.join(tmp, "book.json"); json.dump(book, open(book_path, "w"))
        subprocess.run([ADSERVER, "projects", "import", book_path, "--data", data], check=True,
                       capture_output=True)
        community = cli(data, "communities", "create", '{"name":"Network","logoUrl":"https://n.example/l.png"}')
        by_headline = {}
        for c in campaigns:
            created = cli(data, "campaigns", "create", json.dumps({
                "communityId": community["id"], "name": f"campaign {c['id']}", "status": "active",
                "pricing": {"model": c["model"].upper(), "bid": c["bid"]},
                "targeting": {"projects": ["app"]}}))
            headline = f"Ad {c['id']}"
            cli(data, "ads", "create", json.dumps({
                "campaignId": created["id"], "headline": headline, "content": "Simulated",
                "ctaUrl": f"https://n.example/{c['id']}", "ctaLabel": "Go", "images": {}, "status": "active"}))
            by_headline[headline] = c
        pub = cli(data, "publishers", "create", "--name", "Site")
        key = cli(data, "keys", "create", "--publisher", str(pub["id"]))["key"]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        activity = os.path.join(tmp, "activity.ndjson")
        with open(activity, "w") as f:
            for i in range(WALLETS):
                f.write(json.dumps({"wallet": wallet(i), "project": "app", "chainId": 1, "timestamp": stamp}) + "\n")
        subprocess.run([ADSERVER, "activity", "import", activity, "--data", data], check=True, capture_output=True)
        config = os.path.join(tmp, "adserver.toml")
        with open(config, "w") as f:
            # Thousands of clicks from one address right after their serve: valid here.
            f.write('[traffic]\nmin_click_delay_ms = 0\ncheck_click_origin = false\n'
                    'click_limits = []\nevent_limits = []\n')
        ready = os.path.join(tmp, "ready")
        server = subprocess.Popen([ADSERVER, "serve", "--listen", "127.0.0.1:0", "--ready-file", ready,
                                   "--data", data, "--config", config, "--log-level", "error"],
                                  env=dict(os.environ, ADSERVER_ADMIN_TOKEN=ADMIN, ADSERVER_PUBLIC_URL=PUBLIC))
        deadline = time.time() + 60
        while not (os.path.exists(ready) and open(ready).read().strip()):
            if time.time() > deadline or server.poll() is not None: raise RuntimeError("serve did not start")
            time.sleep(0.05)
        port = int(open(ready).read().strip())
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        revenue = oracle = 0.0
        deciles = [[0.0, 0.0] for _ in range(10)]
        shown = {c["id"]: 0 for c in campaigns}
        clicks = unfilled = 0
        started = time.time()
        for k in range(requests):
            ahead = started + k / args.rate - time.time()
            if ahead > 0: time.sleep(ahead)
            progress = k / requests
            values = {c["id"]: true_value(c, progress) for c in campaigns}
            best = max(values.values())
            body = json.dumps({"walletAddresses": [wallet(k % WALLETS)], "imageFormat": "NO_IMAGE"})
            conn.request("POST", "/v1/ads", body, {"Content-Type": "application/json", "x-api-key": key,
                                                   "User-Agent": BROWSER})
            r = conn.getresponse()
            answer = r.read()
            d = deciles[min(9, k * 10 // requests)]
            oracle += best
            d[1] += best
            if r.status != 200:
                unfilled += 1
                continue
            ad = json.loads(answer)
            c = by_headline[ad["headline"]]
            shown[c["id"]] += 1
            revenue += values[c["id"]]
            d[0] += values[c["id"]]
            if c["model"] == "cpc" and rng.random() < true_rate(c, progress):
                conn.request("GET", ad["ctaUrl"][len(PUBLIC):], headers={"User-Agent": BROWSER})
                r = conn.getresponse()
                r.read()
                if r.status == 302: clicks += 1
        seconds = time.time() - started
        share = revenue / oracle if oracle else 0
        print(f"{scenario['name']} over HTTP: {requests} requests in {seconds:.1f} s "
              f"({requests / seconds:.0f}/s), {clicks} clicks, {unfilled} unfilled")
        print(f"  share of the oracle {share:.3f} | by tenth: " +
              " ".join(f"{a / b:.2f}" if b else "-" for a, b in deciles))
        print("  impressions: " + " ".join(f"{cid}={n / requests:.3f}" for cid, n in shown.items()))
        if share < args.min_share:
            print(f"FAIL: share {share:.3f} is below {args.min_share:.3f}")
            return 1
        return 0
    finally:
        if server:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
