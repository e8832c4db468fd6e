// resources/openapi.json stays true: every route the RouteTable registers is in the document (same
// method, same path, path parameters written {name} and declared), every operation in the
// document is a registered route, and the running server answers each documented operation.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"

#include "city/City.h"
#include "fleet/SharedMemoryFleet.h"
#include "region/SharedRegion.h"
#include "http/RouteTable.h"
#include "runtime/CityLocator.h"
#include "ledger/Ledger.h"
#include "runtime/ApiStack.h"

#include <QFile>
#include <QTemporaryDir>
#include <QJsonArray>
#include <QRegularExpression>
#include <QTest>
#include <memory>
#include <set>

using namespace taxicore;
using namespace taxicore::test;

namespace {

using Operation = std::pair<QString, QString>; // METHOD, path

QString describe(const std::set<Operation> &ops)
{
    QStringList out;
    for (const auto &op : ops)
        out.append(op.first + QLatin1Char(' ') + op.second);
    return out.join(QStringLiteral(", "));
}

const QStringList kHttpMethods{QStringLiteral("get"),     QStringLiteral("put"),   QStringLiteral("post"),
                               QStringLiteral("delete"),  QStringLiteral("patch"), QStringLiteral("head"),
                               QStringLiteral("options"), QStringLiteral("trace")};

} // namespace

class OpenApiContractTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void documentIsOpenApi3();
    void servedDocumentIsTheBundledOne();
    void everyRegisteredRouteIsDocumented();
    void everyDocumentedOperationIsARegisteredRoute();
    void pathParametersAreWrittenInBracesAndDeclared();
    void runningServerAnswersEveryDocumentedOperation();

private:
    std::unique_ptr<ServerProcess> m_server;
    QByteArray m_documentBytes;
    QJsonObject m_document;
    std::set<Operation> m_documented;
    std::set<Operation> m_registered;
    // The in-process route table: the ApiStack every serving event loop builds.
    std::shared_ptr<const city::City> m_city;
    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<FleetStore> m_fleet;
    QTemporaryDir m_ledgerDir;
    std::unique_ptr<Ledger> m_ledger;
    std::unique_ptr<ApiStack> m_stack;
    const RouteTable *m_routerPtr = nullptr;
};

