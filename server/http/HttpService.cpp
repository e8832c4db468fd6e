#include "http/HttpService.h"

#include "http/ApiError.h"
#include "http/ConnectionGuard.h"
#include "http/RequestInput.h"
#include "http/ResponseWriter.h"
#include "http/Router.h"
#include "metrics/MetricsRecorder.h"

#include <QElapsedTimer>
#include <QHttpServerRequest>
#include <QTcpSocket>
#include <QThreadPool>

namespace taxicore {

namespace {

HttpMethod toMethod(QHttpServerRequest::Method method)
{
    using M = QHttpServerRequest::Method;
    switch (method) {
    case M::Get: return HttpMethod::Get;
    case M::Head: return HttpMethod::Head;
    case M::Post: return HttpMethod::Post;
    case M::Put: return HttpMethod::Put;
    case M::Delete: return HttpMethod::Delete;
    case M::Patch: return HttpMethod::Patch;
    case M::Options: return HttpMethod::Options;
    default: return HttpMethod::Other;
    }
}

ApiRequest copyRequest(const QHttpServerRequest &request, const QUrl &url, QByteArray path,
                       QList<QByteArray> params)
{
    ApiRequest r;
    r.method = toMethod(request.method());
    r.path = std::move(path);
    if (url.hasQuery())
        r.query = QUrlQuery(url);
    r.body = request.body();
    r.acceptEncoding = request.value(QByteArrayLiteral("accept-encoding"));
    r.ifNoneMatch = request.value(QByteArrayLiteral("if-none-match"));
    r.remote = request.remoteAddress();
    r.params = std::move(params);
    return r;
}

} // namespace

HttpService::HttpService(const Router &router, ConnectionGuard &guard, MetricsRecorder &metrics, QObject *parent)
    : QAbstractHttpServer(parent)
    , m_router(router)
    , m_guard(guard)
    , m_metrics(metrics)
{
    bind(&guard);
}

ApiResponse HttpService::run(int routeIndex, const ApiRequest &request) const
{
    try {
        return m_router.routes()[std::size_t(routeIndex)].handler(request);
    } catch (const ApiException &e) {
        return e.response;
    } catch (const std::exception &e) {
        return errorResponse(500, "internal_error", QString::fromLocal8Bit(e.what()));
    }
}

bool HttpService::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    QElapsedTimer timer;
    timer.start();
    ConnectionState *state = m_guard.state(socket);
    if (!state)
        return true; // a connection the guard already rejected
    m_guard.requestDispatched(socket);
    m_metrics.requestStarted();

    const HttpMethod method = toMethod(request.method());
    const QUrl url = request.url();
    QByteArray path = url.path(QUrl::FullyDecoded).toUtf8();
    Router::Match match = m_router.match(method, path);
    const bool headOnly = method == HttpMethod::Head;
    const bool http10 = state->http10;
    const bool keepAlive = !state->wantsClose && !m_guard.isDraining();
    const unsigned long long sequence = state->nextSequence++;
    if (!keepAlive) {
        state->closeAfterSequence = true;
        state->closeSequence = sequence;
    }
    const int routeId = match.route ? match.route->id : Router::kUnmatchedRouteId;
    const auto finish = [this, routeId, http10, keepAlive, headOnly, timer](const ApiResponse &response) {
        m_metrics.requestFinished(routeId, response.status, double(timer.nsecsElapsed()) / 1000.0);
        return serializeResponse(response, http10, keepAlive, headOnly);
    };

    if (!match.route) {
        deliver(socket, sequence, finish(match.error));
        return true;
    }
    const int routeIndex = match.route->id - 1;
    ApiRequest copy = copyRequest(request, url, std::move(path), std::move(match.params));
    if (!m_pool) {
        deliver(socket, sequence, finish(run(routeIndex, copy)));
        return true;
    }
    // Pool mode: the job owns a copy of the request; the socket may be gone when it finishes
    // (the Qt 6.4 QFuture crash, DESIGN.md defect 2), so the answer goes back by QPointer.
    QPointer<QTcpSocket> target(socket);
    m_pool->start([this, target, sequence, routeIndex, finish, copy = std::move(copy)] {
        QByteArray bytes = finish(run(routeIndex, copy));
        QMetaObject::invokeMethod(this, [this, target, sequence, bytes = std::move(bytes)]() mutable {
            if (target)
                deliver(target, sequence, std::move(bytes));
        }, Qt::QueuedConnection);
    });
    return true;
}

// Writes responses strictly in the order their requests arrived on this connection.
void HttpService::deliver(QTcpSocket *socket, unsigned long long sequence, QByteArray bytes)
{
    ConnectionState *state = m_guard.state(socket);
    if (!state || socket->state() != QAbstractSocket::ConnectedState)
        return;
    if (sequence != state->nextToWrite) {
        state->finished.emplace(sequence, std::move(bytes));
        return;
    }
    socket->write(bytes);
    ++state->nextToWrite;
    for (auto it = state->finished.find(state->nextToWrite); it != state->finished.end();
         it = state->finished.find(state->nextToWrite)) {
        socket->write(it->second);
        state->finished.erase(it);
        ++state->nextToWrite;
    }
    m_guard.responseWritten(socket);
}

void HttpService::missingHandler(const QHttpServerRequest &, QTcpSocket *socket)
{
    // handleRequest answers everything; this only runs for a refused WebSocket upgrade.
    socket->write(serializeResponse(errorResponse(404, "not_found", QStringLiteral("no such resource")), false,
                                    false, false));
    socket->disconnectFromHost();
}

} // namespace taxicore
