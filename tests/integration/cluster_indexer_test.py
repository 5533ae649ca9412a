#!/usr/bin/env python3
"""The live indexer in cluster mode (issue 17 item 4) against a real anvil and real PostgreSQL
and Redis (the CTest fixtures).

Three `serve` nodes with the same [indexer] section share a database: exactly one leads the
chain; blocks mined on anvil become targetable on every node and PostgreSQL's counts equal the
chain's ground truth. Then an `adserver index --database-url ...` joins as one more contender,
the leader is `kill -9`ed: another contender takes over within 10 s (measured) and continues
from PostgreSQL's checkpoint with no block applied twice (counts still equal the ground truth).
Then a reorg across a failover (snapshot, mine; --confirmations 0, so the leader applies the
abandoned blocks; kill -9 of the leader; revert, mine another branch): the next leader undoes
the dead one's blocks from PostgreSQL's journal; PostgreSQL ends equal to the new chain and no
node targets a wallet of the abandoned branch any more while every node targets the new
branch's.
Conversions (issue 15 across nodes): a DEX user served a CPA ad by a node that does not lead is
attributed by the leader (exposures are the cluster's, in PostgreSQL), once, and billed once in
the cluster's counters (each node bills only what it records). The CLI attributes too:
`adserver index --database-url` leading the chain, and `activity import --database-url` of a row
naming its transaction, each billing into the "(cli)" counters row and Redis's budget.
Usage: cluster_indexer_test.py BUILD_DIR ANVIL_BIN   (env ADSERVER_TEST_POSTGRES_DIR, _REDIS_DIR)
"""
import json, os, random, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.request

BUILD, ANVIL = sys.argv[1], sys.argv[2]
if not os.path.exists(ANVIL):
    print(f"SKIP: {ANVIL} missing (scripts/install-deps.sh installs anvil from npm)")
    sys.exit(77)
def read_url(var):
    path = os.path.join(os.environ.get(var, ""), "url")
    return open(path).read().strip() if os.path.exists(path) else None
PG_SERVER, REDIS = read_url("ADSERVER_TEST_POSTGRES_DIR"), read_url("ADSERVER_TEST_REDIS_DIR")
if not PG_SERVER or not REDIS:
    if os.environ.get("ADSERVER_REQUIRE_POSTGRES") or os.environ.get("ADSERVER_REQUIRE_REDIS"):
        print("FAIL: the postgres/redis fixtures did not start"); sys.exit(1)
    print("SKIP: no test PostgreSQL/Redis (run through ctest: fixtures postgres;redis)")
    sys.exit(77)
ADSERVER = os.path.join(BUILD, "adserver")
USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
DEX = "0x000000000000000000000000000000000000de00"
ADMIN = "cluster-indexer-test-admin-token"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
TRANSFER = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
# CALLER CALLER PUSH32 topic PUSH1 0 PUSH1 0 LOG3 STOP: Transfer(from=caller, to=caller).
CODE = "0x3333" + "7f" + TRANSFER + "6000" + "6000" + "a3" + "00"
random.seed(17)
DB_NAME = "cluster_indexer_%d_%d" % (os.getpid(), int(time.time()))
DB = PG_SERVER.rstrip("/") + "/" + DB_NAME
ENV = dict(os.environ, ADSERVER_DATABASE_URL=DB, ADSERVER_REDIS_URL=REDIS,
           ADSERVER_REDIS_KEY_PREFIX=DB_NAME + ":", ADSERVER_ADMIN_TOKEN=ADMIN)

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

def psql(db, sql):
    r = subprocess.run(["psql", db, "-v", "ON_ERROR_STOP=1", "-tAc", sql], capture_output=True, text=True)
    if r.returncode != 0: raise RuntimeError(f"psql {sql}: {r.stderr}")
    return r.stdout.strip()

def cli(data, *args):
    r = subprocess.run([ADSERVER, *args, "--data", data], capture_output=True, text=True, env=ENV)
    if r.returncode != 0: raise RuntimeError(f"{args}: {r.stdout} {r.stderr}")
    return r.stdout.strip().splitlines()[-1]

def send_block(url, txs):
    calls = []
    for frm, to in txs:
        calls.append(("anvil_impersonateAccount", [frm]))
        calls.append(("anvil_setBalance", [frm, "0x56bc75e2d63100000"]))
    rpc_batch(url, calls)
    rpc_batch(url, [("eth_sendTransaction", [{"from": f, "to": t, "gas": "0x10000"}]) for f, t in txs])
    mine(url)

