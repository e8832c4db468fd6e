// The `taxicore` console binary, run as a user would (offscreen platform): it prints its URL,
// serves HTTP from its embedded server, and exits non-zero with a message when it cannot bind.
// Its command line is read before any window: --help and --version work without a display, a bad
// flag exits 2 naming it.
#include "ConsoleProcessKit.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore::test;

namespace {
constexpr int kStartTimeoutMs = 15000;
constexpr int kRequestTimeoutMs = 5000;
constexpr int kExitTimeoutMs = 10000;
} // namespace

class ConsoleStartupTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void printsUrlAndServesHealthz();
    void exitsNonZeroWhenPortIsInUse();
    void showsTheOwnerWhenTheDataDirectoryIsInUse();
    void helpAndVersionNeedNoDisplay();
    void badFlagsExitTwoNamingTheProblem_data();
    void badFlagsExitTwoNamingTheProblem();
    void qtGuiFlagsAreNotCalledUnknown();
    void aMissingCityIsShownInTheErrorWindow();
};

namespace {
// The environment of a session without any display: no X, no Wayland, no platform forced.
QProcessEnvironment noDisplayEnvironment()
{
    auto env = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        env.remove(QString::fromLatin1(name));
    return env;
}

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run runToEnd(const QStringList &args, const QProcessEnvironment &env)
{
    QProcess console;
    console.setProcessEnvironment(env);
    console.start(consoleBinary(), args);
    Run run;
    if (!console.waitForFinished(kStartTimeoutMs + kExitTimeoutMs)) {
        console.kill();
        console.waitForFinished(kExitTimeoutMs);
        run.err = QStringLiteral("did not exit");
        return run;
    }
    run.exitCode = console.exitStatus() == QProcess::NormalExit ? console.exitCode() : -1;
    run.out = QString::fromUtf8(console.readAllStandardOutput());
    run.err = QString::fromUtf8(console.readAllStandardError());
    return run;
}
} // namespace

void ConsoleStartupTest::printsUrlAndServesHealthz()
{
    QProcess console;
    console.setProcessEnvironment(offscreenEnvironment());
    console.start(consoleBinary(), {QStringLiteral("--host"), QStringLiteral("127.0.0.1"), QStringLiteral("--port"),
                                    QStringLiteral("0")});
    QVERIFY2(console.waitForStarted(kStartTimeoutMs), qPrintable(console.errorString()));
    auto cleanup = qScopeGuard([&console] {
        if (console.state() != QProcess::NotRunning) {
            console.kill();
            console.waitForFinished(kExitTimeoutMs);
        }
    });

    QTRY_VERIFY_WITH_TIMEOUT(console.canReadLine(), kStartTimeoutMs);
    const QString line = QString::fromUtf8(console.readLine()).trimmed();
    QVERIFY2(line.startsWith(QLatin1String("listening on http://127.0.0.1:")), qPrintable(line));
    const QUrl base(line.mid(int(qstrlen("listening on "))));
    QVERIFY(base.port() > 0);

    QNetworkAccessManager network;
    QNetworkReply *reply = network.get(QNetworkRequest(base.resolved(QUrl(QStringLiteral("/healthz")))));
    QSignalSpy finished(reply, &QNetworkReply::finished);
    QVERIFY(finished.wait(kRequestTimeoutMs));
    QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
    reply->deleteLater();

    console.terminate(); // SIGTERM, by PID: a graceful stop
    QVERIFY(console.waitForFinished(kExitTimeoutMs));
    QCOMPARE(console.exitStatus(), QProcess::NormalExit);
    QCOMPARE(console.exitCode(), 0);
}

void ConsoleStartupTest::exitsNonZeroWhenPortIsInUse()
{
    QTcpServer occupier;
    QVERIFY(occupier.listen(QHostAddress::LocalHost, 0));

    QProcess console;
    console.setProcessEnvironment(offscreenEnvironment());
    // The error window waits for the user; --quit-after-ms closes it for the test.
    console.start(consoleBinary(),
                  {QStringLiteral("--host"), QStringLiteral("127.0.0.1"), QStringLiteral("--port"),
                   QString::number(occupier.serverPort()), QStringLiteral("--quit-after-ms"), QStringLiteral("500")});
    QVERIFY(console.waitForFinished(kStartTimeoutMs + kExitTimeoutMs));
    QCOMPARE(console.exitStatus(), QProcess::NormalExit);
    QVERIFY(console.exitCode() != 0);
    const QString err = QString::fromUtf8(console.readAllStandardError());
    QVERIFY2(err.contains(QLatin1String("cannot start the server")), qPrintable(err));
    // Nothing served; the error window was shown instead (--quit-after-ms prints its message).
    const QString out = QString::fromUtf8(console.readAllStandardOutput());
    QVERIFY2(out.startsWith(QLatin1String("error window: ")), qPrintable(out));
}

