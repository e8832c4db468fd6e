// The ledger's files changed under a running server by hand (review 19):
// - ledger.sqlite-shm deleted in processes mode. The processes that had the ledger open kept the
//   unlinked -shm (their WAL index and locks); a process opening the ledger afterwards (a respawned
//   worker, a switch to processes mode) made a fresh one: two writers appended to one WAL without
//   excluding each other and the ledger was corrupt ("database disk image is malformed"). Now every
//   process refuses commits once its -shm is gone (503, health failing) and a worker refuses to
//   open ledger files that are not the ones its primary opened.
// - The data directory deleted and a second server started on the same path: a respawned worker
//   of the first server opened the second server's ledger and committed into it. It refuses now.
// - ledger.sqlite or its -wal truncated in place: the server answered 201 with health "ok" and the
//   ledger was corrupt at restart. Every process now refuses commits once it sees it.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "RuntimeKit.h"
#include "ServerProcess.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <vector>

using namespace taxicore::test;

namespace {

constexpr int kStartMs = 20'000;

struct Booked {
    qint64 id = 0;
    QByteArray token;
};

QStringList serverArgs(const QString &dataDir, const QString &mode = QStringLiteral("single"))
{
    return {QStringLiteral("--data-dir"), dataDir, QStringLiteral("--cars"),    QStringLiteral("40"),
            QStringLiteral("--mode"),     mode,    QStringLiteral("--workers"), QStringLiteral("2")};
}

HttpResponse book(HttpClient &http, int n)
{
    return http.postJson("/api/v1/bookings",
                         {{"rider_id", QStringLiteral("file-swap-%1").arg(n)},
                          {"pickup", QJsonObject{{"lat", 57.70 + 0.001 * (n % 5)}, {"lng", 11.96 + 0.002 * (n / 5)}}}});
}

Booked booked(const HttpResponse &r)
{
    return {qint64(r.json().value("booking_id").toDouble()), riderToken(r.json())};
}

QString ledgerHealth(HttpClient &http)
{
    return http.get("/healthz").json().value("ledger").toString();
}

} // namespace

class LedgerFileSwapTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aDeletedShmStopsEveryWriterAndKeepsTheLedgerWhole();
    void aRespawnedWorkerDoesNotOpenAnotherServersLedger();
    void aTruncatedLedgerFileRefusesBookings();
    void aTruncatedWalRefusesBookings();
};

