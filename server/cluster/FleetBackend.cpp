#include "cluster/FleetBackend.h"

#include "cluster/ClusterFleet.h"

namespace taxicore {

bool isClusterFleetUrl(const QString &fleetUrl)
{
    return fleetUrl.startsWith(QStringLiteral("redis://"));
}

std::unique_ptr<FleetStore> openFleetBackend(SharedRegion &region, const FleetBackendOptions &options, QString *error)
{
    if (!isClusterFleetUrl(options.fleetUrl))
        return FleetStore::open(region, options.fleetUrl, error);
    ClusterFleet::Options cluster;
    cluster.fleetUrl = options.fleetUrl;
    cluster.ledgerUrl = options.ledgerUrl;
    cluster.primary = options.primary;
    cluster.origin = options.origin;
    return ClusterFleet::open(region, cluster, error);
}

} // namespace taxicore
