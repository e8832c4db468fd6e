#pragma once

#include "http/ConnectionState.h"

#include <QAbstractHttpServer>
#include <QPointer>
#include <memory>
#include <mutex>
#include <vector>

class QThreadPool;

namespace taxicore {

class ConnectionGuard;
class MetricsRecorder;
class RouteTable;
struct ApiRequest;
struct ApiResponse;
struct PlainRequest;

// The HTTP front of the service: QHttpServer's parser feeds our own router, and responses are
// written by us (HTTP version, Connection, HEAD, pipelining order: docs/QT64.md §1–§3, §6).
// With a thread pool set, handlers run on it (mode `pool`) but for cheap constant routes
// (RouteTable::Route::runsInline); else inline on the I/O thread. Most requests never reach
// Qt's parser: the guard reads them itself (ConnectionGuard::setDirectHandler).
class HttpService : public QAbstractHttpServer {
    Q_OBJECT
public:
    HttpService(const RouteTable &router, ConnectionGuard &guard, MetricsRecorder &metrics, QObject *parent = nullptr);
    // Closes the reply gate first: a deferred reply that comes later (a ledger commit finishing
    // while the server shuts down) is dropped instead of reaching a destroyed service.
    ~HttpService() override;

    // Handlers run on `pool` (pool mode), or on this thread when null.
    void setThreadPool(QThreadPool *pool);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    struct Incoming;
    class Job;
    void handleDirect(QTcpSocket *socket, const PlainRequest &request);
    void dispatch(Incoming in);
    ApiResponse run(int routeIndex, const ApiRequest &request) const;
    void answer(int routeIndex, const ApiRequest &request) const;
    // On the I/O thread: writes the answers other threads left in the gate.
    void deliverReady();

    const RouteTable &m_router;
    ConnectionGuard &m_guard;
    MetricsRecorder &m_metrics;
    QThreadPool *m_pool = nullptr;

    // What deferred replies hold instead of `this`: open while the service lives. A reply runs
    // with the mutex held, so the destructor waits for one in progress and then shuts the gate.
    struct ReadyAnswer {
        QPointer<QTcpSocket> target;
        unsigned long long sequence;
        Answer answer;
    };
    struct ReplyGate {
        std::mutex mutex;
        HttpService *service; // null once the service is being destroyed
        // Answers from other threads waiting for the I/O thread, and whether a deliverReady()
        // is already queued to take them.
        std::vector<ReadyAnswer> ready;
        bool wakePosted = false;
    };
    std::shared_ptr<ReplyGate> m_gate;
    std::vector<ReadyAnswer> m_delivering; // I/O thread only
};

} // namespace taxicore