// The embedded server refuses a data directory another server owns (issue 15 item 2): the console
// says so, naming the directory and the owner's pid, instead of serving a second ledger writer.
void ConsoleStartupTest::showsTheOwnerWhenTheDataDirectoryIsInUse()
{
    QTemporaryDir dataDir;
    QVERIFY(dataDir.isValid());
    QProcess owner;
    owner.start(qEnvironmentVariable("TAXICORE_BIN_DIR") + QStringLiteral("/taxicore-server"),
                {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cars"), QStringLiteral("10"),
                 QStringLiteral("--data-dir"), dataDir.path()});
    QVERIFY2(owner.waitForStarted(kStartTimeoutMs), qPrintable(owner.errorString()));
    auto stopOwner = qScopeGuard([&owner] {
        owner.terminate();
        if (!owner.waitForFinished(kExitTimeoutMs)) {
            owner.kill();
            owner.waitForFinished(kExitTimeoutMs);
        }
    });
    QTRY_VERIFY_WITH_TIMEOUT(owner.canReadLine(), kStartTimeoutMs); // it owns the directory now

    QProcess console;
    console.setProcessEnvironment(offscreenEnvironment());
    console.start(consoleBinary(), {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"),
                                    dataDir.path(), QStringLiteral("--quit-after-ms"), QStringLiteral("500")});
    QVERIFY(console.waitForFinished(kStartTimeoutMs + kExitTimeoutMs));
    QCOMPARE(console.exitStatus(), QProcess::NormalExit);
    QVERIFY(console.exitCode() != 0);
    const QString err = QString::fromUtf8(console.readAllStandardError());
    QVERIFY2(err.contains(QLatin1String("cannot start the server")), qPrintable(err));
    QVERIFY2(err.contains(dataDir.path()), qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("pid %1").arg(owner.processId())), qPrintable(err));
    const QString out = QString::fromUtf8(console.readAllStandardOutput());
    QVERIFY2(out.startsWith(QLatin1String("error window: ")) && out.contains(dataDir.path()), qPrintable(out));
}

// Before the fix both aborted in QGuiApplication (exit 134: no platform plugin without a display).
void ConsoleStartupTest::helpAndVersionNeedNoDisplay()
{
    const Run help = runToEnd({QStringLiteral("--help")}, noDisplayEnvironment());
    QVERIFY2(help.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(help.exitCode).arg(help.err)));
    for (const char *flag : {"--port", "--mode", "--city", "--panel", "--screenshot", "--version"})
        QVERIFY2(help.out.contains(QLatin1String(flag)), flag);

    const Run version = runToEnd({QStringLiteral("--version")}, noDisplayEnvironment());
    QVERIFY2(version.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(version.exitCode).arg(version.err)));
    QCOMPARE(version.out.trimmed(), QStringLiteral("taxicore " TAXICORE_VERSION));
}

void ConsoleStartupTest::badFlagsExitTwoNamingTheProblem_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown flag") << QStringList{QStringLiteral("--no-such-flag")}
                                  << QStringLiteral("Unknown option 'no-such-flag'");
    QTest::newRow("bad panel") << QStringList{QStringLiteral("--panel"), QStringLiteral("map")}
                               << QStringLiteral("--panel must be bookings, server, benchmark, reports, not \"map\"");
    QTest::newRow("bad delay") << QStringList{QStringLiteral("--quit-after-ms"), QStringLiteral("soon")}
                               << QStringLiteral("--quit-after-ms must be a whole number");
    QTest::newRow("bad mode") << QStringList{QStringLiteral("--mode"), QStringLiteral("fast")}
                              << QStringLiteral("--mode must be single, pool or processes");
    QTest::newRow("missing value") << QStringList{QStringLiteral("--port")}
                                   << QStringLiteral("Missing value after '--port'");
    QTest::newRow("stray argument") << QStringList{QStringLiteral("reports")}
                                    << QStringLiteral("unexpected argument \"reports\"");
}

// Checked before any window, so without a display too: a script gets the message and status 2.
void ConsoleStartupTest::badFlagsExitTwoNamingTheProblem()
{
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run run = runToEnd(args, noDisplayEnvironment());
    QVERIFY2(run.exitCode == 2, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QVERIFY(run.out.isEmpty()); // nothing served
}

// Qt's own -platform (and the like) are QGuiApplication's to take, not unknown flags.
void ConsoleStartupTest::qtGuiFlagsAreNotCalledUnknown()
{
    const Run run = runToEnd({QStringLiteral("-platform"), QStringLiteral("offscreen"), QStringLiteral("--port"),
                              QStringLiteral("0"), QStringLiteral("--quit-after-ms"), QStringLiteral("300")},
                             noDisplayEnvironment());
    QVERIFY2(run.exitCode == 0, qPrintable(QStringLiteral("exit %1: %2").arg(run.exitCode).arg(run.err)));
    QVERIFY2(run.out.startsWith(QLatin1String("listening on http://")), qPrintable(run.out));
}

// A start-up error is shown in the error window (a console started from the desktop menu has no
// terminal), and still on stderr with exit status 1.
void ConsoleStartupTest::aMissingCityIsShownInTheErrorWindow()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString city = dir.filePath(QStringLiteral("no-such-city.json"));
    const Run run = runToEnd({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"), dir.path(),
                              QStringLiteral("--city"), city, QStringLiteral("--quit-after-ms"), QStringLiteral("500")},
                             offscreenEnvironment());
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains(QLatin1String("cannot start the server")) && run.err.contains(city), qPrintable(run.err));
    // --quit-after-ms prints what the window shows: it is up and names the file.
    QVERIFY2(run.out.contains(QLatin1String("error window: ")) && run.out.contains(city), qPrintable(run.out));
}

QTEST_GUILESS_MAIN(ConsoleStartupTest)
#include "console_startup_test.moc"
