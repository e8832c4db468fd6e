// The client address behind a reverse proxy (issue 17): with --trusted-proxy 127.0.0.1/32 a real
// nginx (deploy/nginx/taxicore.conf.in, tests/support/NginxKit.h) in front of a real
// taxicore-server makes X-Forwarded-For count: two clients that differ only in it get separate
// booking rate-limit buckets, and no forwarded request gets the loopback bypass (nginx is on
// loopback, so before this every client behind it was a trusted loopback client). Without the
// flag, or from a peer outside it, the header is ignored: the peer address is the client. A
// malformed header from a trusted proxy → 400 invalid_forwarded_for. In every mode (the worker
// processes get the flag on their command line).

#include "HardeningKit.h"
#include "NginxKit.h"
#include "RequireTool.h"
#include "ServingKit.h"

using namespace taxicore::test;
using namespace taxicore::test::hardening;

namespace {

constexpr int kBurst = 2;

bool admitted(const HttpResponse &r)
{
    return r.complete && (r.status == 201 || r.status == 409); // booked, or no car: not limited
}

// A booking sent to host:port (nginx or the server), with an X-Forwarded-For header when given.
HttpResponse bookVia(const QString &host, quint16 port, int n, const QByteArray &forwardedFor = {})
{
    const QJsonObject body{
        {"rider_id", QStringLiteral("proxy-%1").arg(n)},
        {"pickup", QJsonObject{{"lat", 57.69 + 0.003 * (n % 10)}, {"lng", 11.94 + 0.005 * (n % 7)}}}};
    Headers headers;
    if (!forwardedFor.isNull())
        headers.append({"X-Forwarded-For", forwardedFor});
    HttpClient http(host, port, 10'000);
    return http.request("POST", "/api/v1/bookings", QJsonDocument(body).toJson(QJsonDocument::Compact), headers);
}

// Sends bookings until one is refused; the count admitted (at most `limit` + 1 tries).
int admittedUntil429(const QString &host, quint16 port, int &n, const QByteArray &forwardedFor, int limit = 6)
{
    int count = 0;
    for (int i = 0; i <= limit; ++i) {
        const HttpResponse r = bookVia(host, port, n++, forwardedFor);
        if (r.status == 429)
            return count;
        if (!admitted(r))
            return -1000; // neither admitted nor limited: the caller's QCOMPARE shows it
        ++count;
    }
    return count;
}

QStringList limitedArgs(const QString &mode, const QStringList &more)
{
    // --trust-loopback stays on (the default): what is checked is that a forwarded request does
    // not get it, while a direct loopback client still does.
    return QStringList{QStringLiteral("--mode"),          mode,
                       QStringLiteral("--workers"),       QStringLiteral("2"),
                       QStringLiteral("--threads"),       QStringLiteral("2"),
                       QStringLiteral("--cars"),          QStringLiteral("100"),
                       QStringLiteral("--admin-token"),   QString::fromLatin1(kAdminToken),
                       QStringLiteral("--booking-burst"), QString::number(kBurst),
                       QStringLiteral("--booking-rate"),  QStringLiteral("1")}
           + more;
}

void addModes()
{
    QTest::addColumn<QString>("mode");
    for (const char *mode : {"single", "pool", "processes"})
        QTest::newRow(mode) << QString::fromLatin1(mode);
}

} // namespace

class TrustedProxyTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void clientsBehindNginxGetTheirOwnBuckets_data() { addModes(); }
    void clientsBehindNginxGetTheirOwnBuckets()
    {
        QFETCH(QString, mode);
        TC_REQUIRE_TOOL(!NginxProcess::program().isEmpty(), "nginx not found (apt-get install nginx-light)");
        ServerProcess server(limitedArgs(mode, {QStringLiteral("--trusted-proxy"), QStringLiteral("127.0.0.1/32")}));
        QString error;
        QVERIFY2(startServing(server, mode, error), qPrintable(error));
        NginxProcess nginx({server.port()});
        QVERIFY2(nginx.start(), qPrintable(nginx.error()));

        int n = 0;
        // Two clients differing only in X-Forwarded-For: a bucket each, and neither is exempt.
        QCOMPARE(admittedUntil429(nginx.host(), nginx.port(), n, "203.0.113.10"), kBurst);
        QCOMPARE(admittedUntil429(nginx.host(), nginx.port(), n, "203.0.113.20"), kBurst);
        // nginx's own loopback client (no header of its own; nginx writes 127.0.0.1): forwarded,
        // so limited too, and no operator.
        QCOMPARE(admittedUntil429(nginx.host(), nginx.port(), n, QByteArray()), kBurst);
        HttpClient viaProxy(nginx.host(), nginx.port(), 10'000);
        TC_VERIFY_ERROR(viaProxy.get("/admin/v1/workers"), 401, "admin_token_required");
        // IPv6 clients are told apart the same way.
        QCOMPARE(admittedUntil429(nginx.host(), nginx.port(), n, "2001:db8::7"), kBurst);
        // Claiming a trusted address buys nothing: every entry is then trusted, so the client is
        // the leftmost, 127.0.0.1, whose bucket the header-less client above already spent.
        QCOMPARE(admittedUntil429(nginx.host(), nginx.port(), n, "127.0.0.1"), 0);

        // A direct loopback client (no proxy header) is still the trusted local operator.
        for (int i = 0; i < kBurst + 2; ++i) {
            const HttpResponse r = bookVia(server.host(), server.port(), n++);
            QVERIFY2(admitted(r), r.describe().constData());
        }
        HttpClient direct(server.host(), server.port(), 10'000);
        TC_VERIFY_STATUS(direct.get("/admin/v1/workers"), 200);
        QVERIFY2(nginx.stop(), nginx.errorLog().constData());
        QCOMPARE(server.stop(), 0);
    }

    void forwardedForFromAnUntrustedPeerIsIgnored_data()
    {
        QTest::addColumn<QStringList>("flags");
        QTest::newRow("no --trusted-proxy") << QStringList{};
        QTest::newRow("peer outside the range")
            << QStringList{QStringLiteral("--trusted-proxy"), QStringLiteral("192.0.2.0/24,2001:db8::/32")};
    }
    void forwardedForFromAnUntrustedPeerIsIgnored()
    {
        QFETCH(QStringList, flags);
        ServerProcess server(limitedArgs(
            QStringLiteral("single"), flags + QStringList{QStringLiteral("--trust-loopback"), QStringLiteral("off")}));
        QVERIFY2(server.start(), qPrintable(server.error()));
        int n = 0;
        // The same peer under two claimed addresses: one bucket, the peer's.
        QCOMPARE(admittedUntil429(server.host(), server.port(), n, "203.0.113.10"), kBurst);
        QCOMPARE(admittedUntil429(server.host(), server.port(), n, "203.0.113.20"), 0);
        QCOMPARE(admittedUntil429(server.host(), server.port(), n, "not an address"), 0); // ignored, not 400
        QCOMPARE(server.stop(), 0);
    }

    void malformedForwardedForFromATrustedProxyIs400()
    {
        TC_REQUIRE_TOOL(!NginxProcess::program().isEmpty(), "nginx not found (apt-get install nginx-light)");
        ServerProcess server(
            limitedArgs(QStringLiteral("single"), {QStringLiteral("--trusted-proxy"), QStringLiteral("127.0.0.1")}));
        QVERIFY2(server.start(), qPrintable(server.error()));
        NginxProcess nginx({server.port()});
        QVERIFY2(nginx.start(), qPrintable(nginx.error()));
        int n = 0;
        for (const QByteArray &bad : {QByteArray("not-an-address"), QByteArray("1.2.3.4.5"), QByteArray("unknown"),
                                      QByteArray("203.0.113.1,,")}) {
            const HttpResponse r = bookVia(nginx.host(), nginx.port(), n++, bad);
            TC_VERIFY_ERROR(r, 400, "invalid_forwarded_for");
        }
        // Forms other proxies write (a port, IPv6 in brackets) are addresses, and an entry left of
        // the client nginx names is the client's own claim, never read.
        QVERIFY(admitted(bookVia(nginx.host(), nginx.port(), n++, "198.51.100.1:5678")));
        QVERIFY(admitted(bookVia(nginx.host(), nginx.port(), n++, "[2001:db8::9]:443")));
        QVERIFY(admitted(bookVia(nginx.host(), nginx.port(), n++, "garbage, 198.51.100.2")));
        // The refused requests charged no bucket: 198.51.100.1 still has one booking of its burst.
        QCOMPARE(admittedUntil429(nginx.host(), nginx.port(), n, "198.51.100.1"), kBurst - 1);
        QVERIFY2(nginx.stop(), nginx.errorLog().constData());
        QCOMPARE(server.stop(), 0);
    }

    // A trusted proxy that passes an empty X-Forwarded-For on: the header says nothing of the
    // client, so it is malformed like any entry that is no address. It was read as no header at
    // all, so the request counted as the proxy's own: a loopback proxy's made it a trusted
    // loopback client (operator routes without a token, no rate limit).
    void anEmptyForwardedForFromATrustedProxyIs400_data() { addModes(); }
    void anEmptyForwardedForFromATrustedProxyIs400()
    {
        QFETCH(QString, mode);
        ServerProcess server(limitedArgs(mode, {QStringLiteral("--trusted-proxy"), QStringLiteral("127.0.0.1")}));
        QVERIFY2(server.start(), qPrintable(server.error()));
        if (mode == QStringLiteral("processes"))
            QVERIFY2(rt::waitForWorkersTakingConnections(server, 2, 20'000), qPrintable(rt::describeEvents(server)));
        for (const QByteArray &empty : {QByteArray(""), QByteArray(" ")}) {
            HttpClient http(server.host(), server.port(), 10'000);
            TC_VERIFY_ERROR(http.request("GET", "/admin/v1/runtime", {}, {{"X-Forwarded-For", empty}}), 400,
                            "invalid_forwarded_for");
            TC_VERIFY_ERROR(http.request("GET", "/api/v1/trips", {}, {{"X-Forwarded-For", empty}}), 400,
                            "invalid_forwarded_for");
            int n = 0;
            TC_VERIFY_ERROR(bookVia(server.host(), server.port(), n, empty), 400, "invalid_forwarded_for");
        }
        // Without the header the proxy's own request is still this machine's (loopback trust on).
        HttpClient http(server.host(), server.port(), 10'000);
        TC_VERIFY_STATUS(http.get("/admin/v1/runtime"), 200);
        QCOMPARE(server.stop(), 0);
    }

    void badTrustedProxyFlagIsRefused()
    {
        for (const QString &bad : {QStringLiteral("10.0.0.0/33"), QStringLiteral("example.com"),
                                   QStringLiteral("127.0.0.1/32,"), QStringLiteral("fe80::1%lo/64")}) {
            const ServerProcess::RunResult r = ServerProcess::run({QStringLiteral("--trusted-proxy"), bad});
            QVERIFY2(r.finished && r.exitCode == 2, r.err.constData());
            QVERIFY2(r.err.contains("--trusted-proxy"), r.err.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TrustedProxyTest)
#include "hardening_trusted_proxy_test.moc"
