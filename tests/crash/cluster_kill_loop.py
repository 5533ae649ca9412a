#!/usr/bin/env python3
"""Cluster kill loop (issue 37 item 3): `kill -9` a cluster node under click and conversion load,
many times, and check that the cluster's budget counters equal the billed events exactly.

Real PostgreSQL and Redis (the CTest fixtures). Two `serve` nodes share the database: node A is
killed and restarted with its node id each iteration, node B keeps running and serves too. Each
iteration runs, on A until a random moment:
  - ads and clicks: /v1/ads for targeted wallets, then the click redirect (CPC spend, billed by A);
  - conversions: POST /admin/v1/activity with a transaction of a wallet A served the CPA ad
    (attributed and billed by A);
and ads and clicks on B all along. Then `kill -9` A, restart it (its counters are reconciled
with the events it billed past its marks before it serves), stop both cleanly and compare, per
campaign, the sum over nodes of node_campaign_counters (spend, clicks, conversions) with the
billed clicks and conversions in PostgreSQL. The budgets are large enough never to stop a
campaign, and its impressions are free (CPC and CPA only), so the two must be equal.
Then a node that never comes back: node C runs the same load, is killed and not restarted; B
(the live node) must reconcile C's counters within cluster.dead_node_seconds (3 here) plus a
round, after which the counters equal the billed events again.
Usage: cluster_kill_loop.py BUILD_DIR [--iterations N] [--seed S]
       (env ADSERVER_TEST_POSTGRES_DIR, ADSERVER_TEST_REDIS_DIR)
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, tempfile, threading, time

from common import DEX, NFT, USDC, cli_json, http, seed_inventory, wait_for

parser = argparse.ArgumentParser()
parser.add_argument("build")
parser.add_argument("--iterations", type=int, default=20)
parser.add_argument("--seed", type=int, default=int(time.time()))
parser.add_argument("--max-run", type=float, default=2.0, help="longest load before a kill, s")
args = parser.parse_args()


def read_url(var):
    path = os.path.join(os.environ.get(var, ""), "url")
    return open(path).read().strip() if os.path.exists(path) else None


PG_SERVER, REDIS = read_url("ADSERVER_TEST_POSTGRES_DIR"), read_url("ADSERVER_TEST_REDIS_DIR")
if not PG_SERVER or not REDIS:
    if os.environ.get("ADSERVER_REQUIRE_POSTGRES") or os.environ.get("ADSERVER_REQUIRE_REDIS"):
        print("FAIL: the postgres/redis fixtures did not start"); sys.exit(1)
    print("SKIP: no test PostgreSQL/Redis (run through ctest: fixtures postgres;redis)")
    sys.exit(77)
ADSERVER = os.path.join(args.build, "adserver")
ADMIN = "cluster-kill-loop-admin-token"
PUBLIC = "https://ads.example.test"
WALLETS = 120
DB_NAME = "cluster_kill_%d_%d" % (os.getpid(), int(time.time()))
DB = PG_SERVER.rstrip("/") + "/" + DB_NAME
ENV = dict(os.environ, ADSERVER_DATABASE_URL=DB, ADSERVER_REDIS_URL=REDIS,
           ADSERVER_REDIS_KEY_PREFIX=DB_NAME + ":", ADSERVER_ADMIN_TOKEN=ADMIN,
           ADSERVER_PUBLIC_URL=PUBLIC)
rng = random.Random(args.seed)


def psql(db, sql):
    r = subprocess.run(["psql", db, "-v", "ON_ERROR_STOP=1", "-tAc", sql], capture_output=True, text=True)
    if r.returncode != 0: raise RuntimeError(f"psql {sql}: {r.stderr}")
    return r.stdout.strip()


def cli(data, *a):
    return cli_json(ADSERVER, data, *a, env=ENV)


def wallet(i):
    return "0x" + ("%040x" % (0xC1A55E00000000 + i))


def main():
    tmp = tempfile.mkdtemp(prefix="cluster-kill-")
    procs, failures = [], []
    totals = {"kills": 0, "clicks": 0, "imports": 0}
    psql(PG_SERVER.rstrip("/") + "/postgres", f"CREATE DATABASE {DB_NAME}")
    try:
        data = os.path.join(tmp, "cli")
        os.makedirs(data)
        campaigns, key = seed_inventory(cli, data, tmp, budget="100000000")
        pool = [wallet(i) for i in range(WALLETS)]  # USDC users (CPC), NFT users (CPA)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        activity = os.path.join(tmp, "activity.ndjson")
        with open(activity, "w") as f:
            for i, w in enumerate(pool):
                f.write(json.dumps({"wallet": w, "project": "usdc" if i % 2 else "nft", "chainId": 1,
                                    "timestamp": stamp}) + "\n")
        subprocess.run([ADSERVER, "activity", "import", activity, "--data", data], check=True,
                       capture_output=True, env=ENV)
        config = os.path.join(tmp, "adserver.toml")
        with open(config, "w") as f:
            f.write('[admin]\nrate_limit_per_second = 0\n')
            f.write('[cluster]\ndead_node_seconds = 3\n')
            # Clicks come at once after their serve, thousands from one address: valid here, so
            # that they bill (the crawler and blocklist checks stay on).
            f.write('[traffic]\nmin_click_delay_ms = 0\ncheck_click_origin = false\n'
                    'click_limits = []\nevent_limits = []\n')
        auth = {"Authorization": "Bearer " + ADMIN}

        def start(name):
            ready = os.path.join(tmp, f"ready-{name}")
            if os.path.exists(ready): os.remove(ready)
            p = subprocess.Popen([ADSERVER, "serve", "--listen", "127.0.0.1:0", "--ready-file", ready,
                                  "--data", os.path.join(tmp, name), "--config", config,
                                  "--log-level", "error"], env=dict(ENV, ADSERVER_NODE_ID=name))
            procs.append(p)
            wait_for(lambda: os.path.exists(ready) and open(ready).read().strip(), 60, f"{name} ready")
            return p, int(open(ready).read().strip())

        lock = threading.Lock()
        served_cpa = set()
        acked = {"clicks": 0, "imports": 0}

        def clicks(sport, stop):
            while not stop.is_set():
                w = rng.choice(pool)
                try:
                    s, _, b = http(sport, "POST", "/v1/ads", {"walletAddresses": [w], "imageFormat": "NO_IMAGE"},
                                   {"Content-Type": "application/json", "x-api-key": key})
                    if s != 200: continue
                    ad = json.loads(b)
                    if ad.get("headline") == "cpa":
                        with lock: served_cpa.add(w)
                        continue
                    s, _, _ = http(sport, "GET", ad["ctaUrl"][len(PUBLIC):])
                    if s == 302:
                        with lock: acked["clicks"] += 1
                except Exception:
                    pass  # the node was killed: nothing acknowledged

        def conversions(sport, stop):
            while not stop.is_set():
                with lock: candidates = list(served_cpa)
                if not candidates: time.sleep(0.01); continue
                lines = [json.dumps({"wallet": rng.choice(candidates), "project": "dex", "chainId": 1,
                                     "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                     "txHash": "0x%064x" % rng.getrandbits(256)}) for _ in range(3)]
                try:
                    s, _, _ = http(sport, "POST", "/admin/v1/activity", raw="\n".join(lines).encode(),
                                   headers={"Content-Type": "application/x-ndjson", **auth})
                    if s == 200:
                        with lock: acked["imports"] += 1
                except Exception:
                    pass
                time.sleep(0.01)

        def counters_and_events():
            """Per campaign: (spend, clicks, conversions) of the counters summed over nodes, and of
            the billed events."""
            out = {}
            for name, cid in campaigns.items():
                counted = psql(DB, "SELECT COALESCE(SUM(total_spend_micros), 0), COALESCE(SUM(clicks), 0), "
                                   f"COALESCE(SUM(conversions), 0) FROM node_campaign_counters WHERE campaign_id = {cid}")
                clicks_n, click_spend = psql(DB, "SELECT COUNT(*), COALESCE(SUM(price_micros), 0) FROM clicks "
                                                 f"WHERE status = 'billed' AND campaign_id = {cid}").split("|")
                conv_n, conv_spend = psql(DB, "SELECT COUNT(*), COALESCE(SUM(price_micros), 0) FROM conversions "
                                              f"WHERE status = 'billed' AND campaign_id = {cid}").split("|")
                out[name] = (tuple(int(v) for v in counted.split("|")),
                             (int(click_spend) + int(conv_spend), int(clicks_n), int(conv_n)))
            return out

        node_b, port_b = start("node-b")
        stop_b = threading.Event()
        b_threads = [threading.Thread(target=clicks, args=(port_b, stop_b))]
        for t in b_threads: t.start()
        for it in range(args.iterations):
            node_a, port_a = start("node-a")
            stop = threading.Event()
            threads = [threading.Thread(target=clicks, args=(port_a, stop)),
                       threading.Thread(target=clicks, args=(port_a, stop)),
                       threading.Thread(target=conversions, args=(port_a, stop))]
            for t in threads: t.start()
            time.sleep(rng.uniform(0.3, args.max_run))
            node_a.send_signal(signal.SIGKILL)
            node_a.wait()
            procs.remove(node_a)
            totals["kills"] += 1
            stop.set()
            for t in threads: t.join()
        # The last restart reconciles the last kill; then it stops cleanly (its last flush).
        node_a, port_a = start("node-a")
        node_a.send_signal(signal.SIGTERM)
        if node_a.wait(30) != 0: failures.append("node-a did not stop cleanly")
        procs.remove(node_a)
        # A node that dies for good: B reconciles its counters.
        node_c, port_c = start("node-c")
        stop = threading.Event()
        threads = [threading.Thread(target=clicks, args=(port_c, stop)),
                   threading.Thread(target=conversions, args=(port_c, stop))]
        for t in threads: t.start()
        time.sleep(1.5)
        node_c.send_signal(signal.SIGKILL)
        node_c.wait()
        procs.remove(node_c)
        stop.set()
        for t in threads: t.join()
        stop_b.set()
        for t in b_threads: t.join()
        killed_at = time.time()
        try:
            wait_for(lambda: all(c == b for c, b in counters_and_events().values()), 30,
                     "node-c's counters reconciled by node-b")
            print(f"node-c reconciled by node-b {time.time() - killed_at:.1f} s after its kill")
        except AssertionError as e:
            failures.append(str(e))
        node_b.send_signal(signal.SIGTERM)
        if node_b.wait(30) != 0: failures.append("node-b did not stop cleanly")
        procs.remove(node_b)
        totals["clicks"], totals["imports"] = acked["clicks"], acked["imports"]
        result = counters_and_events()
        for name, (counted, billed) in result.items():
            if counted != billed:
                failures.append(f"campaign {name}: counters (spend, clicks, conversions) {counted} != "
                                f"billed events {billed}")
        by_node = psql(DB, "SELECT string_agg(node_id || ':' || clicks || '/' || conversions, ' ' ORDER BY node_id) "
                           "FROM node_campaign_counters")
        try:
            reconciled_a = psql(DB, "SELECT COUNT(*) FROM clicks WHERE node_id = 'node-a' AND status = 'billed'")
        except RuntimeError:
            reconciled_a = "?"  # a binary from before clicks named their node
        if result["cpc"][1][1] == 0 or result["cpa"][1][2] == 0:
            failures.append(f"nothing billed on one campaign, the loop checks nothing: {result}")
        print(f"cluster kill loop (seed {args.seed}): {totals['kills']} kills of node-a; "
              f"{totals['clicks']} acknowledged clicks, {totals['imports']} acknowledged imports; billed "
              f"(spend micros, clicks, conversions): cpc {result['cpc'][1]}, cpa {result['cpa'][1]}; "
              f"node-a billed {reconciled_a} clicks; counters by node (clicks/conversions): {by_node}")
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            psql(PG_SERVER.rstrip("/") + "/postgres", f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        except Exception as e:
            print("note: test database not dropped:", e)
    for f in failures: print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
