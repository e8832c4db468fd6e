// kill -9 in the middle of a burst: every booking the writer acknowledged (printed after its
// commit callback) is in the file afterwards, and the restore scan sees exactly the open ones.
#include "LedgerTestSupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <set>
#include <signal.h>

using namespace taxicore;
using namespace ledgertest;

namespace {
constexpr int kAckedBeforeKill = 3000; // acknowledgements to see before pulling the plug
constexpr int kBurst = 2'000'000;      // far more than can commit before the kill
} // namespace

class LedgerCrashTest : public QObject {
    Q_OBJECT

private slots:
    void acknowledgedBookingsSurviveKill9_data();
    void acknowledgedBookingsSurviveKill9();
};

void LedgerCrashTest::acknowledgedBookingsSurviveKill9_data()
{
    QTest::addColumn<QString>("durability");
    QTest::newRow("normal") << QStringLiteral("normal");
    QTest::newRow("full") << QStringLiteral("full");
}

void LedgerCrashTest::acknowledgedBookingsSurviveKill9()
{
    QFETCH(QString, durability);
    QTemporaryDir dir;
    QProcess writer;
    startWriter(writer, dir.path(), 1, kBurst, {durability});
    QVERIFY2(writer.waitForStarted(10000), qPrintable(writer.errorString()));

    QByteArray out;
    QElapsedTimer waited;
    waited.start();
    while (out.count('\n') < kAckedBeforeKill && waited.elapsed() < 60000 && writer.state() == QProcess::Running) {
        writer.waitForReadyRead(1000);
        out += writer.readAllStandardOutput();
    }
    QVERIFY2(writer.state() == QProcess::Running, writer.readAllStandardError().constData());
    ::kill(pid_t(writer.processId()), SIGKILL);
    QVERIFY(writer.waitForFinished(10000));
    out += writer.readAllStandardOutput();
    QCOMPARE(writer.exitStatus(), QProcess::CrashExit);

    std::set<quint64> open;
    std::set<quint64> completed;
    const QList<QByteArray> lines = out.split('\n');
    for (int i = 0; i + 1 < lines.size(); ++i) { // the last piece may be a cut line
        const QList<QByteArray> parts = lines.at(i).split(' ');
        QCOMPARE(parts.size(), 2);
        (parts.at(1) == "open" ? open : completed).insert(parts.at(0).toULongLong());
    }
    QVERIFY(open.size() + completed.size() >= std::size_t(kAckedBeforeKill));
    QVERIFY(!out.contains("done"));

    auto reopened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(reopened.ledger, qPrintable(reopened.error));
    RawConnection raw(reopened.ledger->location());
    const qint64 rows = raw.scalar(QStringLiteral("SELECT count(*) FROM bookings"));
    qInfo() << durability << ": acknowledged" << open.size() + completed.size() << "rows" << rows;

    std::set<quint64> restored;
    const auto openBookings = reopened.ledger->reader().openBookings();
    QVERIFY2(openBookings.ok(), qPrintable(openBookings.error));
    for (const BookingRecord &b : openBookings.value)
        restored.insert(b.bookingId);
    for (quint64 id : open)
        QVERIFY2(restored.count(id), qPrintable(QStringLiteral("acknowledged booking %1 lost").arg(id)));
    for (quint64 id : completed) {
        QVERIFY2(!restored.count(id), qPrintable(QStringLiteral("completed %1 restored as open").arg(id)));
        QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM trips WHERE booking_id = %1").arg(id)), 1);
    }
}

QTEST_GUILESS_MAIN(LedgerCrashTest)
#include "ledger_crash_test.moc"
