#pragma once

#include "../engine/BenchmarkRun.h"
#include "../engine/LoadSettings.h"
#include "../engine/Target.h"

#include <optional>
#include <string>
#include <vector>

namespace taxicore::bench {

inline constexpr const char *kDefaultUrl = "http://127.0.0.1:8080/";

// What the user asked for. Unset optionals take the scenario's value, then the defaults.
struct CommandLine {
    std::string url = kDefaultUrl;
    bool urlGiven = false;
    std::optional<int> connections;
    std::optional<int> threads;
    std::optional<Nanoseconds> duration;
    std::optional<uint64_t> requestCount;
    std::optional<double> rate;
    bool http10 = false;
    bool noKeepAlive = false;
    std::optional<Nanoseconds> timeout;
    Nanoseconds warmup = Nanoseconds::zero();
    std::string scenario;
    std::string jsonFile;
    std::string csvFile;
    std::string recordTo;    // a TaxiCore server that records the run in its ledger
    std::string recordToken; // its admin token, when the bench is not a trusted loopback client
    std::string deviceToken; // sent with position reports; default $TAXICORE_DEVICE_TOKEN
    bool progress = false;
    bool listScenarios = false;
    bool help = false;
    bool version = false;
};

// Parses argv (without the program name). On a usage error returns nullopt and sets `error`.
std::optional<CommandLine> parseCommandLine(const std::vector<std::string> &args, std::string &error);
// "10s", "500ms", "2m", "1h", "1.5" (seconds): nullopt if malformed or negative.
std::optional<Nanoseconds> parseDuration(const std::string &text);
std::string usageText();
std::string scenarioListText();

// The stages to run: the scenario's (or one GET of the URL's path), with flags applied on top.
// Fails (nullopt + error) for an unknown scenario.
std::optional<std::vector<StagePlan>> makeStagePlans(const CommandLine &options, const Target &target,
                                                     std::string &error);

} // namespace taxicore::bench
