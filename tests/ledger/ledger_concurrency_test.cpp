// Three writer processes on one file (each its own connection, WAL + busy_timeout + retry):
// every row arrives and no SQLITE_BUSY reaches a caller.
#include "LedgerTestSupport.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace taxicore;
using namespace ledgertest;

namespace {
constexpr int kWriters = 3;
constexpr int kPerWriter = 30000;
constexpr int kWaitMs = 90000;
constexpr qint64 kWalResetBytes = 2 << 20;
} // namespace

class LedgerConcurrencyTest : public QObject {
    Q_OBJECT

private slots:
    void threeProcessesWriteEverythingWithoutBusyErrors();
};

void LedgerConcurrencyTest::threeProcessesWriteEverythingWithoutBusyErrors()
{
    QTemporaryDir dir;
    std::vector<std::unique_ptr<QProcess>> writers;
    for (int w = 0; w < kWriters; ++w) {
        writers.push_back(std::make_unique<QProcess>());
        // All start on a file that does not exist yet: creation and migration race too.
        startWriter(*writers.back(), dir.path(), quint64(w) * 1'000'000 + 1, kPerWriter,
                    {QStringLiteral("normal"), QString::number(kWalResetBytes)});
    }
    // Under writes from several processes no checkpoint reaches the WAL's end: only the
    // writers' TRUNCATE past walResetBytes keeps it bounded: peaks of 2–35 MiB seen here,
    // ~105 MiB without it.
    const QString wal = ledgerFilePath(dir.path()) + QStringLiteral("-wal");
    qint64 largestWal = 0;
    std::vector<QByteArray> out(writers.size());
    QElapsedTimer waited;
    waited.start();
    for (bool running = true; running && waited.elapsed() < kWaitMs;) {
        running = false;
        for (std::size_t w = 0; w < writers.size(); ++w) {
            if (writers[w]->state() != QProcess::NotRunning) {
                writers[w]->waitForFinished(10); // also drains its stdout, so it never blocks
                running = true;
            }
            out[w] += writers[w]->readAllStandardOutput();
        }
        largestWal = std::max(largestWal, QFileInfo(wal).size());
    }
    qInfo() << "largest WAL seen:" << largestWal / 1024 << "KiB";
    for (std::size_t w = 0; w < writers.size(); ++w) {
        QProcess &writer = *writers[w];
        QVERIFY2(writer.state() == QProcess::NotRunning, "a writer did not finish in time");
        const QByteArray errors = writer.readAllStandardError();
        QVERIFY2(errors.isEmpty(), errors.constData());
        QCOMPARE(writer.exitStatus(), QProcess::NormalExit);
        QCOMPARE(writer.exitCode(), 0);
        QCOMPARE(out[w].count('\n'), kPerWriter + 2);
        QVERIFY(out[w].endsWith("done\n"));
        const QList<QByteArray> stats = out[w].split('\n').at(kPerWriter).split(' ');
        QCOMPARE(stats.size(), 3);
        qInfo() << "writer: transactions" << stats.at(1) << "busy retries" << stats.at(2);
    }
    QVERIFY2(largestWal < 24 * kWalResetBytes, "the WAL kept growing");
    RawConnection raw(ledgerFilePath(dir.path()));
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM bookings")), kWriters * kPerWriter);
    for (int w = 0; w < kWriters; ++w) {
        const qint64 first = qint64(w) * 1'000'000 + 1;
        QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM bookings WHERE id BETWEEN %1 AND %2")
                                .arg(first)
                                .arg(first + kPerWriter - 1)),
                 kPerWriter);
    }
    // Every third booking was completed with a trip.
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM trips")),
             raw.scalar(QStringLiteral("SELECT count(*) FROM bookings WHERE state = 'completed'")));
    QSqlQuery mode(raw.db());
    QVERIFY(mode.exec(QStringLiteral("PRAGMA journal_mode")) && mode.next());
    QCOMPARE(mode.value(0).toString(), QStringLiteral("wal"));
}

QTEST_GUILESS_MAIN(LedgerConcurrencyTest)
#include "ledger_concurrency_test.moc"
