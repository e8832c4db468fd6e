// A ledger that cannot be used is a clear error at start, never silent loss (issue 8): the server
// exits non-zero and names the offending path (or option) on stderr, without serving.

#include "ServerProcess.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore::test;

class ServerLedgerErrorsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void dataDirIsARegularFile();
    void garbageLedgerFile();
    void bogusDurability();
};

namespace {

QByteArray describe(const ServerProcess::RunResult &r)
{
    return "finished " + QByteArray::number(r.finished) + ", exit " + QByteArray::number(r.exitCode)
           + ", stdout: " + r.out.left(300) + ", stderr: " + r.err.left(600);
}

} // namespace

void ServerLedgerErrorsTest::dataDirIsARegularFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString file = dir.filePath(QStringLiteral("not-a-dir"));
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("just a file\n");
    }
    const auto r = ServerProcess::run({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"),
                                       file, QStringLiteral("--cars"), QStringLiteral("10")},
                                      20'000);
    QVERIFY2(r.finished && r.exitCode != 0, describe(r).constData());
    QVERIFY2(!r.out.contains("listening on"), describe(r).constData());
    QVERIFY2(r.err.contains(file.toLocal8Bit()), describe(r).constData());
    // The file is untouched.
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), QByteArray("just a file\n"));
}

void ServerLedgerErrorsTest::garbageLedgerFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString ledger = dir.filePath(QStringLiteral("ledger.sqlite"));
    QByteArray garbage;
    for (int i = 0; i < 4096; ++i)
        garbage += char((i * 131 + 7) & 0xff);
    {
        QFile f(ledger);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(garbage);
    }
    const auto r = ServerProcess::run({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"),
                                       dir.path(), QStringLiteral("--cars"), QStringLiteral("10")},
                                      20'000);
    QVERIFY2(r.finished && r.exitCode != 0, describe(r).constData());
    QVERIFY2(!r.out.contains("listening on"), describe(r).constData());
    QVERIFY2(r.err.contains(ledger.toLocal8Bit()), describe(r).constData());
    // Never silently replaced.
    QFile f(ledger);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), garbage);
}

void ServerLedgerErrorsTest::bogusDurability()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto r = ServerProcess::run({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"),
                                       dir.path(), QStringLiteral("--durability"), QStringLiteral("bogus")},
                                      20'000);
    QVERIFY2(r.finished, describe(r).constData());
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--durability"), describe(r).constData());
    QVERIFY2(!r.out.contains("listening on"), describe(r).constData());
}

QTEST_MAIN(ServerLedgerErrorsTest)
#include "ledger_server_errors_test.moc"
