// The live feed when the server stops (SIGTERM), against a real taxicore-server: a subscribed
// client is closed with 1001 (going away), so the rider page can tell a server going away from a
// lost connection. The feed used to abort its sockets: the client saw the connection drop with
// no close frame.

#include "RuntimeKit.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QWebSocket>

using namespace taxicore::test;

class WebFeedShutdownTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void clientIsToldTheServerGoesAway_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::newRow("single") << QStringLiteral("single");
        QTest::newRow("pool") << QStringLiteral("pool");
        QTest::newRow("processes") << QStringLiteral("processes");
    }

    void clientIsToldTheServerGoesAway()
    {
        QFETCH(QString, mode);
        ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("1"),
                              QStringLiteral("--cars"), QStringLiteral("20")});
        QVERIFY2(server.start(), qPrintable(server.error()));
        if (mode == QStringLiteral("processes")) // the feed is then a worker's
            QVERIFY2(rt::waitForWorkersTakingConnections(server, 1, 20'000), qPrintable(rt::describeEvents(server)));
        QWebSocket feed;
        int updates = 0;
        bool closed = false;
        connect(&feed, &QWebSocket::textMessageReceived, this, [&](const QString &text) {
            updates += QJsonDocument::fromJson(text.toUtf8()).object().value("type") == QLatin1String("update");
        });
        connect(&feed, &QWebSocket::disconnected, this, [&] { closed = true; });
        feed.open(QUrl(QStringLiteral("ws://%1:%2/api/v1/stream").arg(server.host()).arg(server.port())));
        QVERIFY2(waitUntil([&] { return feed.state() == QAbstractSocket::ConnectedState; }, 5000),
                 "the feed did not connect");
        feed.sendTextMessage(QStringLiteral(R"({"subscribe":{"lat":57.7075,"lng":11.9675}})"));
        QVERIFY2(waitUntil([&] { return updates > 0; }, 5000), "no update");

        QVERIFY(server.terminate());
        QVERIFY2(waitUntil([&] { return closed; }, 15'000), "the client was not closed when the server stopped");
        QCOMPARE(feed.closeCode(), QWebSocketProtocol::CloseCodeGoingAway);
        QVERIFY2(feed.closeReason().contains(QStringLiteral("shutting down")), qPrintable(feed.closeReason()));
        QVERIFY(server.waitForExit(15'000));
        QCOMPARE(server.exitCode(), 0);
    }
};

QTEST_GUILESS_MAIN(WebFeedShutdownTest)
#include "web_feed_shutdown_test.moc"
