#include "runtime/WorkerSupervisor.h"

#include "fleet/FleetStore.h"
#include "control/EventLog.h"
#include "http/ConnectionsPerClient.h"
#include "runtime/ServerOptions.h"
#include "runtime/WorkerChannel.h"

#include <QProcess>
#include <QSocketNotifier>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace taxicore {

namespace {

constexpr int kTickMs = 100;
constexpr int kBackoffBaseMs = 100;
constexpr int kBackoffMaxMs = 5000;
// Where the child first copies the region and its channel end: above both targets, so one dup2
// cannot clobber the other, and as low as that allows, so a small open-file limit still fits.
constexpr int kChildCopyFloorFd = std::max(kWorkerRegionFd, kWorkerChannelFd) + 1;

// Between fork and exec: only async-signal-safe calls (write, _exit).
[[noreturn]] void exitNoDescriptors()
{
    static const char message[] = "taxicore worker: cannot place the region and channel descriptors "
                                  "(open-file limit too low?)\n";
    [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, message, sizeof message - 1);
    ::_exit(kWorkerExitNoDescriptors);
}
} // namespace

WorkerSupervisor::WorkerSupervisor(FleetStore &fleet, Settings settings, QObject *parent)
    : QObject(parent)
    , m_fleet(fleet)
    , m_settings(std::move(settings))
    , m_tick(this)
{
    m_tick.setInterval(kTickMs);
    connect(&m_tick, &QTimer::timeout, this, &WorkerSupervisor::tick);
    m_tick.start();
}

WorkerSupervisor::~WorkerSupervisor()
{
    shutdown(0);
}

void WorkerSupervisor::setCount(int count)
{
    m_count = count;
    for (int index = 1; index <= count; ++index)
        if (!m_workers.contains(index) && !m_breakerTripped)
            spawn(index);
    for (auto it = m_workers.begin(); it != m_workers.end(); ++it)
        if (it->index > count && it->state != State::Draining)
            drain(*it);
    Q_EMIT readyChanged();
}

void WorkerSupervisor::spawn(int index)
{
    int fds[2];
    if (!WorkerChannel::createPair(fds)) {
        const int error = errno;
        onStartFailed(
            index, QStringLiteral("cannot create its channel (%1)").arg(QString::fromLocal8Bit(std::strerror(error))));
        return;
    }
    WorkerSlot &slot = m_fleet.workerSlot(index);
    slot.state.store(WorkerSlotState::Starting, std::memory_order_relaxed);
    slot.pid.store(0, std::memory_order_relaxed);
    slot.heartbeatMs.store(clock::monotonicMs(), std::memory_order_relaxed);
    slot.startedMs.store(clock::monotonicMs(), std::memory_order_relaxed);

    Worker worker;
    worker.index = index;
    worker.channelFd = fds[0];
    worker.process = new QProcess(this);
    worker.process->setProgram(m_settings.program);
    worker.process->setArguments(
        QStringList{QStringLiteral("--worker"), QStringLiteral("--worker-index"), QString::number(index)}
        + m_settings.extraArgs + connectionLimitArguments(m_settings.limits));
    worker.process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    worker.process->setStandardOutputFile(QProcess::nullDevice());
    const int regionFd = m_settings.regionFd;
    const int workerEnd = fds[1];
    const pid_t primary = getpid();
    // Runs in the child between fork and exec: only async-signal-safe calls.
    worker.process->setChildProcessModifier([regionFd, workerEnd, primary] {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL); // die with the primary, even after kill -9
        if (::getppid() != primary)
            ::_exit(1);
        const int region = ::fcntl(regionFd, F_DUPFD_CLOEXEC, kChildCopyFloorFd);
        const int channel = ::fcntl(workerEnd, F_DUPFD_CLOEXEC, kChildCopyFloorFd);
        if (region < 0 || channel < 0 || ::dup2(region, kWorkerRegionFd) < 0 || ::dup2(channel, kWorkerChannelFd) < 0)
            exitNoDescriptors();
    });
    connect(worker.process, &QProcess::finished, this, [this, index] { onFinished(index); });
    // A process that cannot be started never "finishes": count it as a crash (backoff, breaker).
    // QProcess may say so within start() (no pipes, no fork) or later (no exec): the entry is
    // in m_workers before start() so that both find it.
    QProcess *process = worker.process;
    connect(process, &QProcess::errorOccurred, this, [this, index, process](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            onStartFailed(index, process->errorString());
    });
    worker.notifier = new QSocketNotifier(fds[0], QSocketNotifier::Read, this);
    connect(worker.notifier, &QSocketNotifier::activated, this, [this, index] { onChannel(index); });
    m_workers.insert(index, worker);
    process->start();
    ::close(fds[1]);
    if (const auto started = m_workers.find(index); started != m_workers.end() && started->process == process)
        started->pid = process->processId();
    // Some of start()'s failures (a pipe it could not create) leave it NotRunning without a signal.
    const auto it = m_workers.constFind(index);
    if (it != m_workers.constEnd() && it->process == process && process->state() == QProcess::NotRunning)
        onStartFailed(index, process->errorString());
}

