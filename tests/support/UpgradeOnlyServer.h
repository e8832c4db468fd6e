#pragma once
// A QAbstractHttpServer for tests of the live feed alone (http/LiveFeed): WebSocket upgrades on the
// feed's path pass, with nothing written (as HttpService lets them through to the feed); everything
// else is 404.
#include "http/LiveFeed.h"

#include <QAbstractHttpServer>
#include <QHttpServerRequest>
#include <QTcpSocket>

namespace taxicore::test {

class UpgradeOnlyServer : public QAbstractHttpServer {
public:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override
    {
        if (LiveFeed::isUpgradeRequest(request))
            return true;
        socket->write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        return true;
    }
    void missingHandler(const QHttpServerRequest &, QTcpSocket *socket) override { socket->disconnectFromHost(); }
};

} // namespace taxicore::test
