// WorkerListModel's percentile over the shared-memory latency buckets (bucket i < 2^(i/2) µs).
#include "WorkerListModel.h"

#include <QTest>

class WorkerPercentileTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void emptyIsZero() { QCOMPARE(WorkerListModel::percentileUs({}, 0.99), 0.0); }
    void p99IsTheUpperEdgeOfItsBucket()
    {
        WorkerListModel::Buckets buckets{};
        buckets[10] = 98; // < 32 µs
        buckets[20] = 1;  // < 1024 µs
        buckets[30] = 1;  // < 32768 µs
        QCOMPARE(WorkerListModel::percentileUs(buckets, 0.50), 32.0);
        QCOMPARE(WorkerListModel::percentileUs(buckets, 0.99), 1024.0);
        QCOMPARE(WorkerListModel::percentileUs(buckets, 1.0), 32768.0);
    }
    void noServerNoRows()
    {
        WorkerListModel model;
        model.sample();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.p99Ms(), 0.0);
        QVERIFY(!model.killWorker(1));
    }
};

QTEST_GUILESS_MAIN(WorkerPercentileTest)
#include "console_worker_list_model_test.moc"
