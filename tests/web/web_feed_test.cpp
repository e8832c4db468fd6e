// The rider page's live feed, /api/v1/stream, against a real taxicore-server process: a
// QWebSocket subscribes, receives the nearby cars every ~500 ms, follows a booking through its
// states (the simulated car arrives, pickup, complete, and a cancel), and a foreign Origin is
// refused while an https page behind a proxy that ends TLS is served; a booking_id that is no
// positive whole number is an error, not a subscribe.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>
#include <functional>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr double kLat = 57.7075;
constexpr double kLng = 11.9675;
constexpr int kMessagePollMs = 20; // messages arrive in this process: a short pause is cheap

// One WebSocket client that keeps every JSON message it receives.
class FeedClient {
public:
    explicit FeedClient(const QString &origin = {})
        : m_socket(std::make_unique<QWebSocket>(origin))
    {
        QObject::connect(m_socket.get(), &QWebSocket::textMessageReceived, [this](const QString &text) {
            messages.append(QJsonDocument::fromJson(text.toUtf8()).object());
        });
        QObject::connect(m_socket.get(), &QWebSocket::disconnected, [this] { closed = true; });
    }

    bool open(const QUrl &url, int timeoutMs = 5000)
    {
        QSignalSpy connected(m_socket.get(), &QWebSocket::connected);
        m_socket->open(url);
        return connected.wait(timeoutMs) || m_socket->state() == QAbstractSocket::ConnectedState;
    }

    void send(const QJsonObject &object)
    {
        m_socket->sendTextMessage(QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact)));
    }

    // Follows `bookingId` (unless 0) as the rider holding `riderToken`.
    void subscribe(qint64 bookingId = 0, const QByteArray &riderToken = {}, double radius = 3000)
    {
        QJsonObject sub{{"lat", kLat}, {"lng", kLng}, {"radius_m", radius}};
        if (bookingId) {
            sub.insert("booking_id", bookingId);
            sub.insert("rider_token", QString::fromLatin1(riderToken));
        }
        send({{"subscribe", sub}});
    }

    // Waits (bounded) for a message, from index `from` on, that satisfies `pred`; returns it.
    QJsonObject waitFor(const std::function<bool(const QJsonObject &)> &pred, int timeoutMs, qsizetype from = 0)
    {
        QJsonObject found;
        waitUntil(
            [&] {
                for (qsizetype i = from; i < messages.size(); ++i) {
                    if (pred(messages[i])) {
                        lastIndex = i;
                        found = messages[i];
                        return true;
                    }
                }
                return closed; // nothing more will come
            },
            timeoutMs, kMessagePollMs);
        return found;
    }

    bool waitClosed(int timeoutMs)
    {
        return waitUntil([&] { return closed; }, timeoutMs, kMessagePollMs);
    }

    QWebSocket &socket() { return *m_socket; }

    QList<QJsonObject> messages;
    qsizetype lastIndex = 0;
    bool closed = false;

private:
    std::unique_ptr<QWebSocket> m_socket;
};

bool isUpdate(const QJsonObject &m)
{
    return m.value("type").toString() == QLatin1String("update");
}

std::function<bool(const QJsonObject &)> bookingIn(const QString &state)
{
    return [state](const QJsonObject &m) {
        return isUpdate(m) && m.value("booking").toObject().value("state").toString() == state;
    };
}

// How the feed answers an upgrade with these Host and Origin headers, sent from a raw socket (a
// QWebSocket writes its own Host): as a proxy in front passes a browser's handshake on.
struct FirstFrame {
    int status = 0;    // the handshake's HTTP status
    int opcode = -1;   // the first frame's: 1 text (the hello: served), 8 close
    int closeCode = 0; // for a close frame
    QByteArray payload;
};

