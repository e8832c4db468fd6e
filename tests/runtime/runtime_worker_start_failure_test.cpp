// Processes mode, 2 workers. The primary's open-file limit is lowered (prlimit) to the descriptors
// it already holds, so it can open none, and worker 1 is killed: the supervisor cannot create the
// replacement's channel or QProcess its pipes. Each failed start is one "crash" event naming the
// reason and is respawned with the usual backoff; once the limit is restored, worker 1 serves
// again with a new pid by itself: no "stall" flood, no ghost worker, no breaker.

#include "RuntimeKit.h"

#include <QDir>
#include <QElapsedTimer>
#include <QSet>
#include <sys/resource.h>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {

// How long the primary stays starved after the kill. The respawns come 100, 300, 700 and 1500 ms
// after the crash (backoff): two or three attempts fail, well before the fifth crash in the
// breaker's window. (Paced on purpose: the starved primary accepts no admin call to wait on.)
constexpr int kStarvedMs = 600;

// The lowest descriptor number `pid` has free: with its open-file limit set to it, the process
// can open nothing more, as at a real limit. (Far lower, poll() on more descriptors than the
// limit fails outright, which no real limit does.) The descriptors the killed worker leaves are
// fewer than a spawn needs.
rlim_t lowestFreeDescriptor(qint64 pid)
{
    QSet<int> open;
    for (const QString &name : QDir(QStringLiteral("/proc/%1/fd").arg(pid)).entryList(QDir::Files | QDir::System))
        open.insert(name.toInt());
    int fd = 0;
    while (open.contains(fd))
        ++fd;
    return rlim_t(fd);
}

// The "could not be started" crash events so far.
QStringList startFailures(const ServerProcess &server)
{
    QStringList texts;
    for (const QJsonValue &v : events(server)) {
        const QJsonObject e = v.toObject();
        const QString text = e.value(QStringLiteral("text")).toString();
        if (e.value(QStringLiteral("kind")).toString() == QStringLiteral("crash")
            && text.contains(QStringLiteral("could not be started")))
            texts.append(text);
    }
    return texts;
}

} // namespace

class WorkerStartFailureTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void workerThatCannotStartIsRespawnedWhenDescriptorsAreBack();
    void cleanup();

private:
    void restoreLimit();

    qint64 m_limitedPid = 0;
    rlimit m_savedLimit{};
};

void WorkerStartFailureTest::restoreLimit()
{
    if (m_limitedPid > 0)
        ::prlimit(pid_t(m_limitedPid), RLIMIT_NOFILE, &m_savedLimit, nullptr);
    m_limitedPid = 0;
}

void WorkerStartFailureTest::cleanup()
{
    restoreLimit(); // whatever happened, the server gets its descriptors back before it is stopped
}

void WorkerStartFailureTest::workerThatCannotStartIsRespawnedWhenDescriptorsAreBack()
{
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("50"),
                          QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(waitForWorkersTakingConnections(server, 2, 10'000), qPrintable(describeEvents(server)));
    const WorkerInfo victim = worker(server, 1);
    QVERIFY(victim.pid > 0);

    rlimit starved{};
    QVERIFY(::prlimit(pid_t(server.pid()), RLIMIT_NOFILE, nullptr, &m_savedLimit) == 0);
    starved.rlim_cur = lowestFreeDescriptor(server.pid());
    starved.rlim_max = m_savedLimit.rlim_max;
    QVERIFY(::prlimit(pid_t(server.pid()), RLIMIT_NOFILE, &starved, nullptr) == 0);
    m_limitedPid = server.pid();
    QVERIFY(::kill(pid_t(victim.pid), SIGKILL) == 0);
    QElapsedTimer clock;
    clock.start();

    QTest::qWait(kStarvedMs);
    const qint64 starvedMs = clock.elapsed();
    restoreLimit();

    WorkerInfo replacement;
    const bool back = waitUntil(
        [&] {
            replacement = worker(server, 1);
            return replacement.state == QStringLiteral("serving") && replacement.pid > 0
                   && replacement.pid != victim.pid;
        },
        10'000, 100);
    qInfo("worker 1 (pid %lld) killed; descriptors back after %lld ms; after %lld ms worker 1 is %s (pid %lld)",
          victim.pid, starvedMs, clock.elapsed(), qPrintable(replacement.state), replacement.pid);
    QVERIFY2(back, qPrintable(QStringLiteral("worker 1 not serving again within 10 s (state %1, pid %2); events: %3%4")
                                  .arg(replacement.state)
                                  .arg(replacement.pid)
                                  .arg(describeEvents(server))
                                  .arg(server.isRunning() ? QString()
                                                          : QStringLiteral("; the server died: ")
                                                                + QString::fromLocal8Bit(server.stderrText()))));

    // One event per failed attempt, each naming the reason; nothing keeps logging once it serves.
    const QStringList failures = startFailures(server);
    QVERIFY2(failures.size() >= 1 && failures.size() <= 3, qPrintable(describeEvents(server)));
    for (const QString &text : failures) // the reason: its channel, or QProcess's pipes
        QVERIFY2(!text.contains(QStringLiteral("nknown error")), qPrintable(text));
    QTest::qWait(500); // "nothing more is logged" has no event to wait for
    QCOMPARE(startFailures(server).size(), failures.size());
    QVERIFY2(!describeEvents(server).contains(QStringLiteral("(pid 0)")), qPrintable(describeEvents(server)));
    QVERIFY2(eventsOfKind(server, QStringLiteral("stall")).isEmpty(), qPrintable(describeEvents(server)));
    QVERIFY2(eventsOfKind(server, QStringLiteral("breaker")).isEmpty(), qPrintable(describeEvents(server)));
    QVERIFY2(events(server).size() < 30, qPrintable(describeEvents(server)));
    QCOMPARE(getJson(server, "/admin/v1/runtime").value(QStringLiteral("mode")).toString(),
             QStringLiteral("processes"));
    QVERIFY2(waitForWorkersTakingConnections(server, 2, 10'000), qPrintable(describeEvents(server)));
    QVERIFY2(server.isRunning(), "the server died: " + server.stderrText());
}

QTEST_GUILESS_MAIN(WorkerStartFailureTest)
#include "runtime_worker_start_failure_test.moc"
