#!/usr/bin/env python3
"""docs/openapi.yaml against the real binary (issue 19 item 2).

Starts `adserver serve --demo` on a free port and calls every operation of the document at least
once with a valid request, and with a bad one wherever the operation documents a 400. Every
answer is checked against the document: its status must be listed for that operation, its
Content-Type must be one the document gives for that status (no body where it gives none), and a
JSON body must validate against that status's schema ($refs resolved in the document,
JSON Schema 2020-12 with python3-jsonschema). At the end, every operation must have been called
and every documented 400 provoked, so a route added to the document without a call here fails too.
Usage: openapi_test.py BUILD_DIR SOURCE_DIR
"""
import http.client, json, os, re, shutil, signal, subprocess, sys, tempfile, time, warnings

try:
    import jsonschema, yaml
except ImportError as e:
    print(f"SKIP: {e} (scripts/install-deps.sh installs python3-jsonschema and python3-yaml)")
    sys.exit(77)

BUILD, SOURCE = sys.argv[1], sys.argv[2]
ADSERVER = os.path.join(BUILD, "adserver")
DOC_PATH = os.path.join(SOURCE, "docs", "openapi.yaml")
ADMIN = "openapi-test-admin-token-0123456789"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch")

DOC = yaml.safe_load(open(DOC_PATH, encoding="utf-8"))
with warnings.catch_warnings():
    # Deprecated in jsonschema >= 4.18 (pip) in favour of `referencing`; Debian 12 has 4.10.
    warnings.simplefilter("ignore", DeprecationWarning)
    RESOLVER = jsonschema.RefResolver(base_uri="", referrer=DOC)
called = set()          # (method, path template)
bad_requests = set()    # (method, path template) answered 400
failures = []


def deref(node):
    while isinstance(node, dict) and "$ref" in node:
        node = RESOLVER.resolve(node["$ref"])[1]
    return node


def operation(method, template):
    item = DOC["paths"].get(template)
    if item is None or method.lower() not in item:
        raise AssertionError(f"{method} {template} is not in docs/openapi.yaml")
    return item[method.lower()]


