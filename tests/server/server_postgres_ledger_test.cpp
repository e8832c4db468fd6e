// taxicore-server on a PostgreSQL ledger (--ledger postgresql://..., issue 17), against a real
// server over loopback and a private PostgreSQL (PostgresKit): a booking's 201 means its row is in
// PostgreSQL; kill -9 and a restart on the same database restore it; with PostgreSQL stopped a
// booking is 503 ledger_unavailable naming the database while the live view still answers; once
// PostgreSQL is back bookings succeed again without a restart. Single process and processes mode
// (the workers append to the same database). A hung PostgreSQL (frozen, answering nothing) stalls no
// request that does not need it: a booking only the ledger knows is looked up off the event loop,
// a bounded number at a time.
#include "ApiAssert.h"
#include "HttpClient.h"
#include "IdempotencyKit.h"
#include "PostgresKit.h"
#include "RiderToken.h"
#include "RuntimeKit.h"
#include "RequireTool.h"
#include "ServerProcess.h"
#include "Wait.h"
#include "http/LedgerLookups.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>
#include <QWebSocket>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <memory>
#include <thread>

using namespace taxicore::test;

namespace {

const QJsonObject kPickup{{"lat", 57.7003}, {"lng", 11.9668}};
constexpr int kStartMs = 20'000;
constexpr int kRecoverMs = 15'000;        // PostgreSQL back → a booking commits again
constexpr int kBookingsAfterRecovery = 6; // spread over the workers in processes mode
// Far under the ledger's 5 s statement timeout, far over a nearby search on a loaded machine.
constexpr int kUnstalledMs = 1500;
constexpr int kLookupsOverBound = 8;

HttpResponse book(HttpClient &http, const QString &rider)
{
    return http.postJson("/api/v1/bookings", {{"rider_id", rider}, {"pickup", kPickup}});
}

} // namespace

class ServerPostgresLedgerTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void bookingsLiveInPostgresAndSurviveItsOutage_data();
    void bookingsLiveInPostgresAndSurviveItsOutage();
    void aHungLedgerStallsOnlyWhatNeedsIt();
    void aReportOnAHungLedgerStallsNoOneElse();
    void aBookingAwaitingItsCommitIsAnsweredPastTheHeaderTimeout();
    void aCommitWhoseAnswerWasLostIsAnsweredAsTheLedgerHoldsIt();
    void aBookingTheLedgerCannotSettleIsAnsweredWithinTheAnswerTimeout();
    void aServerStoppedWhileACommitIsUnsettledAnswersItsRider_data();
    void aServerStoppedWhileACommitIsUnsettledAnswersItsRider();
    void aModeSwitchWhileAWorkerAwaitsACommitAnswersItsRider();
    void unknownLedgerSchemeIsRefused();

private:
    // A server on a freshly emptied PostgreSQL ledger, its data in `dir`; null (warned) if either
    // did not start.
    std::unique_ptr<ServerProcess> serverOnFreshLedger(const QTemporaryDir &dir, const QStringList &extraArgs = {});

    PostgresKit m_pg;
};

void ServerPostgresLedgerTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL (initdb, postgres) is not installed");
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
}

void ServerPostgresLedgerTest::bookingsLiveInPostgresAndSurviveItsOutage_data()
{
    QTest::addColumn<QStringList>("modeArgs");
    QTest::newRow("single") << QStringList{};
    QTest::newRow("processes") << QStringList{QStringLiteral("--mode"), QStringLiteral("processes"),
                                              QStringLiteral("--workers"), QStringLiteral("2")};
}

