// Idempotency-Key on POST /api/v1/bookings: a rider whose 201 was lost retries with the same key
// and gets the same booking (same id, same rider token, `Idempotent-Replayed: true`), never a
// second car. A malformed key is 400 invalid_idempotency_key, the key reused with another body is
// 409 idempotency_key_reused; neither books anything. The key holds after a cancel, under a burst
// of the same request (single, pool and processes mode: exactly one ledger row) and across a
// restart on the same data directory. Cars are counted as nearby reports them available, ledger
// rows in DATA_DIR/ledger.sqlite.

#include "ApiAssert.h"
#include "HttpBatch.h"
#include "HttpClient.h"
#include "IdempotencyKit.h"
#include "LedgerValue.h"
#include "RawSocket.h"
#include "RiderToken.h"
#include "ServerProcess.h"
#include "ServingKit.h"

#include <QJsonObject>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <unistd.h>

using namespace taxicore::test;

namespace {

// Enough that the cases sharing one server never run short, even on a server that ignores the
// key and books a car for each malformed request.
constexpr int kSharedCars = 60;
constexpr int kBurstCars = 20;
constexpr int kBurst = 8;
constexpr int kBurstTimeoutMs = 30'000;
const QJsonObject kPickup{{"lat", 57.7003}, {"lng", 11.9668}};
const QJsonObject kOtherPickup{{"lat", 57.7089}, {"lng", 11.9746}};
const QJsonObject kDropoff{{"lat", 57.6900}, {"lng", 11.9800}};
const QJsonObject kOtherDropoff{{"lat", 57.7100}, {"lng", 11.9500}};

QStringList serverArgs(int cars, const QTemporaryDir &dir, const QStringList &more = {})
{
    return QStringList{QStringLiteral("--cars"), QString::number(cars),        QStringLiteral("--sim-speed"),
                       QStringLiteral("0.001"),  QStringLiteral("--data-dir"), dir.path()}
           + more;
}

int ledgerBookings(const QTemporaryDir &dir)
{
    const QVariant n = ledgerValue(dir, QStringLiteral("SELECT count(*) FROM bookings"));
    return n.isValid() ? n.toInt() : -1;
}

// A retry refused for its key is the key working, not the ledger failing: no outage in the log
// (CommitHealth's "records are refused ... until a commit" and "commits succeed again" lines).
QByteArray ledgerOutageLines(ServerProcess &server)
{
    QByteArray lines;
    for (const QByteArray &line : server.stderrText().split('\n'))
        if (line.contains("records are refused") || line.contains("commits succeed again"))
            lines += line + '\n';
    return lines;
}

} // namespace

class IdempotentBookingTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void malformedKeyIs400AndBooksNothing_data();
    void malformedKeyIs400AndBooksNothing();
    void firstRequestWithAKeyBooksAsUsual();
    void everyWellFormedKeyIsReplayed_data();
    void everyWellFormedKeyIsReplayed();
    void retryGetsTheSameBookingAndItsToken();
    void retryAfterCancelGetsTheCancelledBooking();
    void sameKeyWithAnotherBodyIs409_data();
    void sameKeyWithAnotherBodyIs409();
    void differentKeysMakeDifferentBookings();
    void burstWithOneKeyMakesOneBooking_data();
    void burstWithOneKeyMakesOneBooking();
    void keyHoldsAcrossARestart();
    void retryWhenItsBookingHoldsTheLastCarIsReplayed();
    void retryWhileTheFirstTryIsStillCommittingIsToldToRetry();

private:
    QJsonObject body(const QString &rider, const QJsonObject &pickup = kPickup) const
    {
        return {{"rider_id", rider}, {"pickup", pickup}};
    }
    int freeCars() { return availableCars(*m_http); }
    int ledgerRows() const { return ledgerBookings(m_dir); }

    // One single-mode server for the cases that need no server of their own; each case counts
    // cars and ledger rows as differences, so the cases do not depend on each other.
    QTemporaryDir m_dir;
    std::unique_ptr<ServerProcess> m_server;
    std::unique_ptr<HttpClient> m_http;
};

void IdempotentBookingTest::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_server = std::make_unique<ServerProcess>(serverArgs(kSharedCars, m_dir));
    QVERIFY2(m_server->start(), qPrintable(m_server->error()));
    m_http = std::make_unique<HttpClient>(m_server->host(), m_server->port());
    QCOMPARE(freeCars(), kSharedCars);
}

