#include "engine/StageResult.h"

#include <QTest>

using namespace taxicore::bench;

namespace {

ClientUsage usage(double cpuPercent, double lagP99Ms)
{
    ClientUsage client;
    client.cpuPercentOfThreads = cpuPercent;
    client.scheduleLagP99Ms = lagP99Ms;
    return client;
}

} // namespace

class ClientBoundTest : public QObject {
    Q_OBJECT

private slots:
    void busyClientThreadsMarkTheRunClientBound()
    {
        ClientUsage client = usage(kClientBoundCpuPercent + 1, 0);
        judgeClientBound(client, false);
        QVERIFY(client.clientBound);
        QVERIFY(QString::fromStdString(client.clientBoundReason).contains("busy"));
    }

    void lateOpenLoopSendsMarkTheRunClientBound()
    {
        ClientUsage client = usage(20, kClientBoundLagP99Ms * 2);
        judgeClientBound(client, true);
        QVERIFY(client.clientBound);
        QVERIFY(QString::fromStdString(client.clientBoundReason).contains("late"));
    }

    void scheduleLagDoesNotCountInClosedLoop()
    {
        ClientUsage client = usage(20, kClientBoundLagP99Ms * 2);
        judgeClientBound(client, false);
        QVERIFY(!client.clientBound);
        QVERIFY(client.clientBoundReason.empty());
    }

    void anIdleClientIsNotTheLimit()
    {
        ClientUsage client = usage(kClientBoundCpuPercent - 1, kClientBoundLagP99Ms / 2);
        client.clientBound = true; // a stale verdict must be replaced
        judgeClientBound(client, true);
        QVERIFY(!client.clientBound);
    }
};

QTEST_GUILESS_MAIN(ClientBoundTest)
#include "bench_client_bound_test.moc"
