#!/usr/bin/env python3
"""Indexer against a real anvil (npm @foundry-rs/anvil, installed by scripts/install-deps.sh).

Puts a mock token that emits Transfer at the real USDC address, sends transactions from
impersonated wallets in a few blocks, runs `adserver index` and checks the activity index equals
the ground truth; then a reorg (snapshot, mine, revert, mine another branch) must leave no trace
of the abandoned branch (the indexer waits --confirmations 3); then reorgs in apply-at-once mode
(--confirmations 0: the abandoned blocks are applied first, then undone from the journal; a
shorter, a longer new branch, and one exactly 64 blocks deep) must leave the index equal to
the new chain's ground truth; then `serve` + `index` on the same data directory: a wallet that
just interacted gets the project's campaign ad within 2 s; the same with the indexer inside
`serve` ([indexer] configuration section) on a fresh data directory; a reorg deeper than the
journal stops the indexer with a clear error and leaves the index unchanged; and the checkpoint
file of earlier versions is honoured.
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

def mined(url, first, last):
    """wallet -> transactions to USDC in blocks [first, last] of the node's current chain."""
    counts = {}
    for n in range(first, last + 1):
        for tx in rpc(url, "eth_getBlockByNumber", hex(n), True)["transactions"]:
            if tx["to"] == USDC: counts[tx["from"]] = counts.get(tx["from"], 0) + 1
    return counts

def head(url):
    return int(rpc(url, "eth_blockNumber"), 16)

def count(data, wallet):
    got = activity(data, wallet)
    assert len(got) <= 1 and all(g["project"] == "usdc" for g in got), (wallet, got)
    return got[0]["count"] if got else 0

def mine_branch(url, blocks):
    """Mines one block per list of senders (an empty list: an empty block); returns the last
    block's mined senders."""
    for senders in blocks:
        if senders: send_block(url, [(w, USDC) for w in senders])
        else: rpc(url, "evm_mine")
    last = rpc(url, "eth_getBlockByNumber", hex(head(url)), True)["transactions"]
    return [tx["from"] for tx in last if tx["to"] == USDC]

def new_wallets(n):
    return ["0x%040x" % random.getrandbits(160) for _ in range(n)]

def reorg_at_once(url, data, start, abandoned, branch):
    """With `index --confirmations 0` running: mines the `abandoned` blocks (lists of senders),
    waits until they are applied, reverts them and mines `branch`; the index must then equal
    the node's chain exactly."""
    snap = rpc(url, "evm_snapshot")
    fork = head(url)
    last_abandoned = mine_branch(url, abandoned)
    assert last_abandoned, "anvil mined none of the abandoned branch's last block"
    wait_for(lambda: all(count(data, w) > 0 for w in last_abandoned), 10, "abandoned branch applied")
    rpc(url, "evm_revert", snap)
    assert head(url) == fork
    last_new = mine_branch(url, branch)
    assert last_new, "anvil mined none of the new branch's last block"
    gone = [w for w in last_abandoned if w not in {x for b in branch for x in b}]
    wait_for(lambda: all(count(data, w) > 0 for w in last_new) and
             all(count(data, w) == 0 for w in gone), 10, "new branch replaced the abandoned one")
    truth = mined(url, start, head(url))
    touched = {w for b in abandoned + branch for w in b}
    for w in touched:
        assert count(data, w) == truth.get(w, 0), (w, truth.get(w, 0), activity(data, w))
    print(f"reorg at once ok: {len(abandoned)} blocks abandoned, {len(branch)} new, "
          f"{len(touched)} wallets exact")

def deep_reorg_stops_indexer(url, data):
    """A reorg deeper than the 64-block journal: `index` exits non-zero with a clear error and
    the index is left as it was."""
    idx = subprocess.Popen([ADSERVER, "index", "--data", data, "--rpc", url, "--chain-id", "1",
                            "--confirmations", "0"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    try:
        snap = rpc(url, "evm_snapshot")
        first, last = new_wallets(1), new_wallets(1)
        mine_branch(url, [first] + [[]] * 64 + [last])  # 66 blocks
        wait_for(lambda: count(data, last[0]) == 1, 10, "deep branch applied")
        rpc(url, "evm_revert", snap)
        other = new_wallets(1)
        mine_branch(url, [other] + [[]] * 66)
        code = idx.wait(15)
        err = idx.stdout.read()
        assert code != 0 and "reorg deeper than the undo journal" in err, (code, err[-2000:])
    finally:
        if idx.poll() is None: idx.kill(); idx.wait()
    assert count(data, first[0]) == 1 and count(data, last[0]) == 1, "deep reorg changed the index"
    assert count(data, other[0]) == 0
    print("deep reorg ok: the indexer stopped with a clear error, the index unchanged")

def legacy_checkpoint_is_read(url, tmp, book_path):
    """A data directory of an earlier version: its checkpoint file says where to go on."""
    data = os.path.join(tmp, "data3")
    cli(data, "projects", "import", book_path)
    old = new_wallets(1)
    mine_branch(url, [old, [], []])
    b0 = head(url) - 2  # the block holding `old`; the file says it is the next one
    hashes = [rpc(url, "eth_getBlockByNumber", hex(n), False)["hash"] for n in (b0 - 2, b0 - 1)]
    with open(os.path.join(data, "indexer-1.json"), "w") as f:
        f.write(f"{b0}\n{b0 - 2} {hashes[0]}\n{b0 - 1} {hashes[1]}\n")
    idx = subprocess.Popen([ADSERVER, "index", "--data", data, "--rpc", url, "--chain-id", "1",
                            "--confirmations", "0"])
    try:
        wait_for(lambda: count(data, old[0]) == 1, 10, "block named by the legacy checkpoint")
    finally:
        idx.send_signal(signal.SIGTERM); idx.wait(10)
    print("legacy checkpoint ok")

def setup_campaign(data, book_path):
    """Registry, a campaign targeting USDC users with one ad, a publisher key; returns the key."""
    cli(data, "projects", "import", book_path)
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
    return json.loads(key)["key"]

def start_serve(tmp, procs, *args):
    ready = os.path.join(tmp, "ready-%d" % len(procs))
    p = subprocess.Popen([ADSERVER, "serve", "--listen", "127.0.0.1:0", "--ready-file", ready, *args])
    procs.append(p)
    wait_for(lambda: os.path.exists(ready) and open(ready).read().strip(), 10, "serve")
    return p, int(open(ready).read().strip())

def gets_ad(port, key, wallet):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/ads", json.dumps(
        {"walletAddresses": [wallet], "imageFormat": "NO_IMAGE", "adUnitId": "x"}).encode(),
        {"Content-Type": "application/json", "x-api-key": key})
    try:
        return b"Hello USDC user" in urllib.request.urlopen(req, timeout=5).read()
    except urllib.error.HTTPError:
        return False

