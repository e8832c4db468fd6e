#include "runtime/PrimaryIoThread.h"

#include "fleet/FleetStore.h"
#include "http/ConnectionGuard.h"
#include "http/HttpService.h"
#include "http/LiveFeed.h"
#include "ledger/Ledger.h"
#include "region/WorkerProtocol.h"
#include "runtime/ConnectionDispatcher.h"
#include "runtime/ListenerGroup.h"
#include "runtime/ApiStack.h"

#include <QAbstractEventDispatcher>
#include <QHostAddress>
#include <QThreadPool>
#include <QTimer>
#include <chrono>
#include <openssl/crypto.h>
#include <unistd.h>

namespace taxicore {

namespace {
constexpr auto kStartTimeout = std::chrono::seconds(10);
// At shutdown, how long the ledger may take to answer the records already appended.
constexpr int kLedgerIdleWaitMs = 5000;
} // namespace

PrimaryIoThread::PrimaryIoThread(const ServerOptions &options, FleetStore &fleet,
                                 std::shared_ptr<const city::City> city, Ledger *ledger, ConnectionLimits limits)
    : m_options(options)
    , m_fleet(fleet)
    , m_city(std::move(city))
    , m_ledger(ledger)
    , m_limits(limits)
{
    setObjectName(QStringLiteral("taxicore-io"));
}

PrimaryIoThread::~PrimaryIoThread()
{
    if (isRunning()) {
        quit();
        wait();
    }
}

PrimaryIoThread::Started PrimaryIoThread::startAndWait()
{
    auto future = m_started.get_future();
    // --event-loop: before start(), which would give the thread Qt's dispatcher.
    if (QAbstractEventDispatcher *dispatcher = createEventDispatcher(m_options.eventLoop))
        setEventDispatcher(dispatcher);
    start();
    if (future.wait_for(kStartTimeout) != std::future_status::ready)
        return {false, 0, QStringLiteral("the server did not start within 10 s"), {}};
    return future.get();
}

void PrimaryIoThread::run()
{
    // Qt HttpServer 6.4's QAbstractHttpServer builds a QSslConfiguration, so OpenSSL keeps state
    // for this thread (its error queue, its random generators), freed by a thread-exit destructor.
    // That runs after QThread::wait() has returned: the main thread may exit first, and exit()'s
    // OPENSSL_cleanup deletes the thread keys, so the state was never freed (LeakSanitizer, make
    // test-asan). Freed here instead, last, after everything that used OpenSSL on this thread.
    const struct OpenSslThreadState {
        ~OpenSslThreadState() { OPENSSL_thread_stop(); }
    } openSslThreadState;
    ApiStack stack(m_fleet, m_city, m_ledger, 0, m_limits, m_options.fleetUrl);
    stack.feed().setIdleTimeoutMs(m_options.feedIdleTimeoutMs);
    WorkerSlot &slot = m_fleet.workerSlot(0);
    slot.pid.store(int32_t(getpid()), std::memory_order_relaxed);
    slot.startedMs.store(clock::monotonicMs(), std::memory_order_relaxed);
    slot.state.store(WorkerSlotState::Serving, std::memory_order_relaxed);

    QThreadPool pool;
    ConnectionDispatcher dispatcher(stack.guard(), m_fleet);
    ListenerGroup listeners([&dispatcher](int fd) { dispatcher.dispatch(fd); });
    const QHostAddress address(m_options.host == QStringLiteral("localhost") ? QStringLiteral("127.0.0.1")
                                                                             : m_options.host);
    QString error;
    if (!listeners.listen(address, m_options.port, error)) {
        m_started.set_value({false, 0, error, {}});
        return;
    }
    // The heartbeat of this loop, as workers have theirs: the console shows its lag.
    QTimer heartbeat;
    heartbeat.setInterval(kWorkerHeartbeatMs);
    QObject::connect(&heartbeat, &QTimer::timeout, [&slot] { slot.heartbeatMs.store(clock::monotonicMs()); });
    heartbeat.start();

    m_stopTarget = &listeners;
    m_guard = &stack.guard();
    m_started.set_value(
        {true,
         listeners.port(),
         {},
         RuntimeController::InProcess{&listeners, &dispatcher, &stack.guard(), &stack.service(), &pool}});
    exec();
    m_stopTarget = nullptr;
    m_guard = nullptr;
    pool.waitForDone();
    // Commits still in flight reply through the stack: let them finish while it exists.
    if (m_ledger)
        m_ledger->waitUntilIdle(kLedgerIdleWaitMs);
    slot.state.store(WorkerSlotState::Exited, std::memory_order_relaxed);
}

void PrimaryIoThread::closeListeners()
{
    if (ConnectionGuard *guard = m_guard.load())
        guard->announceDraining();
    if (auto *listeners = static_cast<ListenerGroup *>(m_stopTarget.load()))
        listeners->shutDown();
}

void PrimaryIoThread::drainAndStop(int graceMs)
{
    auto *listeners = static_cast<ListenerGroup *>(m_stopTarget.load());
    ConnectionGuard *guard = m_guard.load();
    if (!listeners || !guard || !isRunning()) {
        wait();
        return;
    }
    QMetaObject::invokeMethod(
        listeners,
        [this, listeners, guard, graceMs] {
            listeners->stopAccepting();
            connect(guard, &ConnectionGuard::allConnectionsClosed, this, &QThread::quit, Qt::DirectConnection);
            // Grace over: what is still owed is answered 503 (shutting_down) in its place; the
            // thread ends once those are written (connections closed) or kLastAnswersMs later.
            QTimer::singleShot(graceMs, listeners, [this, listeners, guard] {
                guard->answerOwedBeforeStopping();
                QTimer::singleShot(ConnectionGuard::kLastAnswersMs, listeners, [this] { quit(); });
            });
            guard->startDraining();
        },
        Qt::QueuedConnection);
    wait();
}

} // namespace taxicore
