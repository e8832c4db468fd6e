// --cars 100 --mode processes --workers 2: 400 riders book at once, each on its own connection,
// spread over both workers by the primary. The shared-memory reservation gives exactly 100
// bookings on 100 different cars and 300 × 409 no_car_available; both workers took part. Then
// each booking, read back on new connections (so by either worker), is the same booking.

#include "HttpBatch.h"
#include "RiderToken.h"
#include "RuntimeKit.h"

#include <QSet>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {
constexpr int kCars = 100;
constexpr int kRiders = 400;
} // namespace

class BookingAcrossWorkersTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void fourHundredRidersGetExactlyHundredCars();
};

void BookingAcrossWorkersTest::fourHundredRidersGetExactlyHundredCars()
{
    ServerProcess server({QStringLiteral("--cars"), QString::number(kCars), QStringLiteral("--mode"),
                          QStringLiteral("processes"), QStringLiteral("--workers"), QStringLiteral("2"),
                          QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(waitForWorkersTakingConnections(server, 2, 10'000), qPrintable(describeEvents(server)));
    const QList<WorkerInfo> before = serving(server);

    const QList<QByteArray> requests = bookingBurst(kRiders);
    const QList<HttpResponse> responses = sendConcurrently(server.host(), server.port(), requests, 60'000);
    QCOMPARE(responses.size(), kRiders);

    int refused = 0;
    QSet<int> cars;
    QList<QJsonObject> booked;
    QStringList unexpected;
    for (const HttpResponse &r : responses) {
        if (r.complete && r.status == 201) {
            booked.append(r.json());
            cars.insert(r.json().value("car_id").toInt());
        } else if (r.complete && r.status == 409
                   && r.json().value("error").toString() == QStringLiteral("no_car_available")) {
            ++refused;
        } else {
            unexpected.append(QString::fromUtf8(r.describe()));
        }
    }
    QVERIFY2(
        unexpected.isEmpty(),
        qPrintable(QStringLiteral("%1 unexpected answers, first: %2").arg(unexpected.size()).arg(unexpected.value(0))));
    QCOMPARE(booked.size(), kCars);
    QCOMPARE(refused, kRiders - kCars);
    QCOMPARE(cars.size(), kCars); // no car twice, across processes

    // Both workers served part of the batch.
    const QList<WorkerInfo> after = serving(server);
    QCOMPARE(after.size(), 2);
    qint64 total = 0;
    for (const WorkerInfo &a : after) {
        qint64 was = -1;
        for (const WorkerInfo &b : before)
            if (b.index == a.index && b.pid == a.pid)
                was = b.requests;
        QVERIFY2(was >= 0, "a worker was replaced during the batch");
        qInfo("worker %d (pid %lld) served %lld requests of the batch", a.index, a.pid, a.requests - was);
        QVERIFY2(a.requests - was >= kRiders / 10,
                 qPrintable(QStringLiteral("worker %1 served %2 requests").arg(a.index).arg(a.requests - was)));
        total += a.requests - was;
    }
    QVERIFY(total >= kRiders);

    // Every booking read back twice, each time on a new connection (consecutive connections go to
    // different workers): always the same booking, shown to its rider (the hash of the rider token
    // is in the shared region every worker reads).
    QList<QByteArray> reads;
    for (int round = 0; round < 2; ++round)
        for (const QJsonObject &b : std::as_const(booked))
            reads.append(
                formatRequest("GET", "/api/v1/bookings/" + QByteArray::number(qint64(b.value("booking_id").toDouble())),
                              {}, bearer(riderToken(b))));
    const QList<HttpResponse> answers = sendConcurrently(server.host(), server.port(), reads, 60'000);
    QCOMPARE(answers.size(), reads.size());
    for (int i = 0; i < answers.size(); ++i) {
        const QJsonObject &mine = booked[i % booked.size()];
        TC_VERIFY_STATUS(answers[i], 200);
        const QJsonObject seen = answers[i].json();
        const QByteArray where =
            "GET " + QByteArray::number(qint64(mine.value("booking_id").toDouble())) + ": " + answers[i].body;
        QVERIFY2(seen.value("booking_id").toDouble() == mine.value("booking_id").toDouble(), where.constData());
        QVERIFY2(seen.value("created_ms").toDouble() == mine.value("created_ms").toDouble(), where.constData());
        QVERIFY2(seen.value("car_id").toInt() == mine.value("car_id").toInt(), where.constData());
        QVERIFY2(seen.value("rider_id") == mine.value("rider_id"), where.constData());
    }
    QVERIFY2(server.isRunning(), "the server died: " + server.stderrText());
}

QTEST_GUILESS_MAIN(BookingAcrossWorkersTest)
#include "runtime_booking_across_workers_test.moc"