def stop(procs, p):
    p.send_signal(signal.SIGTERM)
    code = p.wait(10)
    procs.remove(p)
    return code

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

        # Ground truth: 300 wallets, 2000 transactions in 10 blocks, then a sentinel wallet's
        # block: once it is indexed, every block before it is (blocks commit in order).
        wallets = new_wallets(300)
        start = head(url) + 1
        for b in range(10):
            send_block(url, [(random.choice(wallets), USDC) for _ in range(200)])
        sentinel = mine_branch(url, [new_wallets(1)])
        assert sentinel, "anvil dropped the sentinel"
        for _ in range(3): rpc(url, "evm_mine")  # confirmations
        # The ground truth is what the node mined (a few sends of a batch can be dropped by
        # anvil's pool; the index must match the chain exactly).
        truth = mined(url, start, start + 13)
        assert sum(truth.values()) >= 1500, f"anvil mined only {sum(truth.values())} transactions"
        idx = subprocess.Popen([ADSERVER, "index", "--data", data, "--rpc", url, "--chain-id", "1",
                                "--confirmations", "3", "--from-block", str(start)])
        procs.append(idx)
        wait_for(lambda: count(data, sentinel[0]) == 1, 20, "catch-up")
        assert stop(procs, idx) == 0
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
        assert stop(procs, idx) == 0
        print("reorg ok")

        # Reorgs in apply-at-once mode: abandoned blocks are applied, then undone. A wallet of the
        # ground truth interacts on every branch, so its count must come back, not vanish.
        idx = subprocess.Popen([ADSERVER, "index", "--data", data, "--rpc", url, "--chain-id", "1",
                                "--confirmations", "0"])
        procs.append(idx)
        shared = next(iter(truth))
        block = lambda: new_wallets(8) + [shared]
        reorg_at_once(url, data, start, [block() for _ in range(3)], [block(), block()])  # shorter
        reorg_at_once(url, data, start, [block()], [block() for _ in range(3)])  # longer branch
        # Exactly the journal's depth: 64 blocks undone, the ancestor found by the oldest's parent.
        reorg_at_once(url, data, start, [block()] + [[]] * 62 + [block()], [block()])

        # End to end: serve + index on the same directory; an ad within 2 s of the block.
        key = setup_campaign(data, book_path)
        _, sport = start_serve(tmp, procs, "--data", data)
        newbie = "0x" + "5e" * 20
        assert not gets_ad(sport, key, newbie)
        t0 = time.time()
        send_block(url, [(newbie, USDC)])
        wait_for(lambda: gets_ad(sport, key, newbie), 2.0, "ad within 2 s of the block")
        print(f"end to end ok: block to ad in {time.time() - t0:.3f} s")
        for p in list(procs[1:]): stop(procs, p)

        # The indexer inside serve ([indexer] section), on a fresh data directory.
        data2 = os.path.join(tmp, "data2")
        key = setup_campaign(data2, book_path)
        config = os.path.join(tmp, "adserver.toml")
        with open(config, "w") as f:
            f.write(f'[indexer]\nrpc = "{url}"\nchain_id = 1\nconfirmations = 0\npoll_ms = 50\n')
        serve, sport = start_serve(tmp, procs, "--data", data2, "--config", config)
        # Without a checkpoint the indexer starts at the head block, so the block below is
        # indexed whether its first step runs before or after it is mined.
        insider = "0x" + "1d" * 20
        assert not gets_ad(sport, key, insider)
        t0 = time.time()
        send_block(url, [(insider, USDC)])
        wait_for(lambda: gets_ad(sport, key, insider), 2.0, "ad within 2 s of the block (indexer in serve)")
        print(f"indexer in serve ok: block to ad in {time.time() - t0:.3f} s")
        assert stop(procs, serve) == 0, "serve with the indexer did not stop cleanly on SIGTERM"

        deep_reorg_stops_indexer(url, data2)
        legacy_checkpoint_is_read(url, tmp, book_path)
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
