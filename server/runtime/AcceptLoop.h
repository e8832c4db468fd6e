#pragma once

#include <QObject>
#include <QSocketNotifier>
#include <QTimer>
#include <functional>

namespace taxicore {

// Accepts connections on one listening socket, for the primary (ListenerGroup) and for a worker
// given a kernel-policy listener: up to a batch per readiness event, each new descriptor handed
// to `handler`. When the process is out of descriptors or memory (EMFILE, ENFILE, ENOBUFS,
// ENOMEM) the connection stays in the kernel queue, so the level-triggered notifier would fire
// again at once and spin: it is switched off for kBackoffMs and one line is logged per episode,
// as nginx does. A listener shut down underneath (EINVAL) is left alone for good.
// Does not own the descriptor. Lives on the thread it was created on.
class AcceptLoop : public QObject {
    Q_OBJECT
public:
    using Handler = std::function<void(int connectionFd)>;

    static constexpr int kBackoffMs = 200;
    // Connections taken per readiness event before going back to the event loop. Large: a
    // connection left in the kernel's queue waits a whole loop iteration, which in single mode
    // serves every ready connection first, so with 64 per wake-up the last of 1,000 clients
    // connecting at once waited 16 such rounds for its first answer (p99 5.8× p50 at c=1000 on
    // /fib: docs/benchmarks.md, "Fair latency under overload"). Taken together they all join the next
    // round.
    static constexpr int kBatch = 1024;

    AcceptLoop(int listenFd, Handler handler, QObject *parent = nullptr);

    int fd() const { return m_fd; }
    // Whether this process accepts on the listener now (a worker may be the one that does).
    void setAccepting(bool accepting);
    bool isAccepting() const { return m_accepting; }
    // Stops for good: the listener is being shut down or handed back.
    void stop();
    // Takes what is queued now (up to one batch) without waiting for the notifier.
    void acceptBatch();
    // Back-off episodes so far (for tests and diagnostics).
    int backoffEpisodes() const { return m_episodes; }

private:
    void backOff(int error);
    void arm();

    int m_fd;
    Handler m_handler;
    QSocketNotifier m_notifier;
    QTimer m_backoff;
    bool m_accepting = true;
    bool m_stopped = false;
    bool m_inEpisode = false; // backing off since the last successful accept
    int m_episodes = 0;
};

} // namespace taxicore
