-- wrk script for bench/load.sh: a realistic mix of ad requests (issue 6).
-- Usage: wrk ... -s bench/wrk_mix.lua -- DATA_DIR [COOKIES_FILE [identity]]
--   DATA_DIR holds bench-key.txt, wallets-known.txt and wallets-unknown.txt
--   (written by adserver-bench-data). COOKIES_FILE (bench/common.sh identity_cookies): lines
--   "cookie<TAB>wallet"; with it every current-variant request is a consented browser with its
--   identity cookie (and its partitioned twin), half presenting the cookie's wallet again, half
--   no wallet (served from the cookie).
--   `identity` (bench/identity_soak.sh, issue 20): instead of the mix, consented /v1/ads only,
--   half from browsers without the cookie (1 to 3 wallets, known with p = 0.7; in the
--   identity-graph design each one minted an identity that stayed), half from browsers that
--   keep it (as above).
-- Mix: 70 % current variant (/v1/ads, 4 formats, adUnitId, half with an Origin and a browser
-- User-Agent), 30 % earlier
-- (/api/ads, 3 formats); 60 % 1 wallet, 30 % 3, 10 % 50; each wallet known with p = 0.7.
-- The same seeded sequence of requests goes to every server. done() prints one RESULT line.
-- With WRK_DUMP=FILE in the environment, init() also writes the prepared requests to FILE, raw
-- and back to back, in the order they are sent (bench/overload.sh feeds them to
-- adserver-openloop; run wrk with -t1 so only one thread writes it).

local pool_size = 4096
local browser_agent = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"
local pool = {}
local next_request = 1

local function read_lines(path)
  local lines = {}
  local f = assert(io.open(path, "r"), "cannot open " .. path)
  for line in f:lines() do
    if #line > 0 then lines[#lines + 1] = line end
  end
  f:close()
  return lines
end

-- Writes the pool to the file named by WRK_DUMP, if set.
local function dump_pool()
  local path = os.getenv("WRK_DUMP")
  if not path or #path == 0 then return end
  local f = assert(io.open(path, "wb"), "cannot write " .. path)
  for i = 1, #pool do f:write(pool[i]) end
  f:close()
end

local function pick(list) return list[math.random(#list)] end

-- A consented browser with its identity cookie: presents the cookie's wallet again (p = 0.5)
-- or none. Returns the quoted wallet list and sets the Cookie header.
local function with_cookie(cookies, headers)
  local value, wallet = pick(cookies):match("^([^\t]+)\t(.+)$")
  headers["Cookie"] = "adserver_id=" .. value .. "; adserver_id_p=" .. value
  return math.random() < 0.5 and ('"' .. wallet .. '"') or ""
end

local function identity_request(key, known, unknown, cookies)
  local headers = { ["Content-Type"] = "application/json", ["x-api-key"] = key }
  local wallets
  if math.random() < 0.5 then
    local list = {}
    for j = 1, math.random(3) do
      list[j] = '"' .. (math.random() < 0.7 and pick(known) or pick(unknown)) .. '"'
    end
    wallets = table.concat(list, ",")
  else
    wallets = with_cookie(cookies, headers)
  end
  return wrk.format("POST", "/v1/ads", headers, '{"walletAddresses":[' .. wallets ..
                    '],"imageFormat":"LANDSCAPE","cookieConsent":true}')
end

function init(args)
  local dir = args[1] or "."
  local key = read_lines(dir .. "/bench-key.txt")[1]
  local known = read_lines(dir .. "/wallets-known.txt")
  local unknown = read_lines(dir .. "/wallets-unknown.txt")
  local cookies = args[2] and read_lines(args[2]) or nil
  math.randomseed(20260101)
  if args[3] == "identity" then
    for i = 1, pool_size do pool[i] = identity_request(key, known, unknown, cookies) end
    dump_pool()
    return
  end
  local current_formats = { "LANDSCAPE", "LONG_BANNER", "SHORT_BANNER", "NO_IMAGE" }
  local earlier_formats = { "LANDSCAPE", "LONG_BANNER", "SHORT_BANNER" }
  for i = 1, pool_size do
    local current = math.random() < 0.7
    local r = math.random()
    local n = r < 0.6 and 1 or (r < 0.9 and 3 or 50)
    local wallets = {}
    for j = 1, n do
      wallets[j] = '"' .. (math.random() < 0.7 and pick(known) or pick(unknown)) .. '"'
    end
    local headers = { ["Content-Type"] = "application/json", ["x-api-key"] = key }
    local body, path
    if current then
      path = "/v1/ads"
      if math.random() < 0.5 then
        -- A browser's request: it names its page and its user agent (the server checks both
        -- for invalid traffic; requests without an Origin come from a publisher's backend).
        headers["Origin"] = "https://news.example"
        headers["User-Agent"] = browser_agent
      end
      body = '{"walletAddresses":[' .. table.concat(wallets, ",") .. '],"imageFormat":"' ..
             pick(current_formats) .. '","adUnitId":"slot-' .. math.random(20) .. '"}'
      if cookies then
        body = '{"walletAddresses":[' .. with_cookie(cookies, headers) .. '],"imageFormat":"' ..
               pick(current_formats) .. '","adUnitId":"slot-' .. math.random(20) ..
               '","cookieConsent":true}'
      end
    else
      path = "/api/ads"
      body = '{"walletAddresses":[' .. table.concat(wallets, ",") .. '],"imageFormat":"' ..
             pick(earlier_formats) .. '"}'
    end
    pool[i] = wrk.format("POST", path, headers, body)
  end
  dump_pool()
end

function request()
  local r = pool[next_request]
  next_request = next_request % pool_size + 1
  return r
end

function done(summary, latency, requests)
  io.write(string.format(
    "RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d p999_us=%d non2xx=%d errors=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency:percentile(99.9), summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
