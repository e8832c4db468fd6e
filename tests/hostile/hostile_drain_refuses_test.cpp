// Issue 14 item 6: draining refuses new connections. A slow request (/fib, about a second) is
// in flight when the server gets SIGTERM; 0.2 s later a new connection attempt is refused
// (ECONNREFUSED: the listening sockets were shut down when draining started, in the primary
// and in the workers) instead of being accepted by the kernel and reset, and the slow request
// still gets its 200 before the server exits 0. In single, pool and processes mode (round-robin
// and kernel policy). The request is sized to take ~1.2 s when the test starts, but the load may
// change after that: when it was answered before the new client tried (it was once, under
// `make test`), the drain is run again on a new server with a slower one, and when the 5 s grace
// ended before it was computed (with two busy loops running), with a faster one (SlowFib.h).

#include "ConnectionsKit.h"
#include "SlowFib.h"

#include <QElapsedTimer>
#include <QTcpSocket>
#include <memory>

using namespace taxicore::test;
using namespace taxicore::test::rt;
using namespace taxicore::test::hostile;

namespace {
constexpr int kSlowRequestMs = 1200; // in flight past the connect at 300 ms (4x), inside the 5 s grace (4x)
constexpr int kConnectAfterMs = 200; // the new client comes this long after SIGTERM
// How long the server lets in-flight requests run once it drains (server/taxicore-server.cpp).
constexpr int kShutdownGraceMs = 5000;

// Started and serving: in processes mode both workers take connections.
void startServing(ServerProcess &server, const QString &mode)
{
    QVERIFY2(server.start(), qPrintable(server.error()));
    if (mode == QStringLiteral("processes"))
        QVERIFY2(waitForWorkersTakingConnections(server, 2, 20'000), qPrintable(describeEvents(server)));
}

// One drain of `server` with GET /fib?n=<n> in flight. The refusal says something only if the
// request was still unanswered when the new client tried (the drain had begun and not ended;
// once it ends the server exits and a connection is refused anyway), and the 200 only if it
// could be computed within the grace (past it the server cuts it, as it should): else `miss`
// says which, and withSlowFib drains a new server with a slower or faster request.
void drainWithSlowRequest(ServerProcess &server, int n, SlowFibMiss &miss)
{
    HttpClient slow(server.host(), server.port(), 20'000);
    QVERIFY(slow.connectToServer());
    QVERIFY(slow.sendRaw(formatRequest("GET", "/fib?n=" + QByteArray::number(n))));
    QTest::qWait(100); // the request is being computed
    QVERIFY(server.terminate());
    QElapsedTimer sinceTerm;
    sinceTerm.start();
    QTest::qWait(kConnectAfterMs);
    const int refused = connectOnce(server.port());
    const qint64 triedAtMs = sinceTerm.elapsed();
    // Checked after the attempt, so the answer cannot slip in between the check and the connect.
    const bool inFlightWhenTried = !answered(*slow.socket());

    const QList<HttpResponse> answers = slow.readResponses(1);
    const qint64 answeredAtMs = sinceTerm.elapsed();
    if (cutByTheGrace(answers, answeredAtMs, kShutdownGraceMs, miss))
        return;
    QVERIFY2(answers.size() == 1 && answers[0].complete,
             qPrintable(QStringLiteral("the in-flight request (n=%1) got no answer (%2), %3 ms after SIGTERM; "
                                       "server stderr: %4")
                            .arg(n)
                            .arg(answers.value(0).error)
                            .arg(sinceTerm.elapsed())
                            .arg(QString::fromLocal8Bit(server.stderrText().right(1500)))));
    QCOMPARE(answers[0].status, 200);
    QCOMPARE(answers[0].json().value(QStringLiteral("n")).toInt(), n);
    QVERIFY2(server.waitForExit(15'000), "the server did not exit after draining");
    QCOMPARE(server.exitCode(), 0);
    if (!inFlightWhenTried) {
        miss.answeredBefore = QStringLiteral("the new client tried, %1 ms after SIGTERM").arg(triedAtMs);
        return;
    }
    QVERIFY2(
        refused == ECONNREFUSED,
        qPrintable(QStringLiteral("a connection %1 ms after SIGTERM: %2 (want ECONNREFUSED)")
                       .arg(triedAtMs)
                       .arg(refused == 0 ? QStringLiteral("accepted") : QString::fromLocal8Bit(strerror(refused)))));
    qInfo("refused %lld ms after SIGTERM while GET /fib?n=%d was in flight; it was answered %lld ms after SIGTERM",
          triedAtMs, n, answeredAtMs);
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
    const QStringList args{QStringLiteral("--mode"),    mode,
                           QStringLiteral("--policy"),  policy,
                           QStringLiteral("--workers"), QStringLiteral("2"),
                           QStringLiteral("--threads"), QStringLiteral("2"),
                           QStringLiteral("--cars"),    QStringLiteral("50")};
    // The first attempt drains the server the request was sized on; each further one a new server.
    auto server = std::make_unique<ServerProcess>(args);
    startServing(*server, mode);
    if (QTest::currentTestFailed())
        return;
    withSlowFib(fibTaking(*server, kSlowRequestMs), [&](int n, SlowFibMiss &miss) {
        if (!server) {
            server = std::make_unique<ServerProcess>(args);
            startServing(*server, mode);
            if (QTest::currentTestFailed())
                return;
        }
        drainWithSlowRequest(*server, n, miss);
        server.reset();
    });
}

QTEST_GUILESS_MAIN(DrainRefusesTest)
#include "hostile_drain_refuses_test.moc"
