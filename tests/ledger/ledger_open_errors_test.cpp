// A corrupt, locked or unwritable ledger is a clear error at open (naming the file and the
// problem), never a silent loss; and a healthy file opens again once the cause is gone.
#include "LedgerTestSupport.h"

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <unistd.h>

using namespace taxicore;
using namespace ledgertest;

class LedgerOpenErrorTest : public QObject {
    Q_OBJECT

private slots:
    void garbageFileIsNotADatabase();
    void damagedPageIsCorrupt();
    void lockedBeyondTimeoutIsAnError();
    void uncreatableDirectoryIsAnError();
    void readOnlyDirectoryIsAnError();
    void durabilityNamesParse();
};

namespace {

bool writeBytes(const QString &file, qint64 offset, const QByteArray &bytes)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadWrite))
        return false;
    return f.seek(offset) && f.write(bytes) == bytes.size();
}

} // namespace

void LedgerOpenErrorTest::garbageFileIsNotADatabase()
{
    QTemporaryDir dir;
    const QString file = ledgerFilePath(dir.path());
    QByteArray garbage(64 * 1024, '\0');
    for (int i = 0; i < garbage.size(); ++i)
        garbage[i] = char((i * 7919 + 13) & 0xff);
    QVERIFY(writeBytes(file, 0, garbage));

    const auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY(!opened.ledger);
    QVERIFY2(opened.error.contains(file), qPrintable(opened.error));
    QVERIFY2(opened.error.contains(QLatin1StringView("not a SQLite database")), qPrintable(opened.error));
    // Nothing was overwritten: the evidence stays for the operator.
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), garbage);
}

void LedgerOpenErrorTest::damagedPageIsCorrupt()
{
    QTemporaryDir dir;
    {
        auto opened = Ledger::open(optionsFor(dir.path()));
        QVERIFY2(opened.ledger, qPrintable(opened.error));
        for (quint64 id = 1; id <= 3000; ++id)
            opened.ledger->append(booking(id));
    } // closing checkpoints the WAL into the file
    const QString file = ledgerFilePath(dir.path());
    const qint64 size = QFileInfo(file).size();
    QVERIFY(size > 20 * 4096);
    QVERIFY(writeBytes(file, 10 * 4096, QByteArray(3 * 4096, char(0xA5))));

    const auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY(!opened.ledger);
    QVERIFY2(opened.error.contains(file), qPrintable(opened.error));
    QVERIFY2(opened.error.contains(QLatin1StringView("corrupt")), qPrintable(opened.error));
}

void LedgerOpenErrorTest::lockedBeyondTimeoutIsAnError()
{
    QTemporaryDir dir;
    QVERIFY(Ledger::open(optionsFor(dir.path())).ledger); // create it
    const QString file = ledgerFilePath(dir.path());
    RawConnection holder(file);
    QVERIFY(holder.exec(QStringLiteral("BEGIN IMMEDIATE"))); // holds the write lock

    LedgerOptions options = optionsFor(dir.path());
    options.busyTimeoutMs = 300;
    QElapsedTimer took;
    took.start();
    const auto opened = Ledger::open(options);
    QVERIFY(!opened.ledger);
    QVERIFY2(opened.error.contains(file), qPrintable(opened.error));
    QVERIFY2(opened.error.contains(QLatin1StringView("locked")), qPrintable(opened.error));
    QVERIFY2(took.elapsed() < 5000, "open waited far beyond its busy timeout");

    QVERIFY(holder.exec(QStringLiteral("ROLLBACK")));
    const auto again = Ledger::open(options);
    QVERIFY2(again.ledger, qPrintable(again.error));
}

void LedgerOpenErrorTest::uncreatableDirectoryIsAnError()
{
    QTemporaryDir dir;
    const QString blocker = dir.filePath(QStringLiteral("not-a-dir"));
    QVERIFY(writeBytes(blocker, 0, "x"));

    auto opened = Ledger::open(optionsFor(blocker + QStringLiteral("/data")));
    QVERIFY(!opened.ledger);
    QVERIFY2(opened.error.contains(blocker), qPrintable(opened.error));
    QVERIFY2(opened.error.contains(QLatin1StringView("cannot create")), qPrintable(opened.error));

    opened = Ledger::open(optionsFor(blocker)); // the data directory itself is a file
    QVERIFY(!opened.ledger);
    QVERIFY2(opened.error.contains(QLatin1StringView("is a file")), qPrintable(opened.error));
}

void LedgerOpenErrorTest::readOnlyDirectoryIsAnError()
{
    if (::geteuid() == 0)
        QSKIP("root writes through permission bits; covered by uncreatableDirectoryIsAnError");
    QTemporaryDir dir;
    const QString data = dir.filePath(QStringLiteral("data"));
    QVERIFY(QDir().mkpath(data));
    QVERIFY(QFile::setPermissions(data, QFile::ReadOwner | QFile::ExeOwner));
    const auto opened = Ledger::open(optionsFor(data));
    QFile::setPermissions(data, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QVERIFY(!opened.ledger);
    QVERIFY2(opened.error.contains(data), qPrintable(opened.error));
}

void LedgerOpenErrorTest::durabilityNamesParse()
{
    QCOMPARE(parseLedgerDurability(u"normal"), LedgerDurability::Normal);
    QCOMPARE(parseLedgerDurability(u"full"), LedgerDurability::Full);
    QVERIFY(!parseLedgerDurability(u"fsync"));
    QCOMPARE(ledgerDurabilityName(LedgerDurability::Full), QStringLiteral("full"));
}

QTEST_GUILESS_MAIN(LedgerOpenErrorTest)
#include "ledger_open_errors_test.moc"
