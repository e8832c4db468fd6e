// The runtime admin API refuses bad input with 400 and a JSON error (and leaves the runtime as
// it was); killing a worker that is not there is 404; a good PUT answers 200 with the applied
// state, which GET /admin/v1/runtime then reports.

#include "RuntimeKit.h"

using namespace taxicore::test;
using namespace taxicore::test::rt;

class AdminInputTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void badRuntimeIsRefused_data();
    void badRuntimeIsRefused();
    void killOfAnUnknownWorkerIs404_data();
    void killOfAnUnknownWorkerIs404();
    void goodRuntimeIsAppliedAndReported();

private:
    std::unique_ptr<ServerProcess> m_server;
};

void AdminInputTest::initTestCase()
{
    m_server = std::make_unique<ServerProcess>(QStringList{QStringLiteral("--mode"), QStringLiteral("single"),
                                                           QStringLiteral("--cars"), QStringLiteral("20"),
                                                           QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(m_server->start(), qPrintable(m_server->error()));
}

void AdminInputTest::cleanupTestCase()
{
    if (m_server) {
        QVERIFY2(m_server->isRunning(), "the server died during the tests: " + m_server->stderrText());
        QCOMPARE(m_server->stop(), 0);
    }
}

void AdminInputTest::badRuntimeIsRefused_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("code");
    QTest::newRow("bad mode") << QByteArray(R"({"mode":"turbo"})") << QByteArray("invalid_runtime");
    QTest::newRow("mode not a string") << QByteArray(R"({"mode":3})") << QByteArray("invalid_runtime");
    QTest::newRow("bad policy") << QByteArray(R"({"policy":"random"})") << QByteArray("invalid_runtime");
    QTest::newRow("workers 0") << QByteArray(R"({"workers":0})") << QByteArray("invalid_runtime");
    QTest::newRow("workers -1") << QByteArray(R"({"workers":-1})") << QByteArray("invalid_runtime");
    QTest::newRow("workers x") << QByteArray(R"({"workers":"x"})") << QByteArray("invalid_runtime");
    QTest::newRow("workers 1.5") << QByteArray(R"({"workers":1.5})") << QByteArray("invalid_runtime");
    QTest::newRow("workers huge") << QByteArray(R"({"workers":100000})") << QByteArray("invalid_runtime");
    QTest::newRow("threads 0") << QByteArray(R"({"threads":0})") << QByteArray("invalid_runtime");
    QTest::newRow("unknown field") << QByteArray(R"({"colour":"red"})") << QByteArray("invalid_runtime");
    QTest::newRow("good and unknown") << QByteArray(R"({"mode":"pool","colour":"red"})")
                                      << QByteArray("invalid_runtime");
    QTest::newRow("malformed json") << QByteArray(R"({"mode":)") << QByteArray("malformed_json");
    QTest::newRow("array") << QByteArray(R"(["pool"])") << QByteArray("malformed_json");
    QTest::newRow("empty body") << QByteArray() << QByteArray("missing_body");
}

void AdminInputTest::badRuntimeIsRefused()
{
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, code);
    const QJsonObject before = getJson(*m_server, "/admin/v1/runtime");
    const HttpResponse r = call(*m_server, "PUT", "/admin/v1/runtime", body);
    TC_VERIFY_ERROR(r, 400, code.constData());
    // Nothing was applied.
    QCOMPARE(getJson(*m_server, "/admin/v1/runtime"), before);
    QVERIFY(workers(*m_server).isEmpty());
}

void AdminInputTest::killOfAnUnknownWorkerIs404_data()
{
    QTest::addColumn<QByteArray>("path");
    QTest::newRow("no workers in single mode") << QByteArray("/admin/v1/workers/1/kill");
    QTest::newRow("beyond the slots") << QByteArray("/admin/v1/workers/99/kill");
    QTest::newRow("far beyond") << QByteArray("/admin/v1/workers/99999999999/kill");
}

void AdminInputTest::killOfAnUnknownWorkerIs404()
{
    QFETCH(QByteArray, path);
    TC_VERIFY_ERROR(call(*m_server, "POST", path), 404, "worker_not_found");
    QVERIFY(m_server->isRunning());
}

void AdminInputTest::goodRuntimeIsAppliedAndReported()
{
    // Slot 0 is the primary: it is not a worker to kill.
    const HttpResponse zero = call(*m_server, "POST", "/admin/v1/workers/0/kill");
    QVERIFY2(zero.complete && zero.status >= 400 && zero.status < 500, zero.describe().constData());
    QVERIFY(m_server->isRunning());

    const qint64 generation = getJson(*m_server, "/admin/v1/runtime").value(QStringLiteral("generation")).toInteger();
    const HttpResponse put =
        putRuntime(*m_server, {{QStringLiteral("mode"), QStringLiteral("pool")}, {QStringLiteral("threads"), 3}});
    TC_VERIFY_STATUS(put, 200);
    const QJsonObject applied = put.json();
    QCOMPARE(applied.value(QStringLiteral("mode")).toString(), QStringLiteral("pool"));
    QCOMPARE(applied.value(QStringLiteral("threads")).toInt(), 3);
    QVERIFY(applied.value(QStringLiteral("generation")).toInteger() > generation);
    QCOMPARE(getJson(*m_server, "/admin/v1/runtime"), applied);
    QVERIFY(!eventsOfKind(*m_server, QStringLiteral("switch")).isEmpty());
    TC_VERIFY_STATUS(call(*m_server, "GET", "/hello"), 200);
}

QTEST_GUILESS_MAIN(AdminInputTest)
#include "runtime_admin_input_test.moc"
