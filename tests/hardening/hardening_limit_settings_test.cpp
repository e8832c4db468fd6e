// The connection limits are server flags: bad values stop the server with exit status 2 and a
// message naming the flag; values given to the primary reach its worker processes; the server
// reports its open-file limit at start.

#include "ServingKit.h"

#include <QTest>
#include <memory>
#include <vector>

using namespace taxicore::test;

class LimitSettingsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void badLimitValuesExitWithStatus2_data();
    void badLimitValuesExitWithStatus2();
    void limitsReachEveryWorker();
    void maxConnectionsIsEnforced();
};

void LimitSettingsTest::badLimitValuesExitWithStatus2_data()
{
    QTest::addColumn<QString>("flag");
    QTest::addColumn<QString>("value");
    QTest::newRow("request line too small") << QStringLiteral("--max-request-line") << QStringLiteral("10");
    QTest::newRow("header bytes not a number") << QStringLiteral("--max-header-bytes") << QStringLiteral("lots");
    QTest::newRow("no header fields") << QStringLiteral("--max-header-fields") << QStringLiteral("0");
    QTest::newRow("negative body") << QStringLiteral("--max-body-bytes") << QStringLiteral("-1");
    QTest::newRow("header timeout too short") << QStringLiteral("--header-timeout-ms") << QStringLiteral("5");
    QTest::newRow("idle timeout fraction") << QStringLiteral("--idle-timeout-ms") << QStringLiteral("1.5");
    QTest::newRow("no connections") << QStringLiteral("--max-connections") << QStringLiteral("0");
    QTest::newRow("drain grace negative") << QStringLiteral("--drain-grace-ms") << QStringLiteral("-100");
}

void LimitSettingsTest::badLimitValuesExitWithStatus2()
{
    QFETCH(QString, flag);
    QFETCH(QString, value);
    const ServerProcess::RunResult result =
        ServerProcess::run({QStringLiteral("--port"), QStringLiteral("0"), flag, value});
    QVERIFY2(result.finished, "the server did not exit by itself");
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.contains(flag.toUtf8()), result.err.constData());
}

void LimitSettingsTest::limitsReachEveryWorker()
{
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("50"),
                          QStringLiteral("--max-request-line"), QStringLiteral("100"),
                          QStringLiteral("--max-header-fields"), QStringLiteral("3"),
                          QStringLiteral("--max-body-bytes"), QStringLiteral("10")});
    QString error;
    QVERIFY2(startServing(server, QStringLiteral("processes"), error), qPrintable(error));
    QVERIFY2(server.stderrText().contains("open-file limit"), server.stderrText().constData());
    // Fresh connections, round-robin over both workers: every one of them enforces the flags.
    for (int i = 0; i < 6; ++i) {
        HttpClient client(server.host(), server.port());
        TC_VERIFY_ERROR(client.get("/hello?" + QByteArray(120, 'a')), 414, "uri_too_long");
        HttpClient fields(server.host(), server.port());
        TC_VERIFY_ERROR(fields.request("GET", "/hello", {}, {{"X-A", "1"}, {"X-B", "2"}, {"X-C", "3"}, {"X-D", "4"}}),
                        431, "too_many_headers");
        HttpClient body(server.host(), server.port());
        TC_VERIFY_ERROR(body.post("/api/v1/bookings", QByteArray(20, 'x')), 413, "body_too_large");
        HttpClient fine(server.host(), server.port());
        TC_VERIFY_STATUS(fine.get("/hello"), 200);
    }
}

void LimitSettingsTest::maxConnectionsIsEnforced()
{
    constexpr int kMax = 5;
    ServerProcess server(
        {QStringLiteral("--cars"), QStringLiteral("50"), QStringLiteral("--max-connections"), QString::number(kMax)});
    QVERIFY2(server.start(), qPrintable(server.error()));
    std::vector<std::unique_ptr<HttpClient>> open;
    for (int i = 0; i < kMax; ++i) {
        open.push_back(std::make_unique<HttpClient>(server.host(), server.port()));
        TC_VERIFY_STATUS(open.back()->get("/hello"), 200);
    }
    HttpClient oneTooMany(server.host(), server.port());
    TC_VERIFY_ERROR(oneTooMany.get("/hello"), 503, "too_many_connections");
    open.back()->disconnect(); // a slot frees up: the next client is served again
    open.pop_back();
    // (Not QTRY_VERIFY: it evaluates its condition once more after success, and each try connects.)
    QVERIFY(waitUntil([&] { return HttpClient(server.host(), server.port()).get("/hello").status == 200; }, 10'000));
}

QTEST_GUILESS_MAIN(LimitSettingsTest)
#include "hardening_limit_settings_test.moc"
