"""What the crash loops share (tests/crash/crash_loop.py, cluster_kill_loop.py): HTTP calls that
never follow a redirect (a click's 302 is its acknowledgement), waiting for a condition, and the
CLI's JSON answers."""
import json, os, subprocess, time, urllib.error, urllib.request

USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
DEX = "0x000000000000000000000000000000000000de00"
NFT = "0x000000000000000000000000000000000000aa00"

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


def seed_inventory(cli, data, tmp, budget=None):
    """The loops' inventory through `cli(data, *args)`: projects usdc, dex and nft; a community
    owning dex; a CPC campaign (bid 2) for USDC users and a CPA campaign (bid 3) for NFT users
    converting on dex, each with one ad whose headline is its name ("cpc", "cpa"); a publisher
    key. `budget`: a total budget for both. Returns ({name: campaign id}, publisher key)."""
    book = {"projects": [
        {"slug": "usdc", "name": "USD Coin", "contracts": [{"chainId": 1, "address": USDC}]},
        {"slug": "dex", "name": "The DEX", "contracts": [{"chainId": 1, "address": DEX}]},
        {"slug": "nft", "name": "The NFT", "contracts": [{"chainId": 1, "address": NFT}]}]}
    book_path = os.path.join(tmp, "book.json")
    with open(book_path, "w") as f: json.dump(book, f)
    cli(data, "projects", "import", book_path)
    community = cli(data, "communities", "create", '{"name":"DEX","logoUrl":"https://d.example/l.png"}')
    # Conversions count only on a project verified as the community's own (issue 39).
    cli(data, "projects", "update", "dex", json.dumps({"ownerCommunityId": community["id"]}))
    campaigns = {}
    for name, pricing, target, extra in (
            ("cpc", {"model": "CPC", "bid": 2}, "usdc", {}),
            ("cpa", {"model": "CPA", "bid": 3}, "nft",
             {"conversion": {"projects": ["dex"], "kind": "any", "windowDays": 1,
                             "countOncePerPerson": False}})):
        if budget is not None: extra = {**extra, "budget": {"total": budget}}
        c = cli(data, "campaigns", "create", json.dumps({
            "communityId": community["id"], "name": name, "status": "active", "pricing": pricing,
            "targeting": {"projects": [target]}, **extra}))
        campaigns[name] = c["id"]
        cli(data, "ads", "create", json.dumps({
            "campaignId": c["id"], "headline": name, "content": "Ad", "ctaUrl": "https://d.example/",
            "ctaLabel": "Go", "images": {}, "status": "active"}))
    pub = cli(data, "publishers", "create", "--name", "Site")
    return campaigns, cli(data, "keys", "create", "--publisher", str(pub["id"]))["key"]
