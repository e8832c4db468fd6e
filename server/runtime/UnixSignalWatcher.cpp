#include "runtime/UnixSignalWatcher.h"

#include <QCoreApplication>
#include <QSocketNotifier>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace taxicore {

namespace {

int g_pipe[2] = {-1, -1};
// Read by the handler: lock-free, so async-signal-safe.
std::atomic<bool> g_serving{false};
static_assert(std::atomic<bool>::is_always_lock_free);
// "taxicore-server", kept for the handler's message (it may not allocate).
char g_program[64] = "taxicore";

void writeStderr(const char *text)
{
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, text, std::strlen(text));
}

const char *signalName(int number)
{
    switch (number) {
    case SIGTERM:
        return "SIGTERM";
    case SIGINT:
        return "SIGINT";
    case SIGHUP:
        return "SIGHUP";
    default:
        return "a signal";
    }
}

// Only async-signal-safe calls: write, strlen, signal, raise.
void onSignal(int number)
{
    const int savedErrno = errno;
    if (g_serving.load(std::memory_order_acquire)) {
        const char byte = char(number);
        [[maybe_unused]] const auto written = ::write(g_pipe[1], &byte, 1);
        errno = savedErrno;
        return;
    }
    writeStderr(g_program);
    writeStderr(": ");
    writeStderr(signalName(number));
    writeStderr(" while starting: stopped before serving\n");
    // Blocked while this handler runs: delivered with the default action (the process ends) once it returns.
    std::signal(number, SIG_DFL);
    std::raise(number);
    errno = savedErrno;
}

} // namespace

UnixSignalWatcher::UnixSignalWatcher(QObject *parent, Watch watch)
    : QObject(parent)
    , m_watchesInterrupt(watch == Watch::TerminateInterruptHangup)
{
    if (g_pipe[0] < 0 && pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return;
    const QByteArray program = QCoreApplication::applicationName().toLocal8Bit();
    if (!program.isEmpty())
        qstrncpy(g_program, program.constData(), sizeof g_program);
    m_notifier = new QSocketNotifier(g_pipe[0], QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, [this] {
        char byte = 0;
        while (read(g_pipe[0], &byte, 1) == 1)
            Q_EMIT terminationRequested(int(byte));
    });
    struct sigaction action {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &action, nullptr);
    if (m_watchesInterrupt)
        sigaction(SIGINT, &action, nullptr);
    // The terminal it runs in was closed: drain as for SIGTERM rather than die with bookings in
    // flight. Unless the operator said otherwise: `nohup` starts it with SIGHUP ignored.
    struct sigaction inherited {};
    sigaction(SIGHUP, nullptr, &inherited);
    m_watchesHangup = m_watchesInterrupt && inherited.sa_handler != SIG_IGN;
    if (m_watchesHangup)
        sigaction(SIGHUP, &action, nullptr);
    // A client that vanishes mid-write must not kill the server.
    std::signal(SIGPIPE, SIG_IGN);
    // A file-size limit (ulimit -f) reached by the ledger is a failed commit (503, nothing
    // acknowledged), not a dead server. Ignored signals stay ignored in the worker processes.
    std::signal(SIGXFSZ, SIG_IGN);
}

UnixSignalWatcher::~UnixSignalWatcher()
{
    std::signal(SIGTERM, SIG_DFL);
    if (m_watchesInterrupt)
        std::signal(SIGINT, SIG_DFL);
    if (m_watchesHangup)
        std::signal(SIGHUP, SIG_DFL);
    g_serving.store(false, std::memory_order_release);
}

void UnixSignalWatcher::setServing()
{
    g_serving.store(true, std::memory_order_release);
}

} // namespace taxicore
