#pragma once

#include <QHostAddress>
#include <QMutex>
#include <QObject>
#include <functional>
#include <vector>

namespace taxicore {

class AcceptLoop;

// The primary's listening sockets, open for the whole run whatever the mode (docs/ARCHITECTURE.md
// §2). Socket 0 is the one the user asked for; clones on the same port join its
// SO_REUSEPORT group for the `kernel` policy, one per worker. Because the primary never closes
// one, a connection waiting in any accept queue is never dropped (docs/QT64.md §9): when a
// worker stops accepting on its clone, the primary accepts there again. Each socket is accepted
// by an AcceptLoop (back-off when out of descriptors). shutDown() ends listening for good when the
// server drains: new connection attempts are then refused by the kernel.
class ListenerGroup : public QObject {
    Q_OBJECT
public:
    using Acceptor = std::function<void(int connectionFd)>;

    explicit ListenerGroup(Acceptor acceptor, QObject *parent = nullptr);
    ~ListenerGroup() override;

    bool listen(const QHostAddress &address, quint16 port, QString &error);
    quint16 port() const { return m_port; }

    // Makes sure there are at least `count` listeners (the first one included). Callable from
    // any thread; the primary starts accepting on new ones through its own thread.
    bool ensureListeners(int count, QString &error);
    int listenerFd(int index) const;
    // Whether the primary itself accepts on listener `index` (else a worker does). I/O thread.
    void setPrimaryAccepts(int index, bool accepts);
    // Stops accepting anywhere (shutdown). I/O thread.
    void stopAccepting();
    // Draining starts: takes the connections the kernel already queued (handed to the acceptor on
    // the I/O thread), then shuts every listening socket down, which also ends a worker's accepting
    // on its copy, so a client connecting from now on is refused instead of accepted and reset.
    // Any thread: the I/O thread may be busy with a request.
    void shutDown();

private:
    int openSocket(QString &error);
    void watch(int index, int fd);

    Acceptor m_acceptor;
    QHostAddress m_address;
    quint16 m_port = 0;
    mutable QMutex m_mutex; // guards m_fds and m_shutDown: read from the control thread too
    std::vector<int> m_fds;
    bool m_shutDown = false;
    std::vector<AcceptLoop *> m_loops; // I/O thread only
};

} // namespace taxicore
