// An update tick over many riders must not hold the feed's thread in one piece: it serves its
// clients in slices and lets the event loop run between them, so a follow message or an HTTP
// request waits for a slice (~1 ms), not for the whole tick (30-70 ms over 667 riders on a
// cluster node, docs/benchmarks.md §18); and the slices are spread over the tick's interval, so
// the tick is no burst of CPU that every process on the machine waits behind. In-process over a
// real SharedRegion (LiveFeedKit); the road estimator is made slow (1 ms per rider cell) so that
// one tick is long on any machine, and each of its calls notes which turn of the event loop it ran
// in (QAbstractEventDispatcher::awake counts them).

#include "LiveFeedKit.h"
#include "pricing/TripEstimator.h"

#include "Wait.h"

#include <QAbstractEventDispatcher>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>
#include <QWebSocket>
#include <memory>
#include <set>
#include <vector>

using namespace taxicore;
using namespace taxicore::test;

namespace {

// Straight-line answers, each call costing 1 ms of this thread and noting the loop's turn.
class SlowRoadEstimator final : public TripEstimator {
public:
    struct Call {
        quint64 turn;
        qint64 atMs;
    };
    explicit SlowRoadEstimator(const quint64 &turns)
        : m_turns(turns)
    {
        m_clock.start();
    }
    TripEstimate estimate(LatLng from, LatLng to) const override { return m_straight.estimate(from, to); }
    std::vector<double> carEtasTo(LatLng target, const std::vector<NearbyCar> &cars) const override
    {
        calls.push_back({m_turns, m_clock.elapsed()});
        QElapsedTimer spin;
        spin.start();
        while (spin.nsecsElapsed() < 1'000'000) {
        }
        return m_straight.carEtasTo(target, cars);
    }
    mutable std::vector<Call> calls;

private:
    const quint64 &m_turns;
    QElapsedTimer m_clock;
    StraightLineEstimator m_straight;
};

struct Client {
    std::unique_ptr<QWebSocket> socket = std::make_unique<QWebSocket>();
    int updates = 0;
    qint64 lastUpdateMs = 0; // when the newest update arrived (the test's clock)

    explicit Client(const QElapsedTimer &clock)
    {
        QObject::connect(socket.get(), &QWebSocket::textMessageReceived, [this, &clock](const QString &text) {
            if (QJsonDocument::fromJson(text.toUtf8()).object().value("type") == QLatin1String("update")) {
                ++updates;
                lastUpdateMs = clock.elapsed();
            }
        });
    }
};

} // namespace

class WebFeedTickSlicesTest : public QObject, public LiveFeedFixture {
    Q_OBJECT

private slots:
    void init()
    {
        connect(QAbstractEventDispatcher::instance(), &QAbstractEventDispatcher::awake, this, [this] { ++m_turns; });
    }
    void cleanup()
    {
        disconnect(QAbstractEventDispatcher::instance(), nullptr, this, nullptr);
        stopFeed();
        m_estimator.reset(); // after the feed that calls it
    }

    void aLongTickRunsInSlicesSpreadOverItsInterval()
    {
        m_estimator = std::make_unique<SlowRoadEstimator>(m_turns);
        SlowRoadEstimator &estimator = *m_estimator;
        QString error;
        QVERIFY2(startFeed({200, 14, 0.0005}, error), qPrintable(error));
        m_feed->setEstimator(&estimator);
        m_feed->setIntervalMs(60'000); // no tick while the riders subscribe: the first has them all

        // 120 riders, each in its own ~50 m cell: no two share a tick's answer.
        constexpr int kRiders = 120;
        QElapsedTimer clock;
        clock.start();
        std::vector<std::unique_ptr<Client>> clients;
        for (int i = 0; i < kRiders; ++i) {
            clients.push_back(std::make_unique<Client>(clock));
            QSignalSpy connected(clients.back()->socket.get(), &QWebSocket::connected);
            clients.back()->socket->open(m_url);
            QVERIFY(connected.wait(5000));
            clients.back()->socket->sendTextMessage(
                QStringLiteral(R"({"subscribe":{"lat":%1,"lng":%2,"radius_m":1000}})")
                    .arg(57.700 + (i % 12) * 0.0005, 0, 'f', 4)
                    .arg(11.960 + (i / 12) * 0.0005, 0, 'f', 4));
        }
        const auto everyoneHas = [&](int updates) {
            return std::all_of(clients.begin(), clients.end(), [&](const auto &c) { return c->updates >= updates; });
        };
        QVERIFY2(waitUntil([&] { return everyoneHas(1); }, 10000), "not every rider got its first picture");

        // One whole tick, the first, with every rider in it.
        estimator.calls.clear();
        m_feed->setIntervalMs(1000); // restarts the feed's timer: the tick 1 s from now
        QVERIFY2(waitUntil([&] { return everyoneHas(2); }, 5000), "a tick did not reach every rider");
        std::vector<SlowRoadEstimator::Call> tick;
        for (const auto &call : estimator.calls)
            if (tick.empty() || call.atMs - tick.back().atMs < 300) // a second tick starts ~1 s later
                tick.push_back(call);
        // The tick's road ETAs stop at its 25 ms budget of work (straight lines after): the work of
        // all its slices counts, not only the last one's.
        QVERIFY2(tick.size() >= 5 && tick.size() <= 40, qPrintable(QString::number(tick.size())));
        std::set<quint64> turnsOfTheTick;
        for (const auto &call : tick)
            turnsOfTheTick.insert(call.turn);
        // One piece: every call in the same turn. In slices of ~1 ms: a turn every call or two.
        QVERIFY2(turnsOfTheTick.size() >= tick.size() / 3,
                 qPrintable(QStringLiteral("%1 road ETA calls of one tick ran in %2 turns of the event loop")
                                .arg(tick.size())
                                .arg(turnsOfTheTick.size())));
        // Spread: the riders' updates of that tick arrive over most of its 1,000 ms, not within
        // the ~30 ms its work takes in one run.
        const auto [first, last] =
            std::minmax_element(clients.begin(), clients.end(),
                                [](const auto &a, const auto &b) { return a->lastUpdateMs < b->lastUpdateMs; });
        const qint64 spreadMs = (*last)->lastUpdateMs - (*first)->lastUpdateMs;
        QVERIFY2(spreadMs >= 400 && spreadMs <= 1000,
                 qPrintable(QStringLiteral("one tick's updates arrived within %1 ms").arg(spreadMs)));
    }

private:
    quint64 m_turns = 0; // turns of this thread's event loop (QAbstractEventDispatcher::awake)
    std::unique_ptr<SlowRoadEstimator> m_estimator;
};

QTEST_MAIN(WebFeedTickSlicesTest)
#include "web_feed_tick_slices_test.moc"
