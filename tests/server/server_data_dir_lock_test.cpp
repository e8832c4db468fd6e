// One server per data directory (issue 15 item 2): a second server started on a directory that
// a running server owns exits 1 at once, naming the directory and the owner's pid, and the owner
// keeps serving its ledger; the lock goes with its owner, even when it is killed with SIGKILL. A
// --data-dir that cannot be a directory (a file, or under one) is named as such. Deleting
// server.lock (it looks like a stale pidfile) does not let a second server in: the directory
// itself is locked too.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>

using namespace taxicore::test;

namespace {
// "At once": the refusal comes before the city is loaded, well under a normal start.
constexpr int kRefusalMs = 5000;
constexpr int kStartMs = 15'000;

QStringList serverArgs(const QString &dataDir, const QString &mode = QStringLiteral("single"))
{
    return {QStringLiteral("--data-dir"), dataDir, QStringLiteral("--cars"),    QStringLiteral("10"),
            QStringLiteral("--mode"),     mode,    QStringLiteral("--workers"), QStringLiteral("2")};
}

HttpResponse book(const ServerProcess &server, const QString &rider)
{
    HttpClient http(server.host(), server.port(), 10'000);
    return http.postJson("/api/v1/bookings",
                         {{"rider_id", rider}, {"pickup", QJsonObject{{"lat", 57.70}, {"lng", 11.97}}}});
}
} // namespace

class DataDirLockTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void secondServerOnTheSameDirectoryExitsNamingTheOwner_data();
    void secondServerOnTheSameDirectoryExitsNamingTheOwner();
    void deletingTheLockFileLetsNoSecondServerIn_data();
    void deletingTheLockFileLetsNoSecondServerIn();
    void lockGoesWithItsOwnerEvenAfterSigkill();
    void otherDirectoriesAreIndependent();
    void dataDirThatIsNoDirectoryIsNamedAsSuch_data();
    void dataDirThatIsNoDirectoryIsNamedAsSuch();
};

void DataDirLockTest::secondServerOnTheSameDirectoryExitsNamingTheOwner_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void DataDirLockTest::secondServerOnTheSameDirectoryExitsNamingTheOwner()
{
    QFETCH(QString, mode);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ServerProcess owner(serverArgs(dir.path(), mode));
    QVERIFY2(owner.start(kStartMs), qPrintable(owner.error()));
    const HttpResponse first = book(owner, QStringLiteral("rider-first"));
    TC_VERIFY_STATUS(first, 201);

    QElapsedTimer timer;
    timer.start();
    const ServerProcess::RunResult second = ServerProcess::run(
        QStringList{QStringLiteral("--port"), QStringLiteral("0")} + serverArgs(dir.path(), mode), kRefusalMs);
    QVERIFY2(second.finished, ("the second server kept running; stdout: " + second.out).constData());
    QCOMPARE(second.exitCode, 1);
    QVERIFY2(timer.elapsed() < kRefusalMs, QByteArray::number(timer.elapsed()).constData());
    QVERIFY2(second.out.isEmpty(), second.out.constData()); // never claimed to listen
    const QString err = QString::fromLocal8Bit(second.err);
    QVERIFY2(err.contains(dir.path()), qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("pid %1").arg(owner.pid())), qPrintable(err));

    // The owner was not disturbed: it still serves and still numbers bookings after its own.
    const HttpResponse next = book(owner, QStringLiteral("rider-next"));
    TC_VERIFY_STATUS(next, 201);
    QVERIFY(next.json().value("booking_id").toDouble() > first.json().value("booking_id").toDouble());
    QCOMPARE(owner.stop(), 0);
}

void DataDirLockTest::deletingTheLockFileLetsNoSecondServerIn_data()
{
    secondServerOnTheSameDirectoryExitsNamingTheOwner_data();
}