def check(method, template, status, headers, body):
    """Validates one answer against the document; records a failure instead of raising."""
    where = f"{method} {template} -> {status}"
    op = operation(method, template)
    response = op["responses"].get(str(status))
    if response is None:
        failures.append(f"{where}: status not documented (documented: {sorted(op['responses'])}); body {body[:300]!r}")
        return
    response = deref(response)
    content = response.get("content")
    media = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if not content:
        if body:
            failures.append(f"{where}: documented without a body, answered {len(body)} bytes ({media})")
        return
    if method == "HEAD":
        return
    if media not in content:
        failures.append(f"{where}: Content-Type {media!r} not documented ({sorted(content)})")
        return
    schema = content[media].get("schema")
    if schema is None:
        return
    if media == "application/json":
        try:
            value = json.loads(body)
        except ValueError as e:
            failures.append(f"{where}: not JSON ({e}): {body[:200]!r}")
            return
    else:
        value = body.decode("utf-8", "replace")
    validator = jsonschema.Draft202012Validator(schema, resolver=RESOLVER,
                                                format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    for e in errors[:5]:
        failures.append(f"{where}: {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}")


class Client:
    def __init__(self, port):
        self.port = port

    def call(self, method, template, params=None, body=None, headers=None, query="", expect=None,
             raw=None):
        """One request; validated against the document. Returns (status, headers, body bytes)."""
        path = template
        for k, v in (params or {}).items():
            path = path.replace("{" + k + "}", str(v))
        headers = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            headers.setdefault("Content-Type", "application/json")
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request(method, path + (("?" + query) if query else ""), data, headers)
        r = conn.getresponse()
        payload = r.read()
        status, got = r.status, r.headers
        conn.close()
        called.add((method.lower(), template))
        if status == 400:
            bad_requests.add((method.lower(), template))
        check(method, template, status, got, payload)
        if expect is not None and status != expect:
            failures.append(f"{method} {path}: expected {expect}, got {status}: {payload[:300]!r}")
        return status, got, payload

    def json(self, *a, **k):
        status, _, payload = self.call(*a, **k)
        return json.loads(payload) if payload else None


def admin_headers(extra=None):
    h = {"Authorization": "Bearer " + ADMIN}
    h.update(extra or {})
    return h


def start_demo(tmp):
    ready = os.path.join(tmp, "port")
    log = open(os.path.join(tmp, "serve.log"), "w+")
    env = dict(os.environ, ADSERVER_ADMIN_TOKEN=ADMIN)
    proc = subprocess.Popen([ADSERVER, "serve", "--demo", "--demo-wallets", "300", "--data",
                             os.path.join(tmp, "data"), "--listen", "127.0.0.1:0",
                             "--ready-file", ready], stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.time() + 240
    while not os.path.exists(ready):
        if proc.poll() is not None or time.time() > deadline:
            log.seek(0)
            raise AssertionError("serve did not become ready:\n" + log.read()[-3000:])
        time.sleep(0.1)
    port = int(open(ready).read().strip())
    # The demo's banner is printed before the ready file is written.
    log.flush(); log.seek(0)
    text = log.read()
    demo = {
        "live": re.search(r"live key: (spk_\w+)", text).group(1),
        "test": re.search(r"test key: (spk_\w+)", text).group(1),
        "wallet": re.search(r'walletAddresses":\["(0x[0-9a-f]{40})"', text).group(1),
        "email": re.search(r"Email:\s+(\S+)", text).group(1),
        "password": re.search(r"Password:\s+(\S+)", text).group(1),
    }
    return proc, port, demo


def health_and_document(c, port):
    c.call("GET", "/healthz", expect=200)
    c.call("GET", "/readyz", expect=200)
    status, headers, body = c.call("GET", "/openapi.yaml", expect=200)
    if body != open(DOC_PATH, "rb").read():
        failures.append("GET /openapi.yaml: body differs from docs/openapi.yaml")
    if headers.get("Content-Type") != "application/yaml":
        failures.append(f"GET /openapi.yaml: Content-Type {headers.get('Content-Type')!r}")
    if "max-age" not in (headers.get("Cache-Control") or ""):
        failures.append(f"GET /openapi.yaml: not cacheable ({headers.get('Cache-Control')!r})")
    c.call("GET", "/openapi.yaml", headers={"If-None-Match": headers.get("ETag", "")}, expect=304)
    status, headers, body = c.call("GET", "/metrics", headers=admin_headers(), expect=200)
    if b"# TYPE adserver_http_requests_total counter" not in body:
        failures.append("GET /metrics: no adserver_http_requests_total family")
    c.call("GET", "/metrics", expect=401)
    c.call("GET", "/demo/creatives/{name}", {"name": "logo-0.svg"}, expect=200)
    c.call("GET", "/demo/creatives/{name}", {"name": "no-such.svg"}, expect=404)


def ads(c, demo):
    key = {"x-api-key": demo["live"]}
    nobody = "0x00000000000000000000000000000000000000e1"
    ad = c.json("POST", "/v1/ads", body={"walletAddresses": [demo["wallet"]], "imageFormat": "LANDSCAPE",
                                         "adUnitId": "openapi"}, headers=key, expect=200)
    c.call("POST", "/v1/ads", body={"walletAddresses": [nobody], "imageFormat": "NO_IMAGE"},
           headers=key, expect=204)
    c.call("POST", "/v1/ads", body={"walletAddresses": ["0x12"], "imageFormat": "SQUARE"}, headers=key,
           expect=400)
    c.call("POST", "/v1/ads", raw=b"not json", headers=dict(key, **{"Content-Type": "application/json"}),
           expect=400)
    c.call("POST", "/v1/ads", body={"walletAddresses": [demo["wallet"]], "imageFormat": "LANDSCAPE"},
           expect=401)
    c.call("POST", "/v1/ads", raw=b"{" + b" " * 70000 + b"}",
           headers=dict(key, **{"Content-Type": "application/json"}), expect=413)
    c.call("POST", "/v1/ads", body={"walletAddresses": [demo["wallet"]], "imageFormat": "SHORT_BANNER"},
           headers={"x-api-key": demo["test"]}, expect=200)
    c.call("OPTIONS", "/v1/ads", headers={"Origin": "https://pub.example",
                                          "Access-Control-Request-Method": "POST"}, expect=204)

    c.json("POST", "/api/ads", body={"walletAddresses": [demo["wallet"]], "imageFormat": "SHORT_BANNER",
                                     "localId": None}, headers=key, expect=200)
    c.call("POST", "/api/ads", body={"walletAddresses": [nobody], "imageFormat": "LANDSCAPE"}, headers=key,
           expect=404)
    c.call("POST", "/api/ads", body={"walletAddresses": [], "imageFormat": "LANDSCAPE", "localId": "gone"},
           headers=key, expect=404)
    c.call("POST", "/api/ads", body={"walletAddresses": [demo["wallet"]], "imageFormat": "NO_IMAGE"},
           headers=key, expect=400)
    c.call("POST", "/api/ads", body={"walletAddresses": [demo["wallet"]], "imageFormat": "LANDSCAPE"},
           headers={"x-api-key": "spk_" + "0" * 30}, expect=401)
    c.call("POST", "/api/ads", raw=b"{" + b" " * 70000 + b"}",
           headers=dict(key, **{"Content-Type": "application/json"}), expect=413)
    c.call("OPTIONS", "/api/ads", headers={"Origin": "https://pub.example"}, expect=204)
    return ad


def clicks(c, ad):
    token = ad["ctaUrl"].rsplit("/", 1)[1]
    c.call("HEAD", "/v1/click/{token}", {"token": token}, expect=302)
    c.call("GET", "/v1/click/{token}", {"token": token}, expect=302)
    c.call("GET", "/v1/click/{token}", {"token": token[:-4] + "AAAA"}, expect=400)
    c.call("HEAD", "/v1/click/{token}", {"token": "forged"}, expect=400)


def advertiser_events(c, community_id):
    created = c.json("POST", "/admin/v1/communities/{id}/keys", {"id": community_id}, body={},
                     headers=admin_headers(), expect=201)
    key = {"x-api-key": created["key"]}
    c.call("POST", "/v1/events", body={"event": {"name": "signup", "url": "https://a.example/?spclid=x"},
                                       "walletAddresses": ["0x00000000000000000000000000000000000000e2"]},
           headers=key, expect=200)
    c.call("POST", "/v1/events", body={"event": {"name": "Bad Name"}}, headers=key, expect=400)
    c.call("POST", "/v1/events", body={"event": {"name": "signup"}}, expect=401)
    c.call("OPTIONS", "/v1/events", headers={"Origin": "https://adv.example"}, expect=204)
    c.call("GET", "/admin/v1/communities/{id}/keys", {"id": community_id}, headers=admin_headers(),
           expect=200)
    c.call("POST", "/admin/v1/communities/{id}/keys", {"id": community_id}, body={"tset": True},
           headers=admin_headers(), expect=400)
    c.call("DELETE", "/admin/v1/communities/{id}/keys/{keyId}", {"id": community_id, "keyId": created["id"]},
           headers=admin_headers(), expect=200)


def publishers(c):
    h = admin_headers()
    c.call("GET", "/admin/v1/publishers", expect=401)
    c.call("GET", "/admin/v1/publishers", headers=h, expect=200)
    pub = c.json("POST", "/admin/v1/publishers", body={"name": "OpenAPI site", "allowedOrigins": ["https://o.example"],
                                                       "rateLimit": {"perSecond": 5}}, headers=h, expect=201)
    c.call("POST", "/admin/v1/publishers", body={"nam": "typo"}, headers=h, expect=400)
    c.call("POST", "/admin/v1/publishers", raw=b"x", headers=admin_headers({"Content-Type": "text/plain"}),
           expect=415)
    ids = {"id": pub["id"]}
    c.call("GET", "/admin/v1/publishers/{id}", ids, headers=h, expect=200)
    c.call("GET", "/admin/v1/publishers/{id}", {"id": 99999}, headers=h, expect=404)
    c.call("PATCH", "/admin/v1/publishers/{id}", ids, body={"floorCpm": 1.5, "payout": {"model": "cpm", "cpm": 2}},
           headers=h, expect=200)
    c.call("PATCH", "/admin/v1/publishers/{id}", ids, body={"name": ""}, headers=h, expect=400)
    key = c.json("POST", "/admin/v1/publishers/{id}/keys", ids, body={"test": True}, headers=h, expect=201)
    c.call("POST", "/admin/v1/publishers/{id}/keys", ids, body={"test": "yes"}, headers=h, expect=400)
    c.call("GET", "/admin/v1/publishers/{id}/keys", ids, headers=h, expect=200)
    c.call("DELETE", "/admin/v1/publishers/{id}/keys/{keyId}", dict(ids, keyId=key["id"]), headers=h, expect=200)
    c.call("DELETE", "/admin/v1/publishers/{id}", ids, headers=h, expect=204)


def communities_projects_campaigns_ads(c):
    h = admin_headers()
    c.call("GET", "/admin/v1/communities", headers=h, expect=200)
    com = c.json("POST", "/admin/v1/communities", body={"name": "OpenAPI DAO", "logoUrl": "https://o.example/l.png"},
                 headers=h, expect=201)
    c.call("POST", "/admin/v1/communities", body={"name": "x", "logoUrl": "not a url"}, headers=h, expect=400)
    cid = {"id": com["id"]}
    c.call("GET", "/admin/v1/communities/{id}", cid, headers=h, expect=200)
    c.call("PATCH", "/admin/v1/communities/{id}", cid, body={"name": "OpenAPI DAO 2"}, headers=h, expect=200)
    c.call("PATCH", "/admin/v1/communities/{id}", cid, body={"logoUrl": 5}, headers=h, expect=400)
    advertiser_events(c, com["id"])

    c.call("GET", "/admin/v1/projects", headers=h, expect=200)
    address = "0x0000000000000000000000000000000000a11ce5"
    proj = c.json("POST", "/admin/v1/projects", body={"slug": "openapi-dex", "name": "OpenAPI DEX", "category": "dex",
                                                      "contracts": [{"chainId": 1, "address": address}]},
                  headers=h, expect=201)
    c.call("POST", "/admin/v1/projects", body={"slug": "Not A Slug", "name": "x"}, headers=h, expect=400)
    c.call("GET", "/admin/v1/projects", headers=h, query="q=open+api&limit=5", expect=200)
    c.call("GET", "/admin/v1/projects", headers=h, query="limit=0", expect=400)
    c.call("POST", "/admin/v1/projects", body={"slug": "openapi-dex", "name": "again"}, headers=h, expect=409)
    c.call("POST", "/admin/v1/projects/import", body={"name": "OpenAPI list", "tokens": [
        {"chainId": 1, "address": "0x0000000000000000000000000000000000b0b0b0", "name": "Bob Token",
         "symbol": "BOB"}]}, headers=h, expect=200)
    c.call("POST", "/admin/v1/projects/import", body={"what": "ever"}, headers=h, expect=400)
    c.call("GET", "/admin/v1/projects/{id}", {"id": "openapi-dex"}, headers=h, expect=200)
    c.call("PATCH", "/admin/v1/projects/{id}", {"id": proj["id"]}, body={"category": "defi"},
           headers=h, expect=200)
    c.call("PATCH", "/admin/v1/projects/{id}", {"id": proj["id"]},
           body={"contracts": [{"chainId": 0, "address": "0x1"}]}, headers=h, expect=400)
    # Issue 39: ownership requests, then the operator verifies the owner.
    pid = {"id": proj["id"]}
    c.call("POST", "/admin/v1/projects/{id}/ownership-requests", pid,
           body={"communityId": com["id"], "note": "we deployed it"}, headers=h, expect=201)
    c.call("POST", "/admin/v1/projects/{id}/ownership-requests", pid, body={}, headers=h, expect=400)
    c.call("GET", "/admin/v1/ownership-requests", headers=h, expect=200)
    c.call("GET", "/admin/v1/ownership-requests", headers=h, query="communityId=x", expect=400)
    c.call("DELETE", "/admin/v1/projects/{id}/ownership-requests/{communityId}",
           {"id": proj["id"], "communityId": com["id"]}, headers=h, expect=204)
    c.call("DELETE", "/admin/v1/projects/{id}/ownership-requests/{communityId}",
           {"id": proj["id"], "communityId": com["id"]}, headers=h, expect=404)
    c.call("PATCH", "/admin/v1/projects/{id}", pid, body={"ownerCommunityId": com["id"]},
           headers=h, expect=200)
    c.call("PATCH", "/admin/v1/projects/{id}", pid, body={"ownerCommunityId": 0}, headers=h, expect=400)

    c.call("GET", "/admin/v1/campaigns", headers=h, expect=200)
    c.call("GET", "/admin/v1/campaigns", headers=h, query="archived=any", expect=200)
    c.call("GET", "/admin/v1/campaigns", headers=h, query="archived=maybe", expect=400)
    camp = c.json("POST", "/admin/v1/campaigns", body={
        "communityId": com["id"], "name": "OpenAPI launch", "status": "active",
        "pricing": {"model": "CPA", "bid": "2.50"}, "budget": {"total": 100, "daily": 10},
        "targeting": {"projects": ["openapi-dex"], "chains": [1]}, "frequencyCap": {"count": 3, "hours": 24},
        "conversion": {"projects": ["openapi-dex"], "kind": "any", "windowDays": 7}}, headers=h, expect=201)
    c.call("POST", "/admin/v1/campaigns", body={"communityId": com["id"], "name": "bad"}, headers=h, expect=400)
    kid = {"id": camp["id"]}
    c.call("GET", "/admin/v1/campaigns/{id}", kid, headers=h, expect=200)
    c.call("PATCH", "/admin/v1/campaigns/{id}", kid, body={"status": "paused", "pacing": "asap"}, headers=h,
           expect=200)
    c.call("PATCH", "/admin/v1/campaigns/{id}", kid, body={"status": "sleeping"}, headers=h, expect=400)
    c.call("GET", "/admin/v1/campaigns/{id}/stats", {"id": 1}, headers=h, expect=200)

    c.call("GET", "/admin/v1/ads", headers=h, query="campaignId=1", expect=200)
    c.call("GET", "/admin/v1/ads", headers=h, query="campaignId=x", expect=400)
    ad = c.json("POST", "/admin/v1/ads", body={
        "campaignId": camp["id"], "headline": "Swap smarter", "content": "**Low fees**\\n* fast\\n* *safe*",
        "ctaUrl": "https://app.example/swap", "ctaLabel": "Swap now",
        "images": {"LANDSCAPE": "https://cdn.example/l.png"}}, headers=h, expect=201)
    c.call("POST", "/admin/v1/ads", body={"campaignId": camp["id"], "headline": "<b>x</b>"}, headers=h, expect=400)
    aid = {"id": ad["id"]}
    c.call("GET", "/admin/v1/ads/{id}", aid, headers=h, expect=200)
    c.call("PATCH", "/admin/v1/ads/{id}", aid, body={"reviewStatus": "rejected", "reviewReason": "Misleading"},
           headers=h, expect=200)
    c.call("PATCH", "/admin/v1/ads/{id}", aid, body={"reviewStatus": "rejected", "reviewReason": None},
           headers=h, expect=400)
    c.call("DELETE", "/admin/v1/ads/{id}", aid, headers=h, expect=204)
    c.call("DELETE", "/admin/v1/campaigns/{id}", kid, headers=h, expect=204)
    c.call("DELETE", "/admin/v1/projects/{id}", {"id": proj["id"]}, headers=h, expect=204)
    c.call("DELETE", "/admin/v1/communities/{id}", cid, headers=h, expect=204)


def activity_identities_reload(c, demo):
    h = admin_headers()
    line = json.dumps({"wallet": demo["wallet"], "project": "uniswap", "chainId": 1,
                       "timestamp": "2026-01-02T00:00:00Z"}).encode()
    c.call("POST", "/admin/v1/activity", raw=line, headers=admin_headers({"Content-Type": "application/x-ndjson"}),
           expect=200)
    c.call("POST", "/admin/v1/activity", raw=line, query="chain_id=0",
           headers=admin_headers({"Content-Type": "text/csv"}), expect=400)
    c.call("GET", "/admin/v1/activity/{wallet}", {"wallet": demo["wallet"]}, headers=h, expect=200)
    c.call("GET", "/admin/v1/activity/{wallet}", {"wallet": "0x123"}, headers=h, expect=400)
    c.call("POST", "/admin/v1/reload", headers=h, expect=200)
    erased = "0x00000000000000000000000000000000000000e3"
    c.call("GET", "/admin/v1/identities/by-wallet/{address}", {"address": erased}, headers=h, expect=200)
    c.call("GET", "/admin/v1/identities/by-wallet/{address}", {"address": "0x12"}, headers=h, expect=400)
    c.call("DELETE", "/admin/v1/identities/by-wallet/{address}", {"address": erased}, headers=h, expect=200)
    c.call("DELETE", "/admin/v1/identities/by-wallet/{address}", {"address": "0x12"}, headers=h, expect=400)


def reporting(c):
    h = admin_headers()
    for path in ("/admin/v1/clicks", "/admin/v1/conversions", "/admin/v1/events"):
        c.call("GET", path, headers=h, query="limit=5", expect=200)
        c.call("GET", path, headers=h, query="limit=0", expect=400)
    c.call("GET", "/admin/v1/events/counts", headers=h, expect=200)
    c.call("GET", "/admin/v1/events/counts", headers=h, query="campaignId=x", expect=400)
    c.call("GET", "/admin/v1/reports", headers=h, query="granularity=day&groupBy=campaign,adUnitId", expect=200)
    c.call("GET", "/admin/v1/reports", headers=h, query="granularity=total&format=csv", expect=200)
    c.call("GET", "/admin/v1/reports", headers=h, query="granularity=weekly", expect=400)
    c.call("GET", "/admin/v1/reports/ab", headers=h, query="campaignId=1", expect=200)
    c.call("GET", "/admin/v1/reports/ab", headers=h, query="publisherId=1", expect=200)
    c.call("GET", "/admin/v1/reports/ab", headers=h, expect=400)


def accounts_and_console(c, demo):
    h = admin_headers()
    c.call("GET", "/admin/v1/users", headers=h, expect=200)
    user = c.json("POST", "/admin/v1/users", body={"email": "openapi@pub.example", "password": "first password 1",
                                                   "role": "publisher", "publisherId": 1}, headers=h, expect=201)
    c.call("POST", "/admin/v1/users", body={"email": "no-at-sign", "password": "short", "role": "king"},
           headers=h, expect=400)
    uid = {"id": user["id"]}
    c.call("GET", "/admin/v1/users/{id}", uid, headers=h, expect=200)
    c.call("PATCH", "/admin/v1/users/{id}", uid, body={"password": "second password 2"}, headers=h, expect=200)
    c.call("PATCH", "/admin/v1/users/{id}", uid, body={"password": "short"}, headers=h, expect=400)
    token = c.json("POST", "/admin/v1/tokens", body={"userId": user["id"]}, headers=h, expect=201)
    c.call("POST", "/admin/v1/tokens", body={"userId": "one"}, headers=h, expect=400)
    c.call("GET", "/admin/v1/tokens", headers=h, query=f"userId={user['id']}", expect=200)
    c.call("GET", "/admin/v1/tokens", headers=h, query="userId=x", expect=400)

    user_auth = {"Authorization": "Bearer " + token["token"]}
    # A publisher user outside its role: 403 for writes and listings (docs/admin-api.md scope).
    c.call("POST", "/admin/v1/communities", body={"name": "x", "logoUrl": "https://x.example/l.png"},
           headers=user_auth, expect=403)
    c.call("GET", "/admin/v1/users", headers=user_auth, expect=403)
    c.call("POST", "/admin/v1/users", body={"email": "OPENAPI@pub.example", "password": "another password",
                                            "role": "publisher", "publisherId": 1}, headers=h, expect=409)
    c.call("POST", "/console/api/password", body={"currentPassword": "wrong password 0", "password": "third password 3"},
           headers=user_auth, expect=400)
    c.call("POST", "/console/api/password", body={"currentPassword": "second password 2",
                                                  "password": "third password 3"}, headers=user_auth, expect=200)
    c.call("DELETE", "/admin/v1/tokens/{id}", {"id": token["id"]}, headers=h, expect=200)

    c.call("POST", "/console/api/session", body={"email": demo["email"]}, expect=400)
    status, headers, body = c.call("POST", "/console/api/session",
                                   body={"email": demo["email"], "password": demo["password"]}, expect=201)
    cookie = headers.get("Set-Cookie", "").split(";")[0]
    csrf = json.loads(body)["csrfToken"] if status == 201 else ""
    c.call("GET", "/console/api/session", headers={"Cookie": cookie}, expect=200)
    c.call("GET", "/console/api/session", expect=401)
    c.call("DELETE", "/console/api/session", headers={"Cookie": cookie, "X-CSRF-Token": csrf}, expect=204)
    c.call("DELETE", "/admin/v1/users/{id}", uid, headers=h, expect=204)


def coverage():
    for template, item in DOC["paths"].items():
        for method in METHODS:
            if method not in item:
                continue
            if (method, template) not in called:
                failures.append(f"{method.upper()} {template}: documented but never called by this test")
            if "400" in item[method]["responses"] and (method, template) not in bad_requests:
                failures.append(f"{method.upper()} {template}: documents a 400 that this test never provoked")


def main():
    if not os.path.exists(ADSERVER):
        print(f"{ADSERVER} is missing"); return 1
    tmp = tempfile.mkdtemp(prefix="openapi-test-")
    proc = None
    try:
        started = time.time()
        proc, port, demo = start_demo(tmp)
        print(f"demo ready in {time.time() - started:.1f} s on port {port}")
        c = Client(port)
        health_and_document(c, port)
        ad = ads(c, demo)
        clicks(c, ad)
        for step in (publishers, communities_projects_campaigns_ads, reporting):
            step(c)
        activity_identities_reload(c, demo)
        accounts_and_console(c, demo)
        coverage()
        print(f"{len(called)} operations called, {len(bad_requests)} with a 400, "
              f"{time.time() - started:.1f} s in all")
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if failures:
            print(open(os.path.join(tmp, "serve.log")).read()[-2000:])
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
