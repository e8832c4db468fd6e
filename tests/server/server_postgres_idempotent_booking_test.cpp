// Idempotency-Key on a PostgreSQL ledger (--ledger postgresql://..., a private PostgreSQL from
// PostgresKit): a retry with the key gets the same booking and books no car, and a burst of one
// keyed request makes exactly one row in PostgreSQL's bookings table. The SQLite ledger's cases,
// malformed keys and the other modes are in server_idempotent_booking_test.

#include "ApiAssert.h"
#include "HttpBatch.h"
#include "HttpClient.h"
#include "IdempotencyKit.h"
#include "PostgresKit.h"
#include "RequireTool.h"
#include "RiderToken.h"
#include "ServerProcess.h"

#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr int kStartMs = 20'000;
constexpr int kCars = 20;
constexpr int kBurst = 8;
constexpr int kBurstTimeoutMs = 30'000;
const QJsonObject kPickup{{"lat", 57.7003}, {"lng", 11.9668}};

QByteArray bodyFor(const QString &rider)
{
    return bookingBody({{"rider_id", rider}, {"pickup", kPickup}});
}

} // namespace

class ServerPostgresIdempotentBookingTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void retryGetsTheSameBooking();
    void burstWithOneKeyMakesOneRow();

private:
    int rows() { return m_pg.psql(QStringLiteral("SELECT count(*) FROM bookings")).toInt(); }

    // One server on a freshly emptied database for both cases: they count rows and cars as
    // differences.
    PostgresKit m_pg;
    QTemporaryDir m_dir;
    std::unique_ptr<ServerProcess> m_server;
};

void ServerPostgresIdempotentBookingTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL (initdb, postgres) is not installed");
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    m_pg.psql(QStringLiteral("DROP SCHEMA public CASCADE; CREATE SCHEMA public"));
    m_server = std::make_unique<ServerProcess>(QStringList{
        QStringLiteral("--cars"), QString::number(kCars), QStringLiteral("--sim-speed"), QStringLiteral("0.001"),
        QStringLiteral("--data-dir"), m_dir.path(), QStringLiteral("--ledger"), m_pg.url()});
    QVERIFY2(m_server->start(kStartMs), qPrintable(m_server->error()));
}

void ServerPostgresIdempotentBookingTest::cleanupTestCase()
{
    if (m_server) {
        QVERIFY2(m_server->isRunning(), "the server died during the tests: " + m_server->stderrText());
        QCOMPARE(m_server->stop(), 0);
    }
}

void ServerPostgresIdempotentBookingTest::retryGetsTheSameBooking()
{
    HttpClient http(m_server->host(), m_server->port());
    const QByteArray key = freshIdempotencyKey();
    const QByteArray request = bodyFor(QStringLiteral("pg-retry"));
    const HttpResponse first = bookWithKey(http, request, key);
    TC_VERIFY_STATUS(first, 201);
    QVERIFY(!first.hasHeader(kReplayedHeader));
    const int free = availableCars(http);
    const int before = rows();
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT count(*) FROM bookings WHERE id = %1").arg(bookingIdOf(first))),
             QStringLiteral("1"));

    HttpClient retry(m_server->host(), m_server->port()); // a new connection, as after a lost answer
    const HttpResponse again = bookWithKey(retry, request, key);
    TC_VERIFY_STATUS(again, 201);
    QCOMPARE(bookingIdOf(again), bookingIdOf(first));
    QCOMPARE(riderToken(again.json()), riderToken(first.json()));
    QCOMPARE(again.header(kReplayedHeader), QByteArray("true"));
    QCOMPARE(availableCars(http), free);
    QCOMPARE(rows(), before);
    TC_VERIFY_STATUS(readBooking(retry, bookingIdOf(again), riderToken(again.json())), 200);
}

void ServerPostgresIdempotentBookingTest::burstWithOneKeyMakesOneRow()
{
    // Whoever wins among attempts at once, the database holds the booking once.
    HttpClient http(m_server->host(), m_server->port());
    const int free = availableCars(http);
    const int before = rows();
    const QByteArray request = formatRequest("POST", "/api/v1/bookings", bodyFor(QStringLiteral("pg-burst")),
                                             {{kIdempotencyKeyHeader, freshIdempotencyKey()}});
    const KeyedBurst burst = summarizeBurst(
        sendConcurrently(m_server->host(), m_server->port(), QList<QByteArray>(kBurst, request), kBurstTimeoutMs));
    QVERIFY2(burst.unexpected.isEmpty(), burst.describe().constData());
    QVERIFY2(burst.bookingIds.size() == 1, burst.describe().constData());
    QVERIFY2(burst.riderTokens.size() == 1, burst.describe().constData());
    QVERIFY2(burst.created == 1 && burst.replayed == kBurst - 1, burst.describe().constData());
    QCOMPARE(availableCars(http), free - 1);
    QCOMPARE(rows(), before + 1);
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT count(*) FROM bookings WHERE rider_id = 'pg-burst'")),
             QStringLiteral("1"));
}

QTEST_GUILESS_MAIN(ServerPostgresIdempotentBookingTest)
#include "server_postgres_idempotent_booking_test.moc"
