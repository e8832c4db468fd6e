#pragma once
// Cluster nodes' fleet copies in one test process (cluster/ClusterFleet on a real redis-server and
// PostgreSQL): open one with its own region and cars on FleetLine's line, and wait until two
// copies hear each other over the channel.
#include "FleetLine.h"
#include "Wait.h"

#include "cluster/ClusterFleet.h"
#include "region/SharedRegion.h"

#include <QDebug>
#include <memory>

namespace taxicore::test {

// For a copy that never books: ClusterFleet needs a ledger URL for booking ids, and nothing
// connects to it until a booking asks for one.
inline const QString kUnusedLedgerUrl = QStringLiteral("postgresql://taxicore@127.0.0.1:1/unused");

struct FleetNode {
    std::unique_ptr<SharedRegion> region;
    std::unique_ptr<ClusterFleet> fleet; // null when it could not open (the reason is logged)
};

// A primary's copy (origin `origin`) with `cars` cars placed north of kCentre.
inline FleetNode openFleetNode(const QString &redisUrl, const QString &postgresUrl, quint64 origin, int cars,
                               int claimHoldMs = ClusterFleet::kClaimHoldMs)
{
    FleetNode node;
    QString error;
    node.region = SharedRegion::create(error);
    if (!node.region) {
        qWarning().noquote() << "cannot create the node's region:" << error;
        return node;
    }
    node.fleet = ClusterFleet::open(*node.region, {redisUrl, postgresUrl, true, origin, claimHoldMs}, &error);
    if (!node.fleet)
        qWarning().noquote() << "cannot open the node:" << error;
    else
        node.fleet->initialiseCars(cars, placeNorth);
    return node;
}

// Until both copies apply what the other sent: car `farthest` (moving it a little changes no
// booking near kCentre) is moved on each, up to 50 times. False when they never do.
inline bool copiesHearEachOther(ClusterFleet &a, ClusterFleet &b, int farthest)
{
    for (int round = 1; round <= 50; ++round) {
        const LatLng moved{placeNorth(farthest).lat, kCentre.lng + round * 1e-6};
        a.updatePosition(farthest, moved, 0, 0, false);
        b.updatePosition(farthest, moved, 0, 0, false);
        if (waitUntil([&] { return a.stats().applied > 0 && b.stats().applied > 0; }, 200))
            return true;
    }
    return false;
}

} // namespace taxicore::test
