-- wrk script of scripts/bench-durable.sh: each connection (one per wrk thread, so the per-thread
-- state below is per connection) books a car, then cancels that booking, and again. Both answers
-- come only after the server committed them to the ledger, so 201s per second are durable
-- bookings per second; cancelling keeps the fleet from running out of free cars.
local threads = {}
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("id", next_id)
  table.insert(threads, thread)
end

function init(args)
  bookings, cancels, nocar, failed = 0, 0, 0, 0
  pending, token = nil, nil
  rider = "durable-" .. id
  math.randomseed(id * 7919 + os.time())
end

-- KEYED=1 (bench-durable.sh): every booking carries an Idempotency-Key of its own, as the rider
-- page sends, so the run shows what the key's ledger lookup and claim cost.
local keyed = os.getenv("KEYED") == "1"
local made = 0

function request()
  if pending then
    local headers = { ["Content-Type"] = "application/json" }
    if token then headers["Authorization"] = "Bearer " .. token end
    return wrk.format("POST", "/api/v1/bookings/" .. pending .. "/cancel", headers, "")
  end
  -- The inner city (bench/scenarios/TaxiRequests.h): every point is near a road.
  local lat = 57.690 + math.random() * 0.025
  local lng = 11.940 + math.random() * 0.050
  local headers = { ["Content-Type"] = "application/json" }
  if keyed then
    made = made + 1
    headers["Idempotency-Key"] = string.format("bench-%d-%d-%d-%08x", os.time(), id, made, math.random(0, 0x7fffffff))
  end
  return wrk.format("POST", "/api/v1/bookings", headers,
    string.format('{"rider_id":"%s","pickup":{"lat":%.6f,"lng":%.6f}}', rider, lat, lng))
end

function response(status, headers, body)
  if pending then
    if status >= 200 and status < 300 then cancels = cancels + 1 else failed = failed + 1 end
    pending, token = nil, nil
  elseif status == 201 then
    bookings = bookings + 1
    pending = body:match('"booking_id"%s*:%s*(%d+)')
    token = body:match('"rider_token"%s*:%s*"([^"]+)"')
  elseif status == 409 then
    nocar = nocar + 1
  else
    failed = failed + 1
  end
end

function done(summary, latency, requests)
  local b, c, n, f = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    b = b + t:get("bookings"); c = c + t:get("cancels"); n = n + t:get("nocar"); f = f + t:get("failed")
  end
  io.write(string.format("DURABLE bookings=%d cancels=%d nocar=%d failed=%d seconds=%.3f p50_ms=%.2f p99_ms=%.2f socket_errors=%d\n",
    b, c, n, f, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
