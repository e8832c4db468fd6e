// One ledger file, one server, whatever path leads to it (the hostile review of the ledger's
// files): two data directories whose ledger.sqlite is one file through a symbolic link each ran a
// server that acknowledged bookings of the same cars (cars booked twice; a restart then expired
// the bookings that collided), and through a hard link each path had its own -wal and -shm, so two
// servers wrote one file without excluding each other and left it corrupt. The data directory's
// lock (server.lock) does not see either: the server now also locks the ledger file itself, and
// refuses a ledger file with more than one name.

#include "ServerProcess.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <unistd.h>

using namespace taxicore::test;

namespace {

constexpr int kStartMs = 20'000;
constexpr int kRefusedWithinMs = 15'000;

QStringList serverArgs(const QString &dataDir)
{
    return {QStringLiteral("--data-dir"), dataDir, QStringLiteral("--cars"), QStringLiteral("10")};
}

QString ledgerIn(const QTemporaryDir &dir)
{
    return QDir(dir.path()).filePath(QStringLiteral("ledger.sqlite"));
}

} // namespace

class LedgerSharedFileTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aLedgerFileReachedThroughASymlinkServesOneServer();
    void aHardLinkedLedgerFileIsRefused();
};

void LedgerSharedFileTest::aLedgerFileReachedThroughASymlinkServesOneServer()
{
    QTemporaryDir first;
    QTemporaryDir second;
    QVERIFY(first.isValid() && second.isValid());
    ServerProcess owner(serverArgs(first.path()));
    QVERIFY2(owner.start(kStartMs), qPrintable(owner.error()));
    QVERIFY(QFile::exists(ledgerIn(first)));
    QVERIFY(QFile::link(ledgerIn(first), ledgerIn(second)));

    const ServerProcess::RunResult other = ServerProcess::run(serverArgs(second.path()), kRefusedWithinMs);
    QVERIFY2(other.finished, "a second server started on the ledger file another server holds");
    QVERIFY(other.exitCode != 0);
    QVERIFY2(other.err.contains("is in use by another TaxiCore server"), other.err.constData());
    QVERIFY2(other.err.contains(QFile::encodeName(ledgerIn(second))), other.err.constData());
    QVERIFY(owner.isRunning());
    QCOMPARE(owner.stop(), 0);

    // The first server gone, the second may use the file (one server at a time is the rule).
    ServerProcess next(serverArgs(second.path()));
    QVERIFY2(next.start(kStartMs), qPrintable(next.error() + QString::fromUtf8(next.stderrText())));
    QCOMPARE(next.stop(), 0);
}

void LedgerSharedFileTest::aHardLinkedLedgerFileIsRefused()
{
    QTemporaryDir first;
    QTemporaryDir second;
    QVERIFY(first.isValid() && second.isValid());
    ServerProcess once(serverArgs(first.path()));
    QVERIFY2(once.start(kStartMs), qPrintable(once.error()));
    QCOMPARE(once.stop(), 0);
    QVERIFY(::link(QFile::encodeName(ledgerIn(first)).constData(), QFile::encodeName(ledgerIn(second)).constData())
            == 0);

    // Each name would get its own -wal and -shm: neither may be used while both exist.
    for (const QTemporaryDir *dir : {&first, &second}) {
        const ServerProcess::RunResult run = ServerProcess::run(serverArgs(dir->path()), kRefusedWithinMs);
        QVERIFY2(run.finished, "a server started on a ledger file with two names");
        QVERIFY(run.exitCode != 0);
        QVERIFY2(run.err.contains("has 2 names (hard links)"), run.err.constData());
    }
    QVERIFY(QFile::remove(ledgerIn(second)));
    ServerProcess again(serverArgs(first.path()));
    QVERIFY2(again.start(kStartMs), qPrintable(again.error() + QString::fromUtf8(again.stderrText())));
    QCOMPARE(again.stop(), 0);
}

QTEST_GUILESS_MAIN(LedgerSharedFileTest)
#include "ledger_server_shared_file_test.moc"
