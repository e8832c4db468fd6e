// One client address cannot hold the whole fleet (review): the rate limit alone (a burst of 20,
// then 60 a minute) let one address keep ~620 bookings waiting for the 600 s pickup timeout, more
// than the 500 cars. Now at most --open-bookings-per-client (default 10) are open at once per client address,
// in every mode (the places live in the shared region, so processes mode's workers count the same
// ones): the next gets 429 too_many_open_bookings naming the limit, another address still books,
// a cancelled booking frees its place, and a retry of an open booking with its Idempotency-Key is
// answered with it. The client here is the address a trusted proxy names (as behind nginx):
// this machine's own loopback clients (the console, benchmarks) are not limited.
#include "ApiAssert.h"
#include "HttpClient.h"
#include "IdempotencyKit.h"
#include "RiderToken.h"
#include "ServerProcess.h"

#include <QJsonObject>
#include <QTest>

using namespace taxicore::test;

namespace {

constexpr int kPerClient = 10; // --open-bookings-per-client's default

QByteArray bodyFor(const QString &rider)
{
    return bookingBody({{"rider_id", rider}, {"pickup", QJsonObject{{"lat", 57.7003}, {"lng", 11.9668}}}});
}

// Each on its own connection, as from separate phones behind one address (in processes mode the
// connections spread over the workers).
HttpResponse bookFrom(const ServerProcess &server, const QByteArray &client, const QByteArray &body,
                      const QByteArray &key = {})
{
    HttpClient http(server.host(), server.port());
    Headers headers{{"X-Forwarded-For", client}, {"Content-Type", "application/json"}};
    if (!key.isEmpty())
        headers.append({kIdempotencyKeyHeader, key});
    return postBooking(http, body, headers);
}

} // namespace

class OpenBookingsTest : public QObject {
    Q_OBJECT

private slots:
    void oneClientCannotHoldTheWholeFleet_data();
    void oneClientCannotHoldTheWholeFleet();
};

void OpenBookingsTest::oneClientCannotHoldTheWholeFleet_data()
{
    QTest::addColumn<QStringList>("modeArgs");
    QTest::newRow("single") << QStringList{};
    QTest::newRow("processes") << QStringList{QStringLiteral("--mode"), QStringLiteral("processes"),
                                              QStringLiteral("--workers"), QStringLiteral("2")};
}

void OpenBookingsTest::oneClientCannotHoldTheWholeFleet()
{
    QFETCH(QStringList, modeArgs);
    QTemporaryDir dir;
    ServerProcess server(modeArgs
                         + QStringList{QStringLiteral("--cars"), QStringLiteral("40"), QStringLiteral("--data-dir"),
                                       dir.path(), QStringLiteral("--trusted-proxy"), QStringLiteral("127.0.0.1")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    const QByteArray hog = "203.0.113.7";
    const QByteArray key = freshIdempotencyKey();
    const QByteArray keyedBody = bodyFor(QStringLiteral("keyed"));

    QList<HttpResponse> open;
    open.append(bookFrom(server, hog, keyedBody, key));
    for (int i = 1; i < kPerClient; ++i)
        open.append(bookFrom(server, hog, bodyFor(QStringLiteral("hog-%1").arg(i))));
    for (const HttpResponse &booked : open)
        TC_VERIFY_STATUS(booked, 201);

    const HttpResponse refused = bookFrom(server, hog, bodyFor(QStringLiteral("one-too-many")));
    TC_VERIFY_ERROR(refused, 429, "too_many_open_bookings");
    QVERIFY2(refused.json().value("message").toString().contains(QString::number(kPerClient)),
             refused.body.constData());
    TC_VERIFY_STATUS(bookFrom(server, "203.0.113.8", bodyFor(QStringLiteral("someone-else"))), 201);

    // A retry of an open booking (its answer lost) is answered with that booking.
    const HttpResponse retried = bookFrom(server, hog, keyedBody, key);
    TC_VERIFY_STATUS(retried, 201);
    QCOMPARE(retried.header(kReplayedHeader), QByteArray("true"));
    QCOMPARE(retried.json().value("booking_id"), open.first().json().value("booking_id"));

    // A booking that ends frees its place.
    HttpClient http(server.host(), server.port());
    const HttpResponse last = open.last();
    const HttpResponse cancelled = http.request(
        "POST",
        "/api/v1/bookings/" + QByteArray::number(qint64(last.json().value("booking_id").toDouble())) + "/cancel", {},
        {{"Authorization", "Bearer " + riderToken(last.json())}, {"X-Forwarded-For", hog}});
    TC_VERIFY_STATUS(cancelled, 200);
    TC_VERIFY_STATUS(bookFrom(server, hog, bodyFor(QStringLiteral("after-a-cancel"))), 201);
    TC_VERIFY_ERROR(bookFrom(server, hog, bodyFor(QStringLiteral("again-too-many"))), 429, "too_many_open_bookings");
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(OpenBookingsTest)
#include "hostile_open_bookings_test.moc"