void IdempotentBookingTest::cleanupTestCase()
{
    m_http.reset();
    if (m_server) {
        QVERIFY2(m_server->isRunning(), "the server died during the tests: " + m_server->stderrText());
        QCOMPARE(m_server->stop(), 0);
    }
}

void IdempotentBookingTest::malformedKeyIs400AndBooksNothing_data()
{
    // Key bytes the HTTP framing itself lets through (it refuses other control bytes as
    // bad_field_value before any handler runs), so the booking handler must judge them.
    QTest::addColumn<Headers>("headers");
    const QByteArray key = freshIdempotencyKey();
    const auto one = [](const QByteArray &value) { return Headers{{kIdempotencyKeyHeader, value}}; };
    QTest::newRow("empty") << one(QByteArray());
    QTest::newRow("15 characters") << one(QByteArray(15, 'k'));
    QTest::newRow("256 characters") << one(QByteArray(256, 'k'));
    QTest::newRow("a space inside") << one("abcdefgh ijklmnop");
    QTest::newRow("a tab inside") << one("abcdefgh\tijklmnop");
    QTest::newRow("a non-ASCII byte") << one("abcdefgh\xc3\xa9ijklmnop");
    QTest::newRow("two headers, same key") << Headers{{kIdempotencyKeyHeader, key}, {kIdempotencyKeyHeader, key}};
    QTest::newRow("two headers, different keys")
        << Headers{{kIdempotencyKeyHeader, key}, {kIdempotencyKeyHeader, freshIdempotencyKey()}};
    QTest::newRow("two headers, names in different case")
        << Headers{{kIdempotencyKeyHeader, key}, {"idempotency-key", key}};
}

void IdempotentBookingTest::malformedKeyIs400AndBooksNothing()
{
    QFETCH(Headers, headers);
    const int free = freeCars();
    const int rows = ledgerRows();
    const HttpResponse r =
        postBooking(*m_http, bookingBody(body(QStringLiteral("malformed-%1").arg(QTest::currentDataTag()))), headers);
    TC_VERIFY_ERROR(r, 400, "invalid_idempotency_key");
    QCOMPARE(freeCars(), free);
    QCOMPARE(ledgerRows(), rows);
}

void IdempotentBookingTest::firstRequestWithAKeyBooksAsUsual()
{
    const int free = freeCars();
    const int rows = ledgerRows();
    const HttpResponse r = bookWithKey(*m_http, bookingBody(body(QStringLiteral("first"))), freshIdempotencyKey());
    TC_VERIFY_STATUS(r, 201);
    const QJsonObject booking = r.json();
    QVERIFY2(bookingIdOf(r) > 0, r.body.constData());
    QVERIFY2(riderToken(booking).size() >= 32, r.body.constData());
    QVERIFY2(booking.value("car_id").toInt() > 0, r.body.constData());
    QCOMPARE(booking.value("car").toObject().value("id").toInt(), booking.value("car_id").toInt());
    QCOMPARE(booking.value("state").toString(), QStringLiteral("assigned"));
    QCOMPARE(r.header("Location"), "/api/v1/bookings/" + QByteArray::number(bookingIdOf(r)));
    QVERIFY2(!r.hasHeader(kReplayedHeader), r.raw.constData()); // only a replay says so
    QCOMPARE(freeCars(), free - 1);
    QCOMPARE(ledgerRows(), rows + 1);
}

void IdempotentBookingTest::everyWellFormedKeyIsReplayed_data()
{
    // The edges of 16..255 visible ASCII, and the header name in another case (names are
    // case-insensitive in HTTP).
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<QByteArray>("key");
    QByteArray visible;
    for (char c = 0x21; c <= 0x7e; ++c)
        visible.append(c);
    QTest::newRow("16 characters") << kIdempotencyKeyHeader << QByteArray("sixteen-chars-16");
    QTest::newRow("255 characters") << kIdempotencyKeyHeader << QByteArray(255, 'x');
    QTest::newRow("every visible ASCII character") << kIdempotencyKeyHeader << visible;
    QTest::newRow("name in lower case") << QByteArray("idempotency-key") << freshIdempotencyKey();
}