def mine(url):
    """Mines a block stamped no earlier than the wall clock: after evm_revert anvil's clock is
    back where the snapshot left it, and a block stamped before an ad was served (by this
    machine's clock) rightly converts nothing for it."""
    latest = int(rpc(url, "eth_getBlockByNumber", "latest", False)["timestamp"], 16)
    rpc(url, "evm_setNextBlockTimestamp", max(latest + 1, int(time.time()) + 1))
    rpc(url, "evm_mine")

def head(url):
    return int(rpc(url, "eth_blockNumber"), 16)

def mined(url, first, last):
    """wallet -> transactions to USDC in blocks [first, last] of the node's current chain."""
    counts = {}
    for n in range(first, last + 1):
        for tx in rpc(url, "eth_getBlockByNumber", hex(n), True)["transactions"]:
            if tx["to"] == USDC: counts[tx["from"]] = counts.get(tx["from"], 0) + 1
    return counts

def mine_branch(url, blocks):
    """One block per list of senders; returns the senders mined in the last block."""
    for senders in blocks:
        if senders: send_block(url, [(w, USDC) for w in senders])
        else: mine(url)
    last = rpc(url, "eth_getBlockByNumber", hex(head(url)), True)["transactions"]
    return [tx["from"] for tx in last if tx["to"] == USDC]

def new_wallets(n):
    return ["0x%040x" % random.getrandbits(160) for _ in range(n)]

def pg_counts():
    """wallet -> count of chain 1's USDC activity in PostgreSQL (the cluster's truth)."""
    rows = psql(DB, "SELECT encode(wallet, 'hex'), count FROM wallet_activity WHERE chain_id = 1 "
                    "AND project_id = (SELECT id FROM projects WHERE slug = 'usdc')")
    return {"0x" + w: int(c) for w, c in (l.split("|") for l in rows.splitlines() if l)}

def pg_next_block():
    v = psql(DB, "SELECT next_block FROM chain_checkpoints WHERE chain_id = 1")
    return int(v) if v else 0

def assert_truth(url, start, what):
    truth, got = mined(url, start, head(url)), pg_counts()
    assert sum(truth.values()) > 0
    bad = {w: (truth.get(w, 0), got.get(w, 0)) for w in set(truth) | set(got)
           if truth.get(w, 0) != got.get(w, 0)}
    assert not bad, f"{what}: PostgreSQL differs from the chain for {len(bad)} wallets: {list(bad.items())[:5]}"
    print(f"{what}: PostgreSQL equals the chain ({len(truth)} wallets, {sum(truth.values())} txs)")

def setup(data, book_path):
    os.makedirs(data, exist_ok=True)
    cli(data, "projects", "import", book_path)
    community = json.loads(cli(data, "communities", "create", '{"name":"Circle","logoUrl":"https://example.org/c.png"}'))
    # Conversions count only on a project verified as the community's own (issue 39).
    cli(data, "projects", "update", "dex", json.dumps({"ownerCommunityId": community["id"]}))
    campaign = json.loads(cli(data, "campaigns", "create", json.dumps({
        "communityId": community["id"], "name": "USDC users", "status": "active",
        "pricing": {"model": "CPM", "bid": 5}, "targeting": {"projects": ["usdc"]}})))
    cli(data, "ads", "create", json.dumps({"campaignId": campaign["id"], "headline": "Hello USDC user",
                                            "content": "Hi", "ctaUrl": "https://example.org",
                                            "ctaLabel": "Go", "images": {}, "status": "active"}))
    # Billed per onchain transaction: DEX users who swap again after seeing the ad.
    cpa = json.loads(cli(data, "campaigns", "create", json.dumps({
        "communityId": community["id"], "name": "Swap on the DEX", "status": "active",
        "pricing": {"model": "CPA", "bid": 3}, "targeting": {"projects": ["dex"]},
        "budget": {"total": "1000"},
        "conversion": {"projects": ["dex"], "kind": "any", "windowDays": 1}})))
    cli(data, "ads", "create", json.dumps({"campaignId": cpa["id"], "headline": "Swap now",
                                            "content": "Best rates", "ctaUrl": "https://dex.example",
                                            "ctaLabel": "Swap", "images": {}, "status": "active"}))
    pub = json.loads(cli(data, "publishers", "create", "--name", "Site"))
    return json.loads(cli(data, "keys", "create", "--publisher", str(pub["id"])))["key"], cpa["id"]

