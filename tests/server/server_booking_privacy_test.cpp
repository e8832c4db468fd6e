// A booking's details are for its rider only: GET /api/v1/bookings/{id} needs the booking's rider
// token (or the admin token), also when the ledger answers it after a restart. Booking ids are
// sequential, so without this anyone could walk them and read every rider's pickup, car and fare.
// Real taxicore-server children over loopback.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "ServerProcess.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore::test;

namespace {

const QByteArray kAdminToken = QByteArrayLiteral("privacy-test-admin-token-0123456789");

// `token` empty: no Authorization header at all. Each request on its own connection.
HttpResponse send(const ServerProcess &server, const QByteArray &method, const QByteArray &path,
                  const QByteArray &token = {}, const QByteArray &body = {})
{
    HttpClient http(server.host(), server.port(), 10'000);
    return http.request(method, path, body, token.isEmpty() ? Headers{} : bearer(token));
}

QJsonObject book(const ServerProcess &server, const QString &rider, double lat, double lng)
{
    const QJsonObject body{{"rider_id", rider}, {"pickup", QJsonObject{{"lat", lat}, {"lng", lng}}}};
    const HttpResponse r = send(server, "POST", "/api/v1/bookings", {}, QJsonDocument(body).toJson());
    return r.status == 201 ? r.json() : QJsonObject{};
}

qint64 idOf(const QJsonObject &booking)
{
    return booking.value(QStringLiteral("booking_id")).toInteger();
}

QByteArray bookingPath(qint64 id)
{
    return "/api/v1/bookings/" + QByteArray::number(id);
}

} // namespace

class BookingPrivacyTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void readingABookingNeedsItsToken()
    {
        QTemporaryDir data;
        const QStringList args{
            "--cars",     "20",       "--sim-speed", "0.001", "--admin-token", QString::fromLatin1(kAdminToken),
            "--data-dir", data.path()};
        QJsonObject mine, theirs;
        {
            ServerProcess server(args);
            QVERIFY2(server.start(), qPrintable(server.error()));
            mine = book(server, QStringLiteral("alice"), 57.70, 11.97);
            theirs = book(server, QStringLiteral("bob"), 57.71, 11.96);
            QVERIFY(idOf(mine) > 0 && idOf(theirs) > 0);
            verifyOnlyTheRiderReads(server, idOf(mine), riderToken(mine), riderToken(theirs), false);
            if (QTest::currentTestFailed())
                return;
            // Ended: after a restart the fleet no longer holds it and the ledger answers.
            HttpClient http(server.host(), server.port());
            TC_VERIFY_STATUS(moveBooking(http, idOf(mine), "cancel", riderToken(mine)), 200);
            QCOMPARE(server.stop(), 0);
        }
        ServerProcess again(args);
        QVERIFY2(again.start(), qPrintable(again.error()));
        verifyOnlyTheRiderReads(again, idOf(mine), riderToken(mine), riderToken(theirs), true);
        if (QTest::currentTestFailed())
            return;
        // The open one was restored into the fleet: the same rules there.
        verifyOnlyTheRiderReads(again, idOf(theirs), riderToken(theirs), riderToken(mine), false);
        QCOMPARE(again.stop(), 0);
    }

    void unknownBookingsNeedATokenToAskAbout()
    {
        ServerProcess server({"--cars", "5", "--sim-speed", "0.001"});
        QVERIFY2(server.start(), qPrintable(server.error()));
        // No token: refused before any lookup, so a missing booking looks like any other.
        TC_VERIFY_ERROR(send(server, "GET", bookingPath(987654321)), 401, "rider_token_required");
        TC_VERIFY_ERROR(send(server, "GET", bookingPath(987654321), "some-token"), 404, "booking_not_found");
        QCOMPARE(server.stop(), 0);
    }

private:
    // GET of booking `id`: no token → 401, `otherToken` or a made-up one → 403, its own token and
    // the admin token → 200 (from the ledger when `fromLedger`).
    void verifyOnlyTheRiderReads(const ServerProcess &server, qint64 id, const QByteArray &ownToken,
                                 const QByteArray &otherToken, bool fromLedger)
    {
        const HttpResponse none = send(server, "GET", bookingPath(id));
        TC_VERIFY_ERROR(none, 401, "rider_token_required");
        QVERIFY(none.header("WWW-Authenticate").startsWith("Bearer"));
        QVERIFY2(!none.body.contains("pickup"), none.body.constData());
        TC_VERIFY_ERROR(send(server, "GET", bookingPath(id), otherToken), 403, "not_your_booking");
        TC_VERIFY_ERROR(send(server, "GET", bookingPath(id), "made-up-token"), 403, "not_your_booking");
        for (const QByteArray &token : {ownToken, kAdminToken}) {
            const HttpResponse read = send(server, "GET", bookingPath(id), token);
            TC_VERIFY_STATUS(read, 200);
            QCOMPARE(read.json().value("booking_id").toInteger(), id);
            QCOMPARE(read.json().value("from_ledger").toBool(), fromLedger);
            // Shown once, at booking: reading it back never reveals the token.
            QVERIFY2(!read.body.contains(ownToken) && !read.json().contains("rider_token"), read.body.constData());
        }
    }
};

QTEST_GUILESS_MAIN(BookingPrivacyTest)
#include "server_booking_privacy_test.moc"
