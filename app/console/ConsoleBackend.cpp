#include "ConsoleBackend.h"

#include "settings/ConsoleSettings.h"

#include "city/City.h"
#include "dispatch/BookingReassign.h"
#include "dispatch/FleetLedger.h"
#include "fleet/FleetStore.h"
#include "ledger/Ledger.h"
#include "pricing/RoadTripEstimator.h"
#include "pricing/TariffJson.h"
#include "control/EventLog.h"
#include "runtime/ServerHost.h"

#include <QJSEngine>
#include <QJsonArray>
#include <QtConcurrent/QtConcurrentRun>
#include <QQmlEngine>
#include <chrono>
#include <future>

namespace {
// The request counter is cheap to read (a sum over shared-memory slots); 4 Hz looks live.
constexpr int kStatsIntervalMs = 250;
// req/s is averaged over this window so the figure does not flicker.
constexpr qint64 kRateWindowMs = 1000;
// A stop lets in-flight requests finish for at most this long when the window closes.
constexpr int kStopGraceMs = 2000;
// The most rides per minute the demand generator takes (as --demand-rate).
constexpr double kMaxDemandRate = 6000;
// How long the console's Cancel and Reassign wait for the ledger before they say it is not done (yet).
constexpr int kCommitWaitMs = 2000;

ConsoleBackend *s_instance = nullptr;
} // namespace

