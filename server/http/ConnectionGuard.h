#pragma once

#include "wire/ConnectionLimits.h"
#include "http/ConnectionState.h"
#include "http/ConnectionsPerClient.h"

#include <QHash>
#include <QPointer>
#include <QTcpServer>
#include <QTimer>
#include <atomic>
#include <functional>
#include <optional>
#include <vector>

class QTcpSocket;

namespace taxicore {

class GuardedSocket;
class MetricsRecorder;
class PassBudget;
struct ApiResponse;
struct PlainRequest;

// A QTcpServer that stands in front of QHttpServer and fixes what Qt 6.4 does not do
// (docs/QT64.md §1, §3–§6, §8, §10): every byte of a connection passes a strict framing check
// (RequestFraming) before Qt's parser sees it — limits 413/414/431, bad framing 400 and close,
// nothing after an error ever reaches Qt; it answers `Expect: 100-continue`, writes answers in
// request order, stops reading a connection whose output or queue is over its bound, closes idle
// and slow connections, caps how many are open, drains them on request, and closes one whose input
// it left unread without the reset that could lose its last answer (kLingerMs).
class ConnectionGuard : public QTcpServer {
    Q_OBJECT
public:
    ConnectionGuard(ConnectionLimits limits, MetricsRecorder &metrics, QObject *parent = nullptr);

    // Takes over an accepted socket descriptor (from this listener, or passed in by another).
    void adoptSocket(qintptr descriptor);

    // --max-connections-per-client: connections are counted per client address in `block` (the
    // region's table, shared by every process) in the column of `workerSlot`. Without it (or with
    // a limit of 0) only --max-connections applies. Before the first connection is adopted.
    void countPerClient(AccessBlock &block, int workerSlot);

    // A request Qt parsed: where its answer goes in the connection's order, and what its head said.
    struct Ticket {
        unsigned long long sequence = 0;
        RequestTraits traits;
    };
    // False when the connection is unknown, refused, or reads nothing more (a request whose
    // answer closes it was taken before): the request is neither run nor answered.
    bool beginRequest(QTcpSocket *socket, Ticket &ticket);

    // The direct path: a whole request at the front of a connection that Qt's parser holds no part
    // of, and that readPlainRequest reads exactly as Qt would, goes to this handler instead of
    // Qt's parser (which reads a head one byte at a time into copies: most of a small request's
    // cost). The handler calls beginRequest and answers as for a request Qt parsed; the views
    // live only during the call. Without a handler every request goes through Qt.
    using DirectHandler = std::function<void(QTcpSocket *, const PlainRequest &)>;
    void setDirectHandler(DirectHandler handler) { m_direct = std::move(handler); }
    // After a request went to its handler: stop reading the connection while it is over a bound.
    void requestHandled(QTcpSocket *socket);
    // Writes answer `sequence` when its turn comes; closes after one that says Connection: close,
    // and while draining (or once nothing more is read) after the last request taken.
    void deliver(QTcpSocket *socket, unsigned long long sequence, Answer answer);
    // Answers `status` after the answers already owed, then closes; Qt parses nothing more of it.
    void refuse(QTcpSocket *socket, int status, const char *code, const QString &message);
    // The same with a whole answer (an error that carries headers of its own).
    void refuse(QTcpSocket *socket, const ApiResponse &refusal);

    // Stop taking new requests: close idle connections now, busy ones after their response.
    void startDraining();
    // Serve keep-alive connections normally again (the in-process server after a switch back).
    void stopDraining()
    {
        m_draining = false;
        m_drainAnnounced = false;
    }
    // Any thread, before the listeners close at shutdown: from then on every answer says
    // Connection: close, so a client that finds the listener refusing never gets a keep-alive
    // answer in the moment before startDraining() runs on the guard's thread.
    void announceDraining() { m_drainAnnounced = true; }
    // The drain's time is up: every request still owed an answer hears 503 shutting_down ("it may
    // still be done") and its connection closes once that is written.
    void answerOwedBeforeStopping();
    // How long those 503s may take to go out before the caller stops anyway.
    static constexpr int kLastAnswersMs = 300;
    bool isDraining() const { return m_draining || m_drainAnnounced; } // any thread
    int openConnections() const { return int(m_states.size()); }
    const ConnectionLimits &limits() const { return m_limits; }
    // Pool mode: a connection's unanswered requests run on the pool's threads at once, and each
    // answer they finish waits in its output whether or not the client reads: with 32 read ahead,
    // 32 unread maps (15 MB) a connection. So the pipelining cap becomes kParallelReadAhead (or
    // --max-pipelined, when lower), whatever the thread count; false restores --max-pipelined.
    static constexpr int kParallelReadAhead = 4;
    void setParallelHandlers(bool parallel);

