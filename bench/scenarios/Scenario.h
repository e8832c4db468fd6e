#pragma once

#include "../engine/LoadSettings.h"
#include "../engine/RequestPlan.h"
#include "../engine/RequestRenderer.h"
#include "../engine/WeightedMixPlan.h"

#include <memory>
#include <string>
#include <vector>

namespace taxicore::bench {

// One stage of a scenario; a multi-stage scenario runs its stages one after the other.
struct ScenarioStage {
    std::string label;
    int connections = kDefaultConnections;
    Nanoseconds duration = kDefaultDuration;
    uint64_t requestCount = 0; // > 0: a request count instead of a duration
};

// A named, reproducible experiment: the seed write-ups' load tests, and the taxi mix.
struct Scenario {
    enum class Requests { Mix, TaxiMix, SiegeTaxi };

    std::string name;
    std::string source; // the seed experiment it reproduces
    std::string description;
    std::vector<ScenarioStage> stages;
    HttpMode httpMode = HttpMode::KeepAlive;
    Nanoseconds timeout = kDefaultRequestTimeout;
    Requests requests = Requests::Mix;
    std::vector<MixEntry> mix; // for Requests::Mix

    // `deviceToken`: what the taxi plans send with position reports (empty: nothing).
    std::shared_ptr<const RequestPlan> makePlan(const RequestRenderer &renderer,
                                                const std::string &deviceToken = {}) const;
};

} // namespace taxicore::bench
