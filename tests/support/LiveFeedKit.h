#pragma once
// The live feed (http/LiveFeed) in-process, for its own tests: a real SharedRegion, a fleet of cars
// on a grid, an UpgradeOnlyServer on a free local port and the feed over them, without HttpService.
// A test class derives from LiveFeedFixture next to QObject.

#include "UpgradeOnlyServer.h"
#include "fleet/SharedMemoryFleet.h"
#include "http/LiveFeed.h"
#include "region/SharedRegion.h"

#include <QTcpServer>
#include <QUrl>
#include <memory>

namespace taxicore::test {

// `count` cars from central Gothenburg (57.70, 11.96), `perRow` a row, `stepDeg` apart.
struct CarGrid {
    int count = 0;
    int perRow = 1;
    double stepDeg = 0.001;
};

class LiveFeedFixture {
protected:
    // False, with `error`, when the region cannot be created or no local port listens.
    bool startFeed(const CarGrid &grid, QString &error)
    {
        m_region = SharedRegion::create(error);
        if (!m_region)
            return false;
        m_fleet = std::make_unique<SharedMemoryFleet>(*m_region);
        m_fleet->initialiseCars(grid.count, [grid](int id) {
            return LatLng{57.70 + (id % grid.perRow) * grid.stepDeg, 11.96 + (id / grid.perRow) * grid.stepDeg};
        });
        m_server = std::make_unique<UpgradeOnlyServer>();
        auto listener = std::make_unique<QTcpServer>();
        if (!listener->listen(QHostAddress::LocalHost, 0)) {
            error = listener->errorString();
            return false;
        }
        m_url = QUrl(QStringLiteral("ws://127.0.0.1:%1/api/v1/stream").arg(listener->serverPort()));
        m_server->bind(listener.release()); // the server keeps it
        m_feed = std::make_unique<LiveFeed>(*m_server, *m_fleet);
        return true;
    }

    // The feed first, then what it stands on.
    void stopFeed()
    {
        m_feed.reset();
        m_server.reset();
        m_fleet.reset();
        m_region.reset();
    }

    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<SharedMemoryFleet> m_fleet;
    std::unique_ptr<UpgradeOnlyServer> m_server;
    std::unique_ptr<LiveFeed> m_feed;
    QUrl m_url; // ws://127.0.0.1:PORT/api/v1/stream
};

} // namespace taxicore::test
