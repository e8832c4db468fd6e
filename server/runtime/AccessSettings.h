#pragma once

#include "region/RegionLayout.h"

#include <QByteArray>

namespace taxicore {

// Operator access and booking-rate settings as the primary publishes them in the region for
// its workers (which are started without them on their command line: no token in `ps`).
struct AccessSettings {
    QByteArray adminToken;
    QByteArray deviceToken; // car devices' bearer token for position reports
    bool trustLoopback = true;
    double bookingRatePerMinute = 60;
    double bookingBurst = 20;
    int openBookingsPerClient = 10; // 0: no limit
};

// Primary only, before any worker starts.
void publishAccessSettings(AccessBlock &block, const AccessSettings &settings);
AccessSettings readAccessSettings(const AccessBlock &block);

} // namespace taxicore