class Node:
    def __init__(self, tmp, n, config):
        self.name = f"node{n}"
        ready = os.path.join(tmp, f"ready-{n}")
        env = dict(ENV, ADSERVER_NODE_ID=self.name)
        self.proc = subprocess.Popen([ADSERVER, "serve", "--listen", "127.0.0.1:0", "--ready-file", ready,
                                      "--data", os.path.join(tmp, self.name), "--config", config], env=env)
        wait_for(lambda: os.path.exists(ready) and open(ready).read().strip(), 20, f"{self.name} ready")
        self.port = int(open(ready).read().strip())
    def alive(self): return self.proc.poll() is None
    def leads(self):
        """The node reports indexer progress only while it leads the chain."""
        try:
            body = json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=5))
        except Exception:
            return False
        return bool(body.get("indexer"))
    def serve(self, key, wallet):
        """The ad answered to a browser (a request a crawler list would not flag), or None."""
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/v1/ads", json.dumps(
            {"walletAddresses": [wallet], "imageFormat": "NO_IMAGE", "adUnitId": "slot-1"}).encode(),
            {"Content-Type": "application/json", "x-api-key": key, "User-Agent": BROWSER})
        try:
            r = urllib.request.urlopen(req, timeout=5)
            return json.load(r) if r.status == 200 else None
        except urllib.error.HTTPError:
            return None
    def admin(self, path):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}",
                                     headers={"Authorization": "Bearer " + ADMIN})
        return json.load(urllib.request.urlopen(req, timeout=5))
    def gets_ad(self, key, wallet):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/v1/ads", json.dumps(
            {"walletAddresses": [wallet], "imageFormat": "NO_IMAGE", "adUnitId": "x"}).encode(),
            {"Content-Type": "application/json", "x-api-key": key})
        try:
            return b"Hello USDC user" in urllib.request.urlopen(req, timeout=5).read()
        except urllib.error.HTTPError:
            return False

