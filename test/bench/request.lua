-- One wrk scenario: every request carries its own X-Forwarded-For, so the server's rate limiter
-- runs on each request and never refuses one (each address is used once per run).
-- Arguments after `--`: run number (1..255, keeps addresses distinct between runs), thread count,
-- method, body ("" for none), fleet size (0: every request sends the body as is; n: request i sends
-- it, and the path, with "{n}" replaced by i modulo n in four digits and "{i}" by "<run>-<i>", which
-- no other request of the bench sends), the path ("" for the URL's own), then any number of
-- "Name: value" headers.

local thread_count = 0

function setup(thread)
  thread:set("thread_id", thread_count)
  thread_count = thread_count + 1
end

local run, thread_total, counter, fleet, body, path = 0, 2, 0, 0, nil, nil

function init(args)
  run = tonumber(args[1])
  thread_total = tonumber(args[2])
  wrk.method = args[3]
  if args[4] ~= "" then
    body = args[4]
    wrk.body = body
  end
  fleet = tonumber(args[5])
  if args[6] ~= "" then
    path = args[6]
  end
  for i = 7, #args do
    local name, value = args[i]:match("^([^:]+):%s*(.*)$")
    wrk.headers[name] = value
  end
end

function request()
  -- Interleaved between threads: 24 bits give 16.7M distinct addresses per run.
  local n = counter * thread_total + thread_id
  counter = counter + 1
  wrk.headers["X-Forwarded-For"] = string.format("%d.%d.%d.%d", run, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
  if fleet > 0 then
    local member, unique = string.format("%04d", n % fleet), string.format("%d-%d", run, n)
    local fill = function(text) return text and (text:gsub("{n}", member):gsub("{i}", unique)) or nil end
    return wrk.format(nil, fill(path), nil, fill(body))
  end
  return wrk.format()
end

-- Machine-readable summary for the runner (latencies in microseconds).
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