ConsoleBackend::ConsoleBackend(taxicore::ServerOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
{
    m_statsTimer.setInterval(kStatsIntervalMs);
    connect(&m_statsTimer, &QTimer::timeout, this, &ConsoleBackend::pollStats);
    connect(&m_applying, &QFutureWatcher<QString>::finished, this, [this] {
        Q_EMIT applyingChanged();
        pollStats();
        const QString error = m_applying.result();
        if (error.isEmpty() && m_host)
            ConsoleSettings::saveRuntime(m_host->runtime()); // the next start serves the same way
        Q_EMIT runtimeApplied(error);
    });
}

ConsoleBackend::~ConsoleBackend()
{
    stop();
    if (s_instance == this)
        s_instance = nullptr;
}

bool ConsoleBackend::start()
{
    auto host = std::make_unique<taxicore::ServerHost>(m_options);
    QString error;
    if (!host->start(error)) {
        m_error = error.isEmpty() ? tr("the server could not start") : error;
        Q_EMIT servingChanged();
        return false;
    }
    m_host = std::move(host);
    if (const auto city = m_host->city())
        m_estimator = std::make_unique<taxicore::RoadTripEstimator>(*city);
    else
        m_estimator = std::make_unique<taxicore::StraightLineEstimator>();
    m_runtime = m_host->runtime();
    m_error.clear();
    m_rateClock.start();
    m_statsTimer.start();
    Q_EMIT servingChanged();
    return true;
}

void ConsoleBackend::stop()
{
    if (!m_host)
        return;
    m_statsTimer.stop();
    m_applying.waitForFinished(); // it uses the host
    m_host->stop(kStopGraceMs);
    m_host.reset();
    m_estimator.reset();
    Q_EMIT servingChanged();
}

std::shared_ptr<const taxicore::city::City> ConsoleBackend::city() const
{
    return m_host ? m_host->city() : nullptr;
}

taxicore::Ledger *ConsoleBackend::ledger() const
{
    return m_host ? m_host->ledger() : nullptr;
}

bool ConsoleBackend::serving() const
{
    return m_host != nullptr;
}

QUrl ConsoleBackend::url() const
{
    return m_host ? m_host->url() : QUrl();
}

QString ConsoleBackend::adminToken() const
{
    return m_host ? m_host->adminToken() : QString();
}

QString ConsoleBackend::deviceToken() const
{
    return m_host ? m_host->deviceToken() : QString();
}

QString ConsoleBackend::mode() const
{
    return m_host ? taxicore::modeName(m_runtime.mode) : m_options.mode;
}

int ConsoleBackend::carCount() const
{
    return m_host ? m_host->fleet().carCount() : 0;
}

taxicore::FleetStore *ConsoleBackend::fleet() const
{
    return m_host ? &m_host->fleet() : nullptr;
}

QVariantMap ConsoleBackend::carInfo(int id) const
{
    const auto *store = fleet();
    const auto car = store ? store->car(id) : std::nullopt;
    if (!car)
        return {};
    return {
        {QStringLiteral("id"), car->id},
        {QStringLiteral("state"), QString(taxicore::carStateName(car->state))},
        {QStringLiteral("speedKmh"), car->speedKmh},
        {QStringLiteral("bookingId"), qint64(car->bookingId)},
        {QStringLiteral("updatedMs"), qint64(car->updatedMs)},
        {QStringLiteral("lat"), car->position.lat},
        {QStringLiteral("lng"), car->position.lng},
        {QStringLiteral("heading"), car->heading},
    };
}

bool ConsoleBackend::cancelBooking(qint64 id)
{
    auto *store = fleet();
    if (!store || id <= 0)
        return false;
    const auto moved = store->beginCancel(uint64_t(id));
    if (moved.result != taxicore::FleetStore::TransitionResult::Done)
        return false;
    taxicore::Ledger *recorder = ledger();
    if (!recorder) {
        store->settle(moved, true);
        Q_EMIT bookingsChanged();
        return true;
    }
    // As the rider API's cancel: the booking is cancelled only once the ledger has it, so a
    // restart never brings back a booking the console showed cancelled (or the reverse). The
    // callback settles even after the wait gave up; the wait is short, the commit takes ms.
    auto verdict = std::make_shared<std::promise<bool>>();
    std::future<bool> settled = verdict->get_future();
    recorder->append(taxicore::transitionRecord(moved.booking),
                     [store, moved, verdict](bool committed, const QString &) {
                         store->settle(moved, committed);
                         verdict->set_value(committed);
                     });
    const bool done =
        settled.wait_for(std::chrono::milliseconds(kCommitWaitMs)) == std::future_status::ready && settled.get();
    Q_EMIT bookingsChanged();
    return done;
}

QVariantMap ConsoleBackend::reassignBooking(qint64 id, int carId)
{
    const auto failed = [](const QString &error) {
        return QVariantMap{{QStringLiteral("ok"), false}, {QStringLiteral("error"), error}};
    };
    if (!m_host || id <= 0 || carId < 0)
        return failed(tr("no such booking"));
    const taxicore::BookingReassign reassign(m_host->fleet(), *m_estimator, ledger());
    // As cancelBooking(): the booking has its new car once the ledger holds the move; the wait is
    // short (the commit takes ms), and the move settles by itself if it gives up.
    struct Verdict {
        taxicore::FleetStore::Reassignment move;
        bool committed = false;
        QString error;
    };
    auto verdict = std::make_shared<std::promise<Verdict>>();
    std::future<Verdict> recorded = verdict->get_future();
    const auto move =
        reassign(uint64_t(id), carId,
                 [verdict](const taxicore::FleetStore::Reassignment &done, bool committed, const QString &error) {
                     verdict->set_value({done, committed, error});
                 });
    using R = taxicore::FleetStore::ReassignResult;
    switch (move.result) {
    case R::Done:
        break;
    case R::NotFound:
        return failed(tr("there is no booking %1").arg(id));
    case R::IllegalState:
        return failed(tr("booking %1 is %2; only an assigned or arriving booking can be reassigned")
                          .arg(id)
                          .arg(taxicore::bookingStateName(move.booking.state)));
    case R::CarUnavailable:
        return failed(carId ? tr("car %1 is not available").arg(carId) : tr("no other car is available"));
    case R::MoveInProgress:
        return failed(tr("booking %1 is being moved (another move awaits the ledger); try again").arg(id));
    }
    if (recorded.wait_for(std::chrono::milliseconds(kCommitWaitMs)) != std::future_status::ready)
        return failed(tr("the ledger has not recorded the reassignment yet; it applies once recorded"));
    const Verdict done = recorded.get();
    Q_EMIT bookingsChanged();
    if (!done.committed)
        return failed(tr("the reassignment could not be recorded: %1").arg(done.error));
    return {{QStringLiteral("ok"), true},
            {QStringLiteral("bookingId"), id},
            {QStringLiteral("carId"), done.move.booking.carId},
            {QStringLiteral("previousCarId"), done.move.previousCarId}};
}

QVariantMap ConsoleBackend::tariff() const
{
    return taxicore::tariffJson(m_host ? m_host->tariff() : m_options.tariff).toVariantMap();
}

double ConsoleBackend::demandRate() const
{
    return m_host ? m_host->demandRate() : m_options.demandRatePerMinute;
}

QString ConsoleBackend::applyPricing(const QVariantMap &tariff, double ridesPerMinute)
{
    const taxicore::Tariff current = m_host ? m_host->tariff() : m_options.tariff;
    const taxicore::TariffParse parsed = taxicore::tariffFromJson(QJsonObject::fromVariantMap(tariff), current);
    if (!parsed.tariff)
        return parsed.error;
    if (!(ridesPerMinute >= 0 && ridesPerMinute <= kMaxDemandRate))
        return tr("the demand rate must be from 0 to %1 rides per minute").arg(kMaxDemandRate);
    m_options.tariff = *parsed.tariff;
    m_options.demandRatePerMinute = ridesPerMinute;
    if (m_host) {
        m_host->setTariff(*parsed.tariff);
        m_host->setDemandRate(ridesPerMinute);
    }
    ConsoleSettings::saveTariff(*parsed.tariff);
    ConsoleSettings::saveDemandRate(ridesPerMinute);
    Q_EMIT pricingChanged();
    return {};
}

void ConsoleBackend::applyRuntime(const QString &mode, int workers, int threads, const QString &policy)
{
    if (!m_host || m_applying.isRunning())
        return;
    taxicore::RuntimeSettings settings = m_runtime;
    const auto parsedMode = taxicore::parseMode(mode);
    const auto parsedPolicy = taxicore::parsePolicy(policy);
    if (!parsedMode || !parsedPolicy) {
        Q_EMIT runtimeApplied(tr("unknown mode or policy: %1, %2").arg(mode, policy));
        return;
    }
    settings.mode = *parsedMode;
    settings.policy = *parsedPolicy;
    settings.workers = workers;
    settings.threads = threads;
    taxicore::ServerHost *host = m_host.get(); // stop() waits for this job before deleting it
    m_applying.setFuture(QtConcurrent::run([host, settings] { return host->applyRuntime(settings); }));
    Q_EMIT applyingChanged();
}

QVariantList ConsoleBackend::events(int max) const
{
    auto *store = fleet();
    return store ? taxicore::EventLog(store->control()).newest(max).toVariantList() : QVariantList{};
}

QJsonObject ConsoleBackend::clusterNodes() const
{
    return m_host ? m_host->clusterNodes() : QJsonObject{};
}

void ConsoleBackend::pollStats()
{
    if (!m_host)
        return;
    const taxicore::RuntimeSettings runtime = m_host->runtime();
    if (!(runtime == m_runtime)) {
        m_runtime = runtime;
        Q_EMIT runtimeChanged();
    }
    const auto served = qint64(m_host->requestsServed());
    const qint64 elapsed = m_rateClock.elapsed();
    bool changed = served != m_requests;
    m_requests = served;
    if (elapsed >= kRateWindowMs) {
        const double rate = double(served - m_rateBase) * 1000.0 / double(elapsed);
        changed = changed || rate != m_rate;
        m_rate = rate;
        m_rateBase = served;
        m_rateClock.restart();
    }
    if (changed)
        Q_EMIT statsChanged();
}

ConsoleBackend *ConsoleBackend::create(QQmlEngine *engine, QJSEngine *)
{
    if (!s_instance) {
        // No server (component tests): an idle backend the engine owns.
        auto *idle = new ConsoleBackend(taxicore::ServerOptions{});
        s_instance = idle;
        return idle;
    }
    // main() owns the instance; the engine must not delete it.
    QJSEngine::setObjectOwnership(s_instance, QJSEngine::CppOwnership);
    Q_UNUSED(engine);
    return s_instance;
}

void ConsoleBackend::setInstance(ConsoleBackend *backend)
{
    s_instance = backend;
}
