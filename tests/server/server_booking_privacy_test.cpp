// A booking's details are for its rider only: GET /api/v1/bookings/{id} needs the booking's rider
// token (or the admin token), also when the ledger answers it after a restart, and the live feed
// follows a booking only for a subscribe that carries that token. Booking ids are sequential, so
// without this anyone could walk them and read every rider's pickup, car and fare. An ended
// booking no longer shows its former car live (it may be driving to another rider). Real
// taxicore-server children over loopback.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QWebSocket>
#include <functional>
#include <memory>

using namespace taxicore::test;

namespace {

const QByteArray kAdminToken = QByteArrayLiteral("privacy-test-admin-token-0123456789");
constexpr double kLat = 57.7075;
constexpr double kLng = 11.9675;
constexpr int kMessagePollMs = 20;
// Longer than two feed updates (500 ms apart): a booking the feed would show has shown by then.
constexpr int kNoLeakWindowMs = 1500;
// A car reaching its pickup anywhere in the city at --sim-speed 200.
constexpr int kArrivalMs = 30'000;

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

// A live-feed client that keeps every JSON message it receives.
class FeedClient {
public:
    FeedClient()
        : m_socket(std::make_unique<QWebSocket>())
    {
        QObject::connect(m_socket.get(), &QWebSocket::textMessageReceived, [this](const QString &text) {
            messages.append(QJsonDocument::fromJson(text.toUtf8()).object());
        });
        QObject::connect(m_socket.get(), &QWebSocket::disconnected, [this] { closed = true; });
    }

    bool open(const ServerProcess &server)
    {
        QSignalSpy connected(m_socket.get(), &QWebSocket::connected);
        m_socket->open(QUrl(QStringLiteral("ws://%1:%2/api/v1/stream").arg(server.host()).arg(server.port())));
        return connected.wait(5000) || m_socket->state() == QAbstractSocket::ConnectedState;
    }

    // Subscribes near the fleet and follows `bookingId`; `token` empty: no rider_token field.
    void follow(qint64 bookingId, const QByteArray &token)
    {
        QJsonObject sub{{"lat", kLat}, {"lng", kLng}, {"radius_m", 3000}, {"booking_id", bookingId}};
        if (!token.isEmpty())
            sub.insert("rider_token", QString::fromLatin1(token));
        m_socket->sendTextMessage(
            QString::fromUtf8(QJsonDocument(QJsonObject{{"subscribe", sub}}).toJson(QJsonDocument::Compact)));
    }

    QJsonObject waitFor(const std::function<bool(const QJsonObject &)> &pred, int timeoutMs)
    {
        QJsonObject found;
        waitUntil(
            [&] {
                for (const QJsonObject &m : std::as_const(messages))
                    if (pred(m)) {
                        found = m;
                        return true;
                    }
                return closed;
            },
            timeoutMs, kMessagePollMs);
        return found;
    }

    // Any message so far that shows the booking or its car.
    bool showedABooking() const
    {
        for (const QJsonObject &m : messages)
            if (m.contains(QStringLiteral("booking")) || m.value(QStringLiteral("type")).toString() == "follow")
                return true;
        return false;
    }

