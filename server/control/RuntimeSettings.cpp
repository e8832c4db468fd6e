#include "control/RuntimeSettings.h"

#include <QThread>

namespace taxicore {

QString modeName(RuntimeMode mode)
{
    switch (mode) {
    case RuntimeMode::Single:
        return QStringLiteral("single");
    case RuntimeMode::Pool:
        return QStringLiteral("pool");
    case RuntimeMode::Processes:
        return QStringLiteral("processes");
    }
    return QStringLiteral("single");
}

QString policyName(DistributionPolicy policy)
{
    switch (policy) {
    case DistributionPolicy::RoundRobin:
        return QStringLiteral("round-robin");
    case DistributionPolicy::Kernel:
        return QStringLiteral("kernel");
    case DistributionPolicy::LeastLoaded:
        return QStringLiteral("least-loaded");
    }
    return QStringLiteral("round-robin");
}

std::optional<RuntimeMode> parseMode(const QString &name)
{
    for (RuntimeMode m : {RuntimeMode::Single, RuntimeMode::Pool, RuntimeMode::Processes})
        if (modeName(m) == name)
            return m;
    return std::nullopt;
}

std::optional<DistributionPolicy> parsePolicy(const QString &name)
{
    for (DistributionPolicy p :
         {DistributionPolicy::RoundRobin, DistributionPolicy::Kernel, DistributionPolicy::LeastLoaded})
        if (policyName(p) == name)
            return p;
    return std::nullopt;
}

QJsonObject RuntimeSettings::toJson() const
{
    return {{QStringLiteral("mode"), modeName(mode)},
            {QStringLiteral("workers"), workers},
            {QStringLiteral("threads"), threads},
            {QStringLiteral("policy"), policyName(policy)}};
}

RuntimeSettings RuntimeSettings::resolved() const
{
    RuntimeSettings r = *this;
    const int cores = std::max(1, QThread::idealThreadCount());
    if (r.workers <= 0)
        r.workers = std::min(cores, kMaxWorkerProcesses);
    if (r.threads <= 0)
        r.threads = cores;
    return r;
}

std::optional<RuntimeSettings> RuntimeSettings::mergedWith(const QJsonObject &json, QString &error) const
{
    RuntimeSettings r = *this;
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString key = it.key();
        if (key == QStringLiteral("mode")) {
            const auto m = parseMode(it->toString());
            if (!m) {
                error = QStringLiteral("mode must be single, pool or processes");
                return std::nullopt;
            }
            r.mode = *m;
        } else if (key == QStringLiteral("policy")) {
            const auto p = parsePolicy(it->toString());
            if (!p) {
                error = QStringLiteral("policy must be round-robin, least-loaded or kernel");
                return std::nullopt;
            }
            r.policy = *p;
        } else if (key == QStringLiteral("workers") || key == QStringLiteral("threads")) {
            const int max = key == QStringLiteral("workers") ? kMaxWorkerProcesses : kMaxPoolThreads;
            const double v = it->toDouble(-1);
            // Range first: converting a double outside int's range to int is undefined.
            if (!it->isDouble() || v < 1 || v > max || v != double(int(v))) {
                error = QStringLiteral("%1 must be a whole number from 1 to %2").arg(key).arg(max);
                return std::nullopt;
            }
            (key == QStringLiteral("workers") ? r.workers : r.threads) = int(v);
        } else {
            error = QStringLiteral("unknown field %1 (expected mode, workers, threads, policy)").arg(key);
            return std::nullopt;
        }
    }
    return r;
}

} // namespace taxicore