void IdempotentBookingTest::everyWellFormedKeyIsReplayed()
{
    QFETCH(QByteArray, name);
    QFETCH(QByteArray, key);
    const QByteArray request = bookingBody(body(QStringLiteral("shape-%1").arg(QTest::currentDataTag())));
    const HttpResponse first = postBooking(*m_http, request, {{name, key}});
    TC_VERIFY_STATUS(first, 201);
    QVERIFY(!first.hasHeader(kReplayedHeader));
    const int free = freeCars();
    const HttpResponse again = postBooking(*m_http, request, {{name, key}});
    TC_VERIFY_STATUS(again, 201);
    QCOMPARE(bookingIdOf(again), bookingIdOf(first));
    QCOMPARE(again.header(kReplayedHeader), QByteArray("true"));
    QCOMPARE(freeCars(), free);
}

void IdempotentBookingTest::retryGetsTheSameBookingAndItsToken()
{
    const QByteArray key = freshIdempotencyKey();
    const QByteArray request = bookingBody(body(QStringLiteral("retry")));
    const HttpResponse first = bookWithKey(*m_http, request, key);
    TC_VERIFY_STATUS(first, 201);
    const int free = freeCars();
    const int rows = ledgerRows();

    // The retry comes on a new connection, as after a lost answer.
    HttpClient retry(m_server->host(), m_server->port());
    const HttpResponse again = bookWithKey(retry, request, key);
    TC_VERIFY_STATUS(again, 201);
    QCOMPARE(bookingIdOf(again), bookingIdOf(first));
    QCOMPARE(riderToken(again.json()), riderToken(first.json()));
    QCOMPARE(again.json().value("car_id").toInt(), first.json().value("car_id").toInt());
    QCOMPARE(again.header(kReplayedHeader), QByteArray("true"));
    QCOMPARE(freeCars(), free);
    QCOMPARE(ledgerRows(), rows);
    QCOMPARE(ledgerOutageLines(*m_server), QByteArray());

    // The replayed token is the booking's: it reads and cancels it.
    const qint64 id = bookingIdOf(again);
    const HttpResponse read = readBooking(retry, id, riderToken(again.json()));
    TC_VERIFY_STATUS(read, 200);
    QCOMPARE(bookingIdOf(read), id);
    const HttpResponse cancelled = moveBooking(retry, id, "cancel", riderToken(again.json()));
    TC_VERIFY_STATUS(cancelled, 200);
    QCOMPARE(cancelled.json().value("state").toString(), QStringLiteral("cancelled"));
}

void IdempotentBookingTest::retryAfterCancelGetsTheCancelledBooking()
{
    const QByteArray key = freshIdempotencyKey();
    const QByteArray request = bookingBody(body(QStringLiteral("cancelled")));
    const HttpResponse first = bookWithKey(*m_http, request, key);
    TC_VERIFY_STATUS(first, 201);
    const qint64 id = bookingIdOf(first);
    TC_VERIFY_STATUS(moveBooking(*m_http, id, "cancel", riderToken(first.json())), 200);
    const int free = freeCars();
    const int rows = ledgerRows();

    // The key names that booking for good: a late retry must not book the rider a new car.
    const HttpResponse again = bookWithKey(*m_http, request, key);
    TC_VERIFY_STATUS(again, 201);
    QCOMPARE(bookingIdOf(again), id);
    QCOMPARE(riderToken(again.json()), riderToken(first.json()));
    QCOMPARE(again.json().value("state").toString(), QStringLiteral("cancelled"));
    QCOMPARE(again.header(kReplayedHeader), QByteArray("true"));
    QCOMPARE(freeCars(), free);
    QCOMPARE(ledgerRows(), rows);
}

void IdempotentBookingTest::sameKeyWithAnotherBodyIs409_data()
{
    QTest::addColumn<QJsonObject>("original");
    QTest::addColumn<QJsonObject>("changed");
    const QJsonObject plain = body(QStringLiteral("reuse-a"));
    QJsonObject withDropoff = plain;
    withDropoff.insert("dropoff", kDropoff);
    QJsonObject otherDropoff = plain;
    otherDropoff.insert("dropoff", kOtherDropoff);
    QTest::newRow("other pickup") << plain << body(QStringLiteral("reuse-a"), kOtherPickup);
    QTest::newRow("other dropoff") << withDropoff << otherDropoff;
    QTest::newRow("dropoff added") << plain << withDropoff;
    QTest::newRow("other rider_id") << plain << body(QStringLiteral("reuse-b"));
}