    QList<QJsonObject> messages;
    bool closed = false;

private:
    std::unique_ptr<QWebSocket> m_socket;
};

bool isError(const QJsonObject &m)
{
    return m.value(QStringLiteral("type")).toString() == QLatin1String("error");
}

std::function<bool(const QJsonObject &)> showsBooking(qint64 id)
{
    return [id](const QJsonObject &m) {
        return m.value(QStringLiteral("booking")).toObject().value(QStringLiteral("booking_id")).toInteger() == id;
    };
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

    // Review finding F5: an ended booking's GET showed its former car live, and the car shows
    // the booking it serves now: alice, who cancelled, could follow the car to bob's pickup. The
    // car's live view (position, state, booking) is the booking's only while the car serves it.
    void anEndedBookingShowsNotItsFormerCarsNextRide_data()
    {
        QTest::addColumn<QByteArray>("end");
        QTest::newRow("cancelled") << QByteArrayLiteral("cancel");
        QTest::newRow("completed") << QByteArrayLiteral("complete");
    }
    void anEndedBookingShowsNotItsFormerCarsNextRide()
    {
        QFETCH(QByteArray, end);
        QTemporaryDir data;
        // One car: the next booking gets the car the first one had. Fast enough to reach a pickup
        // within seconds (a completed ride needs the car there first); a week to board, so the
        // booking never expires meanwhile (600 simulated seconds are 3 s here).
        ServerProcess server(
            {"--cars", "1", "--sim-speed", "200", "--pickup-timeout", "604800", "--data-dir", data.path()});
        QVERIFY2(server.start(), qPrintable(server.error()));
        const QJsonObject alice = book(server, QStringLiteral("alice"), kLat, kLng);
        QVERIFY(idOf(alice) > 0);
        const int carId = alice.value(QStringLiteral("car_id")).toInt();
        const HttpResponse open = send(server, "GET", bookingPath(idOf(alice)), riderToken(alice));
        TC_VERIFY_STATUS(open, 200);
        // While it is alice's ride, she sees her car coming.
        QCOMPARE(open.json().value(QStringLiteral("car")).toObject().value(QStringLiteral("booking_id")).toInteger(),
                 idOf(alice));
        HttpClient http(server.host(), server.port());
        if (end == "complete") {
            const auto stateOf = [&] {
                return readBooking(http, idOf(alice), riderToken(alice)).json().value(QStringLiteral("state"));
            };
            QTRY_COMPARE_WITH_TIMEOUT(stateOf().toString(), QStringLiteral("arriving"), kArrivalMs);
            TC_VERIFY_STATUS(moveBooking(http, idOf(alice), "pickup", riderToken(alice)), 200);
        }
        TC_VERIFY_STATUS(moveBooking(http, idOf(alice), end, riderToken(alice)), 200);

        const QJsonObject bob = book(server, QStringLiteral("bob"), kLat + 0.0005, kLng);
        QVERIFY(idOf(bob) > idOf(alice));
        QCOMPARE(bob.value(QStringLiteral("car_id")).toInt(), carId);

        const HttpResponse ended = send(server, "GET", bookingPath(idOf(alice)), riderToken(alice));
        TC_VERIFY_STATUS(ended, 200);
        const QJsonObject view = ended.json();
        QCOMPARE(view.value(QStringLiteral("state")).toString(),
                 end == "cancel" ? QStringLiteral("cancelled") : QStringLiteral("completed"));
        QCOMPARE(view.value(QStringLiteral("car_id")).toInt(), carId); // which car it was stays
        QVERIFY2(!view.contains(QStringLiteral("car")), ended.body.constData());
        QVERIFY2(!ended.body.contains("to_pickup"), ended.body.constData());
        QCOMPARE(view.value(QStringLiteral("eta_s")).toDouble(), 0.0);

        // Bob, whose ride it is now, still sees the car.
        const HttpResponse bobs = send(server, "GET", bookingPath(idOf(bob)), riderToken(bob));
        TC_VERIFY_STATUS(bobs, 200);
        const QJsonObject bobsCar = bobs.json().value(QStringLiteral("car")).toObject();
        QCOMPARE(bobsCar.value(QStringLiteral("booking_id")).toInteger(), idOf(bob));
        QVERIFY(bobsCar.contains(QStringLiteral("lat")));
        QCOMPARE(server.stop(), 0);
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

    // The live feed's version of the one above (review): alice follows her booking and cancels it;
    // bob's booking is then reassigned to her former car. Her feed sent one more follow message
    // with that car heading for bob's pickup, bob's booking id in it.
    void anEndedBookingsFollowerIsNotShownItsFormerCarsNextRide()
    {
        ServerProcess server({"--cars", "20", "--sim-speed", "30", "--seed", "11", "--pickup-timeout", "604800",
                              "--admin-token", QString::fromLatin1(kAdminToken)});
        QVERIFY2(server.start(), qPrintable(server.error()));
        const QJsonObject alice = book(server, QStringLiteral("alice"), kLat, kLng);
        QVERIFY(idOf(alice) > 0);
        const int aliceCar = alice.value(QStringLiteral("car_id")).toInt();
        FeedClient follower;
        QVERIFY(follower.open(server));
        follower.follow(idOf(alice), riderToken(alice));
        QVERIFY2(!follower.waitFor(showsBooking(idOf(alice)), 5000).isEmpty(), "alice does not see her booking");
        HttpClient http(server.host(), server.port());
        TC_VERIFY_STATUS(moveBooking(http, idOf(alice), "cancel", riderToken(alice)), 200);

        const QJsonObject bob = book(server, QStringLiteral("bob"), 57.71, 11.98);
        QVERIFY(idOf(bob) > 0);
        if (bob.value(QStringLiteral("car_id")).toInt() != aliceCar) { // else bob's has it already
            const HttpResponse moved =
                http.request("POST", "/admin/v1/bookings/" + QByteArray::number(idOf(bob)) + "/reassign",
                             QJsonDocument(QJsonObject{{"car_id", aliceCar}}).toJson(QJsonDocument::Compact),
                             {{"Authorization", QByteArrayLiteral("Bearer ") + kAdminToken}});
            TC_VERIFY_STATUS(moved, 200);
        }
        QTest::qWait(kNoLeakWindowMs); // follow passes, an update tick
        for (const QJsonObject &m : std::as_const(follower.messages)) {
            const QByteArray text = QJsonDocument(m).toJson(QJsonDocument::Compact);
            const QJsonObject car = m.value(QStringLiteral("car")).toObject();
            QVERIFY2(car.value(QStringLiteral("booking_id")).toInteger() != idOf(bob), text.constData());
            const QJsonObject booking = m.value(QStringLiteral("booking")).toObject();
            QVERIFY2(booking.value(QStringLiteral("car")).toObject().value(QStringLiteral("booking_id")).toInteger()
                         != idOf(bob),
                     text.constData());
        }
        QCOMPARE(server.stop(), 0);
    }

    void theFeedFollowsABookingOnlyForItsRider()
    {
        ServerProcess server(
            {"--cars", "50", "--sim-speed", "30", "--seed", "11", "--admin-token", QString::fromLatin1(kAdminToken)});
        QVERIFY2(server.start(), qPrintable(server.error()));
        const QJsonObject mine = book(server, QStringLiteral("carol"), kLat, kLng);
        const QJsonObject theirs = book(server, QStringLiteral("dave"), 57.71, 11.96);
        QVERIFY(idOf(mine) > 0 && idOf(theirs) > 0);

        FeedClient anonymous;
        QVERIFY(anonymous.open(server));
        anonymous.follow(idOf(mine), {});
        const QJsonObject refused = anonymous.waitFor(isError, 5000);
        QCOMPARE(refused.value("error").toString(), QStringLiteral("rider_token_required"));
        QVERIFY(!refused.value("message").toString().isEmpty());

        FeedClient other;
        QVERIFY(other.open(server));
        other.follow(idOf(mine), riderToken(theirs));
        QCOMPARE(other.waitFor(isError, 5000).value("error").toString(), QStringLiteral("not_your_booking"));

        FeedClient rider;
        QVERIFY(rider.open(server));
        rider.follow(idOf(mine), riderToken(mine));
        QVERIFY2(!rider.waitFor(showsBooking(idOf(mine)), 5000).isEmpty(), "the rider does not see the booking");

        FeedClient operatorFeed;
        QVERIFY(operatorFeed.open(server));
        operatorFeed.follow(idOf(mine), kAdminToken);
        QVERIFY2(!operatorFeed.waitFor(showsBooking(idOf(mine)), 5000).isEmpty(), "the admin token is refused");

        // Meanwhile the refused clients were shown nothing of the booking or its car.
        QTest::qWait(kNoLeakWindowMs);
        QVERIFY(!anonymous.showedABooking());
        QVERIFY(!other.showedABooking());
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