// server.lock stays behind after every stop with a pid in it: an operator may take it for a stale
// pidfile and delete it. Before, a second server then locked a new file, both handed out booking
// ids 1, 2, 3… and the second one's bookings replaced the first one's acknowledged ones.
void DataDirLockTest::deletingTheLockFileLetsNoSecondServerIn()
{
    QFETCH(QString, mode);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ServerProcess owner(serverArgs(dir.path(), mode));
    QVERIFY2(owner.start(kStartMs), qPrintable(owner.error()));
    const HttpResponse first = book(owner, QStringLiteral("rider-first"));
    TC_VERIFY_STATUS(first, 201);
    QVERIFY(QFile::remove(dir.filePath(QStringLiteral("server.lock"))));

    const ServerProcess::RunResult second = ServerProcess::run(
        QStringList{QStringLiteral("--port"), QStringLiteral("0")} + serverArgs(dir.path(), mode), kRefusalMs);
    QVERIFY2(second.finished, ("the second server kept running; stdout: " + second.out).constData());
    QCOMPARE(second.exitCode, 1);
    QVERIFY2(second.out.isEmpty(), second.out.constData()); // never claimed to listen
    const QString err = QString::fromLocal8Bit(second.err);
    QVERIFY2(err.contains(QStringLiteral("the data directory %1 is in use by another TaxiCore server").arg(dir.path())),
             qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("pid %1").arg(owner.pid())), qPrintable(err));

    // The owner was not disturbed, and once it stopped the directory is free again.
    const HttpResponse next = book(owner, QStringLiteral("rider-next"));
    TC_VERIFY_STATUS(next, 201);
    QVERIFY(next.json().value("booking_id").toDouble() > first.json().value("booking_id").toDouble());
    QCOMPARE(owner.stop(), 0);
    ServerProcess again(serverArgs(dir.path(), mode));
    QVERIFY2(again.start(kStartMs), qPrintable(again.error()));
    QCOMPARE(again.stop(), 0);
}

void DataDirLockTest::lockGoesWithItsOwnerEvenAfterSigkill()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    {
        // Processes mode: the workers must not have inherited the lock either.
        ServerProcess owner(serverArgs(dir.path(), QStringLiteral("processes")));
        QVERIFY2(owner.start(kStartMs), qPrintable(owner.error()));
        TC_VERIFY_STATUS(book(owner, QStringLiteral("rider-a")), 201);
        QVERIFY(::kill(pid_t(owner.pid()), SIGKILL) == 0);
        QVERIFY(owner.waitForExit(5000));
    }
    // The lock file stays behind with a dead pid in it; it must not keep the next server out.
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("server.lock"))));
    ServerProcess next(serverArgs(dir.path()));
    QVERIFY2(next.start(kStartMs), qPrintable(next.error()));
    TC_VERIFY_STATUS(book(next, QStringLiteral("rider-b")), 201);
    QCOMPARE(next.stop(), 0);
    // And after a graceful stop.
    ServerProcess again(serverArgs(dir.path()));
    QVERIFY2(again.start(kStartMs), qPrintable(again.error()));
    QCOMPARE(again.stop(), 0);
}

void DataDirLockTest::otherDirectoriesAreIndependent()
{
    QTemporaryDir a;
    QTemporaryDir b;
    ServerProcess first(serverArgs(a.path()));
    ServerProcess second(serverArgs(b.path()));
    QVERIFY2(first.start(kStartMs), qPrintable(first.error()));
    QVERIFY2(second.start(kStartMs), qPrintable(second.error()));
    QCOMPARE(second.stop(), 0);
    QCOMPARE(first.stop(), 0);
}

void DataDirLockTest::dataDirThatIsNoDirectoryIsNamedAsSuch_data()
{
    QTest::addColumn<QString>("under");   // the --data-dir, below the scratch directory
    QTest::addColumn<QString>("theFile"); // the regular file in its way
    QTest::addColumn<QString>("message");
    QTest::newRow("a file") << QStringLiteral("notes.txt") << QStringLiteral("notes.txt")
                            << QStringLiteral("is a file, not a directory");
    QTest::newRow("under a file") << QStringLiteral("notes.txt/data") << QStringLiteral("notes.txt")
                                  << QStringLiteral("is a file, not a directory");
}

// An operator who points --data-dir at a file learns that, not that a directory cannot be made.
void DataDirLockTest::dataDirThatIsNoDirectoryIsNamedAsSuch()
{
    QFETCH(QString, under);
    QFETCH(QString, theFile);
    QFETCH(QString, message);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile file(dir.filePath(theFile));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not a directory\n");
    file.close();
    const ServerProcess::RunResult result = ServerProcess::run(
        {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"), dir.filePath(under)}, kRefusalMs);
    QVERIFY2(result.finished, ("the server kept running; stdout: " + result.out).constData());
    QCOMPARE(result.exitCode, 1);
    const QString err = QString::fromLocal8Bit(result.err);
    QVERIFY2(err.contains(QStringLiteral("%1 %2").arg(dir.filePath(theFile), message)), qPrintable(err));
    QVERIFY2(!err.contains(QStringLiteral("cannot create")) || under != theFile, qPrintable(err));
    // The file is untouched.
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), QByteArray("not a directory\n"));
}

QTEST_GUILESS_MAIN(DataDirLockTest)
#include "server_data_dir_lock_test.moc"