void IdempotentBookingTest::sameKeyWithAnotherBodyIs409()
{
    QFETCH(QJsonObject, original);
    QFETCH(QJsonObject, changed);
    const QByteArray key = freshIdempotencyKey();
    const HttpResponse first = bookWithKey(*m_http, bookingBody(original), key);
    TC_VERIFY_STATUS(first, 201);
    const int free = freeCars();
    const int rows = ledgerRows();

    TC_VERIFY_ERROR(bookWithKey(*m_http, bookingBody(changed), key), 409, "idempotency_key_reused");
    QCOMPARE(freeCars(), free);
    QCOMPARE(ledgerRows(), rows);
    // The refused reuse leaves the key with its booking.
    const HttpResponse again = bookWithKey(*m_http, bookingBody(original), key);
    TC_VERIFY_STATUS(again, 201);
    QCOMPARE(bookingIdOf(again), bookingIdOf(first));
}

void IdempotentBookingTest::differentKeysMakeDifferentBookings()
{
    // Same rider, same pickup: only the key tells two real bookings from a retry.
    const QByteArray request = bookingBody(body(QStringLiteral("two-keys")));
    const int free = freeCars();
    const int rows = ledgerRows();
    const HttpResponse a = bookWithKey(*m_http, request, freshIdempotencyKey());
    const HttpResponse b = bookWithKey(*m_http, request, freshIdempotencyKey());
    TC_VERIFY_STATUS(a, 201);
    TC_VERIFY_STATUS(b, 201);
    QVERIFY(bookingIdOf(a) != bookingIdOf(b));
    QVERIFY(a.json().value("car_id").toInt() != b.json().value("car_id").toInt());
    QVERIFY(!a.hasHeader(kReplayedHeader) && !b.hasHeader(kReplayedHeader));
    QCOMPARE(freeCars(), free - 2);
    QCOMPARE(ledgerRows(), rows + 2);
}

void IdempotentBookingTest::burstWithOneKeyMakesOneBooking_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QStringList>("modeArgs");
    QTest::newRow("single") << QStringLiteral("single") << QStringList{};
    QTest::newRow("pool") << QStringLiteral("pool") << QStringList{QStringLiteral("--mode"), QStringLiteral("pool")};
    QTest::newRow("processes") << QStringLiteral("processes")
                               << QStringList{QStringLiteral("--mode"), QStringLiteral("processes"),
                                              QStringLiteral("--workers"), QStringLiteral("2")};
}

void IdempotentBookingTest::burstWithOneKeyMakesOneBooking()
{
    // A client retrying on several connections at once: whoever wins, every attempt is answered
    // with the one booking, and the fleet and the ledger hold it once. In processes mode the
    // attempts land on different workers.
    QFETCH(QString, mode);
    QFETCH(QStringList, modeArgs);
    QTemporaryDir dir;
    ServerProcess server(serverArgs(kBurstCars, dir, modeArgs));
    QString error;
    QVERIFY2(startServing(server, mode, error), qPrintable(error));
    HttpClient http(server.host(), server.port());
    QCOMPARE(availableCars(http), kBurstCars);

    const QByteArray request = formatRequest("POST", "/api/v1/bookings", bookingBody(body(QStringLiteral("burst"))),
                                             {{kIdempotencyKeyHeader, freshIdempotencyKey()}});
    const KeyedBurst burst = summarizeBurst(
        sendConcurrently(server.host(), server.port(), QList<QByteArray>(kBurst, request), kBurstTimeoutMs));
    QVERIFY2(burst.unexpected.isEmpty(), burst.describe().constData());
    QVERIFY2(burst.bookingIds.size() == 1, burst.describe().constData());
    QVERIFY2(burst.riderTokens.size() == 1, burst.describe().constData());
    QVERIFY2(burst.created == 1 && burst.replayed == kBurst - 1, burst.describe().constData());
    QCOMPARE(availableCars(http), kBurstCars - 1);
    QCOMPARE(ledgerBookings(dir), 1);
    QCOMPARE(ledgerOutageLines(server), QByteArray());
    QVERIFY2(server.isRunning(), server.stderrText().constData());
    QCOMPARE(server.stop(), 0);
}

