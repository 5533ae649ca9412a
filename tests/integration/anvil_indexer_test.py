#!/usr/bin/env python3
"""Indexer against a real anvil (npm @foundry-rs/anvil, installed by scripts/install-deps.sh).

Puts a mock token that emits Transfer at the real USDC address, sends transactions from
impersonated wallets in a few blocks, runs `adserver index` and checks the activity index equals
the ground truth; then a reorg (snapshot, mine, revert, mine another branch) must leave no trace
of the abandoned branch (the indexer waits --confirmations 3); finally `serve` + `index` on the
same data directory: a wallet that just interacted gets the project's campaign ad within 2 s.
Usage: anvil_indexer_test.py BUILD_DIR ANVIL_BIN
"""
import json, os, random, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.request

BUILD, ANVIL = sys.argv[1], sys.argv[2]
if not os.path.exists(ANVIL):
    print(f"SKIP: {ANVIL} missing (scripts/install-deps.sh installs anvil from npm)")
    sys.exit(77)
ADSERVER = os.path.join(BUILD, "adserver")
USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
TRANSFER = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
# CALLER CALLER PUSH32 topic PUSH1 0 PUSH1 0 LOG3 STOP: Transfer(from=caller, to=caller).
CODE = "0x3333" + "7f" + TRANSFER + "6000" + "6000" + "a3" + "00"
random.seed(5)

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def rpc(url, method, *params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
    req = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"})
    r = json.load(urllib.request.urlopen(req, timeout=10))
    if "error" in r: raise RuntimeError(f"{method}: {r['error']}")
    return r["result"]

def rpc_batch(url, calls):
    body = json.dumps([{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, (m, p) in enumerate(calls)])
    req = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=30))

def cli(data, *args, stdin=None):
    r = subprocess.run([ADSERVER, *args, "--data", data], capture_output=True, text=True, input=stdin)
    if r.returncode != 0: raise RuntimeError(f"{args}: {r.stdout} {r.stderr}")
    return r.stdout

def activity(data, wallet):
    out = cli(data, "admin", "GET", f"/admin/v1/activity/{wallet}")
    return json.loads(out.strip().splitlines()[-1])["interactions"]

def send_block(url, txs):
    """Mines one block holding `txs` (list of (from, to))."""
    calls = []
    for frm, to in txs:
        calls.append(("anvil_impersonateAccount", [frm]))
        calls.append(("anvil_setBalance", [frm, "0x56bc75e2d63100000"]))
    rpc_batch(url, calls)
    rpc_batch(url, [("eth_sendTransaction", [{"from": f, "to": t, "gas": "0x10000"}]) for f, t in txs])
    rpc(url, "evm_mine")

