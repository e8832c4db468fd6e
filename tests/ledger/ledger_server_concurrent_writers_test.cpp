// Concurrent writers (issue 8): in `--mode processes --workers 2` both workers book into the one
// ledger; after a graceful restart every booking that was answered 201 is there.

#include "ApiAssert.h"
#include "HttpBatch.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "RuntimeKit.h"
#include "ServerProcess.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <map>

using namespace taxicore::test;

namespace {

constexpr int kBookings = 300;
constexpr int kPerBatch = 50;

QList<qint64> workerRequests(HttpClient &admin, QByteArray *raw = nullptr)
{
    const HttpResponse w = admin.get("/admin/v1/workers");
    if (raw)
        *raw = w.describe();
    // The primary's counter first (it serves connections too), then each worker's.
    QList<qint64> out{w.json().value("primary").toObject().value("requests").toInteger()};
    for (const QJsonValue &v : w.json().value("workers").toArray())
        out.append(v.toObject().value("requests").toInteger());
    return out;
}

} // namespace

class ServerConcurrentWritersTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyAcknowledgedBookingSurvivesARestart();
};

void ServerConcurrentWritersTest::everyAcknowledgedBookingSurvivesARestart()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QStringList args{QStringLiteral("--data-dir"),  dir.filePath(QStringLiteral("data")),
                           QStringLiteral("--cars"),      QStringLiteral("1000"),
                           QStringLiteral("--sim-speed"), QStringLiteral("0.001"),
                           QStringLiteral("--mode"),      QStringLiteral("processes"),
                           QStringLiteral("--workers"),   QStringLiteral("2")};
    std::map<qint64, QByteArray> acknowledged; // booking id → its rider token
    {
        ServerProcess server(args);
        QVERIFY2(server.start(20'000), qPrintable(server.error()));
        HttpClient admin(server.host(), server.port(), 5000);
        // A worker's slot says "serving" before the primary's dispatcher has its link: wait
        // until each has answered a request. Every probe is a new connection, so once linked
        // the dispatcher hands the probes to the workers in turn.
        QVERIFY2(rt::waitForWorkersTakingConnections(server, 2, 15'000),
                 qPrintable("the workers did not start serving: " + rt::describeEvents(server)));
        const QList<qint64> before = workerRequests(admin);
        QCOMPARE(before.size(), 3);

        int n = 0, refused = 0;
        QByteArray firstRefusal;
        while (n < kBookings) {
            QList<QByteArray> requests;
            for (int i = 0; i < kPerBatch; ++i, ++n) {
                const double lat = 57.68 + (n % 37) * 0.0015;
                const double lng = 11.92 + (n % 53) * 0.0018;
                const QByteArray body = QJsonDocument(QJsonObject{{"rider_id", QStringLiteral("writer-%1").arg(n)},
                                                                  {"pickup", QJsonObject{{"lat", lat}, {"lng", lng}}}})
                                            .toJson(QJsonDocument::Compact);
                requests.append(formatRequest("POST", "/api/v1/bookings", body, {{"Connection", "close"}}));
            }
            const QList<HttpResponse> responses = sendConcurrently(server.host(), server.port(), requests, 30'000);
            for (const HttpResponse &r : responses) {
                if (r.complete && r.status == 201) {
                    const qint64 id = qint64(r.json().value("booking_id").toDouble());
                    QVERIFY2(acknowledged.emplace(id, riderToken(r.json())).second,
                             "booking id acknowledged twice: " + r.body);
                } else if (refused++ == 0) {
                    firstRefusal = r.describe();
                }
            }
        }
        QVERIFY2(refused == 0, qPrintable(QStringLiteral("%1 of %2 bookings not answered 201; first: %3")
                                              .arg(refused)
                                              .arg(kBookings)
                                              .arg(QString::fromUtf8(firstRefusal))));
        QByteArray raw;
        const QList<qint64> after = workerRequests(admin, &raw);
        QCOMPARE(after.size(), 3);
        // Both workers served bookings, and the counters account for every booking.
        QVERIFY2(after[1] - before[1] > 0 && after[2] - before[2] > 0, raw.constData());
        QVERIFY2(after[0] - before[0] + after[1] - before[1] + after[2] - before[2] >= kBookings, raw.constData());
        qInfo("requests served: primary %lld, worker 1 %lld, worker 2 %lld", after[0] - before[0], after[1] - before[1],
              after[2] - before[2]);

        QVERIFY2(server.isRunning(), server.stderrText().constData());
        QCOMPARE(server.stop(20'000), 0);
    }

    ServerProcess again(args);
    QVERIFY2(again.start(20'000), qPrintable(again.error()));
    HttpClient http(again.host(), again.port(), 10'000);
    int missing = 0;
    QByteArray firstMissing;
    for (const auto &[id, token] : acknowledged) {
        const HttpResponse r = readBooking(http, id, token);
        if (r.status != 200 || r.json().value("state").toString() != QStringLiteral("assigned")) {
            if (missing++ == 0)
                firstMissing = QByteArray::number(id) + ": " + r.describe();
        }
    }
    QVERIFY2(missing == 0, qPrintable(QStringLiteral("%1 of %2 bookings missing or changed after the restart; "
                                                     "first: %3")
                                          .arg(missing)
                                          .arg(acknowledged.size())
                                          .arg(QString::fromUtf8(firstMissing))));
    QCOMPARE(again.stop(20'000), 0);
}

QTEST_MAIN(ServerConcurrentWritersTest)
#include "ledger_server_concurrent_writers_test.moc"