FirstFrame firstFrameFor(const ServerProcess &server, const QByteArray &host, const QByteArray &origin)
{
    FirstFrame out;
    QTcpSocket socket;
    socket.connectToHost(server.host(), quint16(server.port()));
    if (!socket.waitForConnected(5000))
        return out;
    socket.write("GET /api/v1/stream HTTP/1.1\r\nHost: " + host + "\r\nOrigin: " + origin
                 + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    QByteArray in;
    QElapsedTimer waited;
    waited.start();
    // The head, then one whole frame (the feed's are short: a 7-bit length).
    const auto frameStart = [&] { return in.indexOf("\r\n\r\n"); };
    const auto whole = [&] {
        const qsizetype at = frameStart();
        if (at < 0)
            return false;
        if (!in.startsWith("HTTP/1.1 101"))
            return true;
        const qsizetype frame = at + 4;
        return in.size() >= frame + 2 && in.size() >= frame + 2 + (quint8(in[frame + 1]) & 0x7f);
    };
    while (!whole() && waited.elapsed() < 5000) {
        socket.waitForReadyRead(100);
        in += socket.readAll();
    }
    out.status = in.mid(9, 3).toInt();
    if (out.status != 101 || !whole())
        return out;
    const qsizetype frame = frameStart() + 4;
    out.opcode = quint8(in[frame]) & 0x0f;
    out.payload = in.mid(frame + 2, quint8(in[frame + 1]) & 0x7f);
    if (out.opcode == 8 && out.payload.size() >= 2)
        out.closeCode = (quint8(out.payload[0]) << 8) | quint8(out.payload[1]);
    return out;
}

} // namespace

class WebFeedTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        m_server = std::make_unique<ServerProcess>(QStringList{"--sim-speed", "30", "--seed", "11", "--cars", "200"});
        QVERIFY2(m_server->start(), qPrintable(m_server->error()));
        m_origin = QStringLiteral("http://%1:%2").arg(m_server->host()).arg(m_server->port());
        m_feedUrl = QUrl(QStringLiteral("ws://%1:%2/api/v1/stream").arg(m_server->host()).arg(m_server->port()));
        // Fail once, clearly, when the server has no feed (LiveFeed not wired into ApiStack).
        HttpClient http(m_server->host(), m_server->port());
        QVERIFY2(http.get("/api/v1/stream").status != 404,
                 "no route /api/v1/stream: LiveFeed is not wired into the server "
                 "(resources/web/README.md, Wiring)");
    }

    void cleanupTestCase()
    {
        if (m_server)
            QCOMPARE(m_server->stop(), 0);
    }

    void plainGetIsUpgradeRequired()
    {
        HttpClient http(m_server->host(), m_server->port());
        const HttpResponse r = http.get("/api/v1/stream");
        TC_VERIFY_ERROR(r, 426, "upgrade_required");
        QCOMPARE(r.header("Upgrade").toLower(), QByteArray("websocket"));
    }

    void subscribeReceivesNearbyCars()
    {
        FeedClient feed(m_origin);
        QVERIFY(feed.open(m_feedUrl));
        const QJsonObject hello = feed.waitFor([](const QJsonObject &m) { return m.value("type") == "hello"; }, 3000);
        QVERIFY2(!hello.isEmpty(), "no hello message");
        QVERIFY(hello.value("interval_ms").toInt() > 0);

        feed.subscribe();
        const QJsonObject first = feed.waitFor(isUpdate, 3000);
        QVERIFY2(!first.isEmpty(), "no update after subscribe");
        const QJsonArray cars = first.value("cars").toArray();
        QVERIFY2(!cars.isEmpty(), "no car within 3 km of the centre");
        double last = -1;
        for (const QJsonValue &v : cars) {
            const QJsonObject car = v.toObject();
            QVERIFY(car.value("id").toInt() > 0);
            QVERIFY(car.value("lat").isDouble() && car.value("lng").isDouble());
            QVERIFY(!car.value("state").toString().isEmpty());
            QVERIFY(car.contains("eta_s"));
            const double d = car.value("distance_m").toDouble(-1);
            QVERIFY(d >= 0 && d <= 3000);
            QVERIFY2(d >= last, "cars are not sorted by distance");
            last = d;
        }
        // And again, by itself, about every interval: two more updates within 2.5 s.
        const qsizetype after = feed.lastIndex + 1;
        QVERIFY(!feed.waitFor(isUpdate, 1500, after).isEmpty());
        QVERIFY(!feed.waitFor(isUpdate, 1500, feed.lastIndex + 1).isEmpty());
    }

    void followsTheBookingThroughItsStates()
    {
        HttpClient http(m_server->host(), m_server->port());
        const HttpResponse booked = http.postJson(
            "/api/v1/bookings", {{"rider_id", "feed-test"}, {"pickup", QJsonObject{{"lat", kLat}, {"lng", kLng}}}});
        TC_VERIFY_STATUS(booked, 201);
        const qint64 id = booked.json().value("booking_id").toInteger();
        QVERIFY(id > 0);

        FeedClient feed(m_origin);
        QVERIFY(feed.open(m_feedUrl));
        feed.subscribe(id, riderToken(booked.json()));
        const QJsonObject assigned = feed.waitFor(isUpdate, 3000);
        QVERIFY2(!assigned.isEmpty(), "no update");
        const QJsonObject booking = assigned.value("booking").toObject();
        QCOMPARE(booking.value("booking_id").toInteger(), id);
        QVERIFY2(booking.value("state") == "assigned" || booking.value("state") == "arriving",
                 qPrintable(booking.value("state").toString()));
        QVERIFY(booking.value("car").toObject().value("lat").isDouble());

        // The simulated car drives to the pickup (30× speed): the feed reports its arrival.
        const QJsonObject arriving = feed.waitFor(bookingIn("arriving"), 60'000);
        QVERIFY2(!arriving.isEmpty(), "the car did not arrive within 60 s");
        TC_VERIFY_STATUS(moveBooking(http, id, "pickup", riderToken(booked.json())), 200);
        QVERIFY2(!feed.waitFor(bookingIn("on_trip"), 3000, feed.lastIndex).isEmpty(), "no on_trip update");
        TC_VERIFY_STATUS(moveBooking(http, id, "complete", riderToken(booked.json())), 200);
        const QJsonObject done = feed.waitFor(bookingIn("completed"), 3000, feed.lastIndex);
        QVERIFY2(!done.isEmpty(), "no completed update");
        QVERIFY(done.value("booking").toObject().contains("distance_m"));
    }

    void reportsACancelledBooking()
    {
        HttpClient http(m_server->host(), m_server->port());
        const HttpResponse booked = http.postJson(
            "/api/v1/bookings", {{"rider_id", "feed-cancel"}, {"pickup", QJsonObject{{"lat", kLat}, {"lng", kLng}}}});
        TC_VERIFY_STATUS(booked, 201);
        const qint64 id = booked.json().value("booking_id").toInteger();
        FeedClient feed(m_origin);
        QVERIFY(feed.open(m_feedUrl));
        feed.subscribe(id, riderToken(booked.json()));
        QVERIFY(!feed.waitFor(isUpdate, 3000).isEmpty());
        // The rider cancels it.
        TC_VERIFY_STATUS(moveBooking(http, id, "cancel", riderToken(booked.json())), 200);
        QVERIFY2(!feed.waitFor(bookingIn("cancelled"), 3000).isEmpty(), "no cancelled update");
    }

    void badMessagesGetAnError()
    {
        FeedClient feed(m_origin);
        QVERIFY(feed.open(m_feedUrl));
        feed.socket().sendTextMessage("not json");
        const QJsonObject error = feed.waitFor([](const QJsonObject &m) { return m.value("type") == "error"; }, 3000);
        QCOMPARE(error.value("error").toString(), QStringLiteral("invalid_message"));
        feed.send({{"subscribe", QJsonObject{{"lat", 10.0}, {"lng", 10.0}}}});
        const QJsonObject outside =
            feed.waitFor([](const QJsonObject &m) { return m.value("error") == "outside_service_area"; }, 3000);
        QVERIFY2(!outside.isEmpty(), "no outside_service_area error");
        QVERIFY(!feed.closed);
    }

    void clientWithoutOriginIsServed()
    {
        FeedClient feed; // not a browser: no Origin header
        QVERIFY(feed.open(m_feedUrl));
        feed.subscribe();
        QVERIFY(!feed.waitFor(isUpdate, 3000).isEmpty());
    }

    void foreignOriginIsRefused()
    {
        FeedClient feed(QStringLiteral("http://evil.example"));
        feed.open(m_feedUrl); // the handshake may complete; the feed then closes at once
        QVERIFY2(feed.waitClosed(5000), "a foreign origin was not disconnected");
        QVERIFY(feed.waitFor(isUpdate, 10).isEmpty());
        if (feed.socket().closeCode() != QWebSocketProtocol::CloseCodeNormal)
            QCOMPARE(feed.socket().closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);

        FeedClient otherPort(QStringLiteral("http://%1:%2").arg(m_server->host()).arg(m_server->port() + 1));
        otherPort.open(m_feedUrl);
        QVERIFY2(otherPort.waitClosed(5000), "another port's origin was not disconnected");
    }

    // TLS ends at a proxy in front (docs/cluster.md: nginx `listen 443 ssl`): the page is https
    // (port 443), the feed sees a plain ws request with the page's Host. It was refused (443 vs 80)
    // for every browser; so was an https page on another port through a proxy that drops the
    // port from Host (nginx's $host). Another host is still refused, and so is another port when
    // both sides name one.
    void httpsPageBehindATlsProxyIsServed()
    {
        struct HostAndOrigin {
            QByteArray host, origin;
        };
        const HostAndOrigin served[] = {
            {"taxi.example", "https://taxi.example"},      {"TAXI.example", "https://taxi.EXAMPLE"},
            {"taxi.example", "https://taxi.example:8443"}, {"taxi.example:8443", "https://taxi.example:8443"},
            {"taxi.example:8080", "http://taxi.example"},
        };
        for (const auto &c : served) {
            const FirstFrame answer = firstFrameFor(*m_server, c.host, c.origin);
            QVERIFY2(answer.status == 101 && answer.opcode == 1,
                     qPrintable(QStringLiteral("Host %1, Origin %2: status %3, opcode %4, close %5 %6")
                                    .arg(QLatin1String(c.host), QLatin1String(c.origin))
                                    .arg(answer.status)
                                    .arg(answer.opcode)
                                    .arg(answer.closeCode)
                                    .arg(QString::fromUtf8(answer.payload.mid(2)))));
            QVERIFY2(answer.payload.contains("\"hello\""), answer.payload.constData());
        }
        const HostAndOrigin refused[] = {
            {"taxi.example", "https://evil.example"},
            {"taxi.example", "https://taxi.example.evil.example"},
            {"taxi.example:8443", "https://taxi.example:9443"},
            {"taxi.example", "null"},
        };
        for (const auto &c : refused) {
            const FirstFrame answer = firstFrameFor(*m_server, c.host, c.origin);
            QVERIFY2(answer.status == 101 && answer.opcode == 8,
                     qPrintable(QStringLiteral("Host %1, Origin %2: status %3, opcode %4")
                                    .arg(QLatin1String(c.host), QLatin1String(c.origin))
                                    .arg(answer.status)
                                    .arg(answer.opcode)));
            QCOMPARE(answer.closeCode, int(QWebSocketProtocol::CloseCodePolicyViolated));
            QCOMPARE(answer.payload.mid(2), QByteArray("origin not allowed"));
        }
    }

    // booking_id is a positive whole number, or a string of its digits: anything else is an error
    // to the client (not a subscribe to no booking, nor to booking 7 for 7.9), and nothing is
    // taken: no update comes.
    void invalidBookingIdIsAnError()
    {
        FeedClient feed(m_origin);
        QVERIFY(feed.open(m_feedUrl));
        const QJsonValue invalid[] = {QJsonValue("abc"), QJsonValue("7x"),         QJsonValue("0"),
                                      QJsonValue(""),    QJsonValue("-7"),         QJsonValue(" 7"),
                                      QJsonValue(0),     QJsonValue(7.9),          QJsonValue(-7),
                                      QJsonValue(true),  QJsonValue(QJsonArray{7})};
        for (const QJsonValue &id : invalid) {
            const qsizetype from = feed.messages.size();
            feed.send({{"subscribe", QJsonObject{{"lat", kLat}, {"lng", kLng}, {"booking_id", id}}}});
            const QJsonObject error =
                feed.waitFor([](const QJsonObject &m) { return m.value("type") == "error"; }, 3000, from);
            const QByteArray shown = QJsonDocument(QJsonArray{id}).toJson(QJsonDocument::Compact);
            QVERIFY2(error.value("error").toString() == QLatin1String("invalid_booking_id"),
                     qPrintable(QStringLiteral("booking_id %1: %2")
                                    .arg(QString::fromUtf8(shown),
                                         QString::fromUtf8(QJsonDocument(error).toJson(QJsonDocument::Compact)))));
            QVERIFY(!error.value("message").toString().isEmpty());
        }
        QVERIFY2(feed.waitFor(isUpdate, 700).isEmpty(), "an invalid booking_id was taken as a subscribe");
        QVERIFY(!feed.closed);

        // The string form of a real booking's id is followed, as the number is.
        HttpClient http(m_server->host(), m_server->port());
        const HttpResponse booked = http.postJson(
            "/api/v1/bookings", {{"rider_id", "feed-id-form"}, {"pickup", QJsonObject{{"lat", kLat}, {"lng", kLng}}}});
        TC_VERIFY_STATUS(booked, 201);
        const qint64 id = booked.json().value("booking_id").toInteger();
        feed.send({{"subscribe", QJsonObject{{"lat", kLat},
                                             {"lng", kLng},
                                             {"booking_id", QString::number(id)},
                                             {"rider_token", QString::fromLatin1(riderToken(booked.json()))}}}});
        const QJsonObject update = feed.waitFor(
            [id](const QJsonObject &m) {
                return isUpdate(m) && m.value("booking").toObject().value("booking_id").toInteger() == id;
            },
            3000);
        QVERIFY2(!update.isEmpty(), "no update for the booking named by a string of digits");
        TC_VERIFY_STATUS(moveBooking(http, id, "cancel", riderToken(booked.json())), 200);
    }

    void upgradeElsewhereIsRefused()
    {
        // Only the feed upgrades: elsewhere a 404 and the connection closed, never 200 then 101.
        HttpClient http(m_server->host(), m_server->port());
        const HttpResponse r = http.request("GET", "/hello", {},
                                            {{"Connection", "Upgrade"},
                                             {"Upgrade", "websocket"},
                                             {"Sec-WebSocket-Version", "13"},
                                             {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}});
        TC_VERIFY_STATUS(r, 404);
        QVERIFY2(!http.buffered().contains("101 Switching"), http.buffered().constData());
        FeedClient feed(m_origin);
        QVERIFY(!feed.open(QUrl(QStringLiteral("ws://%1:%2/hello").arg(m_server->host()).arg(m_server->port())), 3000));
    }

    void serverStaysHealthy()
    {
        HttpClient http(m_server->host(), m_server->port());
        TC_VERIFY_STATUS(http.get("/healthz"), 200);
    }

private:
    std::unique_ptr<ServerProcess> m_server;
    QString m_origin;
    QUrl m_feedUrl;
};

QTEST_GUILESS_MAIN(WebFeedTest)
#include "web_feed_test.moc"
