// taxicore-bench-charts: from a small fixed results.csv, the two PNGs have the expected size and
// something drawn on them; the CSV round-trips; the issue-3 target checks are computed; each Node.js
// peer stage is set beside the TaxiCore configuration of its model.
#include "PeerComparison.h"
#include "SuiteCharts.h"
#include "SuiteReport.h"
#include "SuiteResults.h"

#include <QImage>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore::bench::suite;

namespace {

const char *kCsv =
    "configuration,kind,scenario,stage,requests,connections,completed,errors,timeouts,unfinished,requests_per_s,"
    "mean_ms,p50_ms,p90_ms,p95_ms,p99_ms,max_ms,server_cpu_us_per_request,client_bound,primary_rss_mb,"
    "worker_rss_max_mb,workers\n"
    "single,taxicore,hello-c64,c64,GET /hello,64,60000,0,0,64,30000,2,1.5,2,3,7,30,15,false,40,0,0\n"
    "processes:kernel,taxicore,hello-c64,c64,GET /hello,64,50000,0,0,64,25000,2.5,1.6,4,9,25,50,18,false,28,33.5,2\n"
    "single,taxicore,loadtest-fib25,c64,GET /fib?n=25,64,3000,0,0,64,1500,28,14,70,80,140,150,150,false,42,0,0\n"
    "processes:kernel,taxicore,loadtest-fib25,c64,GET /fib?n=25,64,5800,0,0,64,2900,20,17,57,90,250,300,145,true,28,"
    "33.5,2\n"
    "single,taxicore,loadtest-fib25,c1000,\"GET /fib?n=25, c1000\",1000,1600,0,3,1000,800,1000,1100,1200,1600,1900,"
    "2000,230,false,42,0,0\n";

int nonBackgroundPixels(const QImage &image)
{
    int count = 0;
    for (int y = 0; y < image.height(); ++y) {
        const QRgb *line = reinterpret_cast<const QRgb *>(image.constScanLine(y));
        for (int x = 0; x < image.width(); ++x)
            count += (line[x] | 0xff000000) != kChartBackground ? 1 : 0;
    }
    return count;
}

} // namespace

