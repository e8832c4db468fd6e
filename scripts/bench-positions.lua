-- wrk script of scripts/bench-cluster.sh: car devices report their positions
-- (PUT /api/v1/cars/{id}/position with the device token), each request a random car of the
-- fleet at a fresh point of the inner city.
-- Usage: wrk -s scripts/bench-positions.lua URL -- DEVICE_TOKEN CARS
local threads = {}
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("id", next_id)
  table.insert(threads, thread)
end

function init(args)
  token = args[1] or ""
  cars = tonumber(args[2] or "2000")
  ok, failed = 0, 0
  headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token }
  math.randomseed(id * 7919 + os.time())
end

function request()
  local car = math.random(1, cars)
  local lat = 57.690 + math.random() * 0.025
  local lng = 11.940 + math.random() * 0.050
  return wrk.format("PUT", "/api/v1/cars/" .. car .. "/position", headers,
    string.format('{"lat":%.6f,"lng":%.6f,"heading":%d,"speed_kmh":30}', lat, lng, math.random(0, 359)))
end

function response(status, headers, body)
  if status == 200 then ok = ok + 1 else failed = failed + 1 end
end

function done(summary, latency, requests)
  local o, f = 0, 0
  for _, t in ipairs(threads) do
    o = o + t:get("ok"); f = f + t:get("failed")
  end
  io.write(string.format("POSITIONS ok=%d failed=%d seconds=%.3f p50_ms=%.2f p99_ms=%.2f socket_errors=%d\n",
    o, f, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
