#include "runtime/PricingOptions.h"

#include "pricing/PricingBoard.h"
#include "pricing/TariffJson.h"
#include "runtime/ServerOptions.h"

#include <QCommandLineParser>
#include <cmath>

namespace taxicore {

void addPricingOptions(QCommandLineParser &parser)
{
    parser.addOptions({
        {QStringLiteral("tariff"),
         QStringLiteral("Tariff JSON file: currency, base, per_km, per_min, minimum, surge_cap, surge_per_excess, "
                        "surge_smoothing_s (default: the built-in SEK tariff)."),
         QStringLiteral("file")},
        {QStringLiteral("demand-rate"),
         QStringLiteral("Rides per minute the demand generator books (default 0 = off)."), QStringLiteral("n"),
         QStringLiteral("0")},
    });
}

bool readPricingOptions(const QCommandLineParser &parser, ServerOptions &options, QString &error)
{
    options.tariffPath = parser.value(QStringLiteral("tariff"));
    if (!options.tariffPath.isEmpty()) {
        const TariffParse parsed = loadTariffFile(options.tariffPath);
        if (!parsed.tariff) {
            error = QStringLiteral("--tariff %1").arg(parsed.error);
            return false;
        }
        options.tariff = *parsed.tariff;
    }
    bool ok = false;
    options.demandRatePerMinute = parser.value(QStringLiteral("demand-rate")).toDouble(&ok);
    if (!ok || !std::isfinite(options.demandRatePerMinute) || options.demandRatePerMinute < 0
        || options.demandRatePerMinute > PricingBoard::kMaxDemandRatePerMinute) {
        error = QStringLiteral("--demand-rate must be a number of rides per minute from 0 to %1, not \"%2\"")
                    .arg(PricingBoard::kMaxDemandRatePerMinute)
                    .arg(parser.value(QStringLiteral("demand-rate")));
        return false;
    }
    return true;
}

} // namespace taxicore
