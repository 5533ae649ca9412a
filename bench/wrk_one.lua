-- wrk script for bench/request_cost.sh: the same request over and over, so the server's CPU per
-- request can be split by what a request does.
--   wrk ... -s bench/wrk_one.lua URL -- DATA_DIR known|unknown WALLETS [VARIANT]
-- DATA_DIR is an adserver-bench-data directory (bench-key.txt, wallets-known.txt,
-- wallets-unknown.txt); the request carries the first WALLETS wallets of the chosen list.
-- VARIANT: "current" (POST /v1/ads, the default) or "earlier" (POST /api/ads).
local req

function init(args)
  local data, kind, n, variant = args[1], args[2], tonumber(args[3]), args[4] or "current"
  assert(data and (kind == "known" or kind == "unknown") and n and n >= 1,
         "usage: -- DATA_DIR known|unknown WALLETS [current|earlier]")
  local key = assert(io.open(data .. "/bench-key.txt")):read("*l")
  local wallets = {}
  for line in io.lines(data .. "/wallets-" .. kind .. ".txt") do
    wallets[#wallets + 1] = '"' .. line .. '"'
    if #wallets >= n then break end
  end
  local body = '{"walletAddresses":[' .. table.concat(wallets, ",") ..
               '],"imageFormat":"LANDSCAPE"}'
  local path = variant == "earlier" and "/api/ads" or "/v1/ads"
  req = wrk.format("POST", path, { ["Content-Type"] = "application/json", ["x-api-key"] = key },
                   body)
end

function request()
  return req
end