void IdempotentBookingTest::keyHoldsAcrossARestart()
{
    // The key is kept with the booking, not only in memory: a retry after a restart on the same
    // data directory still gets it.
    QTemporaryDir dir;
    const QByteArray key = freshIdempotencyKey();
    const QByteArray request = bookingBody(body(QStringLiteral("restart")));
    HttpResponse first;
    {
        ServerProcess before(serverArgs(kBurstCars, dir));
        QVERIFY2(before.start(), qPrintable(before.error()));
        HttpClient http(before.host(), before.port());
        first = bookWithKey(http, request, key);
        TC_VERIFY_STATUS(first, 201);
        QCOMPARE(before.stop(), 0);
    }
    ServerProcess after(serverArgs(kBurstCars, dir));
    QVERIFY2(after.start(), qPrintable(after.error()));
    HttpClient http(after.host(), after.port());
    const int free = availableCars(http);
    const HttpResponse again = bookWithKey(http, request, key);
    TC_VERIFY_STATUS(again, 201);
    QCOMPARE(bookingIdOf(again), bookingIdOf(first));
    QCOMPARE(riderToken(again.json()), riderToken(first.json()));
    QCOMPARE(again.header(kReplayedHeader), QByteArray("true"));
    QCOMPARE(availableCars(http), free);
    QCOMPARE(ledgerBookings(dir), 1);
    TC_VERIFY_STATUS(readBooking(http, bookingIdOf(again), riderToken(again.json())), 200);
    QCOMPARE(after.stop(), 0);
}

// The retry finds no free car because its own first try holds the last one: still that booking,
// not 409 no_car_available.
void IdempotentBookingTest::retryWhenItsBookingHoldsTheLastCarIsReplayed()
{
    QTemporaryDir dir;
    ServerProcess server(serverArgs(1, dir));
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());
    const QByteArray key = freshIdempotencyKey();
    const QByteArray request = bookingBody(body(QStringLiteral("last-car")));
    const HttpResponse first = bookWithKey(http, request, key);
    TC_VERIFY_STATUS(first, 201);
    QCOMPARE(availableCars(http), 0);
    const HttpResponse again = bookWithKey(http, request, key);
    TC_VERIFY_STATUS(again, 201);
    QCOMPARE(bookingIdOf(again), bookingIdOf(first));
    QCOMPARE(again.header(kReplayedHeader), QByteArray("true"));
    // Another rider's booking is still refused for want of a car.
    TC_VERIFY_ERROR(bookWithKey(http, bookingBody(body(QStringLiteral("other-rider"))), freshIdempotencyKey()), 409,
                    "no_car_available");
    QCOMPARE(server.stop(), 0);
}

// The retry comes while its first try still waits for the ledger (a slow disk: here a real SQLite
// write lock held by the test) and finds no car, the first try holding the last one: it is told
// to send the key again shortly - never 409 no_car_available, after which a client would take a
// new key and book a second car once the first try commits.
void IdempotentBookingTest::retryWhileTheFirstTryIsStillCommittingIsToldToRetry()
{
    QTemporaryDir dir;
    ServerProcess server(serverArgs(1, dir));
    QVERIFY2(server.start(), qPrintable(server.error()));
    const QByteArray key = freshIdempotencyKey();
    const QByteArray request = bookingBody(body(QStringLiteral("slow-commit")));
    const QString holderName = QStringLiteral("idempotent-lock-holder");
    {
        QSqlDatabase holder = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), holderName);
        holder.setDatabaseName(dir.filePath(QStringLiteral("ledger.sqlite")));
        QVERIFY2(holder.open(), qPrintable(holder.lastError().text()));
        QSqlQuery lock(holder);
        QVERIFY2(lock.exec(QStringLiteral("BEGIN IMMEDIATE")), qPrintable(lock.lastError().text()));

        const int first = connectRaw(server.port());
        QVERIFY(first >= 0);
        QVERIFY(sendAll(first, formatRequest("POST", "/api/v1/bookings", request, {{kIdempotencyKeyHeader, key}})));
        HttpClient http(server.host(), server.port());
        QVERIFY2(waitUntil([&] { return availableCars(http) == 0; }, 5000), "the first try never took the car");
        const HttpResponse retry = bookWithKey(http, request, key);
        TC_VERIFY_ERROR(retry, 409, "idempotency_key_in_progress");
        QCOMPARE(retry.header("Retry-After"), QByteArray("1"));

        QVERIFY(lock.exec(QStringLiteral("ROLLBACK")));
        lock.finish();
        holder.close();
        ::close(first);
    }
    QSqlDatabase::removeDatabase(holderName);
    HttpClient http(server.host(), server.port());
    HttpResponse again;
    QVERIFY2(waitUntil(
                 [&] {
                     again = bookWithKey(http, request, key);
                     return again.status == 201;
                 },
                 5000),
             again.describe().constData());
    QCOMPARE(again.header(kReplayedHeader), QByteArray("true"));
    QCOMPARE(ledgerBookings(dir), 1);
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(IdempotentBookingTest)
#include "server_idempotent_booking_test.moc"
