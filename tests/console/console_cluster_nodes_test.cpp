// The console attached to a cluster (issue 17): a console started with a cluster's --ledger and
// --fleet is a node itself, and its Server panel lists the nodes. PostgreSQL, Redis and one
// taxicore-server node are real processes; the console's backend runs in-process for the model
// (checked by QAbstractItemModelTester) and as the taxicore binary in a real window (Xvfb) for the
// screenshot, kept in $TAXICORE_ARTIFACT_DIR as console-cluster-nodes.png.
#include "ClusterNodeModel.h"
#include "ConsoleBackend.h"

#include "ConsoleKit.h"
#include "ConsoleProcessKit.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QAbstractItemModelTester>
#include <QDeadlineTimer>
#include <QFile>
#include <QProcess>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr int kCars = 20;
constexpr int kListedWithinMs = 15'000;
constexpr int kStartTimeoutMs = 30'000;
// Start-up, two heartbeats and a few frames of the panel; the console then quits by itself.
constexpr int kScreenshotAfterMs = 9000;
constexpr int kExitTimeoutMs = 30'000;
// The "up" dot of qml/panels/ClusterNodes.qml.
const QColor kUpColour(0x10, 0xb9, 0x81);

} // namespace

class ConsoleClusterNodesTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void theModelListsTheConsoleAndTheOtherNode();
    void outsideAClusterTheModelHasTheConsoleAlone();
    void theServerPanelShowsTheClusterSection();
    void cleanupTestCase();

private:
    std::unique_ptr<ConsoleBackend> startBackend(const QStringList &args);
    QStringList clusterArgs() const;

    PostgresKit m_postgres;
    RedisKit m_redis;
    std::unique_ptr<ServerProcess> m_node;
    std::unique_ptr<QTemporaryDir> m_settingsDir;
    std::unique_ptr<QTemporaryDir> m_dataDir;
};

QStringList ConsoleClusterNodesTest::clusterArgs() const
{
    return {QStringLiteral("--ledger"), m_postgres.url(),       QStringLiteral("--fleet"),       m_redis.url(),
            QStringLiteral("--cars"),   QString::number(kCars), QStringLiteral("--demand-rate"), QStringLiteral("0")};
}

void ConsoleClusterNodesTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    // The one headless node the console joins.
    m_node = std::make_unique<ServerProcess>(QStringList{QStringLiteral("--node-name"), QStringLiteral("node-one")}
                                             + clusterArgs());
    QVERIFY2(m_node->start(kStartTimeoutMs), qPrintable(m_node->error() + m_node->stderrText()));
}

void ConsoleClusterNodesTest::init()
{
    m_settingsDir = std::make_unique<QTemporaryDir>();
    m_dataDir = std::make_unique<QTemporaryDir>();
    useSettingsDirectory(m_settingsDir->path());
}

void ConsoleClusterNodesTest::cleanup()
{
    m_dataDir.reset();
    m_settingsDir.reset();
}

void ConsoleClusterNodesTest::cleanupTestCase()
{
    m_node.reset();
}

