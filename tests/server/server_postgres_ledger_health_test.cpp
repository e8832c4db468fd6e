// A PostgreSQL ledger's outage shows where the SQLite ledger's does: with PostgreSQL stopped, a
// booking is refused (503 ledger_unavailable), GET /healthz says "degraded" with the ledger
// "failing", /metrics counts the failing ledger, and the server's log says once that the outage
// began; with PostgreSQL back, the next commit clears all of that and the log says so. The old code
// answered "ok" through the whole outage. Single process and processes mode (each worker publishes
// its ledger's health in the shared region, so whichever process answers /healthz sees it).
// A worker that gets no booking once PostgreSQL is back still recovers: its writer probes the
// database while failing and idle, so /healthz does not stay "degraded" on a quiet node.
#include "ApiAssert.h"
#include "HttpClient.h"
#include "PostgresKit.h"
#include "RequireTool.h"
#include "ServerProcess.h"
#include "ServingKit.h"
#include "Wait.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore::test;

namespace {

const QJsonObject kPickup{{"lat", 57.7003}, {"lng", 11.9668}};
constexpr int kHealthMs = 5'000;          // a published ledger state reaches every process
constexpr int kRecoverMs = 15'000;        // PostgreSQL back → a booking commits again
constexpr int kBookingsAfterRecovery = 6; // new connections: round-robin to each worker
constexpr int kBookingsInOutage = 6;      // new connections: round-robin, so each worker fails
constexpr int kIdleRecoverMs = 6'000;     // PostgreSQL back → an idle writer's probe clears it
constexpr int kFailedProbesMs = 2'500;    // a few failed probes, which must not log

HttpResponse book(const ServerProcess &server, const QString &rider)
{
    HttpClient http(server.host(), server.port(), 10'000); // a new connection: any process may serve it
    return http.postJson("/api/v1/bookings", {{"rider_id", rider}, {"pickup", kPickup}});
}

QJsonObject health(const ServerProcess &server)
{
    HttpClient http(server.host(), server.port(), 10'000);
    return http.get("/healthz").json();
}

bool healthIs(const ServerProcess &server, const QString &status, const QString &ledger)
{
    const QJsonObject h = health(server);
    return h.value("status").toString() == status && h.value("ledger").toString() == ledger;
}

} // namespace

class ServerPostgresLedgerHealthTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void anOutageShowsInHealthAndMetricsUntilACommit_data();
    void anOutageShowsInHealthAndMetricsUntilACommit();
    void idleWorkersRecoverWithoutABookingOncePostgresIsBack();

private:
    PostgresKit m_pg;
};

void ServerPostgresLedgerHealthTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL (initdb, postgres) is not installed");
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
}

void ServerPostgresLedgerHealthTest::anOutageShowsInHealthAndMetricsUntilACommit_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void ServerPostgresLedgerHealthTest::anOutageShowsInHealthAndMetricsUntilACommit()
{
    QFETCH(QString, mode);
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    m_pg.psql(QStringLiteral("DROP SCHEMA public CASCADE; CREATE SCHEMA public")); // a fresh ledger per row
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"),
                          QStringLiteral("--cars"), QStringLiteral("40"), QStringLiteral("--data-dir"), dir.path(),
                          QStringLiteral("--ledger"), m_pg.url()});
    QString error;
    QVERIFY2(startServing(server, mode, error), qPrintable(error));
    const QString where = QStringLiteral("127.0.0.1:%1/taxicore").arg(m_pg.port());

    TC_VERIFY_STATUS(book(server, QStringLiteral("health-before")), 201);
    QVERIFY(healthIs(server, QStringLiteral("ok"), QStringLiteral("ok")));
    QCOMPARE(rt::metric(server, QStringLiteral("taxicore_ledger_failing")), 0.0);

    // PostgreSQL stopped: the refused booking's commit failed, and every process's /healthz says so.
    m_pg.stop();
    TC_VERIFY_ERROR(book(server, QStringLiteral("health-down")), 503, "ledger_unavailable");
    QVERIFY2(
        waitUntil([&] { return healthIs(server, QStringLiteral("degraded"), QStringLiteral("failing")); }, kHealthMs),
        qPrintable(QJsonDocument(health(server)).toJson(QJsonDocument::Compact)));
    QVERIFY2(waitUntil([&] { return rt::metric(server, QStringLiteral("taxicore_ledger_failing")) >= 1; }, kHealthMs),
             "taxicore_ledger_failing stayed 0 with PostgreSQL stopped");
    // The log says in one line that the outage began, naming the database, once per process
    // that saw it fail (libpq's message has a line break of its own).
    const QByteArray began = QStringLiteral("PostgreSQL at %1 is unavailable: ").arg(where).toUtf8();
    const QByteArray refusing = "; records are refused (503 to their requests) until a commit succeeds";
    const auto outageLines = [&] {
        int lines = 0;
        for (const QByteArray &line : server.stderrText().split('\n'))
            lines += line.startsWith(began) && line.endsWith(refusing) ? 1 : 0;
        return lines;
    };
    QVERIFY2(waitUntil([&] { return outageLines() >= 1; }, kHealthMs), server.stderrText().constData());
    QVERIFY2(server.stderrText().count(refusing) == outageLines(), server.stderrText().constData());
    QVERIFY2(outageLines() <= (mode == QStringLiteral("processes") ? 3 : 1), server.stderrText().constData());

    // Back: the next commit clears it, in every process that books again.
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    QVERIFY2(waitUntil([&] { return book(server, QStringLiteral("health-back")).status == 201; }, kRecoverMs, 200),
             "no booking committed after PostgreSQL came back");
    for (int i = 0; i < kBookingsAfterRecovery; ++i)
        TC_VERIFY_STATUS(book(server, QStringLiteral("health-after-%1").arg(i)), 201);
    QVERIFY2(waitUntil([&] { return healthIs(server, QStringLiteral("ok"), QStringLiteral("ok")); }, kHealthMs),
             qPrintable(QJsonDocument(health(server)).toJson(QJsonDocument::Compact)));
    QVERIFY2(waitUntil([&] { return rt::metric(server, QStringLiteral("taxicore_ledger_failing")) == 0; }, kHealthMs),
             "taxicore_ledger_failing stayed up after PostgreSQL came back");
    const QByteArray ended = QStringLiteral("ledger PostgreSQL %1: commits succeed again").arg(where).toUtf8();
    QVERIFY2(waitUntil([&] { return server.stderrText().contains(ended); }, kHealthMs),
             server.stderrText().constData());
    QCOMPARE(server.stop(), 0);
}

