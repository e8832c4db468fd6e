#pragma once

#include <QObject>

class QSocketNotifier;

namespace taxicore {

// Turns SIGTERM and SIGINT into a Qt signal on the thread that created the watcher
// (self-pipe: a signal handler may only write a byte).
class UnixSignalWatcher : public QObject {
    Q_OBJECT
public:
    explicit UnixSignalWatcher(QObject *parent = nullptr);
    ~UnixSignalWatcher() override;

Q_SIGNALS:
    void terminationRequested(int signalNumber);

private:
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace taxicore
