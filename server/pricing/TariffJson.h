#pragma once

#include "pricing/Tariff.h"

#include <QJsonObject>
#include <QString>
#include <optional>

namespace taxicore {

// The tariff as JSON, the same in a --tariff file and in GET/PUT /admin/v1/tariff:
// {"currency","base","per_km","per_min","minimum","surge_cap","surge_per_excess","surge_smoothing_s"}.
QJsonObject tariffJson(const Tariff &tariff);

struct TariffParse {
    std::optional<Tariff> tariff; // empty on error
    QString error;                // names the field and what it must be
};
// Fields left out keep their value in `start` (the defaults for a file, the tariff in force for a
// PUT); an unknown field or a value out of range is an error.
TariffParse tariffFromJson(const QJsonObject &json, const Tariff &start = {});

// Reads a --tariff file; errors are "<path>: <problem>".
TariffParse loadTariffFile(const QString &path);

} // namespace taxicore
