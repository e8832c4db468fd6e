// Workers die with the primary: processes mode with 2 workers, SIGKILL of the primary (no chance
// to clean up), and within 2 s neither worker pid exists any more (PR_SET_PDEATHSIG).

#include "RuntimeKit.h"

using namespace taxicore::test;
using namespace taxicore::test::rt;

class NoOrphansTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void workersDieWithAKilledPrimary_data();
    void workersDieWithAKilledPrimary();
    void cleanup();

private:
    QList<qint64> m_workerPids;
};

void NoOrphansTest::cleanup()
{
    for (qint64 pid : std::as_const(m_workerPids))
        if (pidAlive(pid))
            ::kill(pid_t(pid), SIGKILL);
    m_workerPids.clear();
}

void NoOrphansTest::workersDieWithAKilledPrimary_data()
{
    QTest::addColumn<QString>("policy");
    QTest::newRow("round-robin") << QStringLiteral("round-robin");
    QTest::newRow("kernel") << QStringLiteral("kernel");
}

void NoOrphansTest::workersDieWithAKilledPrimary()
{
    QFETCH(QString, policy);
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--policy"), policy, QStringLiteral("--cars"),
                          QStringLiteral("50"), QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(waitForServingWorkers(server, 2, 10'000), qPrintable(describeEvents(server)));
    for (const WorkerInfo &w : serving(server))
        m_workerPids.append(w.pid);
    QCOMPARE(m_workerPids.size(), 2);
    for (qint64 pid : std::as_const(m_workerPids))
        QVERIFY2(pidAlive(pid), "a listed worker pid does not exist");
    TC_VERIFY_STATUS(call(server, "GET", "/hello"), 200);

    QVERIFY(::kill(pid_t(server.pid()), SIGKILL) == 0);
    QVERIFY2(server.waitForExit(5000), "the primary survived SIGKILL");
    for (qint64 pid : std::as_const(m_workerPids))
        QVERIFY2(waitUntil([pid] { return !pidAlive(pid); }, 2000, 20),
                 qPrintable(QStringLiteral("worker pid %1 outlived the primary by 2 s").arg(pid)));
    // Nothing answers on the port any more (no orphan still holding a kernel-policy listener).
    const HttpResponse after = call(server, "GET", "/hello", {}, 2000);
    QVERIFY2(!after.complete, after.describe().constData());
}

QTEST_GUILESS_MAIN(NoOrphansTest)
#include "runtime_no_orphans_test.moc"