std::unique_ptr<ConsoleBackend> ConsoleClusterNodesTest::startBackend(const QStringList &args)
{
    const taxicore::ServerOptions options = consoleOptions(
        QStringList{QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"), m_dataDir->path()}
            + args,
        StoredSettings::Ignore);
    auto backend = std::make_unique<ConsoleBackend>(options);
    if (!backend->start()) {
        qWarning("the backend did not start: %s", qPrintable(backend->errorString()));
        return nullptr;
    }
    return backend;
}

// The console is a node: its model lists itself and node one, both up, one of them the leader.
void ConsoleClusterNodesTest::theModelListsTheConsoleAndTheOtherNode()
{
    auto backend =
        startBackend(QStringList{QStringLiteral("--node-name"), QStringLiteral("console-node")} + clusterArgs());
    QVERIFY(backend);
    ClusterNodeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setBackend(backend.get());

    const auto leaders = [&] {
        int count = 0;
        for (int row = 0; row < model.rowCount(); ++row)
            count += model.data(model.index(row), ClusterNodeModel::LeaderRole).toBool();
        return count;
    };
    QVERIFY2(waitUntil([&] { return model.rowCount() == 2 && leaders() == 1; }, kListedWithinMs),
             qPrintable(QStringLiteral("%1 rows, %2 leaders").arg(model.rowCount()).arg(leaders())));
    QVERIFY(model.inCluster());
    QCOMPARE(model.count(), 2);
    // Sorted by name.
    QCOMPARE(model.data(model.index(0), ClusterNodeModel::NameRole).toString(), QStringLiteral("console-node"));
    QCOMPARE(model.data(model.index(1), ClusterNodeModel::NameRole).toString(), QStringLiteral("node-one"));
    QCOMPARE(model.data(model.index(0), ClusterNodeModel::UrlRole).toString(),
             backend->url().toString(QUrl::StripTrailingSlash));
    for (int row = 0; row < 2; ++row) {
        QCOMPARE(model.data(model.index(row), ClusterNodeModel::HealthRole).toString(), QStringLiteral("up"));
        QCOMPARE(model.data(model.index(row), ClusterNodeModel::ModeRole).toString(), QStringLiteral("single"));
        QVERIFY(model.data(model.index(row), ClusterNodeModel::LedgerOkRole).toBool());
    }
    QVERIFY(model.directoryError().isEmpty());
}

// Not attached: one code path, one row (the console's own server), and inCluster false so the
// panel says so in one line.
void ConsoleClusterNodesTest::outsideAClusterTheModelHasTheConsoleAlone()
{
    auto backend = startBackend({QStringLiteral("--cars"), QStringLiteral("5")});
    QVERIFY(backend);
    ClusterNodeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setBackend(backend.get());
    QVERIFY(waitUntil([&] { return model.rowCount() == 1; }, 5000));
    QVERIFY(!model.inCluster());
    QCOMPARE(model.data(model.index(0), ClusterNodeModel::HealthRole).toString(), QStringLiteral("up"));
    backend.reset();
    model.sample();
    QCOMPARE(model.rowCount(), 0);
}

// The taxicore binary with the cluster's flags, its Server panel open: the Cluster section shows
// both nodes with their green "up" dots (and the leader's tag), kept as a screenshot.
void ConsoleClusterNodesTest::theServerPanelShowsTheClusterSection()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");
    const QString shot = artifactDir() + QStringLiteral("/console-cluster-nodes.png");
    QFile::remove(shot);
    QProcess console;
    auto stopConsole = qScopeGuard([&console] {
        if (console.state() != QProcess::NotRunning) {
            console.kill();
            console.waitForFinished(kExitTimeoutMs);
        }
    });
    console.setProcessEnvironment(windowedEnvironment(m_settingsDir->path()));
    console.start(consoleBinary(),
                  QStringList{QStringLiteral("--host"), QStringLiteral("127.0.0.1"), QStringLiteral("--port"),
                              QStringLiteral("0"), QStringLiteral("--data-dir"), m_dataDir->path(),
                              QStringLiteral("--node-name"), QStringLiteral("console-node"), QStringLiteral("--panel"),
                              QStringLiteral("server"), QStringLiteral("--screenshot"), shot,
                              QStringLiteral("--quit-after-ms"), QString::number(kScreenshotAfterMs)}
                      + clusterArgs());
    QVERIFY2(console.waitForStarted(kStartTimeoutMs), qPrintable(console.errorString()));
    QVERIFY2(console.waitForFinished(kExitTimeoutMs), "the console did not quit by itself");
    QCOMPARE(console.exitCode(), 0);

    QImage image(shot);
    QVERIFY2(!image.isNull(), qPrintable(shot));
    image = image.convertToFormat(QImage::Format_RGB32);
    // The side panel is the right part of the window (the map, left, has no such green).
    const QRect panel(image.width() * 6 / 10, 0, image.width() * 4 / 10, image.height());
    const int upPixels = countNear(image, panel, kUpColour, 10);
    qInfo("screenshot %s: %d px of the up colour in the side panel", qPrintable(shot), upPixels);
    QVERIFY2(upPixels >= 2 * 50, "the Cluster section does not show two nodes up");
}

QTEST_GUILESS_MAIN(ConsoleClusterNodesTest)
#include "console_cluster_nodes_test.moc"
