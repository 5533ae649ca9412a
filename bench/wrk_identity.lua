-- wrk script for bench/identity_soak.sh (issue 20): consented /v1/ads traffic, half from
-- browsers without the identity cookie (a cookieless consented request: in the identity-graph
-- design each one minted an identity that stayed), half from browsers that keep it.
-- Usage: wrk ... -s bench/wrk_identity.lua -- DATA_DIR COOKIES_FILE
--   DATA_DIR: bench-key.txt, wallets-known.txt, wallets-unknown.txt (adserver-bench-data);
--   COOKIES_FILE: "cookie<TAB>wallet" lines (bench/common.sh identity_cookies).
-- Cookieless requests carry 1 to 3 wallets (known with p = 0.7); cookie requests present the
-- cookie's wallet again (half) or none (half). done() prints one RESULT line.

local pool_size = 8192
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

local function pick(list) return list[math.random(#list)] end

function init(args)
  local dir = assert(args[1], "DATA_DIR")
  local key = read_lines(dir .. "/bench-key.txt")[1]
  local known = read_lines(dir .. "/wallets-known.txt")
  local unknown = read_lines(dir .. "/wallets-unknown.txt")
  local cookies = read_lines(assert(args[2], "COOKIES_FILE"))
  math.randomseed(20261125)
  for i = 1, pool_size do
    local headers = { ["Content-Type"] = "application/json", ["x-api-key"] = key }
    local wallets = {}
    if math.random() < 0.5 then
      for j = 1, math.random(3) do
        wallets[j] = '"' .. (math.random() < 0.7 and pick(known) or pick(unknown)) .. '"'
      end
    else
      local value, wallet = pick(cookies):match("^([^\t]+)\t(.+)$")
      headers["Cookie"] = "adserver_id=" .. value .. "; adserver_id_p=" .. value
      if math.random() < 0.5 then wallets[1] = '"' .. wallet .. '"' end
    end
    local body = '{"walletAddresses":[' .. table.concat(wallets, ",") ..
                 '],"imageFormat":"LANDSCAPE","cookieConsent":true}'
    pool[i] = wrk.format("POST", "/v1/ads", headers, body)
  end
end

function request()
  local r = pool[next_request]
  next_request = next_request % pool_size + 1
  return r
end

function done(summary, latency, requests)
  io.write(string.format(
    "RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d non2xx=%d errors=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
