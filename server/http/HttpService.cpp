#include "http/HttpService.h"

#include "wire/ApiError.h"
#include "http/ClientAddress.h"
#include "http/ConnectionGuard.h"
#include "http/LiveFeed.h"
#include "http/OperatorAccess.h"
#include "wire/PlainRequest.h"
#include "wire/RequestInput.h"
#include "wire/ResponseWriter.h"
#include "wire/WebSocketHandshake.h"
#include "http/RouteTable.h"
#include "metrics/MetricsRecorder.h"

#include <QElapsedTimer>
#include <QHttpServerRequest>
#include <QTcpSocket>
#include <QThread>
#include <QThreadPool>

namespace taxicore {

namespace {

HttpMethod toMethod(QHttpServerRequest::Method method)
{
    using M = QHttpServerRequest::Method;
    switch (method) {
    case M::Get:
        return HttpMethod::Get;
    case M::Head:
        return HttpMethod::Head;
    case M::Post:
        return HttpMethod::Post;
    case M::Put:
        return HttpMethod::Put;
    case M::Delete:
        return HttpMethod::Delete;
    case M::Patch:
        return HttpMethod::Patch;
    case M::Options:
        return HttpMethod::Options;
    default:
        return HttpMethod::Other;
    }
}

// Every X-Forwarded-For field of the request as one comma-separated list (asked only of a
// trusted proxy's requests, so other requests pay nothing for it): null when there is none, empty
// but not null when the only one is empty (resolveClientAddress tells them apart).
QByteArray forwardedFor(const QHttpServerRequest &request)
{
    QByteArray joined;
    bool present = false;
    for (const auto &[name, value] : request.headers()) {
        if (name.compare("x-forwarded-for", Qt::CaseInsensitive) != 0)
            continue;
        if (present)
            joined += ',';
        present = true;
        joined += value;
    }
    if (present && joined.isNull())
        joined = QByteArray("", 0); // not null: the field was there
    return joined;
}

// `forwarded` is asked only of a trusted proxy's requests, so other requests pay nothing for it.
template <typename ForwardedFor> ClientAddress clientOf(const QHostAddress &peer, ForwardedFor forwarded)
{
    const TrustedProxies &proxies = trustedProxies();
    if (proxies.isEmpty() || !proxies.contains(peer))
        return {peer};
    return resolveClientAddress(peer, forwarded(), proxies);
}

QString malformedForwardedFor()
{
    return QStringLiteral("X-Forwarded-For from a trusted proxy must be a comma-separated list of IP addresses");
}

// A trusted proxy's X-Forwarded-For that names no client: refused with 400 (as for any request),
// a WebSocket upgrade before it is upgraded.
bool forwardedForIsMalformed(const QHttpServerRequest &request)
{
    return clientOf(request.remoteAddress(), [&request] { return forwardedFor(request); }).malformed;
}

// Why a WebSocket upgrade request cannot be upgraded, as Qt parsed it (the first field of each name;
// the version as the guard read it).
std::optional<ApiResponse> handshakeRefusal(const QHttpServerRequest &request, bool http10)
{
    const QByteArray host = request.value(QByteArrayLiteral("host"));
    const QByteArray key = request.value(QByteArrayLiteral("sec-websocket-key"));
    const QByteArray version = request.value(QByteArrayLiteral("sec-websocket-version"));
    return websocketHandshakeRefusal({request.method() == QHttpServerRequest::Method::Get, http10, host, key, version});
}

// A view's bytes as a QByteArray; null stays null (an absent header).
QByteArray bytesOf(QByteArrayView view)
{
    return view.data() == nullptr ? QByteArray() : view.toByteArray();
}

// Every `name` field of the request joined by ", " (HTTP's combined value), null when there is
// none: value() shows only one, and a field sent twice must not pass for one.
QByteArray combinedField(const QHttpServerRequest &request, QByteArrayView name)
{
    QByteArray combined;
    bool found = false;
    for (const auto &[field, value] : request.headers()) {
        if (field.compare(name, Qt::CaseInsensitive) != 0)
            continue;
        if (found)
            combined += ", ";
        combined += value;
        found = true;
    }
    if (found && combined.isNull())
        combined = QByteArray("", 0); // present, with an empty value: refused as such, not as absent
    return combined;
}

} // namespace

// A handler's run on the pool: the request moved in, one allocation.
class HttpService::Job : public QRunnable {
public:
    Job(const HttpService *service, int routeIndex, ApiRequest request)
        : m_service(service)
        , m_routeIndex(routeIndex)
        , m_request(std::move(request))
    {
    }
    void run() override { m_service->answer(m_routeIndex, m_request); }

private:
    const HttpService *m_service;
    int m_routeIndex;
    ApiRequest m_request;
};

// What the two front ends (Qt's parser, the guard's direct path) hand to dispatch().
struct HttpService::Incoming {
    QTcpSocket *socket;
    ConnectionGuard::Ticket ticket;
    QElapsedTimer timer;
    HttpMethod method;
    QByteArray path;
    // The rest of the request, asked only once it matched a route.
    std::function<ClientAddress()> client;
    std::function<void(ApiRequest &)> fill;
};

HttpService::HttpService(const RouteTable &router, ConnectionGuard &guard, MetricsRecorder &metrics, QObject *parent)
    : QAbstractHttpServer(parent)
    , m_router(router)
    , m_guard(guard)
    , m_metrics(metrics)
    , m_gate(std::make_shared<ReplyGate>())
{
    m_gate->service = this;
    bind(&guard);
    guard.setDirectHandler([this](QTcpSocket *socket, const PlainRequest &request) { handleDirect(socket, request); });
}

HttpService::~HttpService()
{
    std::lock_guard lock(m_gate->mutex);
    m_gate->service = nullptr;
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
    if (LiveFeed::isWebSocketUpgrade(request)) {
        // Qt 6.4 hands the socket to its WebSocket server only when this returns true, and we
        // must write nothing (docs/QT64.md §7). Elsewhere than the feed: false, so Qt answers
        // through missingHandler (404) and closes instead of upgrading.
        // Nor while draining: an upgraded socket leaves the guard, which could then never close
        // it (a primary handing its connections to workers would hold feeds past every limit).
        // Nor a malformed handshake, wherever it asks to go: Qt's WebSocket server would close it
        // without a word (or upgrade a key of the wrong length); missingHandler says what is wrong.
        if (!LiveFeed::isUpgradeRequest(request) || m_guard.isDraining()
            || handshakeRefusal(request, m_guard.upgradeIsHttp10(socket)) || forwardedForIsMalformed(request))
            return false;
        m_guard.releaseUpgraded(socket);
        return true;
    }
    QElapsedTimer timer;
    timer.start();
    ConnectionGuard::Ticket ticket;
    if (!m_guard.beginRequest(socket, ticket))
        return true; // a connection the guard refused, or one that closes after a request before
    const QUrl url = request.url();
    dispatch(
        Incoming{socket, ticket, timer, toMethod(request.method()), url.path(QUrl::FullyDecoded).toUtf8(),
                 [&request] { return clientOf(request.remoteAddress(), [&request] { return forwardedFor(request); }); },
                 [&request, &url](ApiRequest &r) {
                     if (url.hasQuery())
                         r.query = QUrlQuery(url);
                     r.body = request.body();
                     r.acceptEncoding = request.value(QByteArrayLiteral("accept-encoding"));
                     r.ifNoneMatch = request.value(QByteArrayLiteral("if-none-match"));
                     r.authorization = request.value(QByteArrayLiteral("authorization"));
                     r.idempotencyKey = combinedField(request, "idempotency-key");
                     r.crossSite = isCrossSite(request.value(QByteArrayLiteral("host")),
                                               request.value(QByteArrayLiteral("origin")));
                 }});
    return true;
}

// The guard's direct path: a whole request it read itself, exactly as Qt's parser would have.
void HttpService::handleDirect(QTcpSocket *socket, const PlainRequest &request)
{
    QElapsedTimer timer;
    timer.start();
    ConnectionGuard::Ticket ticket;
    if (!m_guard.beginRequest(socket, ticket))
        return;
    // The peer as Qt's request has it (its address when the connection was accepted).
    dispatch(Incoming{socket, ticket, timer, request.method, request.path.toByteArray(),
                      [socket, &request] {
                          return clientOf(socket->peerAddress(), [&request] { return bytesOf(request.forwardedFor); });
                      },
                      [&request](ApiRequest &r) {
                          if (request.hasQuery)
                              r.query = QUrlQuery(QUrl::fromEncoded(request.target.toByteArray()));
                          r.body = request.body.isEmpty() ? QByteArray() : request.body.toByteArray();
                          r.acceptEncoding = bytesOf(request.acceptEncoding);
                          r.ifNoneMatch = bytesOf(request.ifNoneMatch);
                          r.authorization = bytesOf(request.authorization);
                          r.idempotencyKey = bytesOf(request.idempotencyKey);
                          r.crossSite = isCrossSite(request.host, request.origin);
                      }});
}

void HttpService::dispatch(Incoming in)
{
    QTcpSocket *const socket = in.socket;
    m_metrics.requestStarted();
    RouteTable::Match match = m_router.match(in.method, in.path);
    const bool headOnly = in.method == HttpMethod::Head;
    const bool http10 = in.ticket.traits.http10;
    const bool clientKeepsAlive = !in.ticket.traits.wantsClose;
    const unsigned long long sequence = in.ticket.sequence;
    const int routeId = match.route ? match.route->id : RouteTable::kUnmatchedRouteId;
    // Keep-alive as the client asked. A drain closes the connection after the answer to its last
    // request taken, which the guard makes say Connection: close when it writes it: answers to
    // requests pipelined before it still say keep-alive (a client stops reading after a close).
    const auto finish = [this, routeId, http10, clientKeepsAlive, headOnly,
                         timer = in.timer](const ApiResponse &response) {
        m_metrics.requestFinished(routeId, response.status, double(timer.nsecsElapsed()) / 1000.0);
        return Answer{serializeResponse(response, http10, clientKeepsAlive, headOnly), !clientKeepsAlive};
    };

    if (!match.route) {
        m_guard.deliver(socket, sequence, finish(match.error));
        m_guard.requestHandled(socket);
        return;
    }
    const ClientAddress client = in.client();
    if (client.malformed) {
        // A trusted proxy passed on an entry that is no address: refused rather than guessed,
        // so no one's bucket is charged for it (docs/reference/access.md).
        m_guard.deliver(socket, sequence, finish(errorResponse(400, "invalid_forwarded_for", malformedForwardedFor())));
        m_guard.requestHandled(socket);
        return;
    }
    const int routeIndex = match.route->id - 1;
    ApiRequest copy;
    copy.method = in.method;
    copy.path = std::move(in.path);
    in.fill(copy);
    copy.remote = client.address;
    copy.forwarded = client.forwarded;
    copy.params = std::move(match.params);
    if (match.route->runsInline) {
        // A cheap constant route, answered here and now even in pool mode (handing it to a pool
        // thread and its answer back would cost more than the handler). It never defers, so it
        // needs no reply object.
        ApiResponse response = run(routeIndex, copy);
        if (response.status == ApiResponse::kDeferred)
            response = errorResponse(500, "internal_error", QStringLiteral("an inline route deferred its answer"));
        m_guard.deliver(socket, sequence, finish(response));
        m_guard.requestHandled(socket);
        return;
    }
    // The answer may come from a pool thread or a ledger commit, after the socket is gone
    // (the Qt 6.4 QFuture crash, docs/QT64.md §2): it goes back by QPointer, on our thread. It
    // may even come after this service is gone (a commit finishing at shutdown): the gate, not
    // `this`, is what it holds, and a closed gate drops it. A reply queued to our thread before
    // the gate closed is removed with the service's other posted events.
    QPointer<QTcpSocket> target(socket);
    copy.reply =
        std::make_shared<const DeferredReply>([gate = m_gate, target, sequence, finish](const ApiResponse &response) {
            std::lock_guard lock(gate->mutex);
            HttpService *service = gate->service;
            if (!service)
                return;
            Answer answer = finish(response);
            if (QThread::currentThread() == service->thread()) {
                if (target)
                    service->m_guard.deliver(target, sequence, std::move(answer));
                return;
            }
            // From another thread: one queued call takes every answer ready by the time it runs
            // (under load many per wake-up of the I/O thread, and no event allocated for each).
            gate->ready.push_back({target, sequence, std::move(answer)});
            if (!gate->wakePosted) {
                gate->wakePosted = true;
                QMetaObject::invokeMethod(service, &HttpService::deliverReady, Qt::QueuedConnection);
            }
        });
    if (m_pool)
        m_pool->start(new Job(this, routeIndex, std::move(copy))); // one allocation per hand-off
    else
        answer(routeIndex, copy);
    // Over its output bound or queue cap, the connection is read no further for now.
    m_guard.requestHandled(socket);
}

void HttpService::setThreadPool(QThreadPool *pool)
{
    m_pool = pool;
    m_guard.setParallelHandlers(pool != nullptr);
}

void HttpService::deliverReady()
{
    {
        std::lock_guard lock(m_gate->mutex);
        m_delivering.swap(m_gate->ready); // both keep their capacity: no allocation once warm
        m_gate->wakePosted = false;
    }
    for (ReadyAnswer &ready : m_delivering)
        if (ready.target)
            m_guard.deliver(ready.target, ready.sequence, std::move(ready.answer));
    m_delivering.clear();
}

void HttpService::answer(int routeIndex, const ApiRequest &request) const
{
    const ApiResponse response = run(routeIndex, request);
    if (response.status != ApiResponse::kDeferred)
        (*request.reply)(response);
}

void HttpService::missingHandler(const QHttpServerRequest &request, QTcpSocket *socket)
{
    // handleRequest answers everything; this only runs for a refused WebSocket upgrade. What
    // follows it on the connection was never checked as HTTP: the guard closes it unread.
    if (m_guard.isDraining()) {
        m_guard.refuse(socket, 503, "draining",
                       QStringLiteral("this server process is closing its connections (shutting down, or "
                                      "handing them to its workers); connect again"));
    } else if (const std::optional<ApiResponse> refusal = handshakeRefusal(request, m_guard.upgradeIsHttp10(socket))) {
        m_guard.refuse(socket, *refusal); // 400, or 426 naming the version served
    } else if (forwardedForIsMalformed(request)) {
        m_guard.refuse(socket, 400, "invalid_forwarded_for", malformedForwardedFor());
    } else {
        m_guard.refuse(socket, 404, "not_found", QStringLiteral("no such resource"));
    }
}

} // namespace taxicore