    // Closing with the client's bytes unread makes the kernel reset the connection, and a reset
    // can reach the client before it read the answer (a refusal's 429/503/4xx, the last answer
    // before requests dropped unread). So such a connection is half-closed once its answer is
    // with the kernel, and what the client still sends is dropped for at most kLingerMs or
    // kLingerBytes, whichever comes first, before it closes (RFC 9112 §9.6). At most
    // kMaxLingering linger at once (beyond them a connection closes at once, as before), and they
    // do not count toward --max-connections: a client refused again and again holds no place.
    static constexpr int kLingerMs = 1000;
    static constexpr qint64 kLingerBytes = 64 * 1024;
    static constexpr int kMaxLingering = 256;

    // A socket upgraded to WebSocket leaves the guard (no timeouts, no bookkeeping): Qt
    // disconnects every signal of it, so the guard would never hear of its end. It still counts
    // toward maxConnections until it is destroyed.
    void releaseUpgraded(QTcpSocket *socket);
    // Whether the upgrade request Qt is handling is HTTP/1.0 (Qt 6.4's request has no version):
    // the framing check stops after an upgrade head, so it is the newest head it read.
    bool upgradeIsHttp10(QTcpSocket *socket) const;

Q_SIGNALS:
    void allConnectionsClosed();

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    void inspect(GuardedSocket *socket);
    qsizetype serveDirect(GuardedSocket *socket, ConnectionState &state, const char *data, qsizetype size,
                          PassBudget &pass);
    // The whole requests a pass had no time for wait, hidden from Qt's parser, for the next pass.
    void parkUntilNextPass(GuardedSocket *socket, ConnectionState &state);
    void unpark(GuardedSocket *socket, ConnectionState &state);
    void readAgainLater(GuardedSocket *socket, bool nextPass);
    void afterParser(GuardedSocket *socket);
    void reject(GuardedSocket *socket, ConnectionState &state, const FramingError &error);
    void refuseWith(GuardedSocket *socket, ConnectionState &state, const ApiResponse &refusal);
    void answerOverdue(GuardedSocket *socket);
    void answerInPlace(GuardedSocket *socket, const ApiResponse &answer);
    void stopReading(GuardedSocket *socket, ConnectionState &state);
    void discardInput(GuardedSocket *socket);
    // The connection's last answer is written: closes it, lingering when input was left unread.
    void closeAfterLastAnswer(GuardedSocket *socket, ConnectionState &state);
    void linger(GuardedSocket *socket);
    void updateFlow(GuardedSocket *socket, ConnectionState &state);
    void resume(GuardedSocket *socket, ConnectionState &state);
    void sweep();
    void forget(QTcpSocket *socket);

    ConnectionLimits m_limits;
    std::optional<ConnectionsPerClient> m_perClient; // --max-connections-per-client, when counted
    int m_pipelineCap;        // --max-pipelined, or fewer with parallel handlers (setParallelHandlers)
    qint64 m_readBufferBytes; // the most a connection's input buffer holds (a whole request fits)
    MetricsRecorder &m_metrics;
    QHash<QTcpSocket *, ConnectionState> m_states;
    QList<QPointer<QTcpSocket>> m_upgraded; // null once the feed is done with the socket
    int m_lingering = 0;                    // connections in m_states half-closed (kLingerMs)
    std::vector<char> m_peekBuffer;         // reused for every peek: no allocation per read
    DirectHandler m_direct;
    QTimer m_sweepTimer;
    std::atomic<bool> m_draining{false};
    std::atomic<bool> m_drainAnnounced{false};
    long long m_drainStartedMs = 0;
};

} // namespace taxicore
