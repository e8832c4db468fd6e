#include "BenchmarkEvent.h"

#include <QJsonArray>
#include <algorithm>

namespace taxicore::bench {

namespace {

QJsonObject stageDigest(const QJsonObject &stage)
{
    const QJsonObject summary = stage.value(QLatin1String("summary")).toObject();
    const QJsonObject settings = stage.value(QLatin1String("settings")).toObject();
    const QJsonObject latency =
        stage.value(QLatin1String("latency")).toObject().value(QLatin1String("corrected")).toObject();
    return {{QStringLiteral("name"), stage.value(QLatin1String("name"))},
            {QStringLiteral("concurrency"), settings.value(QLatin1String("connections")).toInt()},
            {QStringLiteral("duration_s"), summary.value(QLatin1String("elapsed_s")).toDouble()},
            {QStringLiteral("responses"), summary.value(QLatin1String("responses")).toDouble()},
            {QStringLiteral("requests_per_s"), summary.value(QLatin1String("requests_per_s")).toDouble()},
            {QStringLiteral("p50_ms"), latency.value(QLatin1String("p50_ms")).toDouble()},
            {QStringLiteral("p99_ms"), latency.value(QLatin1String("p99_ms")).toDouble()},
            {QStringLiteral("errors"), summary.value(QLatin1String("errors")).toDouble()}};
}

} // namespace

QJsonObject benchmarkEventDetail(const QJsonObject &resultJson, const QString &serverMode)
{
    const QJsonArray stages = resultJson.value(QLatin1String("stages")).toArray();
    QJsonArray digests;
    int concurrency = 0;
    double seconds = 0, responses = 0, errors = 0, p50 = 0, p99 = 0;
    bool interrupted = false;
    for (const QJsonValue &value : stages) {
        const QJsonObject digest = stageDigest(value.toObject());
        concurrency = std::max(concurrency, digest.value(QLatin1String("concurrency")).toInt());
        seconds += digest.value(QLatin1String("duration_s")).toDouble();
        responses += digest.value(QLatin1String("responses")).toDouble();
        errors += digest.value(QLatin1String("errors")).toDouble();
        p50 = std::max(p50, digest.value(QLatin1String("p50_ms")).toDouble());
        p99 = std::max(p99, digest.value(QLatin1String("p99_ms")).toDouble());
        interrupted =
            interrupted
            || value.toObject().value(QLatin1String("summary")).toObject().value(QLatin1String("interrupted")).toBool();
        digests.append(digest);
    }
    const QJsonValue scenario = resultJson.value(QLatin1String("scenario"));
    QJsonObject detail{
        {QStringLiteral("tool"), QStringLiteral("taxicore-bench")},
        {QStringLiteral("url"), resultJson.value(QLatin1String("url"))},
        {QStringLiteral("scenario"),
         scenario.isObject() ? scenario.toObject().value(QLatin1String("name")) : QJsonValue()},
        {QStringLiteral("mode"), serverMode.isEmpty() ? QJsonValue() : QJsonValue(serverMode)},
        {QStringLiteral("started_at"), resultJson.value(QLatin1String("started_at"))},
        {QStringLiteral("concurrency"), concurrency},
        {QStringLiteral("duration_s"), seconds},
        {QStringLiteral("responses"), responses},
        {QStringLiteral("requests_per_s"), seconds > 0 ? responses / seconds : 0},
        {QStringLiteral("p50_ms"), p50},
        {QStringLiteral("p99_ms"), p99},
        {QStringLiteral("errors"), errors},
        {QStringLiteral("client_bound"), resultJson.value(QLatin1String("client_bound")).toBool()},
        {QStringLiteral("interrupted"), interrupted},
    };
    if (digests.size() > 1)
        detail.insert(QStringLiteral("stages"), digests);
    return detail;
}

QJsonObject benchmarkEventBody(const QJsonObject &detail)
{
    return {{QStringLiteral("kind"), QStringLiteral("benchmark")}, {QStringLiteral("detail"), detail}};
}

} // namespace taxicore::bench
