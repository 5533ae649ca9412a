-- wrk script for bench/click_load.sh: GET /v1/click/{token} over a list of real click paths
-- (one per line in PATHS_FILE), cycling, so most clicks after the first round are duplicates
-- (each one still a durable row).
--   wrk ... -s bench/wrk_click.lua URL -- PATHS_FILE
local pool = {}
local pool_size = 0
local next_request = 1

function init(args)
  local paths = assert(args[1], "usage: -- PATHS_FILE")
  for line in io.lines(paths) do
    pool_size = pool_size + 1
    -- The browser's user agent the ads were served to (click_load.sh): the clicks pass the
    -- user-agent checks, so the valid path is measured with every check run.
    pool[pool_size] = wrk.format("GET", line, {["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64) adserver-bench"})
  end
  assert(pool_size > 0, "no click paths")
  next_request = math.random(pool_size)
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
