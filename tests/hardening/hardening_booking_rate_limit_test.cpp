// The booking rate limit (issue 9): a token bucket per client address on POST /api/v1/bookings
// (--booking-burst at once, then --booking-rate per minute); over it → 429 with an integer
// Retry-After and a JSON body. Trusted loopback clients and the admin token are exempt; with
// --trust-loopback off loopback clients are limited. In processes mode the buckets are shared,
// so the limit holds across workers. Real taxicore-server children over real HTTP.

#include "HardeningKit.h"

#include <QElapsedTimer>

using namespace taxicore::test;
using namespace taxicore::test::hardening;

namespace {

QStringList limitedServer(int burst, int perMinute, const QStringList &more = {})
{
    return QStringList{QStringLiteral("--cars"),           QStringLiteral("100"),
                       QStringLiteral("--trust-loopback"), QStringLiteral("off"),
                       QStringLiteral("--admin-token"),    QString::fromLatin1(kAdminToken),
                       QStringLiteral("--booking-burst"),  QString::number(burst),
                       QStringLiteral("--booking-rate"),   QString::number(perMinute)}
           + more;
}

// A booking attempt the limit let through: booked, or refused for another reason (no car).
bool admitted(const HttpResponse &r)
{
    return r.complete && (r.status == 201 || r.status == 409);
}

// Riders spread over the inner city, so they do not all want the same nearest car.
HttpResponse bookNumber(const ServerProcess &server, int n, const QByteArray &token = {})
{
    return book(server, QStringLiteral("rate-%1").arg(n), 57.69 + 0.003 * (n % 10), 11.94 + 0.005 * (n / 10 % 10),
                token);
}

#define TC_VERIFY_TOO_MANY(response)                                                                                   \
    do {                                                                                                               \
        const HttpResponse &tcT_ = (response);                                                                         \
        TC_VERIFY_ERROR(tcT_, 429, "too_many_bookings");                                                               \
        bool tcOk_ = false;                                                                                            \
        const int tcAfter_ = tcT_.header("Retry-After").toInt(&tcOk_);                                                 \
        QVERIFY2(tcOk_ &&tcAfter_ >= 1, tcT_.describe().constData());                                                  \
    } while (false)

} // namespace

class BookingRateLimitTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void burstThen429ThenRefills()
    {
        ServerProcess server(limitedServer(3, 30)); // one more booking every 2 s
        QVERIFY2(server.start(), qPrintable(server.error()));
        for (int i = 0; i < 3; ++i) {
            const HttpResponse r = bookNumber(server, i);
            QVERIFY2(admitted(r), r.describe().constData());
        }
        const HttpResponse refused = bookNumber(server, 3);
        TC_VERIFY_TOO_MANY(refused);
        const int retryAfter = refused.header("Retry-After").toInt();
        QVERIFY2(retryAfter <= 2, refused.describe().constData()); // the next one within 2 s
        QCOMPARE(refused.json().value("retry_after_s").toInt(), retryAfter);
        // Other endpoints are not limited.
        TC_VERIFY_STATUS(send(server, "GET", "/api/v1/cars/nearby?lat=57.70&lng=11.97"), 200);
        // After Retry-After the bucket has refilled by one booking, and only one.
        QTest::qWait(retryAfter * 1000 + 100); // inherent: the wait Retry-After asks for
        const HttpResponse refilled = bookNumber(server, 4);
        QVERIFY2(admitted(refilled), refilled.describe().constData());
        TC_VERIFY_TOO_MANY(bookNumber(server, 5));
        QCOMPARE(server.stop(), 0);
    }

    void trustedLoopbackAndTheAdminTokenAreExempt()
    {
        {
            // Default: loopback is trusted, so benchmarks and local tests are never limited.
            ServerProcess server({QStringLiteral("--cars"), QStringLiteral("100"), QStringLiteral("--booking-burst"),
                                  QStringLiteral("2"), QStringLiteral("--booking-rate"), QStringLiteral("1")});
            QVERIFY2(server.start(), qPrintable(server.error()));
            for (int i = 0; i < 6; ++i) {
                const HttpResponse r = bookNumber(server, i);
                QVERIFY2(admitted(r), r.describe().constData());
            }
            QCOMPARE(server.stop(), 0);
        }
        ServerProcess server(limitedServer(2, 1));
        QVERIFY2(server.start(), qPrintable(server.error()));
        for (int i = 0; i < 6; ++i) {
            const HttpResponse r = bookNumber(server, i, kAdminToken);
            QVERIFY2(admitted(r), r.describe().constData());
        }
        // The operator's bookings did not use up the client's bucket.
        QVERIFY(admitted(bookNumber(server, 6)));
        QVERIFY(admitted(bookNumber(server, 7)));
        TC_VERIFY_TOO_MANY(bookNumber(server, 8));
        QCOMPARE(server.stop(), 0);
    }

    void limitHoldsAcrossTwoWorkers()
    {
        // 4 at once, then 1 a minute: within this test only the burst is ever admitted.
        ServerProcess server(limitedServer(
            4, 1,
            {QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"), QStringLiteral("2")}));
        QVERIFY2(server.start(), qPrintable(server.error()));
        // Both workers take connections (a worker may serve before the primary passes it any).
        const auto workerRequests = [&] {
            QList<double> out;
            const HttpResponse r = send(server, "GET", "/admin/v1/workers", kAdminToken);
            for (const QJsonValue &v : r.json().value("workers").toArray())
                if (v.toObject().value("state").toString() == QStringLiteral("serving"))
                    out.append(v.toObject().value("requests").toDouble());
            return out;
        };
        QVERIFY2(waitUntil(
                     [&] {
                         send(server, "GET", "/healthz");
                         const QList<double> served = workerRequests();
                         return served.size() == 2 && served[0] > 0 && served[1] > 0;
                     },
                     20'000),
                 server.stderrText().constData());
        const QList<double> before = workerRequests();

        int admittedCount = 0, limited = 0;
        for (int i = 0; i < 10; ++i) { // each on its own connection: round-robin alternates workers
            const HttpResponse r = bookNumber(server, i);
            if (admitted(r))
                ++admittedCount;
            else if (r.status == 429)
                ++limited;
            else
                QFAIL(r.describe().constData());
        }
        QCOMPARE(admittedCount, 4);
        QCOMPARE(limited, 6);
        // Both workers answered bookings: the one bucket was shared, not one per worker.
        const QList<double> after = workerRequests();
        QCOMPARE(after.size(), 2);
        QVERIFY2(after[0] - before[0] >= 3 && after[1] - before[1] >= 3,
                 qPrintable(QStringLiteral("requests per worker before %1/%2, after %3/%4")
                                .arg(before[0])
                                .arg(before[1])
                                .arg(after[0])
                                .arg(after[1])));
        QCOMPARE(server.stop(), 0);
    }
};

QTEST_GUILESS_MAIN(BookingRateLimitTest)
#include "hardening_booking_rate_limit_test.moc"
