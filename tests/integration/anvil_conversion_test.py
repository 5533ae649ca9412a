#!/usr/bin/env python3
"""Onchain conversions (CPTx) against a real anvil (issue 15).

A CPA campaign targets USDC users and counts transactions to a "dex" contract as conversions
(window 1 day). With the indexer inside `serve` (confirmations 0):
  - W1 is served, clicks (302 with spclid), then sends a tx to the dex: a conversion with the tx
    hash, touch `click`, the CPA bid billed, visible within 2 s of its block; a second tx of W1
    is not counted again (countOncePerPerson);
  - W2 is served but does not click: its dex tx converts with touch `view`;
  - W3 was never served: its dex tx converts nothing;
  - W4 is served, its dex tx is mined and converts, then a reorg abandons that block: the
    conversion is marked reorged and its spend taken back;
  - W5 is served, then the chain's clock moves 2 days on: its dex tx converts nothing.
Usage: anvil_conversion_test.py BUILD_DIR ANVIL_BIN
"""
import json, os, shutil, signal, socket, subprocess, sys, tempfile, time, urllib.request

BUILD, ANVIL = sys.argv[1], sys.argv[2]
if not os.path.exists(ANVIL):
    print(f"SKIP: {ANVIL} missing (scripts/install-deps.sh installs anvil from npm)")
    sys.exit(77)
ADSERVER = os.path.join(BUILD, "adserver")
USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
DEX = "0x000000000000000000000000000000000000de00"
TRANSFER = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
# CALLER CALLER PUSH32 topic PUSH1 0 PUSH1 0 LOG3 STOP: one log per call.
CODE = "0x3333" + "7f" + TRANSFER + "6000" + "6000" + "a3" + "00"
ADMIN = "anvil-conversion-test-admin-token"
PUBLIC = "https://ads.example.test"

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def rpc(url, method, *params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)})
    req = urllib.request.Request(url, body.encode(), {"Content-Type": "application/json"})
    r = json.load(urllib.request.urlopen(req, timeout=10))
    if "error" in r: raise RuntimeError(f"{method}: {r['error']}")
    return r["result"]

def send(url, frm, to):
    """Mines one block with one transaction; returns (tx hash, block number)."""
    rpc(url, "anvil_impersonateAccount", frm)
    rpc(url, "anvil_setBalance", frm, "0x56bc75e2d63100000")
    tx = rpc(url, "eth_sendTransaction", {"from": frm, "to": to, "gas": "0x10000"})
    rpc(url, "evm_mine")
    return tx, int(rpc(url, "eth_blockNumber"), 16)

def cli(data, *args):
    r = subprocess.run([ADSERVER, *args, "--data", data], capture_output=True, text=True)
    if r.returncode != 0: raise RuntimeError(f"{args}: {r.stdout} {r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])

def http(port, method, path, body=None, headers=None):
    browser = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", None if body is None else json.dumps(body).encode(),
                                 {"User-Agent": browser, **(headers or {})}, method=method)
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k): return None
    opener = urllib.request.build_opener(NoRedirect)
    try:
        r = opener.open(req, timeout=5)
        return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()

def serve_ad(port, key, wallet):
    status, _, body = http(port, "POST", "/v1/ads", {"walletAddresses": [wallet], "imageFormat": "NO_IMAGE",
                                                     "adUnitId": "slot-1"},
                           {"Content-Type": "application/json", "x-api-key": key})
    return json.loads(body) if status == 200 else None

def admin(port, path):
    status, _, body = http(port, "GET", path, headers={"Authorization": "Bearer " + ADMIN})
    assert status == 200, (path, status, body)
    return json.loads(body)

