// The table behind --max-connections-per-client (http/ConnectionsPerClient.h), in-process: which
// addresses count as one, who is not counted, a count given back when its socket is destroyed and
// all of a dead worker's at once, and an address that finds the table full. The end-to-end
// behaviour against real servers in every mode is hostile_connections_per_client_test.

#include "http/ClientAddress.h"
#include "http/ConnectionsPerClient.h"
#include "http/OperatorAccess.h"

#include <QObject>
#include <QTest>
#include <memory>
#include <vector>

using taxicore::AccessBlock;
using taxicore::ConnectionsPerClient;

namespace {

QHostAddress address(const char *text)
{
    return QHostAddress(QString::fromLatin1(text));
}

// Value-initialised: zero, as the region's memfd is.
std::unique_ptr<AccessBlock> freshBlock()
{
    auto block = std::make_unique<AccessBlock>();
    block->connectionsSeed = 0x9e3779b97f4a7c15ull;
    return block;
}

void trust(bool loopback, const QString &proxies = {})
{
    taxicore::setOperatorAccessPolicy({QByteArray(), loopback, QByteArray()});
    taxicore::TrustedProxies trusted;
    QString error;
    if (!proxies.isEmpty() && !trusted.add(proxies, error))
        qFatal("%s", qPrintable(error));
    taxicore::setTrustedProxies(trusted);
}

} // namespace

class ConnectionTableTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { trust(true); }

    void addressesThatCountAsOne()
    {
        const auto key = [](const char *text) {
            const Q_IPV6ADDR k = ConnectionsPerClient::keyOf(address(text));
            return QByteArray(reinterpret_cast<const char *>(k.c), 16);
        };
        QCOMPARE(key("::ffff:203.0.113.7"), key("203.0.113.7"));
        QVERIFY(key("203.0.113.7") != key("203.0.113.8"));
        QCOMPARE(key("2001:db8:1:2::1"), key("2001:db8:1:2:ffff:eeee:dddd:9")); // one /64
        QVERIFY(key("2001:db8:1:2::1") != key("2001:db8:1:3::1"));
    }

    void whoIsNotCounted()
    {
        trust(true, QStringLiteral("10.0.0.0/8"));
        QVERIFY(ConnectionsPerClient::isExempt(address("127.0.0.2")));
        QVERIFY(ConnectionsPerClient::isExempt(address("::ffff:127.0.0.1")));
        QVERIFY(ConnectionsPerClient::isExempt(address("::1")));
        QVERIFY(ConnectionsPerClient::isExempt(address("10.1.2.3")));
        QVERIFY(ConnectionsPerClient::isExempt(address("::ffff:10.1.2.3")));
        QVERIFY(!ConnectionsPerClient::isExempt(address("203.0.113.7")));
        trust(false, QStringLiteral("127.0.0.5"));
        QVERIFY(!ConnectionsPerClient::isExempt(address("127.0.0.2")));
        QVERIFY(ConnectionsPerClient::isExempt(address("127.0.0.5")));
    }

    void countsUntilTheLimitAndGivesBackOnDestruction()
    {
        trust(true);
        auto block = freshBlock();
        ConnectionsPerClient worker1(*block, 1, 3);
        ConnectionsPerClient worker2(*block, 2, 3);
        const QHostAddress hog = address("203.0.113.7");
        std::vector<std::unique_ptr<QObject>> sockets;
        for (ConnectionsPerClient *table : {&worker1, &worker2, &worker1}) {
            sockets.push_back(std::make_unique<QObject>());
            QVERIFY(table->admit(hog, sockets.back().get()));
        }
        QCOMPARE(ConnectionsPerClient::openConnections(*block, hog), 3);
        QObject refused;
        QVERIFY(!worker2.admit(hog, &refused));
        QVERIFY(!worker1.admit(address("::ffff:203.0.113.7"), &refused));
        QCOMPARE(ConnectionsPerClient::openConnections(*block, hog), 3); // a refusal counts nothing
        QObject other;
        QVERIFY(worker2.admit(address("203.0.113.8"), &other));
        sockets.pop_back(); // destroyed: its count is given back
        QCOMPARE(ConnectionsPerClient::openConnections(*block, hog), 2);
        sockets.push_back(std::make_unique<QObject>());
        QVERIFY(worker2.admit(hog, sockets.back().get()));
        QVERIFY(!worker1.admit(hog, &refused));
        sockets.clear();
        QCOMPARE(ConnectionsPerClient::openConnections(*block, hog), 0);
        // Loopback is trusted here: never counted, never refused.
        std::vector<std::unique_ptr<QObject>> local(10);
        for (auto &socket : local) {
            socket = std::make_unique<QObject>();
            QVERIFY(worker1.admit(address("127.0.0.1"), socket.get()));
        }
        QCOMPARE(ConnectionsPerClient::openConnections(*block, address("127.0.0.1")), 0);
    }

    void aDeadWorkersCountsAreGivenBack()
    {
        trust(true);
        auto block = freshBlock();
        ConnectionsPerClient worker1(*block, 1, 4);
        ConnectionsPerClient worker2(*block, 2, 4);
        const QHostAddress hog = address("198.51.100.1");
        auto killed = std::make_unique<QObject>(); // worker 1's sockets: its process is killed with -9
        QVERIFY(worker1.admit(hog, killed.get()));
        QVERIFY(worker1.admit(hog, killed.get()));
        QObject alive;
        QVERIFY(worker2.admit(hog, &alive));
        QCOMPARE(ConnectionsPerClient::openConnections(*block, hog), 3);
        QObject fourth, refused;
        QVERIFY(worker2.admit(hog, &fourth));
        QVERIFY(!worker2.admit(hog, &refused));
        // The supervisor saw worker 1 die: its counts are given back at once.
        ConnectionsPerClient::releaseSlot(*block, 1);
        QCOMPARE(ConnectionsPerClient::openConnections(*block, hog), 2);
        QVERIFY(worker2.admit(hog, &refused)); // room again
        QCOMPARE(ConnectionsPerClient::openConnections(*block, hog), 3);
        // Its column is empty: a count given back after that (only an object destroyed in this
        // test; a dead process gives back nothing) takes nothing from the others.
        killed.reset();
        QCOMPARE(ConnectionsPerClient::openConnections(*block, hog), 3);
        // The slot's new process counts from zero.
        ConnectionsPerClient replacement(*block, 1, 4);
        QObject fresh, late;
        QVERIFY(replacement.admit(hog, &fresh));
        QVERIFY(!replacement.admit(hog, &late));
        QCOMPARE(ConnectionsPerClient::openConnections(*block, hog), 4);
    }

    void anAddressThatFindsTheTableFullIsServedUncounted()
    {
        trust(true);
        auto block = freshBlock();
        ConnectionsPerClient table(*block, 0, 2);
        QObject holder;
        int admitted = 0;
        // Distinct addresses, each with one connection, until every entry is taken.
        for (quint32 i = 0; admitted < taxicore::kConnectionClients && i < 4 * taxicore::kConnectionClients; ++i) {
            const QHostAddress client(quint32(0x0a000000) + i + 1); // 10.x.y.z, not trusted here
            if (table.admit(client, &holder) && ConnectionsPerClient::openConnections(*block, client) == 1)
                ++admitted;
        }
        QCOMPARE(admitted, taxicore::kConnectionClients);
        const QHostAddress late = address("203.0.113.99");
        QObject a, b, c;
        QVERIFY(table.admit(late, &a));
        QVERIFY(table.admit(late, &b));
        QVERIFY(table.admit(late, &c)); // over the limit of 2: no entry to count it in
        QCOMPARE(ConnectionsPerClient::openConnections(*block, late), 0);
    }
};

QTEST_GUILESS_MAIN(ConnectionTableTest)
#include "hardening_connection_table_test.moc"