void ServerPostgresLedgerHealthTest::idleWorkersRecoverWithoutABookingOncePostgresIsBack()
{
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    m_pg.psql(QStringLiteral("DROP SCHEMA public CASCADE; CREATE SCHEMA public"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString mode = QStringLiteral("processes");
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"),
                          QStringLiteral("--cars"), QStringLiteral("40"), QStringLiteral("--data-dir"), dir.path(),
                          QStringLiteral("--ledger"), m_pg.url()});
    QString error;
    QVERIFY2(startServing(server, mode, error), qPrintable(error));
    TC_VERIFY_STATUS(book(server, QStringLiteral("idle-before")), 201);

    // PostgreSQL stopped: bookings round-robin over both workers, so both writers fail.
    m_pg.stop();
    for (int i = 0; i < kBookingsInOutage; ++i)
        TC_VERIFY_ERROR(book(server, QStringLiteral("idle-down-%1").arg(i)), 503, "ledger_unavailable");
    QVERIFY2(waitUntil([&] { return rt::metric(server, QStringLiteral("taxicore_ledger_failing")) >= 2; }, kHealthMs),
             "both workers did not report a failing ledger with PostgreSQL stopped");
    QVERIFY(healthIs(server, QStringLiteral("degraded"), QStringLiteral("failing")));
    // The idle writers' probes fail meanwhile, silently: the outage is logged once per process
    // (the primary's ledger may log it too), not once per failed probe.
    const QByteArray refusing = "; records are refused (503 to their requests) until";
    QTest::qWait(kFailedProbesMs);
    QVERIFY2(server.stderrText().count(refusing) <= 3, server.stderrText().constData());

    // Back, and no booking: each worker's probe clears its failing state on its own.
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    QVERIFY2(waitUntil([&] { return healthIs(server, QStringLiteral("ok"), QStringLiteral("ok")); }, kIdleRecoverMs),
             qPrintable(QJsonDocument(health(server)).toJson(QJsonDocument::Compact)));
    // /metrics reads what each process published (every 250 ms): it follows within a moment.
    QVERIFY2(waitUntil([&] { return rt::metric(server, QStringLiteral("taxicore_ledger_failing")) == 0; }, kHealthMs),
             "taxicore_ledger_failing stayed above 0 after /healthz said ok");
    const QByteArray ended =
        QStringLiteral("ledger PostgreSQL 127.0.0.1:%1/taxicore: commits succeed again").arg(m_pg.port()).toUtf8();
    QVERIFY2(waitUntil([&] { return server.stderrText().count(ended) >= 2; }, kHealthMs),
             server.stderrText().constData());
    TC_VERIFY_STATUS(book(server, QStringLiteral("idle-after")), 201);
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(ServerPostgresLedgerHealthTest)
#include "server_postgres_ledger_health_test.moc"
