// The `taxicore` console binary, run as a user would (offscreen platform): it prints its URL,
// serves HTTP from its embedded server, and exits non-zero with a message when it cannot bind.
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
};

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
    QVERIFY(console.readAllStandardOutput().isEmpty());
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
    QVERIFY(console.readAllStandardOutput().isEmpty());
}

QTEST_GUILESS_MAIN(ConsoleStartupTest)
#include "console_startup_test.moc"
