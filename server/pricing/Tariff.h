#pragma once

#include <QString>

namespace taxicore {

// What a trip costs: max(minimum, base + per_km·km + per_min·min) × surge.
// Defaults are a central-Gothenburg street fare in SEK. The surge fields shape the per-zone
// multiplier (pricing/SurgeModel.h): 1 + surgePerExcess·max(0, open/available − 1), capped at
// surgeCap, smoothed with the time constant surgeSmoothingS.
struct Tariff {
    QString currency = QStringLiteral("SEK");
    double base = 45.0;
    double perKm = 13.5;
    double perMinute = 5.5;
    double minimum = 95.0;
    double surgeCap = 2.5;
    double surgePerExcess = 0.5;
    double surgeSmoothingS = 30.0;
};

struct FareBreakdown {
    double base = 0;
    double distanceCharge = 0;
    double timeCharge = 0;
    double minimum = 0;
    double surge = 1.0;
    double total = 0;
};

FareBreakdown computeFare(const Tariff &tariff, double distanceM, double durationS, double surge = 1.0);

} // namespace taxicore