def wait_for(cond, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v: return v
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")

def _try(f):
    try: f(); return True
    except Exception: return False

def main():
    tmp = tempfile.mkdtemp(prefix="anvil-conversion-")
    procs = []
    try:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        procs.append(subprocess.Popen([ANVIL, "--host", "127.0.0.1", "--port", str(port), "--chain-id", "1",
                                       "--silent", "--no-mining"]))
        wait_for(lambda: _try(lambda: rpc(url, "eth_blockNumber")), 10, "anvil")
        rpc(url, "anvil_setCode", USDC, CODE)
        rpc(url, "anvil_setCode", DEX, CODE)
        rpc(url, "evm_mine")

        data = os.path.join(tmp, "data")
        book = {"projects": [
            {"slug": "usdc", "name": "USD Coin", "contracts": [{"chainId": 1, "address": USDC}]},
            {"slug": "dex", "name": "The DEX", "contracts": [{"chainId": 1, "address": DEX}]}]}
        book_path = os.path.join(tmp, "book.json"); json.dump(book, open(book_path, "w"))
        subprocess.run([ADSERVER, "projects", "import", book_path, "--data", data], check=True,
                       capture_output=True)
        community = cli(data, "communities", "create", '{"name":"DEX","logoUrl":"https://dex.example/l.png"}')
        # Issue 39: a project not verified as the community's own is refused as a conversion
        # project, naming it; the operator verifies it (ownerCommunityId).
        r = subprocess.run([ADSERVER, "campaigns", "create", json.dumps({
            "communityId": community["id"], "name": "unverified", "status": "active",
            "pricing": {"model": "CPA", "bid": 3}, "targeting": {"projects": ["usdc"]},
            "conversion": {"projects": ["dex"]}}), "--data", data], capture_output=True, text=True)
        assert r.returncode != 0 and "conversion.projects[0]" in r.stdout + r.stderr, (r.stdout, r.stderr)
        cli(data, "projects", "update", "dex", json.dumps({"ownerCommunityId": community["id"]}))
        # CPA without conversion.projects is refused, naming the field.
        r = subprocess.run([ADSERVER, "campaigns", "create", json.dumps({
            "communityId": community["id"], "name": "bad", "status": "active",
            "pricing": {"model": "CPA", "bid": 3}, "targeting": {"projects": ["usdc"]}}), "--data", data],
            capture_output=True, text=True)
        assert r.returncode != 0 and "conversion.projects" in r.stdout + r.stderr, (r.stdout, r.stderr)
        campaign = cli(data, "campaigns", "create", json.dumps({
            "communityId": community["id"], "name": "Swap on the DEX", "status": "active",
            "pricing": {"model": "CPA", "bid": 3},
            "targeting": {"projects": ["usdc"]},
            "conversion": {"projects": ["dex"], "kind": "any", "windowDays": 1, "countOncePerPerson": True}}))
        assert campaign["conversion"]["projects"] == ["dex"], campaign
        cli(data, "ads", "create", json.dumps({"campaignId": campaign["id"], "headline": "Swap now",
                                                "content": "Best rates", "ctaUrl": "https://dex.example/swap?src=ad",
                                                "ctaLabel": "Swap", "images": {}, "status": "active"}))
        pub = cli(data, "publishers", "create", "--name", "Site")
        key = cli(data, "keys", "create", "--publisher", str(pub["id"]))["key"]

        config = os.path.join(tmp, "adserver.toml")
        with open(config, "w") as f:
            f.write(f'[indexer]\nrpc = "{url}"\nchain_id = 1\nconfirmations = 0\npoll_ms = 50\n')
            # The test clicks at once after the serve: valid here (tests/integration/
            # invalid_traffic_test covers the checks).
            f.write('[traffic]\nmin_click_delay_ms = 0\ncheck_click_origin = false\n'
                    'click_limits = []\nevent_limits = []\n')
        ready = os.path.join(tmp, "ready")
        env = dict(os.environ, ADSERVER_ADMIN_TOKEN=ADMIN, ADSERVER_PUBLIC_URL=PUBLIC)
        serve = subprocess.Popen([ADSERVER, "serve", "--listen", "127.0.0.1:0", "--ready-file", ready,
                                  "--data", data, "--config", config, "--log-level", "warn"], env=env)
        procs.append(serve)
        wait_for(lambda: os.path.exists(ready) and open(ready).read().strip(), 20, "serve")
        sport = int(open(ready).read().strip())
        cid = str(campaign["id"])

        def conversions():
            return admin(sport, f"/admin/v1/conversions?campaignId={cid}&limit=1000")["conversions"]
        def stats():
            return admin(sport, f"/admin/v1/campaigns/{cid}/stats")
        def exposed(wallet, click=False):
            send(url, wallet, USDC)  # a USDC user: the campaign's target
            ad = wait_for(lambda: serve_ad(sport, key, wallet), 5, f"ad for {wallet}")
            assert ad["ctaUrl"].startswith(PUBLIC + "/v1/click/"), ad
            if click:
                status, headers, _ = http(sport, "GET", ad["ctaUrl"][len(PUBLIC):])
                assert status == 302 and "spclid=" in headers["Location"], (status, dict(headers))
                return headers["Location"].split("spclid=")[1][:36]
            return None
        def converts(wallet, tx):
            return next((c for c in conversions() if c["txHash"] == tx and c["status"] == "billed"), None)
        # No wait between a serve and its transaction: exposures still buffered when a block
        # lands are written before it is attributed.

        w1, w2, w3, w4, w5 = ("0x" + b * 20 for b in ("a1", "a2", "a3", "a4", "a5"))
        spclid = exposed(w1, click=True)
        tx, block = send(url, w1, DEX)
        t0 = time.time()
        c = wait_for(lambda: converts(w1, tx), 2.0, "conversion within 2 s of its block")
        latency = time.time() - t0
        assert c["touch"] == "click" and c["decisionId"] == spclid, c
        assert c["wallet"] == w1 and c["blockNumber"] == block and c["chainId"] == 1, c
        # A transaction sent to the contract itself carries no log index.
        assert c["logIndex"] is None and c["price"] == 3 and c["confirmed"] is False, c
        assert c["adUnitId"] == "slot-1", c
        s = stats()
        assert s["conversions"] == 1 and s["spendBreakdown"]["conversions"] == 3, s
        assert s["conversionsByTouch"] == {"click": 1, "view": 0}, s
        print(f"click-through conversion ok: visible {latency:.3f} s after its block")

        tx_again, _ = send(url, w1, DEX)
        time.sleep(0.5)
        assert not converts(w1, tx_again), "a second conversion of one person in the window"

        exposed(w2)
        tx2, _ = send(url, w2, DEX)
        c2 = wait_for(lambda: converts(w2, tx2), 2.0, "view-through conversion")
        assert c2["touch"] == "view" and c2["secondsSinceTouch"] >= 0, c2
        print("view-through conversion ok")

        send(url, w3, USDC)  # a USDC user, but never served
        tx3, _ = send(url, w3, DEX)
        time.sleep(0.5)
        assert not converts(w3, tx3), "a wallet never exposed converted"
        print("never exposed: no conversion ok")

        exposed(w4)
        before = stats()
        snap = rpc(url, "evm_snapshot")
        tx4, _ = send(url, w4, DEX)
        wait_for(lambda: converts(w4, tx4), 2.0, "conversion before the reorg")
        rpc(url, "evm_revert", snap)
        for _ in range(3): rpc(url, "evm_mine")  # a longer branch without the tx
        def reorged():
            return next((c for c in conversions() if c["txHash"] == tx4 and c["status"] == "reorged"), None)
        r4 = wait_for(reorged, 5.0, "the reorg to undo the conversion")
        assert r4["billed"] is False and r4["reason"] == "reorged" and r4["revertedAt"], r4
        after = stats()
        assert after["conversions"] == before["conversions"], (before, after)
        assert after["spend"] == before["spend"], (before, after)
        assert after["reorgedConversions"] == before["reorgedConversions"] + 1, after
        print("reorg undoes the conversion and its spend ok")

        # Issue 37: a conversion inside the window counts whatever the campaign's status when
        # it lands: paused 1 s before the transaction, it is attributed and billed by serve's
        # own indexer (a standalone `adserver index` already did).
        def patch_campaign(body):
            status, _, answer = http(sport, "PATCH", f"/admin/v1/campaigns/{cid}", body,
                                     {"Authorization": "Bearer " + ADMIN, "Content-Type": "application/json"})
            assert status == 200, (status, answer)
        w6, w7, w8 = ("0x" + b * 20 for b in ("a6", "a7", "a8"))
        exposed(w6)
        exposed(w7)
        exposed(w8)
        patch_campaign({"status": "paused"})
        wait_for(lambda: serve_ad(sport, key, w6) is None, 5, "the paused campaign out of serving")
        time.sleep(1)
        tx6, _ = send(url, w6, DEX)
        c6 = wait_for(lambda: converts(w6, tx6), 2.0, "the paused campaign's conversion")
        assert c6["price"] == 3 and c6["billed"] is True, c6
        print("paused campaign: conversion inside the window attributed and billed ok")
        # Billed up to the total budget: with room for one more conversion, w7's is billed and
        # w8's recorded over_budget (listed, counted, never billed).
        spent = stats()["spend"]
        patch_campaign({"budget": {"total": spent + 4}})
        time.sleep(1)  # the catalog rebuild
        tx7, _ = send(url, w7, DEX)
        wait_for(lambda: converts(w7, tx7), 2.0, "the conversion the budget still holds")
        tx8, _ = send(url, w8, DEX)
        def over_budget():
            return next((c for c in conversions() if c["txHash"] == tx8 and c["status"] == "over_budget"), None)
        c8 = wait_for(over_budget, 2.0, "the conversion past the budget recorded over_budget")
        assert c8["billed"] is False and c8["reason"] == "over_budget" and c8["earnings"] == 0, c8
        s8 = stats()
        assert s8["spend"] == spent + 3 and s8["overBudgetConversions"] == 1, s8
        status, _, metrics = http(sport, "GET", "/metrics", headers={"Authorization": "Bearer " + ADMIN})
        assert status == 200 and b'adserver_conversions_total{status="over_budget"} 1' in metrics, metrics[:2000]
        print("total budget: the conversion past it recorded over_budget, not billed ok")
        patch_campaign({"status": "active", "budget": None})  # exposed() waits for its ad

        exposed(w5)
        rpc(url, "evm_increaseTime", 2 * 86400)
        tx5, _ = send(url, w5, DEX)
        time.sleep(0.5)
        assert not converts(w5, tx5), "a conversion after the window"
        print("after the window: no conversion ok")

        serve.send_signal(signal.SIGTERM)
        assert serve.wait(15) == 0
        procs.remove(serve)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try: p.wait(10)
            except subprocess.TimeoutExpired: p.kill()
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