void LedgerFileSwapTest::aDeletedShmStopsEveryWriterAndKeepsTheLedgerWhole()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString shm = dir.filePath(QStringLiteral("ledger.sqlite-shm"));
    std::vector<Booked> acknowledged;
    {
        ServerProcess server(serverArgs(dir.path(), QStringLiteral("processes")));
        QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
        QVERIFY(rt::waitForWorkersTakingConnections(server, 2, kStartMs));
        HttpClient http(server.host(), server.port(), 10'000);
        for (int i = 0; i < 4; ++i) {
            const HttpResponse r = book(http, i);
            TC_VERIFY_STATUS(r, 201);
            acknowledged.push_back(booked(r));
        }
        QVERIFY(QFile::remove(shm));

        // Every process (any may answer) refuses: its WAL index is no longer the file's.
        for (int i = 0; i < 6; ++i) {
            const HttpResponse r = book(http, 10 + i);
            if (r.status == 201)
                acknowledged.push_back(booked(r)); // must survive too, but is a failure below
            TC_VERIFY_ERROR(r, 503, "ledger_unavailable");
            QVERIFY2(r.body.contains("-shm"), r.body.constData());
        }
        QCOMPARE(ledgerHealth(http), QStringLiteral("failing"));

        // A worker started now must not open the ledger with a WAL index of its own.
        const QList<rt::WorkerInfo> workers = rt::serving(server);
        QVERIFY(!workers.isEmpty());
        QVERIFY(::kill(pid_t(workers.first().pid), SIGKILL) == 0);
        QTRY_VERIFY_WITH_TIMEOUT(server.stderrText().contains("not the one its primary opened"), 10'000);
        QVERIFY2(!QFileInfo::exists(shm), "a respawned worker made a -shm of its own");
        for (int i = 0; i < 4; ++i)
            TC_VERIFY_ERROR(book(http, 20 + i), 503, "ledger_unavailable");
        QCOMPARE(server.stop(), 0);
    }
    // The ledger is whole and holds every acknowledged booking.
    ServerProcess restarted(serverArgs(dir.path()));
    QVERIFY2(restarted.start(kStartMs), qPrintable(restarted.error()));
    HttpClient http(restarted.host(), restarted.port(), 10'000);
    for (const Booked &b : acknowledged)
        TC_VERIFY_STATUS(readBooking(http, b.id, b.token), 200);
    TC_VERIFY_STATUS(book(http, 99), 201);
    QCOMPARE(restarted.stop(), 0);
}

void LedgerFileSwapTest::aRespawnedWorkerDoesNotOpenAnotherServersLedger()
{
    QTemporaryDir parent;
    QVERIFY(parent.isValid());
    const QString dataDir = parent.filePath(QStringLiteral("data"));
    ServerProcess first(serverArgs(dataDir, QStringLiteral("processes")));
    QVERIFY2(first.start(kStartMs), qPrintable(first.error()));
    QVERIFY(rt::waitForWorkersTakingConnections(first, 2, kStartMs));
    HttpClient http(first.host(), first.port(), 10'000);
    TC_VERIFY_STATUS(book(http, 1), 201);

    QVERIFY(QDir(dataDir).removeRecursively());
    ServerProcess second(serverArgs(dataDir));
    QVERIFY2(second.start(kStartMs), qPrintable(second.error()));
    HttpClient other(second.host(), second.port(), 10'000);
    TC_VERIFY_STATUS(book(other, 2), 201);

    const QList<rt::WorkerInfo> workers = rt::serving(first);
    QVERIFY(!workers.isEmpty());
    QVERIFY(::kill(pid_t(workers.first().pid), SIGKILL) == 0);
    // The respawned worker finds another server's files at the path and says so.
    QTRY_VERIFY_WITH_TIMEOUT(first.stderrText().contains("not the one its primary opened"), 10'000);
    for (int i = 0; i < 8; ++i)
        TC_VERIFY_ERROR(book(http, 20 + i), 503, "ledger_unavailable");
    QCOMPARE(first.stop(), 0);
    TC_VERIFY_STATUS(book(other, 3), 201);
    QCOMPARE(second.stop(), 0);
}

void LedgerFileSwapTest::aTruncatedLedgerFileRefusesBookings()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(QStringLiteral("ledger.sqlite"));
    const QString wal = dir.filePath(QStringLiteral("ledger.sqlite-wal"));
    ServerProcess server(serverArgs(dir.path()));
    QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
    HttpClient http(server.host(), server.port(), 10'000);
    for (int i = 0; i < 3; ++i)
        TC_VERIFY_STATUS(book(http, i), 201);
    // Idle: the WAL is copied into the file (and emptied) within a few checkpoint intervals.
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(wal).size() == 0, 5'000);
    QVERIFY(QFileInfo(file).size() > 0);
    QVERIFY(QFile::resize(file, 0)); // truncate -s 0 ledger.sqlite

    const HttpResponse refused = book(http, 10);
    TC_VERIFY_ERROR(refused, 503, "ledger_unavailable");
    QVERIFY2(refused.body.contains("shrank"), refused.body.constData());
    QCOMPARE(ledgerHealth(http), QStringLiteral("failing"));
    TC_VERIFY_ERROR(book(http, 11), 503, "ledger_unavailable");
    QTRY_VERIFY_WITH_TIMEOUT(server.stderrText().contains("ledger " + file.toUtf8() + ": the file shrank"), 5'000);
    QCOMPARE(server.stop(), 0);
}

void LedgerFileSwapTest::aTruncatedWalRefusesBookings()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString wal = dir.filePath(QStringLiteral("ledger.sqlite-wal"));
    ServerProcess server(serverArgs(dir.path()));
    QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
    HttpClient http(server.host(), server.port(), 10'000);
    TC_VERIFY_STATUS(book(http, 1), 201);
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(wal).size() == 0, 5'000);
    // A burst inside one checkpoint interval (500 ms idle): its commits are in the WAL only.
    for (int i = 0; i < 3; ++i)
        TC_VERIFY_STATUS(book(http, 2 + i), 201);
    QVERIFY(QFileInfo(wal).size() > 0);
    QVERIFY(QFile::resize(wal, 0)); // truncate -s 0 ledger.sqlite-wal

    const HttpResponse refused = book(http, 10);
    TC_VERIFY_ERROR(refused, 503, "ledger_unavailable");
    QVERIFY2(refused.body.contains("WAL") && refused.body.contains("truncated"), refused.body.constData());
    QCOMPARE(ledgerHealth(http), QStringLiteral("failing"));
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(LedgerFileSwapTest)
#include "ledger_server_file_swap_test.moc"
