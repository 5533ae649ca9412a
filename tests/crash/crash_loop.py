#!/usr/bin/env python3
"""Crash loop (issue 18): kill -9 `adserver serve` at random moments under mixed writes, many
times, and check after every crash that nothing acknowledged was lost and nothing billed twice.

Each iteration starts `serve` (embedded SQLite + LMDB, the live indexer following a real anvil
with confirmations 0) on the same data directory and runs, until a random moment, four writers:
  - ads and clicks: /v1/ads for targeted wallets, then the click redirect (a 302 acknowledges
    the click: its spclid must be in the clicks table afterwards);
  - conversions: served wallets send transactions to the conversion contract, one block each
    (the indexer attributes them while it applies the blocks);
  - admin writes: POST /admin/v1/communities (a 201 acknowledges it);
  - bulk imports: POST /admin/v1/activity NDJSON with fresh wallets and a transaction of a
    served wallet (a 200 acknowledges the activity; its transaction may convert).
Then `kill -9`, and with the server down:
  - SQLite `PRAGMA integrity_check` is ok, `mdb_stat` reads both LMDB environments;
  - every acknowledged click, community and imported wallet is present (the wallets through
    GET /admin/v1/activity/{wallet} of the restarted server, i.e. read from LMDB);
  - no decision billed twice, no transaction converted twice per campaign;
  - after the restarted server stops cleanly, every campaign's spend and click and conversion
    counts (the budget counters) equal the sums of its billed clicks and conversions.
Usage: crash_loop.py BUILD_DIR ANVIL_BIN [--iterations N] [--seed S]
"""
import argparse, json, os, random, shutil, signal, socket, sqlite3, subprocess, sys, tempfile
import threading, time, urllib.request

from common import DEX, NFT, USDC, cli_json, http, seed_inventory, wait_for

parser = argparse.ArgumentParser()
parser.add_argument("build")
parser.add_argument("anvil")
parser.add_argument("--iterations", type=int, default=20)
parser.add_argument("--seed", type=int, default=int(time.time()))
parser.add_argument("--max-run", type=float, default=2.0, help="longest load before a kill, s")
args = parser.parse_args()
if not os.path.exists(args.anvil):
    print(f"SKIP: {args.anvil} missing (scripts/install-deps.sh installs anvil from npm)")
    sys.exit(77)
