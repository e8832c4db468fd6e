// A live-feed client may subscribe to a booking this fleet does not hold yet (booked through
// another node of a cluster and not announced here yet): the feed takes the subscribe and checks
// its rider_token once the booking arrives. In-process LiveFeed over a real SharedRegion: a
// stranger's token is then refused (not_your_booking) and shown nothing of the booking or its car,
// while it keeps its point; the rider's token, subscribed just as early, follows the booking.

#include "wire/SecretToken.h"

#include "LiveFeedKit.h"
#include "Wait.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>
#include <cmath>
#include <functional>
#include <memory>

using namespace taxicore;
using namespace taxicore::test;

namespace {

constexpr uint64_t kLateId = 4242; // the id the booking will have (the fleet's id source)
const QByteArray kRiderToken = QByteArrayLiteral("late-booking-rider-token-0123456789abcdef");
const QByteArray kStrangerToken = QByteArrayLiteral("a-stranger-guessing-the-next-booking-id");
constexpr LatLng kPickup{57.7075, 11.9675};
constexpr int kUpdateIntervalMs = 100;
constexpr int kWaitMs = 5000;

// A feed client that keeps every JSON message it receives.
struct Client {
    std::unique_ptr<QWebSocket> socket = std::make_unique<QWebSocket>();
    QList<QJsonObject> messages;

    Client()
    {
        QObject::connect(socket.get(), &QWebSocket::textMessageReceived, [this](const QString &text) {
            messages.append(QJsonDocument::fromJson(text.toUtf8()).object());
        });
    }

    void follow(uint64_t bookingId, const QByteArray &token)
    {
        const QJsonObject sub{{"lat", kPickup.lat},
                              {"lng", kPickup.lng},
                              {"booking_id", qint64(bookingId)},
                              {"rider_token", QString::fromLatin1(token)}};
        socket->sendTextMessage(
            QString::fromUtf8(QJsonDocument(QJsonObject{{"subscribe", sub}}).toJson(QJsonDocument::Compact)));
    }

    // The index of the first message from `from` on that satisfies `pred`; -1 when none.
    qsizetype find(const std::function<bool(const QJsonObject &)> &pred, qsizetype from = 0) const
    {
        for (qsizetype i = from; i < messages.size(); ++i)
            if (pred(messages[i]))
                return i;
        return -1;
    }
};

bool isUpdate(const QJsonObject &m)
{
    return m.value("type").toString() == QLatin1String("update");
}

// Anything of the booking beyond "unknown": its view, or its car.
bool showsTheBooking(const QJsonObject &m)
{
    if (m.value("type").toString() == QLatin1String("follow"))
        return true;
    const QJsonObject booking = m.value("booking").toObject();
    return !booking.isEmpty() && booking.value("state").toString() != QLatin1String("unknown");
}

std::vector<double> etaByDistance(LatLng pickup, const std::vector<LatLng> &cars)
{
    std::vector<double> out;
    for (const LatLng &car : cars)
        out.push_back(std::hypot(car.lat - pickup.lat, car.lng - pickup.lng) * 111'000 / 10.0);
    return out;
}

} // namespace

class WebFeedLateBookingTest : public QObject, LiveFeedFixture {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QString error;
        QVERIFY2(startFeed({50, 10, 0.002}, error), qPrintable(error));
        m_fleet->setIdSource([] { return kLateId; });
        m_feed->setIntervalMs(kUpdateIntervalMs);
    }

    void cleanupTestCase() { stopFeed(); }

    void aBookingThatArrivesLaterIsCheckedWhenItArrives()
    {
        Client stranger, rider;
        for (Client *c : {&stranger, &rider}) {
            QSignalSpy connected(c->socket.get(), &QWebSocket::connected);
            c->socket->open(m_url);
            QVERIFY(connected.wait(kWaitMs));
        }
        stranger.follow(kLateId, kStrangerToken);
        rider.follow(kLateId, kRiderToken);
        // Taken, for now: the booking is not here yet.
        QVERIFY(waitUntil([&] { return stranger.find(isUpdate) >= 0 && rider.find(isUpdate) >= 0; }, kWaitMs));
        QVERIFY(stranger.find(showsTheBooking) < 0);

        const auto booked = m_fleet->book(QStringLiteral("late-rider"), kPickup, std::nullopt, 5000, etaByDistance,
                                          tokenHash(kRiderToken));
        QCOMPARE(booked.result, FleetStore::BookResult::Booked);
        QCOMPARE(booked.booking.id, kLateId);

        QVERIFY2(waitUntil([&] { return rider.find(showsTheBooking) >= 0; }, kWaitMs),
                 "the rider's feed never showed the booking");
        const auto refusal = [](const QJsonObject &m) {
            return m.value("type").toString() == QLatin1String("error")
                   && m.value("error").toString() == QLatin1String("not_your_booking")
                   && m.value("booking_id").toInteger() == qint64(kLateId);
        };
        QVERIFY2(waitUntil([&] { return stranger.find(refusal) >= 0; }, kWaitMs), "the stranger was not refused");
        // It keeps its point, without the booking: later updates carry no booking at all.
        const qsizetype refusedAt = stranger.find(refusal);
        QVERIFY(waitUntil([&] { return stranger.find(isUpdate, refusedAt) >= 0; }, kWaitMs));
        QTest::qWait(3 * kUpdateIntervalMs);
        QVERIFY2(stranger.find(showsTheBooking) < 0, "the stranger was shown the booking or its car");
        QVERIFY(stranger.find([](const QJsonObject &m) { return m.contains("booking"); }, refusedAt) < 0);
    }
};

QTEST_GUILESS_MAIN(WebFeedLateBookingTest)
#include "web_feed_late_booking_test.moc"
