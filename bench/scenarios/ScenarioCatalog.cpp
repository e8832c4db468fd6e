#include "ScenarioCatalog.h"

#include <chrono>

namespace taxicore::bench {

namespace {

using std::chrono::seconds;

Scenario abHello()
{
    Scenario s;
    s.name = "ab-hello";
    s.source = "Node.js hello-world write-up: ab -n 1000 -c 100 http://HOST/hello (HTTP/1.0, no "
               "keep-alive)";
    s.description = "1000 requests at 100 connections, HTTP/1.0 like ab, GET /hello";
    s.stages = {{"c100", 100, seconds(0), 1000}};
    s.httpMode = HttpMode::Http10;
    s.mix = {{1, "GET", "/hello", ""}};
    return s;
}

Scenario loadtestFib25()
{
    Scenario s;
    s.name = "loadtest-fib25";
    s.source = "Express fib write-up: loadtest -c 64, -c 200, -c 1000 for 20 s each on /fib?n=25";
    s.description = "3 stages of 20 s at 64, 200 and 1000 connections, GET /fib?n=25";
    s.stages = {{"c64", 64, seconds(20), 0}, {"c200", 200, seconds(20), 0}, {"c1000", 1000, seconds(20), 0}};
    s.mix = {{1, "GET", "/fib?n=25", ""}};
    return s;
}

Scenario clusterCpu()
{
    Scenario s;
    s.name = "cluster-cpu";
    s.source = "Node.js cluster write-up: 1000 requests at 100 concurrent on the CPU-bound loop";
    s.description = "1000 requests at 100 connections, GET /cpu";
    s.stages = {{"c100", 100, seconds(0), 1000}};
    s.mix = {{1, "GET", "/cpu", ""}};
    return s;
}

Scenario autocannonFib40()
{
    Scenario s;
    s.name = "autocannon-fib40";
    s.source = "autocannon write-up: autocannon -c 50 -d 10 on /fib?n=40 (10 s timeout, timeouts counted)";
    s.description = "50 connections for 10 s, GET /fib?n=40, 10 s timeout";
    s.stages = {{"c50", 50, seconds(10), 0}};
    s.timeout = seconds(10);
    s.mix = {{1, "GET", "/fib?n=40", ""}};
    return s;
}

Scenario siegeTaxi()
{
    Scenario s;
    s.name = "siege-taxi";
    s.source = "2016 thesis (taxi-call system on Node.js): siege -c 100 -r 10 over the four taxi calls";
    s.description = "100 clients x 10 requests cycling PUT position, GET nearby, POST booking, GET booking; "
                    "a connection per request like siege";
    s.stages = {{"c100", 100, seconds(0), 1000}};
    s.httpMode = HttpMode::ConnectionPerRequest;
    s.requests = Scenario::Requests::SiegeTaxi;
    return s;
}

Scenario taxiMix()
{
    Scenario s;
    s.name = "taxi-mix";
    s.source = "2016 thesis (taxi-call system): cars reporting positions, riders looking, quoting "
               "and booking";
    s.description = "64 connections for 10 s: position updates 50, nearby 25, quote 10, booking flow 15 "
                    "(book, GET, pickup+complete when arriving, else cancel); 409 no car counted apart";
    s.stages = {{"c64", 64, seconds(10), 0}};
    s.requests = Scenario::Requests::TaxiMix;
    return s;
}

} // namespace

const std::vector<Scenario> &builtInScenarios()
{
    static const std::vector<Scenario> scenarios = {abHello(),         loadtestFib25(), clusterCpu(),
                                                    autocannonFib40(), siegeTaxi(),     taxiMix()};
    return scenarios;
}

std::optional<Scenario> findScenario(std::string_view name)
{
    for (const Scenario &scenario : builtInScenarios()) {
        if (scenario.name == name)
            return scenario;
    }
    return std::nullopt;
}

} // namespace taxicore::bench
