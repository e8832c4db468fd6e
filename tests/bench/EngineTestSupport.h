#pragma once

#include "engine/LoadEngine.h"
#include "engine/RequestRenderer.h"
#include "engine/Target.h"
#include "engine/WeightedMixPlan.h"

#include <QTest>

#include <chrono>
#include <memory>
#include <string>

namespace benchtest {

using namespace std::chrono_literals;
using namespace taxicore::bench;

inline Target targetFor(const std::string &url)
{
    std::string error;
    const auto target = Target::fromUrl(url, error);
    if (!target)
        qFatal("bad test URL %s: %s", url.c_str(), error.c_str());
    return *target;
}

// One stage of GET requests on the URL's path, as the CLI would run it without a scenario.
inline StageResult runGet(const std::string &url, const LoadSettings &settings)
{
    const Target target = targetFor(url);
    const RequestRenderer renderer(target.hostHeader, settings.httpMode);
    auto plan = std::make_shared<WeightedMixPlan>(std::vector<MixEntry>{{1, "GET", target.path, ""}}, renderer);
    LoadEngine engine(target, settings, plan);
    return engine.run();
}

inline LoadSettings countSettings(int connections, uint64_t requests)
{
    LoadSettings settings;
    settings.connections = connections;
    settings.threads = 1;
    settings.requestCount = requests;
    settings.timeout = 5s;
    return settings;
}

inline LoadSettings durationSettings(int connections, std::chrono::milliseconds duration)
{
    LoadSettings settings;
    settings.connections = connections;
    settings.threads = 1;
    settings.duration = duration;
    settings.timeout = 5s;
    return settings;
}

} // namespace benchtest
