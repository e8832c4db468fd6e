// The tariff settings (issue 4): the --tariff file and its errors (a bad file stops the server
// with exit code 2 and a message naming the file and the field), and GET/PUT /admin/v1/tariff
// reaching every worker process through the shared region.

#include "pricing/TariffJson.h"

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"

#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore;
using namespace taxicore::test;

namespace {

QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &text)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write(text);
    return path;
}

const QByteArray kQuotePath = "/api/v1/quote?from_lat=57.7000&from_lng=11.9700&to_lat=57.7100&to_lng=11.9900";

} // namespace

class TariffSettingsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void jsonKeepsDefaultsForMissingFields()
    {
        const TariffParse parsed =
            tariffFromJson(QJsonDocument::fromJson(R"({"per_km": 20, "currency": "EUR"})").object());
        QVERIFY2(parsed.tariff, qPrintable(parsed.error));
        QCOMPARE(parsed.tariff->perKm, 20.0);
        QCOMPARE(parsed.tariff->currency, QStringLiteral("EUR"));
        QCOMPARE(parsed.tariff->base, Tariff{}.base);
        QCOMPARE(parsed.tariff->surgeCap, Tariff{}.surgeCap);
        // Round trip.
        const TariffParse again = tariffFromJson(tariffJson(*parsed.tariff));
        QVERIFY(again.tariff);
        QCOMPARE(again.tariff->perKm, 20.0);
    }

    void jsonErrorsNameTheField_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("field");
        QTest::newRow("negative") << QByteArray(R"({"per_km": -1})") << "per_km";
        QTest::newRow("string") << QByteArray(R"({"base": "45"})") << "base";
        QTest::newRow("cap below 1") << QByteArray(R"({"surge_cap": 0.5})") << "surge_cap";
        QTest::newRow("currency") << QByteArray(R"({"currency": "kronor"})") << "currency";
        QTest::newRow("unknown") << QByteArray(R"({"per_mile": 3})") << "per_mile";
    }

    void jsonErrorsNameTheField()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, field);
        const TariffParse parsed = tariffFromJson(QJsonDocument::fromJson(json).object());
        QVERIFY(!parsed.tariff);
        QVERIFY2(parsed.error.contains(field), qPrintable(parsed.error));
    }

    void fileErrorsNameTheFile()
    {
        QTemporaryDir dir;
        const QString missing = dir.filePath(QStringLiteral("none.json"));
        QVERIFY(loadTariffFile(missing).error.startsWith(missing));
        const QString broken = writeFile(dir, QStringLiteral("broken.json"), "{\"base\": ");
        QVERIFY(loadTariffFile(broken).error.contains(QStringLiteral("not valid JSON")));
        const QString array = writeFile(dir, QStringLiteral("array.json"), "[1]");
        QVERIFY(loadTariffFile(array).error.contains(QStringLiteral("JSON object")));
    }

    void badFileStopsTheServerWithExitCode2()
    {
        QTemporaryDir dir;
        const QString bad = writeFile(dir, QStringLiteral("bad-tariff.json"), R"({"base": 45, "per_min": -3})");
        const ServerProcess::RunResult run =
            ServerProcess::run({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"),
                                dir.filePath(QStringLiteral("data")), QStringLiteral("--tariff"), bad});
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(bad.toUtf8()) && run.err.contains("per_min"), run.err.constData());
        QVERIFY(run.out.isEmpty()); // never started listening

        const ServerProcess::RunResult missing =
            ServerProcess::run({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--tariff"),
                                dir.filePath(QStringLiteral("nope.json"))});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains("nope.json"), missing.err.constData());
    }

    // A tariff file, then an operator's change, as quoted by the primary and by each worker.
    void tariffReachesEveryWorker()
    {
        QTemporaryDir dir;
        const QString file =
            writeFile(dir, QStringLiteral("tariff.json"),
                      R"({"currency": "EUR", "base": 4, "per_km": 1.5, "per_min": 0.5, "minimum": 0})");
        ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                              QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("50"),
                              QStringLiteral("--data-dir"), dir.filePath(QStringLiteral("data")),
                              QStringLiteral("--tariff"), file});
        QVERIFY2(server.start(20'000), qPrintable(server.error()));
        HttpClient admin(server.host(), server.port());
        const HttpResponse current = admin.get("/admin/v1/tariff");
        TC_VERIFY_STATUS(current, 200);
        QCOMPARE(current.json().value("currency").toString(), QStringLiteral("EUR"));
        QCOMPARE(current.json().value("per_km").toDouble(), 1.5);

        // Fresh connections spread over the primary and both workers.
        const auto quotedBases = [&] {
            QSet<double> bases;
            for (int i = 0; i < 12; ++i) {
                HttpClient client(server.host(), server.port());
                const HttpResponse q = client.request("GET", kQuotePath, {}, {{"Connection", "close"}});
                if (q.status != 200)
                    return QSet<double>{-1};
                const QJsonObject fare = q.json().value("fare").toObject();
                if (fare.value("currency").toString() != QStringLiteral("EUR"))
                    return QSet<double>{-2};
                bases.insert(fare.value("base").toDouble());
            }
            return bases;
        };
        QCOMPARE(quotedBases(), QSet<double>{4.0});

        const HttpResponse changed = admin.putJson("/admin/v1/tariff", {{"base", 7.25}});
        TC_VERIFY_STATUS(changed, 200);
        QCOMPARE(changed.json().value("base").toDouble(), 7.25);
        QCOMPARE(changed.json().value("per_km").toDouble(), 1.5); // unchanged fields kept
        QCOMPARE(quotedBases(), QSet<double>{7.25});

        const HttpResponse bad = admin.putJson("/admin/v1/tariff", {{"minimum", -5}});
        TC_VERIFY_STATUS(bad, 400);
        QCOMPARE(bad.json().value("error").toString(), QStringLiteral("invalid_tariff"));
        QVERIFY(bad.json().value("message").toString().contains(QStringLiteral("minimum")));
        QCOMPARE(admin.get("/admin/v1/tariff").json().value("base").toDouble(), 7.25);
        QCOMPARE(server.stop(), 0);
    }
};

QTEST_GUILESS_MAIN(TariffSettingsTest)
#include "trip_tariff_settings_test.moc"