def wait_for(cond, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v: return v
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")

def leaders(nodes):
    return [n for n in nodes if n.alive() and n.leads()]

def main():
    tmp = tempfile.mkdtemp(prefix="cluster-indexer-")
    procs, nodes = [], []
    psql(PG_SERVER.rstrip("/") + "/postgres", f"CREATE DATABASE {DB_NAME}")
    try:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        procs.append(subprocess.Popen([ANVIL, "--host", "127.0.0.1", "--port", str(port), "--chain-id", "1",
                                       "--prune-history", "--silent", "--no-mining"]))
        wait_for(lambda: _try(lambda: rpc(url, "eth_blockNumber")), 10, "anvil")
        rpc(url, "anvil_setCode", USDC, CODE)
        rpc(url, "anvil_setCode", DEX, CODE)
        rpc(url, "evm_mine")
        book = {"projects": [{"slug": "usdc", "name": "USD Coin", "category": "stablecoin",
                              "contracts": [{"chainId": 1, "address": USDC}]},
                             {"slug": "dex", "name": "The DEX", "category": "dex",
                              "contracts": [{"chainId": 1, "address": DEX}]}]}
        book_path = os.path.join(tmp, "book.json"); json.dump(book, open(book_path, "w"))
        key, cpa = setup(os.path.join(tmp, "cli"), book_path)
        start = head(url) + 1
        config = os.path.join(tmp, "adserver.toml")
        with open(config, "w") as f:
            f.write(f'[indexer]\nrpc = "{url}"\nchain_id = 1\nconfirmations = 0\npoll_ms = 50\n'
                    f'from_block = {start}\n')
        nodes = [Node(tmp, n, config) for n in (1, 2, 3)]

        # (a) Exactly one node leads, and stays the only one.
        wait_for(lambda: len(leaders(nodes)) == 1, 10, "a leader")
        for _ in range(20):
            assert len(leaders(nodes)) == 1, [n.name for n in leaders(nodes)]
            time.sleep(0.1)
        leader = leaders(nodes)[0]
        print(f"one leader: {leader.name}")
        wallets = new_wallets(100)
        for _ in range(5):
            send_block(url, [(random.choice(wallets), USDC) for _ in range(60)])
        sentinel = mine_branch(url, [new_wallets(1)])
        assert sentinel, "anvil dropped the sentinel"
        for n in nodes:
            wait_for(lambda: n.gets_ad(key, sentinel[0]), 10, f"{n.name} targets the sentinel")
        sample = random.sample(list(mined(url, start, head(url))), 10)
        for n in nodes:
            for w in sample: assert n.gets_ad(key, w), (n.name, w)
        assert_truth(url, start, "blocks through the leader")
        assert len(leaders(nodes)) == 1

        def exposed(wallet):
            return int(psql(DB, f"SELECT count(*) FROM exposures WHERE campaign_id = {cpa} AND "
                                f"wallet = decode('{wallet[2:].lower()}', 'hex')")) > 0

        # (a') A conversion across nodes: the exposure is served by a node that does not lead,
        # the transaction attributed by the leader, the conversion billed by the leader alone.
        server = next(n for n in nodes if n is not leader)
        converter = new_wallets(1)[0]
        send_block(url, [(converter, DEX)])  # a DEX user: the CPA campaign's target
        ad = wait_for(lambda: server.serve(key, converter), 10, f"{server.name} serves the DEX user")
        assert ad["headline"] == "Swap now", ad
        # The serving node writes its exposures to PostgreSQL every 500 ms (later on a loaded machine).
        wait_for(lambda: exposed(converter), 10, "the exposure in PostgreSQL")
        send_block(url, [(converter, DEX)])
        def billed():
            rows = server.admin(f"/admin/v1/conversions?campaignId={cpa}&limit=100")["conversions"]
            return [c for c in rows if c["status"] == "billed"]
        conversions = wait_for(billed, 10, "the conversion of an ad another node served")
        assert len(conversions) == 1 and conversions[0]["wallet"] == converter, conversions
        assert conversions[0]["touch"] == "view" and conversions[0]["price"] == 3, conversions
        def counted():
            row = psql(DB, f"SELECT coalesce(sum(conversions), 0), coalesce(sum(total_spend_micros), 0) "
                           f"FROM node_campaign_counters WHERE campaign_id = {cpa}")
            return tuple(int(v) for v in row.split("|"))
        wait_for(lambda: counted() == (1, 3_000_000), 10, "the conversion in the cluster's counters")
        time.sleep(2.5)  # every node flushes its counters each second: none may bill it again
        assert counted() == (1, 3_000_000), counted()
        stats = leader.admin(f"/admin/v1/campaigns/{cpa}/stats")
        assert stats["conversions"] == 1 and stats["spendBreakdown"]["conversions"] == 3, stats
        print(f"conversion across nodes: served by {server.name}, attributed by {leader.name}, billed once")

        # (b) One more contender (`adserver index` in cluster mode), then the leader dies.
        index = subprocess.Popen([ADSERVER, "index", "--data", os.path.join(tmp, "index"), "--rpc", url,
                                  "--chain-id", "1", "--confirmations", "0"], env=ENV)
        procs.append(index)
        time.sleep(1.5)
        assert index.poll() is None, "adserver index in cluster mode exited"
        assert leaders(nodes) == [leader], "a contender took over from a live leader"
        # Blocks keep coming while the leader dies; the next leader must not apply any twice.
        send_block(url, [(random.choice(wallets), USDC) for _ in range(30)])
        t_kill = time.time()
        leader.proc.send_signal(signal.SIGKILL); leader.proc.wait()
        after = new_wallets(1)
        send_block(url, [(after[0], USDC)] + [(random.choice(wallets), USDC) for _ in range(30)])
        survivors = [n for n in nodes if n is not leader]
        for n in survivors:
            wait_for(lambda: n.gets_ad(key, after[0]), 10 - (time.time() - t_kill),
                     f"{n.name} targets a block mined after the leader died")
        takeover = time.time() - t_kill
        print(f"takeover: a block mined after kill -9 of the leader targetable on every node in "
              f"{takeover:.2f} s; leading now: {[n.name for n in leaders(survivors)] or ['index']}")
        assert takeover < 10
        assert len(leaders(survivors)) <= 1
        sentinel = mine_branch(url, [new_wallets(1)] + [[]] * 2)
        for _ in range(5): send_block(url, [(random.choice(wallets), USDC) for _ in range(20)])
        wait_for(lambda: pg_next_block() == head(url) + 1, 10, "the new leader caught up")
        assert_truth(url, start, "after the failover (no block applied twice)")

        # (c) A reorg across a failover: the leader applies the abandoned branch (confirmations
        # 0) and dies; the next one undoes those blocks with PostgreSQL's journal, in PostgreSQL
        # and so on every node.
        snap = rpc(url, "evm_snapshot")
        fork = head(url)
        shared = wallets[0]
        abandoned = [new_wallets(5) + [shared] for _ in range(3)]
        last_abandoned = mine_branch(url, abandoned)
        assert last_abandoned
        for n in survivors:
            wait_for(lambda: all(n.gets_ad(key, w) for w in last_abandoned), 10, f"{n.name}: abandoned branch applied")
        wait_for(lambda: pg_next_block() == head(url) + 1, 10, "the abandoned branch applied")
        leading = leaders(survivors)
        victim = leading[0].proc if leading else index
        print(f"kill -9 of {leading[0].name if leading else 'index'} with the abandoned branch applied")
        victim.send_signal(signal.SIGKILL); victim.wait()
        remaining = [n for n in survivors if n.proc is not victim]
        rpc(url, "evm_revert", snap)
        assert head(url) == fork
        branch = [new_wallets(5) + [shared] for _ in range(4)]
        last_new = mine_branch(url, branch)
        assert last_new
        gone = [w for b in abandoned for w in b if w != shared]
        for n in remaining:
            wait_for(lambda: all(n.gets_ad(key, w) for w in last_new), 10, f"{n.name}: new branch applied")
            wait_for(lambda: not any(n.gets_ad(key, w) for w in gone), 10, f"{n.name}: abandoned branch undone")
        print(f"reorg undone after the failover; leading now: {[n.name for n in leaders(remaining)] or ['index']}")
        wait_for(lambda: pg_next_block() == head(url) + 1, 10, "the reorg handled")
        assert_truth(url, start, "after the reorg")
        journal = int(psql(DB, "SELECT count(*) FROM chain_blocks WHERE chain_id = 1"))
        assert 0 < journal <= 64, journal

        # (d) Conversions the CLI attributes in cluster mode. A node without [indexer] serves;
        # the other nodes stop, so `adserver index --database-url` leads: it attributes a
        # block's swap against the cluster's exposures and bills it (the "(cli)" counters row,
        # read by every node, and the campaign's budget in Redis). Then `activity import
        # --database-url` of a row naming its transaction does the same.
        plain = os.path.join(tmp, "plain.toml")
        open(plain, "w").write("")
        n4 = Node(tmp, 4, plain)
        nodes.append(n4)
        for n in remaining:
            if n.alive(): n.proc.send_signal(signal.SIGTERM); n.proc.wait(15)
        if index.poll() is not None:
            index = subprocess.Popen([ADSERVER, "index", "--data", os.path.join(tmp, "index2"), "--rpc", url,
                                      "--chain-id", "1", "--confirmations", "0"], env=ENV)
            procs.append(index)
        send_block(url, [(random.choice(wallets), USDC)])
        wait_for(lambda: pg_next_block() == head(url) + 1, 15, "`adserver index` leads")
        budget_key = f"{DB_NAME}:budget:{cpa}"
        def remaining_budget():
            return int(subprocess.run(["redis-cli", "-u", REDIS, "GET", budget_key], capture_output=True,
                                      text=True, check=True).stdout.strip())
        def cli_row():
            row = psql(DB, f"SELECT conversions, total_spend_micros FROM node_campaign_counters "
                           f"WHERE node_id = '(cli)' AND campaign_id = {cpa}")
            return tuple(int(v) for v in row.split("|")) if row else (0, 0)
        converter2 = new_wallets(1)[0]
        send_block(url, [(converter2, DEX)])
        ad = wait_for(lambda: n4.serve(key, converter2), 10, "node4 serves the second DEX user")
        assert ad["headline"] == "Swap now", ad
        wait_for(lambda: exposed(converter2), 10, "node4's exposure in PostgreSQL")
        before = remaining_budget()
        send_block(url, [(converter2, DEX)])
        def billed_to(wallet):
            rows = n4.admin(f"/admin/v1/conversions?campaignId={cpa}&limit=100")["conversions"]
            return [c for c in rows if c["status"] == "billed" and c["wallet"] == wallet]
        got = wait_for(lambda: billed_to(converter2), 10, "the CLI indexer's conversion")
        assert len(got) == 1 and got[0]["touch"] == "view", got
        wait_for(lambda: cli_row() == (1, 3_000_000), 10, "the conversion in the CLI's counters row")
        wait_for(lambda: counted() == (2, 6_000_000), 10, "the cluster's counters")
        assert before - remaining_budget() == 3_000_000, (before, remaining_budget())
        wait_for(lambda: n4.admin(f"/admin/v1/campaigns/{cpa}/stats")["conversions"] == 2, 5,
                 "node4 counting the CLI's conversion")
        print("conversion attributed and billed by `adserver index --database-url`")

        converter3 = new_wallets(1)[0]
        send_block(url, [(converter3, DEX)])
        wait_for(lambda: n4.serve(key, converter3), 10, "node4 serves the third DEX user")
        wait_for(lambda: exposed(converter3), 10, "node4's exposure in PostgreSQL")
        time.sleep(1.1)  # the row's time (whole seconds) after the serve's
        upload = os.path.join(tmp, "swaps.ndjson")
        tx = "0x" + "ab" * 32
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        open(upload, "w").write(json.dumps({"wallet": converter3, "project": "dex", "chainId": 1,
                                            "timestamp": stamp, "txHash": tx, "blockNumber": 1}) + "\n")
        before = remaining_budget()
        summary = json.loads(cli(os.path.join(tmp, "cli-import"), "activity", "import", upload))
        assert summary["conversions"] == 1, summary
        got = billed_to(converter3)
        assert len(got) == 1 and got[0]["txHash"] == tx, got
        assert cli_row() == (2, 6_000_000), cli_row()
        assert before - remaining_budget() == 3_000_000, (before, remaining_budget())
        wait_for(lambda: n4.admin(f"/admin/v1/campaigns/{cpa}/stats")["conversions"] == 3, 5,
                 "node4 counting the import's conversion")
        # Again: the same transaction counts once.
        summary = json.loads(cli(os.path.join(tmp, "cli-import2"), "activity", "import", upload))
        assert summary["conversions"] == 0, summary
        assert cli_row() == (2, 6_000_000), cli_row()
        print("conversion attributed and billed by `activity import --database-url`")
        # Redis unreachable: the conversion is recorded and counted in PostgreSQL (the record of
        # spend) in one transaction, the Redis take stays queued there and is reported with its
        # amount, and the import succeeds. The next CLI run delivers the take.
        converter4 = new_wallets(1)[0]
        send_block(url, [(converter4, DEX)])
        wait_for(lambda: n4.serve(key, converter4), 10, "node4 serves the fourth DEX user")
        time.sleep(1.1)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        open(upload, "w").write(json.dumps({"wallet": converter4, "project": "dex", "chainId": 1,
                                            "timestamp": stamp, "txHash": "0x" + "cd" * 32}) + "\n")
        before = remaining_budget()
        r = subprocess.run([ADSERVER, "activity", "import", upload, "--data", os.path.join(tmp, "cli-import3"),
                            "--redis-url", f"redis://127.0.0.1:{free_port()}"], capture_output=True,
                           text=True, env=ENV)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout.strip().splitlines()[-1])["conversions"] == 1, r.stdout
        # (At exit the CLI finds the queue empty when node4 delivered the take meanwhile.)
        assert "3000000 micros not delivered" in r.stderr, r.stderr
        assert cli_row() == (3, 9_000_000), cli_row()
        # The take waits in PostgreSQL; node4's sync thread delivers it (every 5 s), once.
        wait_for(lambda: psql(DB, "SELECT count(*) FROM budget_takes") == "0", 12,
                 "the queued take delivered by a node")
        assert before - remaining_budget() == 3_000_000, (before, remaining_budget())
        summary = json.loads(cli(os.path.join(tmp, "cli-import4"), "activity", "import", upload))
        assert summary["conversions"] == 0, summary
        assert before - remaining_budget() == 3_000_000, (before, remaining_budget())
        assert cli_row() == (3, 9_000_000), cli_row()
        print("with Redis down: the conversion counted in PostgreSQL, the Redis take queued and "
              "delivered by a node")
        print("cluster indexer ok")
    finally:
        for p in procs + [n.proc for n in nodes]:
            if p.poll() is None: p.send_signal(signal.SIGTERM)
        for p in procs + [n.proc for n in nodes]:
            try: p.wait(15)
            except subprocess.TimeoutExpired: p.kill(); p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        _try(lambda: psql(PG_SERVER.rstrip("/") + "/postgres", f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)"))

def _try(f):
    try: f(); return True
    except Exception: return False

if __name__ == "__main__":
    main()