void OpenApiContractTest::initTestCase()
{
    m_server = std::make_unique<ServerProcess>(QStringList{QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(m_server->start(), qPrintable(m_server->error()));
    HttpClient http(m_server->host(), m_server->port());
    const HttpResponse r = http.get("/api/v1/openapi.json");
    TC_VERIFY_STATUS(r, 200);
    QVERIFY2(r.header("Content-Type").startsWith("application/json"), r.header("Content-Type").constData());
    m_documentBytes = r.body;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(r.body, &error);
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
    QVERIFY(doc.isObject());
    m_document = doc.object();
    const QJsonObject paths = m_document.value("paths").toObject();
    for (auto it = paths.begin(); it != paths.end(); ++it) {
        const QJsonObject item = it.value().toObject();
        for (auto op = item.begin(); op != item.end(); ++op) {
            if (kHttpMethods.contains(op.key()))
                m_documented.insert({op.key().toUpper(), it.key()});
        }
    }

    QString regionError;
    m_region = SharedRegion::create(regionError);
    QVERIFY2(m_region, qPrintable(regionError));
    m_fleet = std::make_unique<SharedMemoryFleet>(*m_region);
    // The server always runs with a city (the bundled one unless --city), so with its routes.
    const QString cityPath = bundledCityPath();
    QVERIFY2(!cityPath.isEmpty(), "the bundled city file is missing");
    city::CityLoadResult loaded = city::City::load(cityPath);
    QVERIFY2(loaded.city, qPrintable(loaded.error));
    m_city = loaded.city;
    // With a ledger, as every server runs: its report routes are part of the table.
    QVERIFY(m_ledgerDir.isValid());
    LedgerOptions ledgerOptions;
    ledgerOptions.dataDir = m_ledgerDir.path();
    Ledger::Opened opened = Ledger::open(ledgerOptions);
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    m_ledger = std::move(opened.ledger);
    m_stack = std::make_unique<ApiStack>(*m_fleet, m_city, m_ledger.get(), 0);
    m_routerPtr = &m_stack->router();
    for (const RouteTable::Route &route : m_routerPtr->routes())
        m_registered.insert({QString::fromLatin1(methodName(route.method)), QString::fromUtf8(route.pattern)});
    QVERIFY(m_registered.size() >= 14);
}

void OpenApiContractTest::cleanupTestCase()
{
    m_stack.reset();
    if (m_server) {
        QVERIFY2(m_server->isRunning(), "the server died during the tests: " + m_server->stderrText());
        QCOMPARE(m_server->stop(), 0);
    }
}

void OpenApiContractTest::documentIsOpenApi3()
{
    QVERIFY2(m_document.value("openapi").toString().startsWith(QStringLiteral("3.")),
             qPrintable(m_document.value("openapi").toString()));
    QVERIFY(!m_document.value("info").toObject().value("title").toString().isEmpty());
    QVERIFY(!m_document.value("info").toObject().value("version").toString().isEmpty());
    QVERIFY(!m_documented.empty());
    // Every operation says what it answers.
    const QJsonObject paths = m_document.value("paths").toObject();
    for (const auto &[method, path] : m_documented) {
        const QJsonObject op = paths.value(path).toObject().value(method.toLower()).toObject();
        QVERIFY2(!op.value("responses").toObject().isEmpty(), qPrintable(method + QLatin1Char(' ') + path));
    }
}

void OpenApiContractTest::servedDocumentIsTheBundledOne()
{
    QFile bundled(QStringLiteral(":/taxicore/openapi.json"));
    QVERIFY2(bundled.open(QIODevice::ReadOnly), "the openapi.json resource is not linked into taxicore_server");
    QCOMPARE(m_documentBytes, bundled.readAll());
}

void OpenApiContractTest::everyRegisteredRouteIsDocumented()
{
    std::set<Operation> missing;
    for (const Operation &op : m_registered) {
        if (!m_documented.count(op))
            missing.insert(op);
    }
    QVERIFY2(missing.empty(), qPrintable(QStringLiteral("registered but not in openapi.json: ") + describe(missing)));
}

void OpenApiContractTest::everyDocumentedOperationIsARegisteredRoute()
{
    std::set<Operation> extra;
    for (const Operation &op : m_documented) {
        if (!m_registered.count(op))
            extra.insert(op);
    }
    QVERIFY2(extra.empty(), qPrintable(QStringLiteral("in openapi.json but not registered: ") + describe(extra)));
    // And the router resolves each documented path (with sample ids) to that very route.
    for (const auto &[method, path] : m_documented) {
        QString concrete = path;
        concrete.replace(QRegularExpression(QStringLiteral("\\{[^}/]+\\}")), QStringLiteral("1"));
        HttpMethod m = HttpMethod::Other;
        for (HttpMethod candidate : {HttpMethod::Get, HttpMethod::Head, HttpMethod::Post, HttpMethod::Put,
                                     HttpMethod::Delete, HttpMethod::Patch, HttpMethod::Options}) {
            if (QString::fromLatin1(methodName(candidate)) == method)
                m = candidate;
        }
        const RouteTable::Match match = m_routerPtr->match(m, concrete.toUtf8());
        QVERIFY2(match.route, qPrintable(method + QLatin1Char(' ') + concrete + QStringLiteral(" does not route")));
        QCOMPARE(QString::fromUtf8(match.route->pattern), path);
    }
}

void OpenApiContractTest::pathParametersAreWrittenInBracesAndDeclared()
{
    const QJsonObject paths = m_document.value("paths").toObject();
    const QRegularExpression placeholder(QStringLiteral("\\{([A-Za-z_][A-Za-z0-9_]*)\\}"));
    for (const auto &[method, path] : m_documented) {
        QVERIFY2(!path.contains(QLatin1Char(':')) && !path.contains(QLatin1Char('<')),
                 qPrintable(path + QStringLiteral(": path parameters are written {name}")));
        const QJsonObject item = paths.value(path).toObject();
        const QJsonObject op = item.value(method.toLower()).toObject();
        QSet<QString> declared;
        for (const QJsonArray &list : {item.value("parameters").toArray(), op.value("parameters").toArray()}) {
            for (const QJsonValue &p : list) {
                const QJsonObject param = p.toObject();
                if (param.value("in").toString() == QStringLiteral("path")) {
                    QVERIFY2(param.value("required").toBool(),
                             qPrintable(path + QStringLiteral(": path parameter ") + param.value("name").toString()
                                        + QStringLiteral(" must be required")));
                    declared.insert(param.value("name").toString());
                }
            }
        }
        QSet<QString> used;
        auto it = placeholder.globalMatch(path);
        while (it.hasNext())
            used.insert(it.next().captured(1));
        QCOMPARE(declared, used);
    }
    // The router's placeholders are the document's: {id} in the same segments.
    for (const RouteTable::Route &route : m_routerPtr->routes()) {
        for (const QByteArray &segment : route.pattern.split('/')) {
            if (segment.contains('{'))
                QVERIFY2(segment.startsWith('{') && segment.endsWith('}'), route.pattern.constData());
        }
    }
}

void OpenApiContractTest::runningServerAnswersEveryDocumentedOperation()
{
    HttpClient http(m_server->host(), m_server->port());
    for (const auto &[method, path] : m_documented) {
        QString concrete = path;
        concrete.replace(QRegularExpression(QStringLiteral("\\{[^}/]+\\}")), QStringLiteral("1"));
        const HttpResponse r = http.request(method.toLatin1(), concrete.toUtf8());
        const QByteArray what = method.toLatin1() + ' ' + concrete.toUtf8() + ": " + r.describe();
        QVERIFY2(r.complete, what.constData());
        QVERIFY2(r.status != 405, what.constData());
        // 404 only for a missing resource behind a real route, never "no such route".
        QVERIFY2(!(r.status == 404 && r.json().value("error").toString() == QStringLiteral("not_found")),
                 what.constData());
        QVERIFY2(r.status < 500, what.constData());
    }
}

QTEST_GUILESS_MAIN(OpenApiContractTest)
#include "server_openapi_contract_test.moc"
