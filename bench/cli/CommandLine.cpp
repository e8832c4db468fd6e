#include "CommandLine.h"

#include "../engine/RequestRenderer.h"
#include "../engine/WeightedMixPlan.h"
#include "../scenarios/ScenarioCatalog.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

namespace taxicore::bench {

namespace {

// Limits that keep a typo from exhausting the machine.
constexpr int kMaxConnections = 100'000;
constexpr int kMaxThreads = 256;

template <typename Number> std::optional<Number> parseNumber(const std::string &text)
{
    Number value{};
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
        return std::nullopt;
    return value;
}

} // namespace

std::optional<Nanoseconds> parseDuration(const std::string &text)
{
    static const std::map<std::string, double> unitSeconds = {{"", 1},   {"s", 1},    {"ms", 1e-3}, {"us", 1e-6},
                                                              {"m", 60}, {"min", 60}, {"h", 3600}};
    std::size_t split = 0;
    while (split < text.size() && (std::isdigit(static_cast<unsigned char>(text[split])) || text[split] == '.'))
        ++split;
    const auto value = parseNumber<double>(text.substr(0, split));
    const auto unit = unitSeconds.find(text.substr(split));
    if (!value || unit == unitSeconds.end() || *value < 0 || !std::isfinite(*value))
        return std::nullopt;
    return Nanoseconds(static_cast<int64_t>(std::llround(*value * unit->second * 1e9)));
}

std::optional<CommandLine> parseCommandLine(const std::vector<std::string> &args, std::string &error)
{
    CommandLine options;
    // The environment, not the command line, keeps the token out of `ps` (the console uses it).
    if (const char *token = std::getenv("TAXICORE_DEVICE_TOKEN"))
        options.deviceToken = token;
    std::vector<std::string> positional;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string flag = args[i];
        std::optional<std::string> inlineValue;
        if (flag.rfind("--", 0) == 0) {
            if (const std::size_t eq = flag.find('='); eq != std::string::npos) {
                inlineValue = flag.substr(eq + 1);
                flag = flag.substr(0, eq);
            }
        } else if (flag.size() > 2 && flag[0] == '-'
                   && std::string_view("ctdnR").find(flag[1]) != std::string_view::npos) {
            inlineValue = flag.substr(2); // wrk style: -c50 -t1 -d10s
            flag = flag.substr(0, 2);
        }
        const auto value = [&]() -> std::optional<std::string> {
            if (inlineValue)
                return inlineValue;
            if (i + 1 >= args.size()) {
                error = "option " + flag + " needs a value";
                return std::nullopt;
            }
            return args[++i];
        };
        const auto bad = [&](const std::string &what, const std::string &given) {
            error = "invalid value '" + given + "' for " + flag + ": " + what;
            return std::nullopt;
        };
        if (flag == "-c" || flag == "--connections") {
            const auto text = value();
            if (!text)
                return std::nullopt;
            const auto n = parseNumber<int>(*text);
            if (!n || *n < 1 || *n > kMaxConnections)
                return bad("expected 1.." + std::to_string(kMaxConnections), *text);
            options.connections = *n;
        } else if (flag == "-t" || flag == "--threads") {
            const auto text = value();
            if (!text)
                return std::nullopt;
            const auto n = parseNumber<int>(*text);
            if (!n || *n < 1 || *n > kMaxThreads)
                return bad("expected 1.." + std::to_string(kMaxThreads), *text);
            options.threads = *n;
        } else if (flag == "-d" || flag == "--duration") {
            const auto text = value();
            if (!text)
                return std::nullopt;
            const auto d = parseDuration(*text);
            if (!d || d->count() <= 0)
                return bad("expected a duration like 10s, 500ms, 2m", *text);
            options.duration = *d;
        } else if (flag == "-n" || flag == "--requests") {
            const auto text = value();
            if (!text)
                return std::nullopt;
            const auto n = parseNumber<uint64_t>(*text);
            if (!n || *n == 0)
                return bad("expected a positive request count", *text);
            options.requestCount = *n;
        } else if (flag == "--rate" || flag == "-R") {
            const auto text = value();
            if (!text)
                return std::nullopt;
            const auto r = parseNumber<double>(*text);
            if (!r || *r <= 0 || !std::isfinite(*r))
                return bad("expected requests per second > 0", *text);
            options.rate = *r;
        } else if (flag == "--timeout" || flag == "--warmup") {
            const auto text = value();
            if (!text)
                return std::nullopt;
            const auto d = parseDuration(*text);
            if (!d || (flag == "--timeout" && d->count() <= 0))
                return bad("expected a duration like 10s or 500ms", *text);
            if (flag == "--timeout")
                options.timeout = *d;
            else
                options.warmup = *d;
        } else if (flag == "--scenario" || flag == "--json" || flag == "--csv") {
            const auto text = value();
            if (!text)
                return std::nullopt;
            (flag == "--scenario" ? options.scenario : flag == "--json" ? options.jsonFile : options.csvFile) = *text;
        } else if (flag == "--record-to" || flag == "--record-token" || flag == "--device-token") {
            const auto text = value();
            if (!text)
                return std::nullopt;
            (flag == "--record-to"      ? options.recordTo
             : flag == "--record-token" ? options.recordToken
                                        : options.deviceToken) = *text;
        } else if (flag == "--http1.0") {
            options.http10 = true;
        } else if (flag == "--no-keepalive") {
            options.noKeepAlive = true;
        } else if (flag == "--progress") {
            options.progress = true;
        } else if (flag == "--list-scenarios") {
            options.listScenarios = true;
        } else if (flag == "-h" || flag == "--help") {
            options.help = true;
        } else if (flag == "-v" || flag == "--version") {
            options.version = true;
        } else if (!flag.empty() && flag[0] == '-') {
            error = "unknown option " + flag + " (see --help)";
            return std::nullopt;
        } else {
            positional.push_back(flag);
        }
    }
    if (positional.size() > 1) {
        error = "expected at most one URL, got '" + positional[0] + "' and '" + positional[1] + "'";
        return std::nullopt;
    }
    if (!positional.empty()) {
        options.url = positional.front();
        options.urlGiven = true;
    }
    if (options.duration && options.requestCount) {
        error = "-d and -n exclude each other: give a duration or a request count";
        return std::nullopt;
    }
    return options;
}