void WorkerSupervisor::drain(Worker &worker)
{
    worker.state = State::Draining;
    worker.drainDeadline = clock::monotonicMs() + m_settings.drainTimeoutMs + kWorkerExitAfterDrainMs;
    sendDrain(worker, m_settings.drainTimeoutMs);
    Q_EMIT readyChanged();
}

QList<WorkerSupervisor::Ready> WorkerSupervisor::readyWorkers() const
{
    QList<Ready> ready;
    for (const Worker &w : m_workers)
        if (w.state == State::Ready)
            ready.append({w.index, w.channelFd});
    std::sort(ready.begin(), ready.end(), [](const Ready &a, const Ready &b) { return a.index < b.index; });
    return ready;
}

bool WorkerSupervisor::send(int index, WorkerMessageType type, int fd)
{
    const auto it = m_workers.constFind(index);
    return it != m_workers.constEnd() && WorkerChannel(it->channelFd).send(type, fd);
}

void WorkerSupervisor::onChannel(int index)
{
    const auto it = m_workers.constFind(index);
    if (it == m_workers.constEnd())
        return;
    const WorkerChannel channel(it->channelFd);
    while (const auto message = channel.receive()) {
        if (message->fd >= 0)
            ::close(message->fd); // workers send none back: the primary keeps its own copy
        if (message->type == WorkerChannel::Type::Adopted)
            Q_EMIT connectionAdopted(index, message->id);
        else if (message->type == WorkerChannel::Type::Declined)
            Q_EMIT connectionDeclined(index, message->id);
    }
}

// Without UBSan's vptr check (sanitizer builds only; no effect elsewhere): the check proves an
// object's vtable readable by writing it into a pipe(), and a worker is released exactly when the
// primary may be out of descriptors (a respawn that failed with EMFILE). There the check finds the
// live QProcess "invalid" and aborts the server, and no suppression can name the report because
// the symbolizer needs a descriptor as well (runtime_worker_start_failure_test under test-asan).
__attribute__((no_sanitize("vptr"))) void WorkerSupervisor::release(Worker &worker)
{
    delete worker.notifier;
    worker.notifier = nullptr;
    if (worker.channelFd >= 0)
        ::close(worker.channelFd);
    worker.channelFd = -1;
    if (worker.process)
        worker.process->deleteLater();
    worker.process = nullptr;
}

void WorkerSupervisor::onFinished(int index)
{
    auto it = m_workers.find(index);
    if (it == m_workers.end())
        return;
    onChannel(index); // answers it sent before dying still count
    Worker worker = *it;
    m_workers.erase(it);
    const qint64 pid = worker.pid;
    Q_EMIT workerGone(index, pid);
    const bool planned = worker.state == State::Draining;
    const int exitCode = worker.process->exitCode();
    const bool crashed = worker.process->exitStatus() == QProcess::CrashExit;
    release(worker);
    WorkerSlot &slot = m_fleet.workerSlot(index);
    slot.state.store(WorkerSlotState::Exited, std::memory_order_relaxed);
    // What the dead process held died with it; its replacement starts from none. (Left as they
    // were, least-loaded sent the replacement nothing and --worker-connections counted phantoms
    // against it for good.) The request and latency counters are totals and stay.
    slot.openConnections.store(0, std::memory_order_relaxed);
    slot.feedClients.store(0, std::memory_order_relaxed);
    slot.inFlight.store(0, std::memory_order_relaxed);
    // Likewise its connections' per-client counts (a kill -9 gave none back), before the slot's
    // replacement can count its own there.
    ConnectionsPerClient::releaseSlot(m_fleet.control().access, index);
    Q_EMIT readyChanged();
    EventLog log(m_fleet.control());
    if (planned) {
        log.append("exit", QStringLiteral("worker %1 (pid %2) drained and exited").arg(index).arg(pid));
        m_recentCrashes.remove(index);
        if (index <= m_count && !m_breakerTripped)
            spawn(index); // drained by a restart of the same slot
        return;
    }
    QString how = crashed ? QStringLiteral("crashed") : QStringLiteral("exited with %1").arg(exitCode);
    if (!crashed && exitCode == kWorkerExitNoDescriptors)
        how += QStringLiteral(": it could not place its region and channel descriptors (open-file limit too low?)");
    log.append("crash", QStringLiteral("worker %1 (pid %2) %3").arg(index).arg(pid).arg(how));
    countCrash(index);
}

