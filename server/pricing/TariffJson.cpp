#include "pricing/TariffJson.h"

#include <QFile>
#include <QJsonDocument>
#include <QRegularExpression>
#include <cmath>

namespace taxicore {

namespace {

// A file bigger than this is not a tariff.
constexpr qint64 kMaxTariffFileBytes = 64 * 1024;
constexpr double kMaxMoney = 1e6;

struct NumberField {
    const char *name;
    double Tariff::*member;
    double min;
    double max;
};

constexpr NumberField kNumberFields[] = {
    {"base", &Tariff::base, 0, kMaxMoney},
    {"per_km", &Tariff::perKm, 0, kMaxMoney},
    {"per_min", &Tariff::perMinute, 0, kMaxMoney},
    {"minimum", &Tariff::minimum, 0, kMaxMoney},
    {"surge_cap", &Tariff::surgeCap, 1, 10},
    {"surge_per_excess", &Tariff::surgePerExcess, 0, 10},
    {"surge_smoothing_s", &Tariff::surgeSmoothingS, 0, 3600},
};

} // namespace

QJsonObject tariffJson(const Tariff &tariff)
{
    QJsonObject o{{QStringLiteral("currency"), tariff.currency}};
    for (const NumberField &field : kNumberFields)
        o.insert(QLatin1StringView(field.name), tariff.*field.member);
    return o;
}

TariffParse tariffFromJson(const QJsonObject &json, const Tariff &start)
{
    TariffParse result;
    Tariff tariff = start;
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString key = it.key();
        if (key == QStringLiteral("currency")) {
            static const QRegularExpression code(QStringLiteral("^[A-Z]{3}$"));
            if (!it.value().isString() || !code.match(it.value().toString()).hasMatch()) {
                result.error = QStringLiteral("field \"currency\" must be a three-letter code such as \"SEK\"");
                return result;
            }
            tariff.currency = it.value().toString();
            continue;
        }
        const NumberField *field = nullptr;
        for (const NumberField &f : kNumberFields)
            if (key == QLatin1StringView(f.name))
                field = &f;
        if (!field) {
            result.error = QStringLiteral("unknown field \"%1\" (known: currency, base, per_km, per_min, minimum, "
                                          "surge_cap, surge_per_excess, surge_smoothing_s)")
                               .arg(key);
            return result;
        }
        const double value = it.value().toDouble(std::nan(""));
        if (!it.value().isDouble() || !std::isfinite(value) || value < field->min || value > field->max) {
            result.error =
                QStringLiteral("field \"%1\" must be a number from %2 to %3").arg(key).arg(field->min).arg(field->max);
            return result;
        }
        tariff.*field->member = value;
    }
    result.tariff = tariff;
    return result;
}

TariffParse loadTariffFile(const QString &path)
{
    TariffParse result;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        result.error = QStringLiteral("%1: cannot read the tariff file: %2").arg(path, file.errorString());
        return result;
    }
    if (file.size() > kMaxTariffFileBytes) {
        result.error = QStringLiteral("%1: a tariff file is at most %2 bytes").arg(path).arg(kMaxTariffFileBytes);
        return result;
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        result.error = QStringLiteral("%1: not valid JSON at byte %2: %3")
                           .arg(path)
                           .arg(parseError.offset)
                           .arg(parseError.errorString());
        return result;
    }
    if (!doc.isObject()) {
        result.error = QStringLiteral("%1: the tariff must be a JSON object").arg(path);
        return result;
    }
    result = tariffFromJson(doc.object());
    if (!result.error.isEmpty())
        result.error = QStringLiteral("%1: %2").arg(path, result.error);
    return result;
}

} // namespace taxicore
