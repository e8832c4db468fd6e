// Issue 14 item 6: draining refuses new connections. A slow request (/fib, about a second) is
// in flight when the server gets SIGTERM; 0.2 s later a new connection attempt is refused
// (ECONNREFUSED: the listening sockets were shut down when draining started, in the primary
// and in the workers) instead of being accepted by the kernel and reset, and the slow request
// still gets its 200 before the server exits 0. In single, pool and processes mode (round-robin
// and kernel policy).

#include "ConnectionsKit.h"

#include <QElapsedTimer>
#include <QTcpSocket>
#include <cmath>

using namespace taxicore::test;
using namespace taxicore::test::rt;
using namespace taxicore::test::hostile;

namespace {
constexpr int kSlowRequestMs = 1200; // in flight past the connect at 300 ms (4x), inside the 5 s grace (4x)
constexpr int kConnectAfterMs = 200; // the new client comes this long after SIGTERM
constexpr int kMaxFib = 45;          // the server's own bound

// The /fib argument that takes about `wantedMs` here: fib(n) costs ~1.618 times fib(n - 1).
int fibTaking(const ServerProcess &server, int wantedMs)
{
    constexpr int kProbe = 32; // ~20 ms here: long enough that scheduling noise does not skew the estimate
    QElapsedTimer timer;
    timer.start();
    call(server, "GET", "/fib?n=" + QByteArray::number(kProbe));
    const double probeMs = std::max<double>(1, double(timer.elapsed()));
    const int extra = int(std::ceil(std::log(wantedMs / probeMs) / std::log(1.618)));
    return std::clamp(kProbe + extra, kProbe, kMaxFib);
}
} // namespace

class DrainRefusesTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void refusesNewConnectionsAndFinishesInFlight_data();
    void refusesNewConnectionsAndFinishesInFlight();
};

void DrainRefusesTest::refusesNewConnectionsAndFinishesInFlight_data()
{
    QTest::addColumn<QString>("mode");
    QTest::addColumn<QString>("policy");
    QTest::newRow("single") << QStringLiteral("single") << QStringLiteral("round-robin");
    QTest::newRow("pool") << QStringLiteral("pool") << QStringLiteral("round-robin");
    QTest::newRow("processes") << QStringLiteral("processes") << QStringLiteral("round-robin");
    // Workers accept on SO_REUSEPORT clones of their own: those must stop listening too.
    QTest::newRow("processes-kernel") << QStringLiteral("processes") << QStringLiteral("kernel");
}

void DrainRefusesTest::refusesNewConnectionsAndFinishesInFlight()
{
    QFETCH(QString, mode);
    QFETCH(QString, policy);
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--policy"), policy,
                          QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--threads"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("50")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    if (mode == QStringLiteral("processes"))
        QVERIFY2(waitForWorkersTakingConnections(server, 2, 20'000), qPrintable(describeEvents(server)));
    const int n = fibTaking(server, kSlowRequestMs);

    HttpClient slow(server.host(), server.port(), 20'000);
    QVERIFY(slow.connectToServer());
    QVERIFY(slow.sendRaw(formatRequest("GET", "/fib?n=" + QByteArray::number(n))));
    QTest::qWait(100); // the request is being computed
    QVERIFY(server.terminate());
    QElapsedTimer sinceTerm;
    sinceTerm.start();
    QTest::qWait(kConnectAfterMs);
    // Still in flight when the new client comes: the drain has begun and not ended.
    const bool answeredAlready = slow.socket()->bytesAvailable() > 0;
    const int refused = connectOnce(server.port());
    const qint64 triedAtMs = sinceTerm.elapsed();

    const QList<HttpResponse> answers = slow.readResponses(1);
    QVERIFY2(answers.size() == 1 && answers[0].complete, "the in-flight request got no answer");
    QCOMPARE(answers[0].status, 200);
    QCOMPARE(answers[0].json().value(QStringLiteral("n")).toInt(), n);
    QVERIFY2(
        refused == ECONNREFUSED,
        qPrintable(QStringLiteral("a connection %1 ms after SIGTERM: %2 (want ECONNREFUSED)")
                       .arg(triedAtMs)
                       .arg(refused == 0 ? QStringLiteral("accepted") : QString::fromLocal8Bit(strerror(refused)))));
    QVERIFY2(!answeredAlready, "the slow request was answered before the new client came: make it slower");
    QVERIFY2(server.waitForExit(15'000), "the server did not exit after draining");
    QCOMPARE(server.exitCode(), 0);
}

QTEST_GUILESS_MAIN(DrainRefusesTest)
#include "hostile_drain_refuses_test.moc"
