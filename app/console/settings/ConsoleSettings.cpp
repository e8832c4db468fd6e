#include "ConsoleSettings.h"

#include "pricing/PricingBoard.h"
#include "pricing/TariffJson.h"
#include "runtime/ServerOptions.h"

#include <QCommandLineParser>
#include <QJsonObject>
#include <QSettings>

namespace {
const QString kMode = QStringLiteral("server/mode");
const QString kWorkers = QStringLiteral("server/workers");
const QString kThreads = QStringLiteral("server/threads");
const QString kPolicy = QStringLiteral("server/policy");
const QString kTariff = QStringLiteral("pricing/tariff");
const QString kDemandRate = QStringLiteral("pricing/demandRate");
// The same bounds as the flags (ServerOptions): a hand-edited file cannot start a broken server.
constexpr int kMaxWorkers = 16;
constexpr int kMaxThreads = 256;

// A stored whole number in [0, max], if there is one.
std::optional<int> storedCount(const QSettings &settings, const QString &key, int max)
{
    bool ok = false;
    const int value = settings.value(key).toInt(&ok);
    return ok && value >= 0 && value <= max ? std::optional<int>(value) : std::nullopt;
}
} // namespace

namespace ConsoleSettings {

void restore(taxicore::ServerOptions &options, const QCommandLineParser &parser)
{
    const QSettings settings;
    const auto flagGiven = [&parser](const char *name) { return parser.isSet(QString::fromLatin1(name)); };
    const QString mode = settings.value(kMode).toString();
    if (!flagGiven("mode") && taxicore::parseMode(mode))
        options.mode = mode;
    const QString policy = settings.value(kPolicy).toString();
    if (!flagGiven("policy") && taxicore::parsePolicy(policy))
        options.policy = policy;
    if (const auto workers = storedCount(settings, kWorkers, kMaxWorkers); workers && !flagGiven("workers"))
        options.workers = *workers;
    if (const auto threads = storedCount(settings, kThreads, kMaxThreads); threads && !flagGiven("threads"))
        options.threads = *threads;
    if (const auto stored = tariff(); stored && !flagGiven("tariff"))
        options.tariff = *stored;
    if (const auto rate = demandRate(); rate && !flagGiven("demand-rate"))
        options.demandRatePerMinute = *rate;
}

void saveRuntime(const taxicore::RuntimeSettings &runtime)
{
    QSettings settings;
    settings.setValue(kMode, taxicore::modeName(runtime.mode));
    settings.setValue(kWorkers, runtime.workers);
    settings.setValue(kThreads, runtime.threads);
    settings.setValue(kPolicy, taxicore::policyName(runtime.policy));
}

std::optional<taxicore::Tariff> tariff()
{
    const QVariant stored = QSettings().value(kTariff);
    if (!stored.isValid())
        return std::nullopt;
    // Read back through the tariff's own JSON reader: one set of field names and range checks.
    return taxicore::tariffFromJson(QJsonObject::fromVariantMap(stored.toMap())).tariff;
}

void saveTariff(const taxicore::Tariff &tariff)
{
    QSettings().setValue(kTariff, taxicore::tariffJson(tariff).toVariantMap());
}

std::optional<double> demandRate()
{
    bool ok = false;
    const double rate = QSettings().value(kDemandRate).toDouble(&ok);
    // The range the flag and PUT /admin/v1/demand accept: a file edited by hand gets no more.
    return ok && rate >= 0 && rate <= taxicore::PricingBoard::kMaxDemandRatePerMinute ? std::optional<double>(rate)
                                                                                      : std::nullopt;
}

void saveDemandRate(double ridesPerMinute)
{
    QSettings().setValue(kDemandRate, ridesPerMinute);
}

} // namespace ConsoleSettings
