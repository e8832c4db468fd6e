#include "SanitizerTiming.h"
#include "TestHttpServer.h"
#include "Wait.h"

#include <QCoreApplication>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

using taxicore::test::waitUntil;

namespace {

constexpr int kQuickRunMs = 20'000; // upper bound for a CLI run in these tests
constexpr int kExitCouldNotRun = 2;
constexpr uint64_t kInterruptAfterRequests = 100; // answered before the SIGINT

QString benchBinary()
{
    const QString dir = qEnvironmentVariable("TAXICORE_BIN_DIR", QCoreApplication::applicationDirPath() + "/../bin");
    return QDir(dir).filePath("taxicore-bench");
}

struct Outcome {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Outcome runBench(const QStringList &arguments)
{
    QProcess process;
    process.start(benchBinary(), arguments);
    if (!process.waitForFinished(kQuickRunMs)) {
        process.kill();
        process.waitForFinished();
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, process.readAllStandardOutput(),
            process.readAllStandardError()};
}

} // namespace

class CliTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(QFile::exists(benchBinary()), qPrintable(benchBinary())); }

    void badUrlExitsWithStatusTwoAndOneClearLine()
    {
        const Outcome outcome = runBench({"htp:/nowhere"});
        QCOMPARE(outcome.exitCode, kExitCouldNotRun);
        QCOMPARE(outcome.err.count('\n'), 1);
        QVERIFY2(outcome.err.contains("bad URL"), outcome.err.constData());
        QVERIFY(outcome.out.isEmpty());
    }

    void refusedConnectionExitsWithStatusTwo()
    {
        const QString url = QStringLiteral("http://127.0.0.1:%1/").arg(TestHttpServer::refusingPort());
        const Outcome outcome = runBench({url, "-d", "1s"});
        QCOMPARE(outcome.exitCode, kExitCouldNotRun);
        QCOMPARE(outcome.err.count('\n'), 1);
        QVERIFY2(outcome.err.contains("cannot connect") && outcome.err.contains("refused"), outcome.err.constData());
    }

    void usageErrorsExitWithStatusTwo_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::newRow("unknown option") << QStringList{"--frobnicate"};
        QTest::newRow("bad duration") << QStringList{"-d", "ten"};
        QTest::newRow("zero connections") << QStringList{"-c", "0"};
        QTest::newRow("duration and count") << QStringList{"-d", "1s", "-n", "5"};
        QTest::newRow("unknown scenario") << QStringList{"--scenario", "nope"};
    }

    void usageErrorsExitWithStatusTwo()
    {
        QFETCH(QStringList, arguments);
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        const Outcome outcome = runBench(QStringList{QString::fromStdString(server.url())} + arguments);
        QCOMPARE(outcome.exitCode, kExitCouldNotRun);
        QVERIFY(outcome.err.startsWith("taxicore-bench: "));
    }

    void helpVersionAndScenarioList()
    {
        const Outcome help = runBench({"--help"});
        QCOMPARE(help.exitCode, 0);
        for (const char *flag :
             {"-c", "-t", "-d", "-n", "--rate", "--http1.0", "--no-keepalive", "--timeout", "--warmup", "--scenario",
              "--json", "--csv", "--progress", "--list-scenarios", "--version"})
            QVERIFY2(help.out.contains(flag), flag);
        QCOMPARE(runBench({"--version"}).exitCode, 0);
        const Outcome list = runBench({"--list-scenarios"});
        QCOMPARE(list.exitCode, 0);
        for (const char *name :
             {"ab-hello", "loadtest-fib25", "cluster-cpu", "autocannon-fib40", "siege-taxi", "taxi-mix"})
            QVERIFY2(list.out.contains(name), name);
        QVERIFY(list.out.contains("source:"));
    }

    void runWritesSummaryJsonAndCsv()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        QTemporaryDir dir;
        const QString json = dir.filePath("r.json");
        const QString csv = dir.filePath("r.csv");
        const Outcome outcome =
            runBench({QString::fromStdString(server.url()), "-c4", "-n", "300", "--json", json, "--csv", csv});
        QCOMPARE(outcome.exitCode, 0);
        QVERIFY(outcome.out.contains("Requests/sec:"));
        QVERIFY(outcome.out.contains("300 requests in"));
        QFile file(json);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject result = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(result["stages"][0][QLatin1String("summary")][QLatin1String("responses")].toInt(), 300);
        QFile series(csv);
        QVERIFY(series.open(QIODevice::ReadOnly));
        QVERIFY(series.readLine().startsWith("stage,second,"));
        QVERIFY(series.readLine().startsWith("c4,1,"));
    }

    void scenarioStagesRunInOrderAndFlagsOverrideThem()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        QTemporaryDir dir;
        const QString json = dir.filePath("stages.json");
        // Long enough for every stage (up to 1000 connections to open) to see answers: in the asan
        // build, under the suite's load, a 300 ms stage once had none.
        const int stageMs = 300 * taxicore::test::kSanitizerSlowdown;
        const Outcome outcome = runBench({QString::fromStdString(server.url("/")), "--scenario", "loadtest-fib25", "-d",
                                          QStringLiteral("%1ms").arg(stageMs), "--json", json});
        QCOMPARE(outcome.exitCode, 0);
        QFile file(json);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject result = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(result["scenario"][QLatin1String("name")].toString(), QString("loadtest-fib25"));
        QVERIFY(!result["scenario"][QLatin1String("source")].toString().isEmpty());
        const QJsonArray stages = result["stages"].toArray();
        QCOMPARE(stages.size(), 3);
        const int connections[] = {64, 200, 1000};
        for (int i = 0; i < 3; ++i) {
            const QJsonObject stage = stages[i].toObject();
            QCOMPARE(stage["settings"][QLatin1String("connections")].toInt(), connections[i]);
            QCOMPARE(stage["settings"][QLatin1String("duration_s")].toDouble(), stageMs / 1000.0);
            QCOMPARE(stage["requests_description"].toString(), QString("GET /fib?n=25"));
            QVERIFY(stage["summary"][QLatin1String("responses")].toInt() > 0);
        }
        QVERIFY(server.requestLines().front().starts_with("GET /fib?n=25 HTTP/1.1"));
    }

    void progressPrintsJsonLinesEndingWithTheResult()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        const Outcome outcome = runBench({QString::fromStdString(server.url()), "-c", "2", "-d", "2s", "--progress"});
        QCOMPARE(outcome.exitCode, 0);
        const QList<QByteArray> lines = outcome.out.trimmed().split('\n');
        QVERIFY(lines.size() >= 4); // stage, 2 seconds, result
        int progressLines = 0;
        for (const QByteArray &line : lines) {
            QJsonParseError error{};
            const QJsonObject object = QJsonDocument::fromJson(line, &error).object();
            QVERIFY2(error.error == QJsonParseError::NoError, line.constData());
            progressLines += object["type"].toString() == "progress";
        }
        QCOMPARE(progressLines, 2);
        QCOMPARE(QJsonDocument::fromJson(lines.last()).object()["type"].toString(), QString("result"));
        QVERIFY(outcome.err.contains("Requests/sec:")); // the summary moves to stderr
    }

    void interruptEndsTheRunWithTheFiguresSoFar()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        QProcess process;
        process.start(benchBinary(), {QString::fromStdString(server.url()), "-c", "2", "-d", "60s"});
        QVERIFY(process.waitForStarted());
        // The run is measuring (its signal handling is set up before the first request), so
        // there are figures so far to print (was a fixed 1.2 s).
        QVERIFY(waitUntil([&] { return server.requestsSeen() >= kInterruptAfterRequests; }, 10'000, 20));
        ::kill(static_cast<pid_t>(process.processId()), SIGINT);
        QVERIFY(process.waitForFinished(5000));
        QCOMPARE(process.exitCode(), 0);
        QVERIFY(process.readAllStandardOutput().contains("Requests/sec:"));
    }
};

QTEST_GUILESS_MAIN(CliTest)
#include "bench_cli_test.moc"
