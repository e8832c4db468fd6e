#include "ResultJson.h"

#include "../engine/Version.h"

#include <QString>

namespace taxicore::bench {

namespace {

constexpr double kNanosPerMilli = 1e6;
constexpr double kNanosPerSecondD = 1e9;

double toMs(int64_t ns)
{
    return static_cast<double>(ns) / kNanosPerMilli;
}

double toSeconds(Nanoseconds duration)
{
    return static_cast<double>(duration.count()) / kNanosPerSecondD;
}

QJsonValue number(uint64_t value)
{
    return QJsonValue(static_cast<double>(value));
}

QString text(const std::string &value)
{
    return QString::fromStdString(value);
}

} // namespace

QJsonObject settingsToJson(const LoadSettings &settings, int threads)
{
    QJsonObject json;
    json["connections"] = settings.connections;
    json["threads"] = threads;
    json["duration_s"] = settings.countLimited() ? QJsonValue() : QJsonValue(toSeconds(settings.duration));
    json["requests"] = settings.countLimited() ? number(settings.requestCount) : QJsonValue();
    json["loop"] = settings.openLoop() ? "open" : "closed";
    json["rate"] = settings.openLoop() ? QJsonValue(settings.rate) : QJsonValue();
    json["http"] = text(httpModeName(settings.httpMode));
    json["timeout_s"] = toSeconds(settings.timeout);
    json["warmup_s"] = toSeconds(settings.warmup);
    return json;
}

QJsonObject latencyToJson(const Histogram &histogram)
{
    QJsonObject json;
    json["count"] = number(histogram.count());
    json["min_ms"] = toMs(histogram.min());
    json["mean_ms"] = histogram.mean() / kNanosPerMilli;
    json["stddev_ms"] = histogram.stddev() / kNanosPerMilli;
    json["p50_ms"] = toMs(histogram.valueAtPercentile(50));
    json["p90_ms"] = toMs(histogram.valueAtPercentile(90));
    json["p95_ms"] = toMs(histogram.valueAtPercentile(95));
    json["p99_ms"] = toMs(histogram.valueAtPercentile(99));
    json["p99_9_ms"] = toMs(histogram.valueAtPercentile(99.9));
    json["max_ms"] = toMs(histogram.max());
    return json;
}

QJsonArray histogramBucketsToJson(const Histogram &histogram)
{
    QJsonArray buckets;
    for (std::size_t i = 0; i < Histogram::kBucketCount; ++i) {
        if (const uint64_t count = histogram.countAt(i)) {
            const uint64_t low = Histogram::bucketLowerBound(i);
            buckets.append(QJsonArray{number(low), number(low + Histogram::bucketWidth(i)), number(count)});
        }
    }
    return buckets;
}

QJsonObject stageResultToJson(const StageResult &stage)
{
    const WorkerStats &totals = stage.totals;
    QJsonObject json;
    json["name"] = text(stage.name);
    json["url"] = text(stage.url);
    json["requests_description"] = text(stage.requests);
    json["settings"] = settingsToJson(stage.settings, stage.threads);

    QJsonObject summary;
    summary["elapsed_s"] = stage.elapsedSeconds;
    summary["responses"] = number(stage.responses());
    summary["requests_per_s"] = stage.requestsPerSecond();
    summary["successes"] = number(totals.value(WorkerStats::Successes));
    summary["no_car"] = number(totals.value(WorkerStats::NoCarAvailable));
    summary["conflicts"] = number(totals.value(WorkerStats::Conflicts));
    summary["errors"] = number(stage.errors());
    summary["bytes_read"] = number(totals.value(WorkerStats::BytesRead));
    summary["bytes_per_s"] = stage.elapsedSeconds > 0
                                 ? static_cast<double>(totals.value(WorkerStats::BytesRead)) / stage.elapsedSeconds
                                 : 0.0;
    summary["connections_opened"] = number(totals.value(WorkerStats::ConnectionsOpened));
    summary["unfinished_at_end"] = number(totals.value(WorkerStats::UnfinishedAtEnd));
    summary["interrupted"] = stage.interrupted;
    json["summary"] = summary;

    QJsonObject latency;
    latency["corrected"] = latencyToJson(totals.corrected);
    latency["uncorrected"] = latencyToJson(totals.uncorrected);
    latency["schedule_lag"] = latencyToJson(totals.scheduleLag);
    json["latency"] = latency;

    QJsonObject histogram;
    histogram["unit"] = "ns";
    histogram["buckets_per_power_of_two"] = static_cast<int>(Histogram::kSubBuckets);
    histogram["corrected"] = histogramBucketsToJson(totals.corrected);
    histogram["uncorrected"] = histogramBucketsToJson(totals.uncorrected);
    json["histogram"] = histogram;

    QJsonArray series;
    for (const SecondSample &sample : stage.series) {
        QJsonObject point;
        point["second"] = sample.second;
        point["elapsed_s"] = sample.elapsedSeconds;
        point["responses"] = number(sample.responses);
        point["requests_per_s"] = sample.requestsPerSecond;
        point["errors"] = number(sample.errors);
        point["p99_ms"] = sample.p99Ms;
        point["client_cpu_percent"] = sample.clientCpuPercent;
        series.append(point);
    }
    json["series"] = series;

    QJsonArray byRequest;
    const auto &kinds = totals.kinds();
    for (std::size_t i = 0; i < kinds.size() && i < stage.kindNames.size(); ++i) {
        if (kinds[i].responses + kinds[i].errors == 0)
            continue;
        QJsonObject kind;
        kind["request"] = text(stage.kindNames[i]);
        kind["responses"] = number(kinds[i].responses);
        kind["errors"] = number(kinds[i].errors);
        kind["latency"] = latencyToJson(kinds[i].latency);
        byRequest.append(kind);
    }
    json["by_request"] = byRequest;

    QJsonObject errors;
    errors["total"] = number(stage.errors());
    errors["connect"] = number(totals.value(WorkerStats::ConnectErrors));
    errors["read"] = number(totals.value(WorkerStats::ReadErrors));
    errors["write"] = number(totals.value(WorkerStats::WriteErrors));
    errors["timeout"] = number(totals.value(WorkerStats::Timeouts));
    QJsonObject byStatus;
    for (const auto &[status, count] : stage.errorStatuses)
        byStatus[QString::number(status)] = number(count);
    errors["status"] = byStatus;
    json["errors"] = errors;

    const ClientUsage &client = stage.client;
    QJsonObject clientJson;
    clientJson["threads"] = client.threads;
    clientJson["thread_cpu_s"] = client.threadCpuSeconds;
    clientJson["process_cpu_s"] = client.processCpuSeconds;
    clientJson["cpu_percent_of_threads"] = client.cpuPercentOfThreads;
    clientJson["cpu_us_per_request"] = client.cpuMicrosPerRequest;
    clientJson["schedule_lag_p99_ms"] = client.scheduleLagP99Ms;
    clientJson["client_bound"] = client.clientBound;
    clientJson["client_bound_reason"] = text(client.clientBoundReason);
    json["client"] = clientJson;
    return json;
}

QJsonObject runResultToJson(const RunResult &run, const MachineInfo &machine)
{
    QJsonObject json;
    json["type"] = "result";
    json["schema_version"] = kResultSchemaVersion;
    json["tool"] = "taxicore-bench";
    json["version"] = kBenchVersion;
    json["url"] = text(run.url);
    json["started_at"] = text(run.startedAtUtc);
    if (run.scenarioName.empty()) {
        json["scenario"] = QJsonValue();
    } else {
        QJsonObject scenario;
        scenario["name"] = text(run.scenarioName);
        scenario["source"] = text(run.scenarioSource);
        scenario["description"] = text(run.scenarioDescription);
        json["scenario"] = scenario;
    }
    QJsonObject machineJson;
    machineJson["cores"] = machine.cores;
    machineJson["cpu_model"] = text(machine.cpuModel);
    machineJson["kernel"] = text(machine.kernel);
    json["machine"] = machineJson;
    QJsonArray stages;
    for (const StageResult &stage : run.stages)
        stages.append(stageResultToJson(stage));
    json["stages"] = stages;
    json["client_bound"] = run.clientBound();
    return json;
}

QJsonObject stageStartToJson(int stageIndex, const StagePlan &stage)
{
    QJsonObject json;
    json["type"] = "stage";
    json["stage"] = stageIndex;
    json["name"] = text(stage.label);
    json["requests_description"] = text(stage.plan ? stage.plan->describe() : std::string());
    json["settings"] = settingsToJson(stage.settings, stage.settings.effectiveThreads());
    return json;
}

QJsonObject progressToJson(int stageIndex, const std::string &stageName, const SecondSample &sample)
{
    QJsonObject json;
    json["type"] = "progress";
    json["stage"] = stageIndex;
    json["name"] = text(stageName);
    json["second"] = sample.second;
    json["elapsed_s"] = sample.elapsedSeconds;
    json["responses"] = number(sample.responses);
    json["requests_per_s"] = sample.requestsPerSecond;
    json["errors"] = number(sample.errors);
    json["p99_ms"] = sample.p99Ms;
    json["client_cpu_percent"] = sample.clientCpuPercent;
    json["total_responses"] = number(sample.totalResponses);
    json["total_errors"] = number(sample.totalErrors);
    return json;
}

} // namespace taxicore::bench