std::optional<std::vector<StagePlan>> makeStagePlans(const CommandLine &options, const Target &target,
                                                     std::string &error)
{
    Scenario scenario;
    if (!options.scenario.empty()) {
        const auto found = findScenario(options.scenario);
        if (!found) {
            error = "unknown scenario '" + options.scenario + "' (see --list-scenarios)";
            return std::nullopt;
        }
        scenario = *found;
    } else {
        scenario.stages = {{"", kDefaultConnections, kDefaultDuration, 0}};
        scenario.mix = {{1, "GET", target.path, ""}};
    }
    HttpMode mode = scenario.httpMode;
    if (options.http10)
        mode = HttpMode::Http10;
    else if (options.noKeepAlive)
        mode = HttpMode::ConnectionPerRequest;
    const RequestRenderer renderer(target.hostHeader, mode);
    const std::shared_ptr<const RequestPlan> plan = scenario.makePlan(renderer, options.deviceToken);

    std::vector<StagePlan> stages;
    for (const ScenarioStage &stage : scenario.stages) {
        LoadSettings settings;
        settings.connections = options.connections.value_or(stage.connections);
        settings.threads = options.threads.value_or(0);
        settings.duration = stage.duration;
        settings.requestCount = stage.requestCount;
        if (options.duration) {
            settings.duration = *options.duration;
            settings.requestCount = 0;
        } else if (options.requestCount) {
            settings.requestCount = *options.requestCount;
        }
        settings.rate = options.rate.value_or(0);
        settings.httpMode = mode;
        settings.timeout = options.timeout.value_or(scenario.timeout);
        settings.warmup = options.warmup;
        // A stage is named after its connection count unless the scenario named it otherwise.
        const bool keepLabel = !options.connections && !stage.label.empty();
        stages.push_back({keepLabel ? stage.label : "c" + std::to_string(settings.connections), settings, plan});
    }
    return stages;
}

std::string scenarioListText()
{
    std::string text;
    for (const Scenario &scenario : builtInScenarios())
        text += scenario.name + "\n    " + scenario.description + "\n    source: " + scenario.source + "\n";
    return text;
}

std::string usageText()
{
    return R"(Usage: taxicore-bench [URL] [options]

Load generator for TaxiCore (and any HTTP/1.x server). URL defaults to http://127.0.0.1:8080/;
with --scenario only its host and port are used.

  -c, --connections N   connections (default 64, or the scenario's)
  -t, --threads N       worker threads (default: half the cores, at least 1; never more than -c)
  -d, --duration D      measure for D (10s, 500ms, 2m; default 10s, or the scenario's)
  -n, --requests N      measure N requests instead of a duration
  -R, --rate R          open loop: R requests/s in total, latency from the intended send time
      --http1.0         HTTP/1.0 without keep-alive, like ab
      --no-keepalive    HTTP/1.1 with Connection: close, a new connection per request
      --timeout D       per-request timeout (default 10s)
      --warmup D        run D before measuring; nothing from it is counted (default 0s)
      --scenario NAME   a built-in scenario (see --list-scenarios); flags override its values
      --json FILE       write the whole result as JSON
      --csv FILE        write the per-second series as CSV
      --progress        one JSON line per second on stdout, the result as the last line
                        (the human summary then goes to stderr)
      --record-to URL   afterwards record the run's summary in the ledger of the TaxiCore
                        server at URL (POST /admin/v1/events, kind "benchmark")
      --record-token T  the admin token for --record-to (Authorization: Bearer T)
      --device-token T  sent with the taxi scenarios' position reports (Authorization:
                        Bearer T; default $TAXICORE_DEVICE_TOKEN); a trusted loopback
                        client needs none
      --list-scenarios  list the scenarios and exit
  -h, --help            this text
  -v, --version         the version

Exit status: 0 when the run was made (even with errors); 2 when it could not be
(bad option or URL, unknown scenario, server refusing connections at the start).
)";
}

} // namespace taxicore::bench
