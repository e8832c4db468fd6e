// A test killed before its destructors run (ctest's timeout, a crash, kill -9) leaves none of the
// engines it started: PostgreSQL, redis-server, nginx and taxicore-server each get a signal from
// the kernel when the test process dies (tests/support/DieWithTest.h). Before, a killed test left
// its postmaster running, holding its port and its data folder.
//
// The test runs itself again as the "holder": a process that starts all four through the same
// kits every test uses, prints their pids and folders, and waits; the test sends it SIGKILL and
// waits for every pid to be gone.
#include <QTest>

#include "NginxKit.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "RuntimeKit.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QCoreApplication>
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <csignal>
#include <cstdio>

using namespace taxicore::test;

namespace {

constexpr auto kHolderVariable = "TAXICORE_KITS_HOLDER";
constexpr int kHolderStartMs = 60'000; // initdb, then the four engines
constexpr int kHolderLifetimeS = 120;  // the holder ends by itself if nobody kills it
constexpr int kEnginesGoneWithinMs = 15'000;

// The holder: every engine started the way the tests start them, then a line per engine.
int holdEngines()
{
    PostgresKit postgres;
    if (!postgres.start()) {
        std::fprintf(stderr, "postgres: %s\n", qPrintable(postgres.error()));
        return 1;
    }
    RedisKit redis;
    QString error;
    if (!redis.start({}, &error)) {
        std::fprintf(stderr, "redis: %s\n", qPrintable(error));
        return 1;
    }
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10")});
    if (!server.start()) {
        std::fprintf(stderr, "server: %s\n", qPrintable(server.error()));
        return 1;
    }
    NginxProcess nginx({server.port()});
    if (!nginx.start()) {
        std::fprintf(stderr, "nginx: %s\n", qPrintable(nginx.error()));
        return 1;
    }
    std::printf("postgres %lld %s\nredis %lld %s\nnginx %lld %s\nserver %lld\nready\n", postgres.pid(),
                qPrintable(postgres.folder()), redis.pid(), qPrintable(redis.folder()), nginx.pid(),
                qPrintable(nginx.prefix()), server.pid());
    std::fflush(stdout);
    QThread::sleep(kHolderLifetimeS);
    return 0;
}

} // namespace

class KitsDieWithTheirTest : public QObject {
    Q_OBJECT

private slots:
    void aKilledTestLeavesNoEngineRunning()
    {
        TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
        TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
        TC_REQUIRE_TOOL(!NginxProcess::program().isEmpty(), "nginx is not installed (package nginx-light)");

        QProcess holder;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QLatin1StringView(kHolderVariable), QStringLiteral("1"));
        // What the holder's kits make under the temporary folder (the server's logs, PostgreSQL's
        // sockets) goes here, removed with this test; the build-tree folders are removed below.
        QTemporaryDir holderTemp;
        QVERIFY(holderTemp.isValid());
        environment.insert(QStringLiteral("TMPDIR"), holderTemp.path());
        holder.setProcessEnvironment(environment);
        holder.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        holder.start(QCoreApplication::applicationFilePath(), {});
        QVERIFY2(holder.waitForStarted(5000), qPrintable(holder.errorString()));
        QByteArray out;
        QVERIFY2(waitUntil(
                     [&] {
                         holder.waitForReadyRead(100);
                         out += holder.readAll();
                         return out.contains("ready\n") || holder.state() == QProcess::NotRunning;
                     },
                     kHolderStartMs),
                 "the holder did not start its engines in time");
        QVERIFY2(out.contains("ready\n"),
                 qPrintable(QStringLiteral("the holder failed: %1").arg(QString::fromUtf8(out))));

        QMap<QString, qint64> pids;
        QStringList folders;
        for (const QByteArray &line : out.split('\n')) {
            const QList<QByteArray> fields = line.split(' ');
            if (fields.size() < 2)
                continue;
            pids.insert(QString::fromUtf8(fields[0]), fields[1].toLongLong());
            if (fields.size() > 2)
                folders << QString::fromUtf8(fields[2]);
        }
        QCOMPARE(pids.size(), 4);
        for (auto it = pids.cbegin(); it != pids.cend(); ++it)
            QVERIFY2(rt::pidAlive(it.value()),
                     qPrintable(it.key() + QStringLiteral(" is not running before the kill")));

        ::kill(pid_t(holder.processId()), SIGKILL);
        QVERIFY(holder.waitForFinished(5000));

        // A zombie (killed, not yet reaped by init) counts as gone (pidAlive): it holds no port.
        const bool allGone = waitUntil(
            [&] {
                for (const qint64 pid : pids)
                    if (rt::pidAlive(pid))
                        return false;
                return true;
            },
            kEnginesGoneWithinMs);
        QStringList left;
        for (auto it = pids.cbegin(); it != pids.cend(); ++it) {
            if (rt::pidAlive(it.value())) {
                left << QStringLiteral("%1 (pid %2)").arg(it.key()).arg(it.value());
                ::kill(pid_t(it.value()), SIGKILL); // not left behind by this test either
            }
        }
        for (const QString &folder : std::as_const(folders))
            QDir(folder).removeRecursively();
        QVERIFY2(allGone, qPrintable(QStringLiteral("still running %1 ms after their test was killed: %2")
                                         .arg(kEnginesGoneWithinMs)
                                         .arg(left.join(QStringLiteral(", ")))));
    }
};

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (qEnvironmentVariableIsSet(kHolderVariable))
        return holdEngines();
    KitsDieWithTheirTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "cluster_kits_die_with_their_test_test.moc"
