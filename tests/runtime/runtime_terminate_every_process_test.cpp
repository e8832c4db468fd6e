// `pkill taxicore-server`, or a SIGTERM to the server's process group, reaches the primary and every
// worker at once. A worker must drain like the primary asks it to (answer what is in flight, then
// exit), not die of the signal with a request half-served: here a booking whose commit waits on the
// ledger's write lock (a real SQLite lock, held by this test) inside a worker when every process
// gets SIGTERM. The rider gets the 201 once the lock is let go, and the server exits cleanly.
// (Before: the worker died at once and the rider's connection was reset, no answer.)

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RawSocket.h"
#include "RuntimeKit.h"
#include "ServerProcess.h"

#include <QDeadlineTimer>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <poll.h>

using namespace taxicore::test;

namespace {

constexpr int kStartMs = 20'000;
const QJsonObject kPickup{{"lat", 57.7065}, {"lng", 11.9670}};

// Requests the workers are serving now.
int inFlightInWorkers(const ServerProcess &server)
{
    int inFlight = 0;
    for (const rt::WorkerInfo &w : rt::serving(server))
        inFlight += int(w.inFlight);
    return inFlight;
}

// What the server sent on `fd` until it closed or `timeoutMs` passed.
QByteArray readUntilClosed(int fd, int timeoutMs)
{
    QByteArray received;
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, int(std::max<qint64>(1, deadline.remainingTime()))) <= 0)
            continue;
        char buffer[4096];
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0)
            break;
        received.append(buffer, n);
    }
    return received;
}

} // namespace

class TerminateEveryProcessTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aBookingInFlightIsAnsweredWhenEveryProcessIsTerminated();
};

void TerminateEveryProcessTest::aBookingInFlightIsAnsweredWhenEveryProcessIsTerminated()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ServerProcess server({QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--cars"), QStringLiteral("5"),
                          QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2")});
    QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
    QVERIFY2(rt::waitForWorkersTakingConnections(server, 2, kStartMs), qPrintable(rt::describeEvents(server)));
    QList<qint64> pids{server.pid()};
    for (const rt::WorkerInfo &w : rt::serving(server))
        pids.append(w.pid);

    QSqlDatabase holder = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("holder"));
    const auto forget = qScopeGuard([&holder] {
        holder.close();
        holder = QSqlDatabase();
        QSqlDatabase::removeDatabase(QStringLiteral("holder"));
    });
    holder.setDatabaseName(dir.filePath(QStringLiteral("ledger.sqlite")));
    QVERIFY2(holder.open(), qPrintable(holder.lastError().text()));
    QSqlQuery lock(holder);
    QVERIFY2(lock.exec(QStringLiteral("BEGIN IMMEDIATE")), qPrintable(lock.lastError().text()));

    const int rider = connectRaw(server.port());
    QVERIFY(rider >= 0);
    const auto closeRider = qScopeGuard([rider] { ::close(rider); });
    const QByteArray body = QJsonDocument(QJsonObject{{"rider_id", "terminated"}, {"pickup", kPickup}}).toJson();
    QVERIFY(sendAll(rider, "POST /api/v1/bookings HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                           "Content-Length: "
                               + QByteArray::number(body.size()) + "\r\n\r\n" + body));
    // The booking is in a worker, waiting for its commit.
    QTRY_VERIFY_WITH_TIMEOUT(inFlightInWorkers(server) >= 1, 5000);

    // As pkill does: one that is gone already (a worker that drained and exited on the primary's
    // word, before its own signal came) is no failure.
    for (const qint64 pid : pids)
        QVERIFY2(::kill(pid_t(pid), SIGTERM) == 0 || errno == ESRCH, strerror(errno));
    QTest::qWait(300);
    QVERIFY(lock.exec(QStringLiteral("ROLLBACK")));

    const QByteArray answer = readUntilClosed(rider, 10'000);
    QVERIFY2(answer.startsWith("HTTP/1.1 201"), answer.constData());
    QVERIFY(server.waitForExit(20'000));
    QCOMPARE(server.exitCode(), 0);
}

QTEST_GUILESS_MAIN(TerminateEveryProcessTest)
#include "runtime_terminate_every_process_test.moc"
