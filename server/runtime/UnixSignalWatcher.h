#pragma once

#include <QObject>

class QSocketNotifier;

namespace taxicore {

// Turns SIGTERM, SIGINT and SIGHUP (the terminal closed) into a Qt signal on the thread that
// created the watcher (self-pipe: a signal handler may only write a byte). A SIGHUP that was
// ignored when the program started (nohup) stays ignored.
//
// Until setServing(), such a signal ends the process at once instead, after a line on stderr: the
// start (city, ledger, listeners) blocks the thread whose event loop would read the pipe, and
// before it returns nothing is served, so there is nothing to drain. The process then dies of the
// signal, as it would without a handler (a service manager counts that as a clean stop).
class UnixSignalWatcher : public QObject {
    Q_OBJECT
public:
    // A worker process watches SIGTERM only: Ctrl-C and a closed terminal reach the whole process
    // group, and the primary drains its workers for them (they ignore both).
    enum class Watch { TerminateInterruptHangup, TerminateOnly };
    explicit UnixSignalWatcher(QObject *parent = nullptr, Watch watch = Watch::TerminateInterruptHangup);
    ~UnixSignalWatcher() override;

    // The server is up and its event loop about to run: from now on a signal is delivered as
    // terminationRequested, for a graceful drain.
    void setServing();

Q_SIGNALS:
    void terminationRequested(int signalNumber);

private:
    QSocketNotifier *m_notifier = nullptr;
    bool m_watchesInterrupt = false;
    bool m_watchesHangup = false;
};

} // namespace taxicore
