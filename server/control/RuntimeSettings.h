#pragma once

#include <QJsonObject>
#include <QString>
#include <optional>

namespace taxicore {

enum class RuntimeMode : uint32_t { Single = 0, Pool = 1, Processes = 2 };
// Processes mode: which worker serves a connection the primary accepts. RoundRobin takes turns;
// LeastLoaded gives it to the worker serving the fewest connections and requests now; Kernel lets
// each worker accept on its own SO_REUSEPORT listener. The numbers are in the region: append only.
enum class DistributionPolicy : uint32_t { RoundRobin = 0, Kernel = 1, LeastLoaded = 2 };

// How the server runs: the execution model and its sizes. Switchable while serving.
struct RuntimeSettings {
    RuntimeMode mode = RuntimeMode::Single;
    int workers = 0; // processes mode; 0 = cores
    int threads = 0; // pool mode; 0 = cores
    DistributionPolicy policy = DistributionPolicy::RoundRobin;

    QJsonObject toJson() const;
    // Applies the fields present in `json` on top of this; an error names the bad field.
    std::optional<RuntimeSettings> mergedWith(const QJsonObject &json, QString &error) const;
    // Zero sizes replaced by the number of cores.
    RuntimeSettings resolved() const;
    bool operator==(const RuntimeSettings &) const = default;
};

QString modeName(RuntimeMode mode);
QString policyName(DistributionPolicy policy);
std::optional<RuntimeMode> parseMode(const QString &name);
std::optional<DistributionPolicy> parsePolicy(const QString &name);

inline constexpr int kMaxWorkerProcesses = 16;
inline constexpr int kMaxPoolThreads = 256;

} // namespace taxicore