class ChartsTest : public QObject {
    Q_OBJECT

private slots:
    void csvRoundTrip()
    {
        QString error;
        const QList<ResultRow> rows = fromCsv(QString::fromLatin1(kCsv), error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(rows.size(), 5);
        QCOMPARE(rows.at(4).requests, QStringLiteral("GET /fib?n=25, c1000"));
        QCOMPARE(rows.at(4).timeouts, 3);
        QVERIFY(rows.at(3).clientBound);
        QCOMPARE(stageKeys(rows).size(), 3);
        QCOMPARE(configurations(rows), (QStringList{QStringLiteral("single"), QStringLiteral("processes:kernel")}));
        const QList<ResultRow> again = fromCsv(toCsv(rows), error);
        QCOMPARE(again.size(), rows.size());
        QCOMPARE(again.at(4).requests, rows.at(4).requests);
        QCOMPARE(again.at(1).serverCpuUsPerRequest, 18.0);
    }

    void writesChartsOfExpectedSize()
    {
        QString error;
        const QList<ResultRow> rows = fromCsv(QString::fromLatin1(kCsv), error);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY2(writeCharts(rows, dir.path(), QStringLiteral("test"), error), qPrintable(error));
        const QSize expected = chartSize(3);
        QCOMPARE(expected, QSize(kChartColumns * kPanelWidth, kChartHeaderHeight + kPanelHeight + 8));
        for (const char *name : {"requests-per-second.png", "latency.png"}) {
            QImage image(dir.filePath(QLatin1String(name)));
            QVERIFY2(!image.isNull(), name);
            QCOMPARE(image.size(), expected);
            image = image.convertToFormat(QImage::Format_ARGB32);
            // Titles, axes, bars or lines: a good share of the image is drawn on.
            QVERIFY2(nonBackgroundPixels(image) > image.width() * image.height() / 50, name);
        }
        // A configuration colour appears in the bar chart (the first one's bar).
        const QImage bars(dir.filePath(QStringLiteral("requests-per-second.png")));
        bool blue = false;
        for (int y = 0; y < bars.height() && !blue; ++y) {
            for (int x = 0; x < bars.width() && !blue; ++x)
                blue = bars.pixelColor(x, y) == QColor(0x1f, 0x77, 0xb4);
        }
        QVERIFY(blue);
    }

    void targetChecksFromNumbers()
    {
        QString error;
        const QList<ResultRow> rows = fromCsv(QString::fromLatin1(kCsv), error);
        const QList<TargetCheck> checks = targetChecks(rows);
        QCOMPARE(checks.size(), 4); // fib ratio, c1000 (single), hello CPU, worker RSS
        QVERIFY(checks.at(0).pass); // 2900 / 1500 = 1.93
        QVERIFY(checks.at(0).figures.startsWith(QStringLiteral("1.93×")));
        QVERIFY(!checks.at(1).pass); // 3 timeouts, p99/p50 = 1.73
        QVERIFY(checks.at(2).pass);  // 18 / 15 = 1.2
        QVERIFY(checks.at(3).pass);  // 33.5 MB
        const QString md = reportMarkdown(rows, {{QStringLiteral("cores"), QStringLiteral("2")}}, {});
        QVERIFY(md.contains(QStringLiteral("| processes:kernel | 64 | 5800 |")));
        QVERIFY(md.contains(QStringLiteral("**MISS**")));
        QVERIFY(!md.contains(QStringLiteral("Node.js peers\n"))); // no peer ran: no section
    }

    void peersBesideTheirModel()
    {
        const QString csv =
            QString::fromLatin1(kCsv)
            + "processes:round-robin,taxicore,loadtest-fib25,c64,GET /fib?n=25,64,6000,0,0,64,3000,20,17,57,90,200,300,"
              "140,false,28,33.5,2\n"
              "express,node,hello-c64,c64,GET /hello,64,20000,0,0,64,10000,6,5,8,9,12,40,60,false,60,0,0\n"
              "express,node,loadtest-fib25,c64,GET /fib?n=25,64,3200,0,0,64,1600,40,38,50,60,90,120,140,false,60,0,0\n"
              "express-cluster-2,node,loadtest-fib25,c64,GET /fib?n=25,64,5000,0,0,64,2500,25,24,30,35,60,80,150,false,"
              "60,60,2\n"
              "express-cluster-2,node,siege-taxi,c10,GET /x,10,100,0,0,10,50,5,5,5,5,5,5,100,false,60,60,2\n"
              "single,taxicore,autocannon-fib40,c50,GET "
              "/fib?n=40,50,25,0,0,50,5,9000,9000,9000,9000,9900,9900,-1,false,"
              "40,0,0\n"
              "express,node,autocannon-fib40,c50,GET /fib?n=40,50,0,0,0,50,0,0,0,0,0,0,0,-1,false,60,0,0\n";
        QString error;
        const QList<ResultRow> rows = fromCsv(csv, error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QList<PeerComparison> comparisons = peerComparisons(rows);
        QCOMPARE(comparisons.size(), 4); // siege-taxi: TaxiCore did not run it, nothing to set beside

        const PeerComparison &hello = comparisons.at(0); // express (one process) beside single
        QCOMPARE(hello.taxicore, QStringLiteral("single"));
        QCOMPARE(hello.rpsRatio(), 3.0);     // 30000 / 10000
        QCOMPARE(hello.cpuAdvantage(), 4.0); // 60 / 15
        QVERIFY(hello.ahead());

        const PeerComparison &fib = comparisons.at(1); // 1500 req/s against express's 1600
        QCOMPARE(fib.taxicore, QStringLiteral("single"));
        QVERIFY(!fib.ahead());

        const PeerComparison &cluster = comparisons.at(2); // a cluster beside the default policy
        QCOMPARE(cluster.taxicore, QStringLiteral("processes:round-robin"));
        QCOMPARE(cluster.rpsRatio(), 1.2); // 3000 / 2500
        QVERIFY(cluster.ahead());

        const PeerComparison &slow = comparisons.at(3); // the peer answered nothing: TaxiCore is ahead
        QCOMPARE(slow.scenario, QStringLiteral("autocannon-fib40"));
        QVERIFY(slow.ahead());

        const QString md = reportMarkdown(rows, {{QStringLiteral("cores"), QStringLiteral("2")}}, {});
        QVERIFY(md.contains(QStringLiteral("TaxiCore is **ahead on 3 of 4**")));
        QVERIFY(md.contains(QStringLiteral("| loadtest-fib25 c64 | express | single | 1500.0 / 1600.0 | 0.94× |")));
        QVERIFY(md.contains(QStringLiteral("| 5.0 / 0.0 | peer answered none |")));
    }

    void counterpartNeedsTheModel()
    {
        QCOMPARE(counterpartOf(QStringLiteral("node-http"), {QStringLiteral("pool")}), QString());
        QCOMPARE(counterpartOf(QStringLiteral("express-cluster-2"),
                               {QStringLiteral("single"), QStringLiteral("processes:kernel")}),
                 QStringLiteral("processes:kernel"));
    }
};

QTEST_MAIN(ChartsTest)
#include "bench_report_charts_test.moc"