ADSERVER = os.path.join(args.build, "adserver")
TRANSFER = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
CODE = "0x3333" + "7f" + TRANSFER + "6000" + "6000" + "a3" + "00"  # one log per call
ADMIN = "crash-loop-admin-token"
PUBLIC = "https://ads.example.test"
WALLETS = 120
rng = random.Random(args.seed)


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def rpc(url, method, *params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
    req = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"})
    r = json.load(urllib.request.urlopen(req, timeout=10))
    if "error" in r: raise RuntimeError(f"{method}: {r['error']}")
    return r["result"]


def cli(data, *a):
    return cli_json(ADSERVER, data, *a)


def wallet(i):
    return "0x" + ("%040x" % (0xC0FFEE00000000 + i))


def main():
    tmp = tempfile.mkdtemp(prefix="crash-loop-")
    procs = []
    failures = []
    totals = {"kills": 0, "clicks": 0, "communities": 0, "imports": 0, "txs": 0}
    try:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        procs.append(subprocess.Popen([args.anvil, "--host", "127.0.0.1", "--port", str(port),
                                       "--chain-id", "1", "--silent", "--no-mining"]))
        wait_for(lambda: rpc(url, "eth_blockNumber"), 10, "anvil")
        rpc(url, "anvil_setCode", USDC, CODE)
        rpc(url, "anvil_setCode", DEX, CODE)
        rpc(url, "anvil_setCode", NFT, CODE)
        pool = [wallet(i) for i in range(WALLETS)]
        for i, w in enumerate(pool):  # USDC users (the CPC campaign's), NFT users (the CPA one's)
            rpc(url, "anvil_impersonateAccount", w)
            rpc(url, "anvil_setBalance", w, "0x56bc75e2d63100000")
            rpc(url, "eth_sendTransaction", {"from": w, "to": USDC if i % 2 else NFT, "gas": "0x10000"})
        rpc(url, "evm_mine")

        data = os.path.join(tmp, "data")
        campaigns, key = seed_inventory(cli, data, tmp)
        config = os.path.join(tmp, "adserver.toml")
        with open(config, "w") as f:
            f.write(f'[indexer]\nrpc = "{url}"\nchain_id = 1\nconfirmations = 0\npoll_ms = 50\n')
            # The writers and the read-back are bulk automation: no per-caller admin limit.
            f.write('[admin]\nrate_limit_per_second = 0\n')
            # Clicks come at once after their serve, thousands from one address: valid here, so
            # that they bill (the crawler and blocklist checks stay on).
            f.write('[traffic]\nmin_click_delay_ms = 0\ncheck_click_origin = false\n'
                    'click_limits = []\nevent_limits = []\n')
        env = dict(os.environ, ADSERVER_ADMIN_TOKEN=ADMIN, ADSERVER_PUBLIC_URL=PUBLIC)
        ready = os.path.join(tmp, "ready")
        auth = {"Authorization": "Bearer " + ADMIN}

        def start():
            if os.path.exists(ready): os.remove(ready)
            p = subprocess.Popen([ADSERVER, "serve", "--listen", "127.0.0.1:0", "--ready-file", ready,
                                  "--data", data, "--config", config, "--log-level", "error"], env=env)
            procs.append(p)
            wait_for(lambda: os.path.exists(ready) and open(ready).read().strip(), 60, "serve")
            return p, int(open(ready).read().strip())

        acked_clicks, acked_communities, acked_wallets = [], [], []
        lock = threading.Lock()
        served = set()
        fresh = iter(range(10**6, 10**9))

        def clicks(sport, stop):
            while not stop.is_set():
                w = rng.choice(pool)
                try:
                    s, _, b = http(sport, "POST", "/v1/ads", {"walletAddresses": [w], "imageFormat": "NO_IMAGE"},
                                   {"Content-Type": "application/json", "x-api-key": key})
                    if s != 200: continue
                    with lock: served.add(w)
                    ad = json.loads(b)
                    s, h, _ = http(sport, "GET", ad["ctaUrl"][len(PUBLIC):])
                    if s == 302:
                        with lock: acked_clicks.append(h["Location"].split("spclid=")[1][:36])
                except Exception:
                    pass  # the server was killed: nothing acknowledged

        def conversions(sport, stop):
            while not stop.is_set():
                with lock: candidates = list(served)
                if not candidates: time.sleep(0.01); continue
                try:
                    frm = rng.choice(candidates)
                    rpc(url, "eth_sendTransaction", {"from": frm, "to": DEX, "gas": "0x10000"})
                    rpc(url, "evm_mine")
                    with lock: totals["txs"] += 1
                except Exception as e:
                    failures.append(f"anvil: {e}"); return
                time.sleep(0.02)

        def admin_writes(sport, stop, it):
            n = 0
            while not stop.is_set():
                n += 1
                name = f"crash-{it}-{n}"
                try:
                    s, _, _ = http(sport, "POST", "/admin/v1/communities",
                                   {"name": name, "logoUrl": "https://c.example/l.png"},
                                   {"Content-Type": "application/json", **auth})
                    if s == 201:
                        with lock: acked_communities.append(name)
                except Exception:
                    pass

        def imports(sport, stop):
            while not stop.is_set():
                ws = [wallet(next(fresh)) for _ in range(20)]
                now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                lines = [json.dumps({"wallet": w, "project": "usdc", "chainId": 1, "timestamp": now})
                         for w in ws]
                with lock: candidates = list(served)
                if candidates:
                    lines.append(json.dumps({"wallet": rng.choice(candidates), "project": "dex", "chainId": 1,
                                             "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                             "txHash": "0x%064x" % rng.getrandbits(256)}))
                try:
                    s, _, b = http(sport, "POST", "/admin/v1/activity", raw="\n".join(lines).encode(),
                                   headers={"Content-Type": "application/x-ndjson", **auth})
                    if s == 200:
                        with lock: acked_wallets.extend(ws)
                    if s == 200 and json.loads(b)["imported"] < len(ws):
                        failures.append(f"import refused lines: {b[:300]}")
                except Exception:
                    pass

        def check_after_crash(it):
            db = sqlite3.connect(os.path.join(data, "adserver.db"))
            ok = db.execute("PRAGMA integrity_check").fetchone()[0]
            if ok != "ok": failures.append(f"iteration {it}: integrity_check: {ok}")
            for env_dir in ("activity.lmdb", "exposures.lmdb"):
                r = subprocess.run(["mdb_stat", "-a", os.path.join(data, env_dir)], capture_output=True, text=True)
                if r.returncode != 0: failures.append(f"iteration {it}: mdb_stat {env_dir}: {r.stderr}")
            ids = {bytes(row[0]).hex() for row in db.execute("SELECT decision_id FROM clicks")}
            lost = [c for c in acked_clicks if c.replace("-", "") not in ids]
            if lost: failures.append(f"iteration {it}: {len(lost)} acknowledged clicks lost, e.g. {lost[0]}")
            names = {row[0] for row in db.execute("SELECT name FROM communities")}
            lost = [n for n in acked_communities if n not in names]
            if lost: failures.append(f"iteration {it}: {len(lost)} acknowledged communities lost")
            dup = db.execute("SELECT COUNT(*) FROM (SELECT decision_id FROM clicks WHERE status = 'billed' "
                             "GROUP BY decision_id HAVING COUNT(*) > 1)").fetchone()[0]
            if dup: failures.append(f"iteration {it}: {dup} decisions billed twice")
            dup = db.execute("SELECT COUNT(*) FROM (SELECT 1 FROM conversions WHERE status = 'billed' GROUP BY "
                             "chain_id, tx_hash, log_index, campaign_id HAVING COUNT(*) > 1)").fetchone()[0]
            if dup: failures.append(f"iteration {it}: {dup} transactions converted twice")
            db.close()

        def check_spend(it):
            db = sqlite3.connect(os.path.join(data, "adserver.db"))
            for name, cid in campaigns.items():
                spend, clicks_n, conv_n = db.execute(
                    "SELECT total_spend_micros, clicks, conversions FROM campaign_counters WHERE campaign_id = ?",
                    (cid,)).fetchone() or (0, 0, 0)
                billed_clicks, click_spend = db.execute(
                    "SELECT COUNT(*), COALESCE(SUM(price_micros), 0) FROM clicks WHERE status = 'billed' "
                    "AND campaign_id = ?", (cid,)).fetchone()
                billed_conv, conv_spend = db.execute(
                    "SELECT COUNT(*), COALESCE(SUM(price_micros), 0) FROM conversions WHERE status = 'billed' "
                    "AND campaign_id = ?", (cid,)).fetchone()
                want = (click_spend + conv_spend, billed_clicks, billed_conv)
                if (spend, clicks_n, conv_n) != want:
                    failures.append(f"iteration {it}: campaign {name}: counters (spend, clicks, conversions) "
                                    f"{(spend, clicks_n, conv_n)} != billed events {want}")
            db.close()

        for it in range(args.iterations):
            serve, sport = start()
            stop = threading.Event()
            threads = [threading.Thread(target=clicks, args=(sport, stop)),
                       threading.Thread(target=clicks, args=(sport, stop)),
                       threading.Thread(target=conversions, args=(sport, stop)),
                       threading.Thread(target=admin_writes, args=(sport, stop, it)),
                       threading.Thread(target=imports, args=(sport, stop))]
            for t in threads: t.start()
            time.sleep(rng.uniform(0.2, args.max_run))
            serve.send_signal(signal.SIGKILL)
            serve.wait()
            procs.remove(serve)
            totals["kills"] += 1
            stop.set()
            for t in threads: t.join()
            check_after_crash(it)
            # Restarted: imported wallets are read back from LMDB, then a clean stop flushes the
            # budget counters, which must equal the billed events.
            serve, sport = start()
            for w in acked_wallets:
                s, _, b = http(sport, "GET", f"/admin/v1/activity/{w}", headers=auth)
                if s != 200 or b'"usdc"' not in b:
                    failures.append(f"iteration {it}: acknowledged import of {w} lost: {s} {b[:200]}")
                    break
            serve.send_signal(signal.SIGTERM)
            if serve.wait(30) != 0: failures.append(f"iteration {it}: serve did not stop cleanly")
            procs.remove(serve)
            check_spend(it)
            totals["clicks"] += len(acked_clicks)
            totals["communities"] += len(acked_communities)
            totals["imports"] += len(acked_wallets)
            acked_clicks.clear(); acked_communities.clear(); acked_wallets.clear()
            if failures: break
        db = sqlite3.connect(os.path.join(data, "adserver.db"))
        conv = db.execute("SELECT COUNT(*) FROM conversions WHERE status = 'billed'").fetchone()[0]
        billed = db.execute("SELECT COUNT(*) FROM clicks WHERE status = 'billed'").fetchone()[0]
        db.close()
        if totals["clicks"] and not billed: failures.append("no click was billed: the loop checks nothing")
        print(f"crash loop (seed {args.seed}): {totals['kills']} kills; acknowledged and found after them: "
              f"{totals['clicks']} clicks, {totals['communities']} communities, {totals['imports']} imported "
              f"wallets; {billed} billed clicks; {totals['txs']} conversion-contract transactions, "
              f"{conv} billed conversions")
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures: print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