def wait_for(cond, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond(): return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")

def main():
    tmp = tempfile.mkdtemp(prefix="anvil-indexer-")
    procs = []
    try:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        procs.append(subprocess.Popen([ANVIL, "--host", "127.0.0.1", "--port", str(port), "--chain-id", "1",
                                       "--prune-history", "--silent", "--no-mining"]))
        wait_for(lambda: _try(lambda: rpc(url, "eth_blockNumber")), 10, "anvil")
        rpc(url, "anvil_setCode", USDC, CODE)
        rpc(url, "evm_mine")
        data = os.path.join(tmp, "data")
        book = {"projects": [{"slug": "usdc", "name": "USD Coin", "category": "stablecoin",
                              "contracts": [{"chainId": 1, "address": USDC}]}]}
        book_path = os.path.join(tmp, "book.json"); json.dump(book, open(book_path, "w"))
        cli(data, "projects", "import", book_path)

        # Ground truth: 300 wallets, 2000 transactions in 10 blocks.
        wallets = ["0x%040x" % random.getrandbits(160) for _ in range(300)]
        truth = {}
        start = int(rpc(url, "eth_blockNumber"), 16) + 1
        for b in range(10):
            txs = []
            for _ in range(200):
                w = random.choice(wallets); txs.append((w, USDC)); truth[w] = truth.get(w, 0) + 1
            send_block(url, txs)
        for _ in range(3): rpc(url, "evm_mine")  # confirmations
        # The ground truth is what the node mined (a few sends of a batch can be dropped by
        # anvil's pool; the index must match the chain exactly).
        truth = {}
        for n in range(start, start + 13):
            for tx in rpc(url, "eth_getBlockByNumber", hex(n), True)["transactions"]:
                if tx["to"] == USDC: truth[tx["from"]] = truth.get(tx["from"], 0) + 1
        assert sum(truth.values()) >= 1500, f"anvil mined only {sum(truth.values())} transactions"
        idx = subprocess.Popen([ADSERVER, "index", "--data", data, "--rpc", url, "--chain-id", "1",
                                "--confirmations", "3", "--from-block", str(start)])
        procs.append(idx)
        head = int(rpc(url, "eth_blockNumber"), 16)
        ckpt = os.path.join(data, "indexer-1.json")
        wait_for(lambda: os.path.exists(ckpt) and int(open(ckpt).read().split()[0]) > head - 3, 20, "catch-up")
        idx.send_signal(signal.SIGTERM); idx.wait(10); procs.remove(idx)
        for w, n in truth.items():
            got = activity(data, w)
            assert len(got) == 1 and got[0]["project"] == "usdc" and got[0]["count"] == n, (w, n, got)
        print(f"ground truth ok: {len(truth)} wallets, {sum(truth.values())} transactions")

        # Reorg: a branch with wallet R is abandoned for one with wallet S.
        idx = subprocess.Popen([ADSERVER, "index", "--data", data, "--rpc", url, "--chain-id", "1",
                                "--confirmations", "3"])
        procs.append(idx)
        r_wallet, s_wallet = "0x" + "ab" * 20, "0x" + "cd" * 20
        snap = rpc(url, "evm_snapshot")
        send_block(url, [(r_wallet, USDC)])
        rpc(url, "evm_mine")
        time.sleep(0.5)
        rpc(url, "evm_revert", snap)
        send_block(url, [(s_wallet, USDC)])
        for _ in range(4): rpc(url, "evm_mine")
        wait_for(lambda: len(activity(data, s_wallet)) == 1, 10, "branch S indexed")
        assert activity(data, r_wallet) == [], "abandoned branch left a trace"
        print("reorg ok")

        # End to end: serve + index on the same directory; an ad within 2 s of the block.
        idx.send_signal(signal.SIGTERM); idx.wait(10); procs.remove(idx)
        procs.append(subprocess.Popen([ADSERVER, "index", "--data", data, "--rpc", url, "--chain-id", "1",
                                       "--confirmations", "0"]))
        community = json.loads(cli(data, "communities", "create", '{"name":"Circle","logoUrl":"https://example.org/c.png"}').strip().splitlines()[-1])
        campaign = json.loads(cli(data, "campaigns", "create", json.dumps({
            "communityId": community["id"], "name": "USDC users", "status": "active",
            "pricing": {"model": "CPM", "bid": 5},
            "targeting": {"projects": ["usdc"]}})).strip().splitlines()[-1])
        cli(data, "ads", "create", json.dumps({"campaignId": campaign["id"], "headline": "Hello USDC user",
                                                "content": "Hi", "ctaUrl": "https://example.org",
                                                "ctaLabel": "Go", "images": {}, "status": "active"}))
        pub = json.loads(cli(data, "publishers", "create", "--name", "Site").strip().splitlines()[-1])
        key = cli(data, "keys", "create", "--publisher", str(pub["id"])).strip().splitlines()[-1]
        key = json.loads(key)["key"]
        ready = os.path.join(tmp, "ready")
        procs.append(subprocess.Popen([ADSERVER, "serve", "--data", data, "--listen", "127.0.0.1:0",
                                       "--ready-file", ready]))
        wait_for(lambda: os.path.exists(ready) and open(ready).read().strip(), 10, "serve")
        sport = int(open(ready).read().strip())
        newbie = "0x" + "5e" * 20
        def ad():
            req = urllib.request.Request(f"http://127.0.0.1:{sport}/v1/ads", json.dumps(
                {"walletAddresses": [newbie], "imageFormat": "NO_IMAGE", "adUnitId": "x"}).encode(),
                {"Content-Type": "application/json", "x-api-key": key})
            try:
                return b"Hello USDC user" in urllib.request.urlopen(req, timeout=5).read()
            except urllib.error.HTTPError:
                return False
        assert not ad()
        t0 = time.time()
        send_block(url, [(newbie, USDC)])
        wait_for(ad, 2.0, "ad within 2 s of the block")
        print(f"end to end ok: block to ad in {time.time() - t0:.3f} s")
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try: p.wait(10)
            except subprocess.TimeoutExpired: p.kill()
        shutil.rmtree(tmp, ignore_errors=True)

def _try(f):
    try: f(); return True
    except Exception: return False

if __name__ == "__main__":
    main()