void WorkerSupervisor::onStartFailed(int index, const QString &reason)
{
    if (const auto it = m_workers.find(index); it != m_workers.end()) {
        Worker worker = *it;
        m_workers.erase(it);
        worker.process->disconnect(this); // deleted later: nothing more from it
        release(worker);
        // It never served: no connection was passed to it, and the ready list is unchanged.
    }
    m_fleet.workerSlot(index).state.store(WorkerSlotState::Exited, std::memory_order_relaxed);
    EventLog(m_fleet.control())
        .append("crash", QStringLiteral("worker %1 could not be started: %2")
                             .arg(index)
                             .arg(reason.isEmpty() ? QStringLiteral("unknown error") : reason));
    countCrash(index);
}

// A crash, or a start that failed: the breaker counts it, and the slot is respawned with backoff.
void WorkerSupervisor::countCrash(int index)
{
    EventLog log(m_fleet.control());
    const qint64 now = clock::monotonicMs();
    m_crashTimes.append(now);
    while (!m_crashTimes.isEmpty() && now - m_crashTimes.first() > m_settings.crashLoopWindowMs)
        m_crashTimes.removeFirst();
    if (m_crashTimes.size() >= m_settings.crashLoopCrashes) {
        if (!m_breakerTripped) {
            m_breakerTripped = true;
            log.append("breaker", QStringLiteral("%1 crashes within %2 s: no more respawns")
                                      .arg(m_crashTimes.size())
                                      .arg(m_settings.crashLoopWindowMs / 1000));
            // Queued: a start that fails within setCount() must not have the fallback call
            // setCount() again while the first one is still spawning.
            QMetaObject::invokeMethod(
                this, [this] { Q_EMIT crashLoop(); }, Qt::QueuedConnection);
        }
        return;
    }
    if (index > m_count)
        return;
    const int attempt = m_recentCrashes.value(index, 0);
    m_recentCrashes[index] = attempt + 1;
    const int delay = std::min(kBackoffMaxMs, kBackoffBaseMs << std::min(attempt, 10));
    QTimer::singleShot(delay, this, [this, index] {
        if (index <= m_count && !m_workers.contains(index) && !m_breakerTripped) {
            m_fleet.workerSlot(index).restarts.fetch_add(1, std::memory_order_relaxed);
            EventLog(m_fleet.control()).append("respawn", QStringLiteral("worker %1 respawned").arg(index));
            spawn(index);
        }
    });
}

void WorkerSupervisor::tick()
{
    const qint64 now = clock::monotonicMs();
    bool changed = false;
    for (Worker &w : m_workers) {
        if (w.killed)
            continue; // its `finished` is on the way
        WorkerSlot &slot = m_fleet.workerSlot(w.index);
        const qint64 silentMs = now - slot.heartbeatMs.load(std::memory_order_relaxed);
        if (w.state == State::Starting && slot.state.load(std::memory_order_acquire) == WorkerSlotState::Serving) {
            w.state = State::Ready;
            m_recentCrashes.remove(w.index);
            changed = true;
        } else if (w.state == State::Starting
                   && now - slot.startedMs.load(std::memory_order_relaxed) > kWorkerStartTimeoutMs) {
            EventLog(m_fleet.control())
                .append("stall", QStringLiteral("worker %1 did not start within %2 s: killed")
                                     .arg(w.index)
                                     .arg(kWorkerStartTimeoutMs / 1000));
            w.killed = true;
            w.process->kill();
        } else if (w.state == State::Ready && silentMs > m_settings.heartbeatTimeoutMs) {
            EventLog(m_fleet.control())
                .append("stall", QStringLiteral("worker %1 silent for %2 ms: killed").arg(w.index).arg(silentMs));
            w.killed = true;
            w.process->kill();
        } else if (w.state == State::Draining && now > w.drainDeadline) {
            w.killed = true;
            w.process->kill();
        }
    }
    if (changed)
        Q_EMIT readyChanged();
}

void WorkerSupervisor::sendDrain(const Worker &worker, int withinMs)
{
    WorkerChannel(worker.channelFd).send(WorkerChannel::Type::Drain, -1, uint32_t(std::max(1, withinMs)));
}

void WorkerSupervisor::shutdown(int graceMs)
{
    m_tick.stop();
    m_count = 0;
    // Every worker, one already draining from a mode switch included, answers what it owes by
    // the end of the grace (a worker keeps the sooner of two deadlines).
    for (Worker &w : m_workers)
        sendDrain(w, graceMs);
    // One deadline for all: the workers drain side by side, not one grace after another.
    const qint64 killAt = clock::monotonicMs() + std::max(1, graceMs) + kWorkerExitAfterDrainMs;
    const QList<int> indices = m_workers.keys();
    for (int index : indices) {
        auto it = m_workers.find(index);
        if (it == m_workers.end())
            continue;
        QProcess *process = it->process;
        process->disconnect(this);
        if (!process->waitForFinished(int(std::max<qint64>(1, killAt - clock::monotonicMs()))))
            process->kill();
        process->waitForFinished(1000);
        Worker w = *it;
        m_workers.erase(it);
        release(w);
        m_fleet.workerSlot(index).state.store(WorkerSlotState::Exited, std::memory_order_relaxed);
    }
}

} // namespace taxicore