void ServerPostgresLedgerTest::bookingsLiveInPostgresAndSurviveItsOutage()
{
    QFETCH(QStringList, modeArgs);
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    m_pg.psql(QStringLiteral("DROP SCHEMA public CASCADE; CREATE SCHEMA public")); // a fresh ledger per row
    QTemporaryDir dir;
    const QStringList args = modeArgs + QStringList{QStringLiteral("--cars"),     QStringLiteral("40"),
                                                    QStringLiteral("--data-dir"), dir.path(),
                                                    QStringLiteral("--ledger"),   m_pg.url()};

    // 201 only once the row is in PostgreSQL, with the car's claim.
    auto first = std::make_unique<ServerProcess>(args);
    QVERIFY2(first->start(kStartMs), qPrintable(first->error()));
    qint64 id = 0;
    int carId = 0;
    QByteArray token;
    {
        HttpClient http(first->host(), first->port());
        const HttpResponse booked = book(http, QStringLiteral("pg-rider"));
        TC_VERIFY_STATUS(booked, 201);
        id = bookingIdOf(booked);
        token = riderToken(booked.json());
        carId = booked.json().value("car_id").toInt();
        QVERIFY(id >= (qint64(1) << 40)); // the primary's node slot range
        QCOMPARE(m_pg.psql(QStringLiteral("SELECT state, car_id FROM bookings WHERE id = %1").arg(id)),
                 QStringLiteral("assigned|%1").arg(carId));
        QCOMPARE(m_pg.psql(QStringLiteral("SELECT booking_id FROM cars WHERE id = %1").arg(carId)),
                 QString::number(id));
    }

    // kill -9, restart on the same database: the booking is restored.
    ::kill(pid_t(first->pid()), SIGKILL);
    QVERIFY(first->waitForExit(5000));
    first.reset();
    ServerProcess second(args);
    QVERIFY2(second.start(kStartMs), qPrintable(second.error()));
    HttpClient http(second.host(), second.port());
    const HttpResponse restored = readBooking(http, id, token);
    TC_VERIFY_STATUS(restored, 200);
    QCOMPARE(restored.json().value("car_id").toInt(), carId);

    // PostgreSQL stopped: bookings are refused with the reason, the live view goes on.
    m_pg.stop();
    const HttpResponse refused = book(http, QStringLiteral("pg-down"));
    TC_VERIFY_ERROR(refused, 503, "ledger_unavailable");
    const QString message = refused.json().value("message").toString();
    // Where the database is stays the operator's (the log names it): riders learn it is unavailable.
    QVERIFY2(message.contains(QStringLiteral("the database is unavailable"))
                 && !message.contains(QString::number(m_pg.port())) && !message.contains(QStringLiteral("127.0.0.1")),
             qPrintable(message));
    TC_VERIFY_STATUS(http.get("/api/v1/cars/nearby?lat=57.7003&lng=11.9668"), 200);
    // A booking only the ledger could know of is looked up there: the same answer, no address.
    const HttpResponse lookedUp = readBooking(http, 987654321, QByteArray(32, 'a'));
    TC_VERIFY_ERROR(lookedUp, 503, "ledger_unavailable");
    const QString lookupMessage = lookedUp.json().value("message").toString();
    QVERIFY2(!lookupMessage.contains(QString::number(m_pg.port()))
                 && !lookupMessage.contains(QStringLiteral("127.0.0.1")),
             qPrintable(lookupMessage));

    // Back: bookings commit again, from every process, without restarting the server.
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    QVERIFY2(waitUntil([&] { return book(http, QStringLiteral("pg-back")).status == 201; }, kRecoverMs, 200),
             "no booking committed after PostgreSQL came back");
    for (int i = 0; i < kBookingsAfterRecovery; ++i) {
        HttpClient fresh(second.host(), second.port()); // a new connection: round-robin to each worker
        TC_VERIFY_STATUS(book(fresh, QStringLiteral("pg-after-%1").arg(i)), 201);
    }
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT count(*) FROM bookings WHERE rider_id LIKE 'pg-after-%'")),
             QString::number(kBookingsAfterRecovery));
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT count(*) FROM bookings WHERE rider_id = 'pg-down'")),
             QStringLiteral("0"));
    QVERIFY2(second.isRunning(), second.stderrText().constData());
}

std::unique_ptr<ServerProcess> ServerPostgresLedgerTest::serverOnFreshLedger(const QTemporaryDir &dir,
                                                                             const QStringList &extraArgs)
{
    if (!m_pg.start()) {
        qWarning().noquote() << m_pg.error();
        return nullptr;
    }
    m_pg.psql(QStringLiteral("DROP SCHEMA public CASCADE; CREATE SCHEMA public"));
    auto server = std::make_unique<ServerProcess>(QStringList{QStringLiteral("--cars"), QStringLiteral("40"),
                                                              QStringLiteral("--data-dir"), dir.path(),
                                                              QStringLiteral("--ledger"), m_pg.url()}
                                                  + extraArgs);
    if (!server->start(kStartMs)) {
        qWarning().noquote() << server->error();
        return nullptr;
    }
    return server;
}

