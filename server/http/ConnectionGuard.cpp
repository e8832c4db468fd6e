#include "http/ConnectionGuard.h"

#include "http/ApiError.h"
#include "http/RequestHeadCheck.h"
#include "http/ResponseWriter.h"
#include "metrics/MetricsRecorder.h"

#include <QDateTime>
#include <QTcpSocket>
#include <algorithm>

namespace taxicore {

namespace {

constexpr int kSweepIntervalMs = 500;
// Chunk-size lines and CRLFs around a chunked body's data, allowed on top of the body limit.
constexpr long long kChunkFramingAllowance = 4096;

long long monotonicMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace

ConnectionGuard::ConnectionGuard(ConnectionLimits limits, MetricsRecorder &metrics, QObject *parent)
    : QTcpServer(parent)
    , m_limits(limits)
    , m_metrics(metrics)
{
    m_sweepTimer.setInterval(kSweepIntervalMs);
    connect(&m_sweepTimer, &QTimer::timeout, this, &ConnectionGuard::sweep);
    m_sweepTimer.start();
}

void ConnectionGuard::incomingConnection(qintptr descriptor)
{
    adoptSocket(descriptor);
}

void ConnectionGuard::adoptSocket(qintptr descriptor)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(descriptor)) {
        delete socket;
        return;
    }
    ConnectionState &state = m_states[socket];
    state.lastActivityMs = monotonicMs();
    m_metrics.connectionOpened();
    // Connected before QHttpServer sees the socket, so this slot runs first on every read.
    connect(socket, &QTcpSocket::readyRead, this, [this, socket] { inspect(socket); });
    connect(socket, &QObject::destroyed, this, [this, socket] { forget(socket); });
    connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    if (m_states.size() > m_limits.maxConnections) {
        reject(socket, state, 503, "too_many_connections",
               QStringLiteral("the server has too many open connections; retry shortly"));
        return;
    }
    addPendingConnection(socket);
    // QHttpServer connected its reader inside addPendingConnection; this one runs after it and
    // remembers what it left unread, so the next inspect() can tell new bytes from old ones.
    connect(socket, &QTcpSocket::readyRead, this, [this, socket] {
        if (auto it = m_states.find(socket); it != m_states.end())
            it->leftoverBytes = socket->bytesAvailable();
    });
    Q_EMIT newConnection();
}

ConnectionState *ConnectionGuard::state(QTcpSocket *socket)
{
    auto it = m_states.find(socket);
    return it == m_states.end() ? nullptr : &it.value();
}

void ConnectionGuard::forget(QTcpSocket *socket)
{
    if (m_states.remove(socket)) {
        m_metrics.connectionClosed();
        if (m_states.isEmpty())
            Q_EMIT allConnectionsClosed();
    }
}

void ConnectionGuard::inspect(QTcpSocket *socket)
{
    auto it = m_states.find(socket);
    if (it == m_states.end())
        return;
    ConnectionState &state = it.value();
    state.lastActivityMs = monotonicMs();
    if (state.rejected) {
        socket->readAll(); // nothing more from this client reaches QHttpServer
        return;
    }
    const long long newBytes = std::max<long long>(0, socket->bytesAvailable() - state.leftoverBytes);
    if (state.headComplete) {
        state.bodyBytes += newBytes;
        if (state.chunked && state.bodyBytes > m_limits.maxBodyBytes + kChunkFramingAllowance)
            reject(socket, state, 413, "body_too_large",
                   QStringLiteral("request bodies are limited to %1 bytes").arg(m_limits.maxBodyBytes));
        return;
    }
    // Peek only what is buffered: peek(n) allocates n bytes up front.
    const QByteArray bytes = socket->peek(std::min<qint64>(socket->bytesAvailable(), m_limits.maxHeaderBytes + 1));
    const HeadVerdict verdict = inspectRequestHead(bytes, m_limits, state, monotonicMs());
    if (verdict.refused()) {
        reject(socket, state, verdict.status, verdict.code, verdict.message);
        return;
    }
    if (state.headComplete) {
        const qsizetype headEnd = bytes.indexOf("\r\n\r\n");
        state.bodyBytes = headEnd < 0 ? 0 : bytes.size() - headEnd - 4;
        // A client that sent `Expect: 100-continue` waits for our go-ahead (Qt 6.4 never gives it).
        if (state.expectContinue && state.bodyBytes < state.contentLength)
            socket->write(QByteArrayLiteral("HTTP/1.1 100 Continue\r\n\r\n"));
    }
}

void ConnectionGuard::releaseUpgraded(QTcpSocket *socket)
{
    socket->disconnect(this);
    forget(socket);
}

void ConnectionGuard::requestDispatched(QTcpSocket *socket)
{
    if (ConnectionState *s = state(socket)) {
        s->atRequestStart = true;
        s->headComplete = false;
        s->headBytes = 0;
        s->headStartedMs = 0;
    }
}

void ConnectionGuard::reject(QTcpSocket *socket, ConnectionState &state, int status, const char *code,
                             const QString &message)
{
    state.rejected = true;
    socket->readAll();
    socket->write(serializeResponse(errorResponse(status, code, message), state.http10, false, false));
    socket->disconnectFromHost();
}

void ConnectionGuard::startDraining()
{
    m_draining = true;
    m_drainStartedMs = monotonicMs();
    close(); // stop listening; connections already accepted are still served
    sweep();
}

void ConnectionGuard::sweep()
{
    const long long now = monotonicMs();
    QList<QTcpSocket *> toClose;
    for (auto it = m_states.begin(); it != m_states.end(); ++it) {
        const ConnectionState &s = it.value();
        const bool busy = s.inFlight() > 0;
        const bool midHead = s.headStartedMs != 0 && !s.headComplete; // the request's first byte came
        if (midHead && now - s.headStartedMs > m_limits.headerTimeoutMs)
            toClose.append(it.key()); // slowloris: the head never completes
        else if (!busy && !midHead && now - s.lastActivityMs > m_limits.idleTimeoutMs)
            toClose.append(it.key());
        else if (m_draining && !busy && !midHead && now - s.lastActivityMs > m_limits.drainGraceMs)
            toClose.append(it.key()); // idle for the grace period: no request can be on its way
        else if (m_draining && !busy && now - m_drainStartedMs > m_limits.drainGraceMs + m_limits.headerTimeoutMs)
            toClose.append(it.key());
    }
    for (QTcpSocket *socket : toClose)
        socket->disconnectFromHost();
    if (m_draining && m_states.isEmpty())
        Q_EMIT allConnectionsClosed();
}

} // namespace taxicore
