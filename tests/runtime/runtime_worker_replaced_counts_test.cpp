// A worker killed while it holds connections (processes mode): its replacement starts holding
// none. The slot's open-connection and in-flight gauges used to keep the dead process's values, so
// --policy least-loaded sent the replacement nothing and --worker-connections counted phantoms
// against it for good (found by an exploratory helper). Real taxicore-server, real connections.

#include "RuntimeKit.h"

#include <csignal>
#include <memory>
#include <vector>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {
constexpr int kHeld = 8; // keep-alive connections, spread over the two workers
constexpr int kReplacedWithinMs = 10'000;
} // namespace

class WorkerReplacedCountsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aReplacementStartsWithNoConnections();
};

void WorkerReplacedCountsTest::aReplacementStartsWithNoConnections()
{
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("5"),
                          QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(waitForWorkersTakingConnections(server, 2, 10'000), qPrintable(describeEvents(server)));

    std::vector<std::unique_ptr<HttpClient>> held;
    for (int i = 0; i < kHeld; ++i) {
        held.push_back(std::make_unique<HttpClient>(server.host(), server.port()));
        TC_VERIFY_STATUS(held.back()->get("/hello"), 200); // kept alive, idle
    }
    WorkerInfo victim;
    QVERIFY2(waitUntil(
                 [&] {
                     victim = worker(server, 1);
                     return victim.openConnections >= 2; // the held ones, besides the asking one
                 },
                 5000),
             "worker 1 never held the idle connections");
    QVERIFY(::kill(pid_t(victim.pid), SIGKILL) == 0);

    WorkerInfo replacement;
    QVERIFY2(waitUntil(
                 [&] {
                     replacement = worker(server, 1);
                     return replacement.pid != victim.pid && replacement.pid > 0
                            && replacement.state == QStringLiteral("serving");
                 },
                 kReplacedWithinMs),
             qPrintable(describeEvents(server)));
    // At most the admin call asking now, if it landed on the replacement.
    QVERIFY2(replacement.openConnections <= 1,
             qPrintable(QStringLiteral("the replacement starts holding %1 connections (the dead one held %2)")
                            .arg(replacement.openConnections)
                            .arg(victim.openConnections)));
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(WorkerReplacedCountsTest)
#include "runtime_worker_replaced_counts_test.moc"