void ServerPostgresLedgerTest::aHungLedgerStallsOnlyWhatNeedsIt()
{
    QTemporaryDir dir;
    const auto started = serverOnFreshLedger(dir);
    QVERIFY2(started, "no server on a fresh ledger (see the warnings above)");
    ServerProcess &server = *started;
    HttpClient http(server.host(), server.port());
    TC_VERIFY_STATUS(book(http, QStringLiteral("before-the-hang")), 201);
    // With a token (any): without one a read is refused before the ledger is asked.
    const QByteArray token = QByteArrayLiteral("some-rider-token");
    TC_VERIFY_ERROR(readBooking(http, 999999, token), 404, "booking_not_found"); // asked the ledger

    // PostgreSQL hangs. Riders ask for bookings this node's fleet does not hold (ended ones,
    // made-up ids): each needs the ledger. More of them than the lookups may queue.
    m_pg.freeze(true);
    auto thaw = qScopeGuard([this] { m_pg.freeze(false); });
    const int riders = taxicore::LedgerLookups::kMaxWaiting + kLookupsOverBound;
    std::vector<std::unique_ptr<HttpClient>> waiting;
    for (int i = 0; i < riders; ++i) {
        auto rider = std::make_unique<HttpClient>(server.host(), server.port(), 30'000);
        QVERIFY(rider->connectToServer());
        QVERIFY(rider->sendRaw("GET /api/v1/bookings/" + QByteArray::number(900000 + i)
                               + " HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + token + "\r\n\r\n"));
        waiting.push_back(std::move(rider));
    }
    QTest::qWait(300); // the server has read them and waits on the ledger

    // What does not need the ledger answers at once; one lookup more than the queue holds is
    // refused at once.
    QElapsedTimer clock;
    clock.start();
    TC_VERIFY_STATUS(http.get("/api/v1/cars/nearby?lat=57.7003&lng=11.9668"), 200);
    QVERIFY2(clock.elapsed() < kUnstalledMs,
             qPrintable(QStringLiteral("the live view waited %1 ms on the hung ledger").arg(clock.elapsed())));
    const HttpResponse busy = readBooking(http, 899999, token);
    TC_VERIFY_ERROR(busy, 503, "ledger_busy");
    QVERIFY(!busy.header("Retry-After").isEmpty());
    QVERIFY2(clock.elapsed() < kUnstalledMs,
             qPrintable(QStringLiteral("a refused lookup took %1 ms").arg(clock.elapsed())));

    // Every rider is answered, none left hanging: the queued ones get the ledger's verdict after
    // its timeout (one waits it out, the ones after it are told at once), the excess was refused.
    int unavailable = 0;
    int refused = 0;
    for (const auto &rider : waiting) {
        const QList<HttpResponse> answers = rider->readResponses(1);
        QCOMPARE(answers.size(), 1);
        QCOMPARE(answers.first().status, 503);
        const QString code = answers.first().json().value("error").toString();
        unavailable += code == QStringLiteral("ledger_unavailable");
        refused += code == QStringLiteral("ledger_busy");
    }
    QCOMPARE(refused, kLookupsOverBound);
    QCOMPARE(unavailable, taxicore::LedgerLookups::kMaxWaiting);

    // PostgreSQL thaws: lookups work again, without a restart.
    thaw.dismiss();
    m_pg.freeze(false);
    QVERIFY2(waitUntil([&] { return readBooking(http, 999999, token).status == 404; }, kRecoverMs, 200),
             "the ledger was not asked again after PostgreSQL came back");
    QVERIFY2(server.isRunning(), server.stderrText().constData());
}

// The trips list and the operators' report read the ledger too (a long read, or a hung database):
// they wait on the lookup thread like a booking only the ledger knows, never on the event loop.
void ServerPostgresLedgerTest::aReportOnAHungLedgerStallsNoOneElse()
{
    QTemporaryDir dir;
    const auto started = serverOnFreshLedger(dir);
    QVERIFY2(started, "no server on a fresh ledger (see the warnings above)");
    ServerProcess &server = *started;
    HttpClient http(server.host(), server.port());
    TC_VERIFY_STATUS(http.get("/api/v1/trips"), 200);

    m_pg.freeze(true);
    auto thaw = qScopeGuard([this] { m_pg.freeze(false); });
    std::vector<std::unique_ptr<HttpClient>> readers;
    for (const QByteArray &path : {QByteArrayLiteral("/api/v1/trips"), QByteArrayLiteral("/admin/v1/report")}) {
        auto reader = std::make_unique<HttpClient>(server.host(), server.port(), 30'000);
        QVERIFY(reader->connectToServer());
        QVERIFY(reader->sendRaw("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        readers.push_back(std::move(reader));
    }
    QTest::qWait(300); // the server has read them and waits on the ledger

    QElapsedTimer clock;
    clock.start();
    TC_VERIFY_STATUS(http.get("/api/v1/cars/nearby?lat=57.7003&lng=11.9668"), 200);
    QVERIFY2(clock.elapsed() < kUnstalledMs,
             qPrintable(QStringLiteral("the live view waited %1 ms behind a report").arg(clock.elapsed())));

    // Each report is answered: the ledger's verdict after its timeout, never left hanging.
    for (const auto &reader : readers) {
        const QList<HttpResponse> answers = reader->readResponses(1);
        QCOMPARE(answers.size(), 1);
        TC_VERIFY_ERROR(answers.first(), 503, "ledger_unavailable");
    }
    thaw.dismiss();
    m_pg.freeze(false);
    QVERIFY2(waitUntil([&] { return http.get("/api/v1/trips").status == 200; }, kRecoverMs, 200),
             "the trips list did not come back with PostgreSQL");
    QVERIFY2(server.isRunning(), server.stderrText().constData());
}

// A booking waits for its commit (the database hangs) while the next pipelined request's head has
// begun to arrive. The header timeout is for a head that never completes, not for an answer the
// server owes: it closed the connection, the booking committed once the database was back, and
// the rider never heard of it (a retry without an Idempotency-Key books a second car).
void ServerPostgresLedgerTest::aBookingAwaitingItsCommitIsAnsweredPastTheHeaderTimeout()
{
    constexpr int kHeaderTimeoutMs = 300;
    QTemporaryDir dir;
    const auto started =
        serverOnFreshLedger(dir, {QStringLiteral("--header-timeout-ms"), QString::number(kHeaderTimeoutMs)});
    QVERIFY2(started, "no server on a fresh ledger (see the warnings above)");
    ServerProcess &server = *started;
    HttpClient http(server.host(), server.port(), 15'000);
    TC_VERIFY_STATUS(book(http, QStringLiteral("before-the-hang")), 201);

    m_pg.freeze(true);
    auto thaw = qScopeGuard([this] { m_pg.freeze(false); });
    HttpClient rider(server.host(), server.port(), 15'000);
    QVERIFY(rider.connectToServer());
    const QByteArray body = R"({"rider_id":"waits-for-its-commit","pickup":{"lat":57.7003,"lng":11.9668}})";
    QVERIFY(rider.sendRaw("POST /api/v1/bookings HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                          "Content-Length: "
                          + QByteArray::number(body.size()) + "\r\n\r\n" + body + "GET /hello HTTP/1.1\r\nHo"));
    QTest::qWait(4 * kHeaderTimeoutMs); // the commit waits; the half head is past its timeout
    m_pg.freeze(false);
    thaw.dismiss();

    const QList<HttpResponse> answers = rider.readResponses(1);
    QCOMPARE(answers.size(), 1);
    TC_VERIFY_STATUS(answers.first(), 201);
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT count(*) FROM bookings WHERE rider_id = 'waits-for-its-commit'")),
             QStringLiteral("1"));
}

// PostgreSQL stalls past the ledger's statement timeout (5 s) with bookings sent: their commits
// run when it resumes, after the server stopped waiting. Before, the server answered 503 and freed
// their cars while PostgreSQL held them booked (the reviewer saw 2 of 3). Now each rider hears what
// the ledger holds: 201 exactly for the rows in PostgreSQL, and the server shows those bookings.
void ServerPostgresLedgerTest::aCommitWhoseAnswerWasLostIsAnsweredAsTheLedgerHoldsIt()
{
    constexpr int kRiders = 3;
    constexpr int kStallMs = 6500; // past the 5 s statement timeout
    QTemporaryDir dir;
    const auto started = serverOnFreshLedger(dir);
    QVERIFY2(started, "no server on a fresh ledger (see the warnings above)");
    ServerProcess &server = *started;
    HttpClient http(server.host(), server.port(), 20'000);
    TC_VERIFY_STATUS(book(http, QStringLiteral("before-the-stall")), 201);

    m_pg.freeze(true);
    auto thaw = qScopeGuard([this] { m_pg.freeze(false); });
    std::vector<std::unique_ptr<HttpClient>> riders;
    for (int i = 0; i < kRiders; ++i) {
        riders.push_back(std::make_unique<HttpClient>(server.host(), server.port(), 20'000));
        const QByteArray body =
            R"({"rider_id":"lost-answer-)" + QByteArray::number(i) + R"(","pickup":{"lat":57.7003,"lng":11.9668}})";
        QVERIFY(riders.back()->connectToServer());
        QVERIFY(riders.back()->sendRaw("POST /api/v1/bookings HTTP/1.1\r\nHost: t\r\nContent-Type: "
                                       "application/json\r\nContent-Length: "
                                       + QByteArray::number(body.size()) + "\r\n\r\n" + body));
    }
    QTest::qWait(kStallMs);
    m_pg.freeze(false);
    thaw.dismiss();

    int acknowledged = 0;
    for (int i = 0; i < kRiders; ++i) {
        const QList<HttpResponse> answers = riders[std::size_t(i)]->readResponses(1);
        QCOMPARE(answers.size(), 1);
        const HttpResponse &answer = answers.first();
        const QString rows =
            m_pg.psql(QStringLiteral("SELECT count(*) FROM bookings WHERE rider_id = 'lost-answer-%1'").arg(i));
        if (answer.status == 201) {
            ++acknowledged;
            QVERIFY2(rows == QStringLiteral("1"), "a 201 whose booking is not in PostgreSQL");
            const HttpResponse shown = readBooking(http, bookingIdOf(answer), riderToken(answer.json()));
            TC_VERIFY_STATUS(shown, 200);
            QCOMPARE(shown.json().value("state").toString(), QStringLiteral("assigned"));
        } else {
            TC_VERIFY_ERROR(answer, 503, "ledger_unavailable");
            QVERIFY2(rows == QStringLiteral("0"),
                     qPrintable(QStringLiteral("rider %1 was told 503 of a booking PostgreSQL holds: %2")
                                    .arg(i)
                                    .arg(QString::fromUtf8(answer.body))));
        }
    }
    qInfo("%d of %d bookings sent into the stall were committed and acknowledged", acknowledged, kRiders);
}

// While PostgreSQL cannot say whether a booking committed, its request waits for the database (a
// lie is worse than a wait), but not for ever: past --answer-timeout-ms it gets 503 answer_timeout
// and its connection closes. Sent again with its Idempotency-Key once the database is back, it is
// answered with the one booking (replayed if the first attempt committed), never a second one.
void ServerPostgresLedgerTest::aBookingTheLedgerCannotSettleIsAnsweredWithinTheAnswerTimeout()
{
    constexpr int kAnswerTimeoutMs = 1500;
    constexpr int kStallMs = 6500; // past the 5 s statement timeout: the commit's answer is lost
    QTemporaryDir dir;
    const auto started =
        serverOnFreshLedger(dir, {QStringLiteral("--answer-timeout-ms"), QString::number(kAnswerTimeoutMs)});
    QVERIFY2(started, "no server on a fresh ledger (see the warnings above)");
    ServerProcess &server = *started;
    HttpClient http(server.host(), server.port(), 20'000);
    TC_VERIFY_STATUS(book(http, QStringLiteral("before-the-stall")), 201);
    const QByteArray key = freshIdempotencyKey();
    const QByteArray body = bookingBody({{"rider_id", "waits-too-long"}, {"pickup", kPickup}});

    m_pg.freeze(true);
    auto thaw = qScopeGuard([this] { m_pg.freeze(false); });
    QElapsedTimer waited;
    waited.start();
    HttpClient rider(server.host(), server.port(), 20'000);
    const HttpResponse overdue = bookWithKey(rider, body, key);
    const qint64 answeredAfterMs = waited.elapsed();
    TC_VERIFY_ERROR(overdue, 503, "answer_timeout");
    // The sweep looks every 500 ms; the statement timeout (5 s) would have answered later.
    QVERIFY2(answeredAfterMs >= kAnswerTimeoutMs && answeredAfterMs < kAnswerTimeoutMs + 2000,
             qPrintable(QStringLiteral("answered after %1 ms").arg(answeredAfterMs)));
    QVERIFY(overdue.header("Connection").toLower().contains("close")); // the answers behind it would wait
    QTest::qWait(int(std::max<qint64>(0, kStallMs - waited.elapsed())));
    m_pg.freeze(false);
    thaw.dismiss();

    HttpClient retry(server.host(), server.port(), 20'000);
    HttpResponse again;
    QVERIFY(waitUntil(
        [&] {
            again = bookWithKey(retry, body, key);
            return again.status != 503 && again.status != 409; // settling, or the key in progress
        },
        kRecoverMs));
    TC_VERIFY_STATUS(again, 201);
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT count(*) FROM bookings WHERE rider_id = 'waits-too-long'")),
             QStringLiteral("1"));
    qInfo("the retry was %s", again.hasHeader(kReplayedHeader) ? "replayed (the first attempt committed)"
                                                               : "a new booking (the first attempt did not commit)");
}

// SIGTERM while a booking waits for a commit PostgreSQL can neither confirm nor deny: when the
// drain's grace (5 s) ends, the rider hears 503 shutting_down (it may still be done: read it back
// or retry with the Idempotency-Key), not a connection closed without a word (the hostile review
// of the settle: a rider retrying without a key then booked twice).
void ServerPostgresLedgerTest::aServerStoppedWhileACommitIsUnsettledAnswersItsRider_data()
{
    QTest::addColumn<QStringList>("modeArgs");
    QTest::newRow("single") << QStringList{};
    // The rider's connection is a worker process's: the primary must let it answer before it
    // stops it.
    QTest::newRow("processes") << QStringList{QStringLiteral("--mode"), QStringLiteral("processes"),
                                              QStringLiteral("--workers"), QStringLiteral("2")};
}

void ServerPostgresLedgerTest::aServerStoppedWhileACommitIsUnsettledAnswersItsRider()
{
    QFETCH(QStringList, modeArgs);
    static constexpr int kStopAfterMs = 1000;
    constexpr int kGraceMs = 5000; // taxicore-server's shutdown grace
    QTemporaryDir dir;
    const auto started = serverOnFreshLedger(
        dir, modeArgs + QStringList{QStringLiteral("--answer-timeout-ms"), QStringLiteral("60000")});
    QVERIFY2(started, "no server on a fresh ledger (see the warnings above)");
    ServerProcess &server = *started;
    if (!modeArgs.isEmpty()) // the rider's connection must be a worker's
        QVERIFY2(rt::waitForWorkersTakingConnections(server, 2, 20'000), "the workers never took connections");
    HttpClient http(server.host(), server.port(), 20'000);
    TC_VERIFY_STATUS(book(http, QStringLiteral("before-the-stall")), 201);
    const QByteArray key = freshIdempotencyKey();
    const QByteArray body = bookingBody({{"rider_id", "stopped-mid-commit"}, {"pickup", kPickup}});

    m_pg.freeze(true);
    auto thaw = qScopeGuard([this] { m_pg.freeze(false); });
    const qint64 pid = server.pid();
    std::thread stopper([pid] {
        std::this_thread::sleep_for(std::chrono::milliseconds(kStopAfterMs));
        ::kill(pid_t(pid), SIGTERM);
    });
    QElapsedTimer waited;
    waited.start();
    HttpClient rider(server.host(), server.port(), 20'000);
    const HttpResponse answer = bookWithKey(rider, body, key);
    const qint64 answeredAfterMs = waited.elapsed();
    stopper.join();
    QVERIFY2(answer.complete,
             qPrintable(QStringLiteral("no answer after %1 ms: %2").arg(answeredAfterMs).arg(answer.error)));
    TC_VERIFY_ERROR(answer, 503, "shutting_down");
    QVERIFY2(answeredAfterMs >= kStopAfterMs + kGraceMs - 500 && answeredAfterMs < kStopAfterMs + kGraceMs + 3000,
             qPrintable(QStringLiteral("answered after %1 ms").arg(answeredAfterMs)));
    QVERIFY(answer.header("Connection").toLower().contains("close"));
    QVERIFY2(server.waitForExit(30'000), "the server did not stop");
    m_pg.freeze(false);
    thaw.dismiss();
    const QString stored =
        m_pg.psql(QStringLiteral("SELECT count(*) FROM bookings WHERE rider_id = 'stopped-mid-commit'"));
    QVERIFY2(stored == QStringLiteral("0") || stored == QStringLiteral("1"), qPrintable(stored));
    qInfo("the unsettled booking was %s", stored == QStringLiteral("1") ? "committed" : "not committed");
}

// A switch away from processes mode drains the workers: one still awaiting a commit when its
// drain ends answers 503 shutting_down before the supervisor stops it, not a closed connection.
void ServerPostgresLedgerTest::aModeSwitchWhileAWorkerAwaitsACommitAnswersItsRider()
{
    constexpr int kDrainMs = 10'000; // a worker's drain after a switch (kWorkerDrainTimeoutMs)
    QTemporaryDir dir;
    const auto started =
        serverOnFreshLedger(dir, {QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                                  QStringLiteral("1"), QStringLiteral("--answer-timeout-ms"), QStringLiteral("60000")});
    QVERIFY2(started, "no server on a fresh ledger (see the warnings above)");
    ServerProcess &server = *started;
    // The rider's connections must be the worker's (until then the primary serves them itself).
    QVERIFY2(rt::waitForWorkersTakingConnections(server, 1, 20'000), "the worker never took connections");
    HttpClient http(server.host(), server.port(), 20'000);
    TC_VERIFY_STATUS(book(http, QStringLiteral("before-the-stall")), 201);
    http.disconnect();
    // The rider's live feed, on the same worker: told 1001 (going away) when the worker stops,
    // though the worker still waits for the frozen commit when its supervisor kills it.
    QWebSocket feed;
    bool feedOpen = false;
    int feedCloseCode = -1;
    QObject::connect(&feed, &QWebSocket::connected, &feed, [&] { feedOpen = true; });
    QObject::connect(&feed, &QWebSocket::disconnected, &feed, [&] { feedCloseCode = int(feed.closeCode()); });
    feed.open(QUrl(QStringLiteral("ws://%1:%2/api/v1/stream").arg(server.host()).arg(server.port())));
    QVERIFY2(waitUntil([&] { return feedOpen; }, 10'000), "the feed did not open");

    m_pg.freeze(true);
    auto thaw = qScopeGuard([this] { m_pg.freeze(false); });
    HttpClient rider(server.host(), server.port(), 20'000);
    QVERIFY(rider.connectToServer());
    QVERIFY(rider.sendRaw(formatRequest("POST", "/api/v1/bookings",
                                        bookingBody({{"rider_id", "switched-mid-commit"}, {"pickup", kPickup}}),
                                        {{kIdempotencyKeyHeader, freshIdempotencyKey()}})));
    // In the worker's hands once a worker counts it in flight.
    QVERIFY2(waitUntil(
                 [&] {
                     const auto all = rt::workers(server);
                     return std::any_of(all.cbegin(), all.cend(),
                                        [](const rt::WorkerInfo &w) { return w.inFlight > 0; });
                 },
                 10'000),
             "no worker took the booking");
    QElapsedTimer waited; // from before the switch: the drain begins inside the PUT
    waited.start();
    const HttpResponse switched =
        rt::putRuntime(server, QJsonObject{{QStringLiteral("mode"), QStringLiteral("single")}});
    TC_VERIFY_STATUS(switched, 200);
    const QList<HttpResponse> answers = rider.readResponses(1);
    const qint64 answeredAfterMs = waited.elapsed();
    QVERIFY2(answers.size() == 1 && answers.first().complete,
             qPrintable(QStringLiteral("no answer %1 ms after the switch").arg(answeredAfterMs)));
    TC_VERIFY_ERROR(answers.first(), 503, "shutting_down");
    QVERIFY2(answeredAfterMs >= kDrainMs - 1500 && answeredAfterMs < kDrainMs + 3000,
             qPrintable(QStringLiteral("answered %1 ms after the switch").arg(answeredAfterMs)));
    QVERIFY2(waitUntil([&] { return feedCloseCode >= 0; }, 5000), "the feed was not closed");
    QCOMPARE(feedCloseCode, int(QWebSocketProtocol::CloseCodeGoingAway));
    m_pg.freeze(false);
    thaw.dismiss();
    // The server goes on in single mode, on the same ledger.
    HttpClient after(server.host(), server.port(), 20'000);
    TC_VERIFY_STATUS(book(after, QStringLiteral("after-the-switch")), 201);
}

void ServerPostgresLedgerTest::unknownLedgerSchemeIsRefused()
{
    const auto run = ServerProcess::run({QStringLiteral("--ledger"), QStringLiteral("mysql://u:s3cret@h/db")});
    QVERIFY(run.finished);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--ledger must be sqlite: or a postgresql:// URL"), run.err.constData());
    QVERIFY(!run.err.contains("s3cret"));
}

QTEST_GUILESS_MAIN(ServerPostgresLedgerTest)
#include "server_postgres_ledger_test.moc"
