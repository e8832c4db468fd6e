#pragma once

#include "../engine/BenchmarkRun.h"
#include "../engine/Histogram.h"
#include "../engine/StageResult.h"
#include "MachineInfo.h"

#include <QJsonArray>
#include <QJsonObject>

namespace taxicore::bench {

// The JSON forms of results (schema in bench/README.md, version kResultSchemaVersion).
// Qt JSON is used only here, off the hot path.
QJsonObject runResultToJson(const RunResult &run, const MachineInfo &machine);
QJsonObject stageResultToJson(const StageResult &stage);
QJsonObject settingsToJson(const LoadSettings &settings, int threads);
QJsonObject latencyToJson(const Histogram &histogram);
// Non-empty buckets as [low_ns, high_ns, count], high exclusive.
QJsonArray histogramBucketsToJson(const Histogram &histogram);

// --progress lines: one when a stage starts, one per second.
QJsonObject stageStartToJson(int stageIndex, const StagePlan &stage);
QJsonObject progressToJson(int stageIndex, const std::string &stageName, const SecondSample &sample);

} // namespace taxicore::bench
