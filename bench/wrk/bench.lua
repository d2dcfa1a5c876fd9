-- bench/wrk/bench.lua: the request of one benchmark row, shaped by environment variables that
-- bench/harness.py sets (wrk runs this script in each of its threads).
--   BENCH_METHOD, BENCH_PATH, BENCH_BODY   the request (a body is sent as application/json)
--   BENCH_KEYS   none | new | replay
--     new:    a fresh Idempotency-Key per request, <nonce>-<thread>-<counter>, unique in the run
--     replay: one of BENCH_REPLAY_KEYS keys <nonce>-<i> that the harness created before (caller u<i % users>)
--   BENCH_USERS  callers u0 .. u<n-1> the requests are spread over (X-Bench-User)
--   BENCH_USER   one caller for every request instead
--   BENCH_NONCE  makes the keys unique per run, row and repetition
--   BENCH_STATUSES=1  a diagnosis, not for measured runs (a Lua call per response): done() also prints
--                the status and the first body of every non-2xx answer ("BENCH-NON2XX ...")
-- done() prints one line "BENCH-RESULT {json}" with the counts and latency percentiles (microseconds).
local method = os.getenv("BENCH_METHOD") or "GET"
local path = os.getenv("BENCH_PATH") or "/"
local body = os.getenv("BENCH_BODY")
if body == "" then body = nil end
local keys = os.getenv("BENCH_KEYS") or "none"
local users = tonumber(os.getenv("BENCH_USERS") or "1000")
local fixed_user = os.getenv("BENCH_USER")
if fixed_user == "" then fixed_user = nil end
local nonce = os.getenv("BENCH_NONCE") or tostring(os.time())
local replay_keys = tonumber(os.getenv("BENCH_REPLAY_KEYS") or "100")

local threads = 0
local all_threads = {}
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
  table.insert(all_threads, thread)
end

if os.getenv("BENCH_STATUSES") == "1" then
  non2xx = ""
  function response(status, headers, body)
    if status < 200 or status > 299 then
      non2xx = non2xx .. status .. " " .. string.sub(body or "", 1, 300) .. "\n"
    end
  end
end

local counter = 0
function request()
  counter = counter + 1
  -- Threads start at different offsets so that they do not walk the callers in step.
  local spread = counter + thread_id * 7919
  local headers = {}
  if body then
    headers["Content-Type"] = "application/json"
  end
  if keys == "new" then
    headers["Idempotency-Key"] = nonce .. "-" .. thread_id .. "-" .. counter
    headers["X-Bench-User"] = fixed_user or ("u" .. (spread % users))
  elseif keys == "replay" then
    local i = spread % replay_keys
    headers["Idempotency-Key"] = nonce .. "-" .. i
    headers["X-Bench-User"] = fixed_user or ("u" .. (i % users))
  else
    headers["X-Bench-User"] = fixed_user or ("u" .. (spread % users))
  end
  return wrk.format(method, path, headers, body)
end

function done(summary, latency, requests)
  for _, thread in ipairs(all_threads) do
    local seen = thread:get("non2xx")
    if seen and seen ~= "" then
      io.write("BENCH-NON2XX " .. seen)
    end
  end
  local e = summary.errors
  io.write(string.format('BENCH-RESULT {"requests":%d,"duration_us":%d,"bytes":%d,"non2xx":%d,"connect":%d,'
      .. '"read":%d,"write":%d,"timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
      summary.requests, summary.duration, summary.bytes, e.status, e.connect, e.read, e.write, e.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
