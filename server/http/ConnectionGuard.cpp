#include "http/ConnectionGuard.h"

#include "wire/ApiError.h"
#include "wire/PlainRequest.h"
#include "http/GuardedSocket.h"
#include "http/PassBudget.h"
#include "wire/ResponseWriter.h"
#include "metrics/MetricsRecorder.h"
#include "region/Clock.h"

#include <QPointer>
#include <QTcpSocket>
#include <algorithm>
#include <chrono>
#include <sys/socket.h>

namespace taxicore {

namespace {

constexpr int kSweepIntervalMs = 500;
// Room in a connection's input buffer beyond its largest possible request, so pipelined requests
// keep flowing; past it the kernel keeps the rest and TCP slows the client down.
constexpr qint64 kReadBufferSlack = 64 * 1024;
// While a connection is paused its input buffer takes nothing more from the kernel (Qt reads
// only into room below this size, and a paused buffer already holds at least one byte).
constexpr qint64 kPausedReadBufferBytes = 1;
// Reading resumes once the unsent output fell to this fraction of --max-pending-output, so a
// connection at the bound is not paused and resumed on every answer.
constexpr int kResumeOutputDivisor = 2;

QString describe(const FramingError &error)
{
    const QString message = QString::fromLatin1(error.message);
    return message.contains(QLatin1String("%1")) ? message.arg(error.limit) : message;
}

// What a client told that its request's answer will not come needs to know.
constexpr const char *kMayStillBeDone = "what the request asked for may still be done (a booking may be recorded); "
                                        "read it back, or send it again with the same Idempotency-Key";

} // namespace

ConnectionGuard::ConnectionGuard(ConnectionLimits limits, MetricsRecorder &metrics, QObject *parent)
    : QTcpServer(parent)
    , m_limits(limits)
    , m_pipelineCap(limits.maxPipelined)
    , m_readBufferBytes(qint64(limits.maxHeaderBytes) + limits.maxBodyBytes + RequestFraming::kChunkFramingAllowance
                        + kReadBufferSlack)
    , m_metrics(metrics)
{
    m_sweepTimer.setInterval(kSweepIntervalMs);
    connect(&m_sweepTimer, &QTimer::timeout, this, &ConnectionGuard::sweep);
    m_sweepTimer.start();
}

void ConnectionGuard::countPerClient(AccessBlock &block, int workerSlot)
{
    if (m_limits.maxConnectionsPerClient > 0)
        m_perClient.emplace(block, workerSlot, m_limits.maxConnectionsPerClient);
    else
        m_perClient.reset();
}

void ConnectionGuard::incomingConnection(qintptr descriptor)
{
    adoptSocket(descriptor);
}

void ConnectionGuard::adoptSocket(qintptr descriptor)
{
    auto *socket = new GuardedSocket(this);
    if (!socket->setSocketDescriptor(descriptor)) {
        delete socket;
        return;
    }
    // A whole request always fits (Qt keeps it buffered until it is complete); beyond that the
    // client waits on TCP flow control instead of filling our memory.
    socket->setReadBufferSize(m_readBufferBytes);
    ConnectionState &state = m_states.emplace(socket, m_limits).value();
    state.lastActivityMs = clock::monotonicMs();
    m_metrics.connectionOpened();
    // Connected before QHttpServer sees the socket, so this slot runs first on every read.
    connect(socket, &QTcpSocket::readyRead, this, [this, socket] { inspect(socket); });
    connect(socket, &QObject::destroyed, this, [this, socket] { forget(socket); });
    connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    m_upgraded.removeIf([](const QPointer<QTcpSocket> &s) { return s.isNull(); });
    if (m_states.size() - m_lingering + m_upgraded.size() > m_limits.maxConnections) {
        refuseWith(socket, state,
                   errorResponse(503, "too_many_connections",
                                 QStringLiteral("the server has too many open connections; retry shortly")));
        return;
    }
    // One address must not hold every connection: counted on the machine (every process), the
    // count given back when the socket is destroyed. The same path as the total cap: answered
    // without reading a request, then closed.
    if (m_perClient && !m_perClient->admit(socket->peerAddress(), socket)) {
        refuseWith(socket, state,
                   errorResponse(429, "too_many_connections",
                                 QStringLiteral("this client address already has %1 open connections, the most "
                                                "--max-connections-per-client allows; close one and retry")
                                     .arg(m_perClient->limit()),
                                 {{QStringLiteral("limit"), m_perClient->limit()}}));
        return;
    }
    addPendingConnection(socket);
    // QHttpServer connected its reader inside addPendingConnection; this one runs after it and
    // learns how much Qt parsed, so the next inspect() can tell checked bytes from new ones.
    connect(socket, &QTcpSocket::readyRead, this, [this, socket] { afterParser(socket); });
    Q_EMIT newConnection();
}

void ConnectionGuard::forget(QTcpSocket *socket)
{
    const auto it = m_states.constFind(socket);
    if (it != m_states.cend() && it->lingering)
        --m_lingering;
    if (m_states.remove(socket)) {
        m_metrics.connectionClosed();
        if (m_states.isEmpty())
            Q_EMIT allConnectionsClosed();
    }
}

// Runs before Qt's parser on every readyRead: the bytes Qt has not parsed are the front of the
// socket's buffer; those past `checkedBytes` are new and go through the framing check first.
// Whole requests at the front that Qt holds no part of are then served directly (serveDirect),
// for as long as the pass's budget lasts; what is left is Qt's to parse, in the same readyRead,
// or, when the budget ran out, the next pass's (parkUntilNextPass).
void ConnectionGuard::inspect(GuardedSocket *socket)
{
    auto it = m_states.find(socket);
    if (it == m_states.end())
        return;
    ConnectionState &state = it.value();
    unpark(socket, state); // a pass is due (the event loop turned since the last one)
    state.lastActivityMs = clock::monotonicMs();
    const qint64 buffered = socket->receivedBytes();
    state.bufferedBytes = buffered;
    const bool directReady =
        m_direct && state.framing.completeHeadsAhead() > 0 && state.framing.pendingHeadStart() == state.consumedBytes;
    if (buffered - state.checkedBytes <= 0 && !directReady)
        return; // Qt's own call for the next pipelined request: nothing new
    if (m_peekBuffer.size() < std::size_t(buffered))
        m_peekBuffer.resize(std::size_t(buffered));
    if (socket->peek(m_peekBuffer.data(), buffered) != buffered)
        return;
    // `front`: bytes of the peeked ones served directly (and so no longer in the socket).
    qsizetype front = 0;
    PassBudget pass(state.lastActivityMs);
    for (;;) {
        const qint64 unchecked = buffered - front - state.checkedBytes;
        if (unchecked > 0) {
            const qsizetype consumed = state.framing.feed(m_peekBuffer.data() + front + state.checkedBytes,
                                                          qsizetype(unchecked), state.lastActivityMs);
            state.checkedBytes += consumed;
        }
        const qsizetype served =
            m_direct ? serveDirect(socket, state, m_peekBuffer.data() + front, qsizetype(buffered) - front, pass) : 0;
        if (served == 0 || state.stoppedReading || pass.exhausted())
            break;
        front += served;
    }
    if (state.stoppedReading)
        return; // what was left of the buffer is dropped: nothing after the closing request runs
    if (pass.exhausted()) {
        // Before the framing error or the 100 Continue: both belong to requests behind these.
        parkUntilNextPass(socket, state);
        return;
    }
    if (state.framing.failed()) {
        // Whole requests before the error are answered first: Qt parses them one per pass, and
        // beginRequest refuses the connection once the last of them is taken.
        if (state.framing.completeHeadsAhead() == 0)
            reject(socket, state, state.framing.error());
        return;
    }
    // A client that sent `Expect: 100-continue` waits for our go-ahead (Qt 6.4 never gives it).
    if (state.framing.takeContinue())
        socket->write(QByteArrayLiteral("HTTP/1.1 100 Continue\r\n\r\n"));
    socket->setHeld(state.paused || state.framing.endsInsideFinalCrlf());
}

// Serves the whole requests at the front of the socket's buffer (`data`, `size`: its bytes) while
// Qt's parser holds no part of them (the oldest head not yet taken starts exactly at the front)
// and the pass's budget lasts. Returns the bytes taken off the socket.
qsizetype ConnectionGuard::serveDirect(GuardedSocket *socket, ConnectionState &state, const char *data, qsizetype size,
                                       PassBudget &pass)
{
    qsizetype served = 0;
    while (!state.stoppedReading && !state.paused && state.framing.completeHeadsAhead() > 0
           && state.framing.pendingHeadStart() == state.consumedBytes) {
        if (!pass.allowsAnother())
            break;
        PlainRequest request;
        const qsizetype length = readPlainRequest(QByteArrayView(data + served, size - served), request);
        if (length == 0 || length > state.checkedBytes)
            break; // Qt's to read
        // Qt's parser left a transaction open on its last, empty pass: nothing of it is read.
        if (socket->isTransactionStarted())
            socket->commitTransaction();
        if (socket->skip(length) != length)
            break;
        served += length;
        state.consumedBytes += length;
        state.checkedBytes -= length;
        state.bufferedBytes -= length;
        m_direct(socket, request);
    }
    return served;
}

// Holding the socket does not do (docs/QT64.md): Qt's parser, next on this readyRead, still reads
// the next head with read(), runs a request without a body at once, and stops inside one with a
// body, its head taken, its body held back. The first try held them: such a request was never
// answered (the next pass found nothing new to check and left the hold on), and the connection
// was closed as idle 15 s later; through nginx, a 502. Parked, Qt reads nothing of them.
void ConnectionGuard::parkUntilNextPass(GuardedSocket *socket, ConnectionState &state)
{
    socket->parkInput();
    // Nothing more is read from the kernel until the pass (as while paused): Qt closes a socket as
    // soon as it reads the client's end of stream, and a client that sends its pipeline and then
    // shuts its side down would lose the parked requests with it.
    socket->setReadBufferSize(kPausedReadBufferBytes);
    if (state.passQueued)
        return; // another readyRead (Qt's, a resume's) came before the queued pass: it serves these
    state.passQueued = true;
    readAgainLater(socket, true);
}

// Once the event loop turned: the check, the direct path and Qt's parser, as on any read, unless
// the connection paused or stopped reading meanwhile (a paused one is unparked when it resumes; a
// stopped one dropped its input). `nextPass`: the pass parkUntilNextPass queued, which runs only
// for a socket still parked.
void ConnectionGuard::readAgainLater(GuardedSocket *socket, bool nextPass)
{
    QPointer<GuardedSocket> target(socket);
    QMetaObject::invokeMethod(
        this,
        [this, target, nextPass] {
            if (!target)
                return;
            auto it = m_states.find(target.data());
            if (it == m_states.end())
                return;
            if (nextPass)
                it->passQueued = false;
            if ((!nextPass || target->isParked()) && !it->paused && !it->stoppedReading)
                Q_EMIT target->readyRead();
        },
        Qt::QueuedConnection);
}

void ConnectionGuard::unpark(GuardedSocket *socket, ConnectionState &state)
{
    if (!socket->isParked())
        return;
    socket->unparkInput();
    if (!state.paused)
        socket->setReadBufferSize(m_readBufferBytes);
}

void ConnectionGuard::afterParser(GuardedSocket *socket)
{
    auto it = m_states.find(socket);
    if (it == m_states.end())
        return;
    if (socket->isParked())
        return; // Qt's parser saw nothing in this pass (and receivedBytes() counts none of it)
    ConnectionState &state = it.value();
    const qint64 buffered = socket->receivedBytes();
    // What Qt parsed in this pass came off the front, out of what the check had seen.
    const long long parsed = state.bufferedBytes - buffered;
    state.consumedBytes += parsed;
    state.checkedBytes = std::max<long long>(0, state.checkedBytes - parsed);
    state.bufferedBytes = buffered;
}

bool ConnectionGuard::beginRequest(QTcpSocket *socket, Ticket &ticket)
{
    auto it = m_states.find(socket);
    // Qt may parse what was buffered behind a request that closes the connection: not run.
    if (it == m_states.end() || it->stoppedReading)
        return false;
    ConnectionState &state = it.value();
    // Qt parses only what the check passed, so the head is there; were it not, close after.
    ticket.traits = state.framing.hasPendingHead() ? state.framing.takeHead() : RequestTraits{false, true};
    ticket.sequence = state.nextSequence++;
    // Its answer closes the connection (the client asks, or the server drains): nothing
    // pipelined after it runs, whenever its answer comes (RFC 9112 §9.6).
    if (ticket.traits.wantsClose || isDraining())
        stopReading(static_cast<GuardedSocket *>(socket), state);
    // The last whole request before a framing error: its answer, then the refusal, then close.
    else if (state.framing.failed() && state.framing.completeHeadsAhead() == 0)
        reject(static_cast<GuardedSocket *>(socket), state, state.framing.error());
    return true;
}

void ConnectionGuard::requestHandled(QTcpSocket *socket)
{
    auto it = m_states.find(socket);
    if (it != m_states.end())
        updateFlow(static_cast<GuardedSocket *>(socket), it.value());
}

// Writes responses strictly in the order their requests arrived on this connection; after one
// that says Connection: close, nothing more is written and the connection closes. While the
// server drains (or once nothing more is read), the answer to the last request taken is the one
// that closes: every request run before it is answered first, none is run after it.
void ConnectionGuard::deliver(QTcpSocket *socket, unsigned long long sequence, Answer answer)
{
    auto it = m_states.find(socket);
    if (it == m_states.end() || socket->state() != QAbstractSocket::ConnectedState || it->closing)
        return;
    ConnectionState &state = it.value();
    if (sequence != state.nextToWrite) {
        state.finished.emplace(sequence, std::move(answer));
        return;
    }
    for (;;) {
        const bool last = state.nextToWrite + 1 == state.nextSequence;
        if (!answer.close && last && (state.stoppedReading || isDraining())) {
            markClosing(answer.bytes);
            answer.close = true;
        }
        socket->write(answer.bytes);
        ++state.nextToWrite;
        if (answer.close) {
            state.closing = true;
            state.finished.clear(); // none: nothing is taken after the request that closes
            // Qt may still parse what is buffered (its next pass is queued): none of it runs.
            stopReading(static_cast<GuardedSocket *>(socket), state);
            closeAfterLastAnswer(static_cast<GuardedSocket *>(socket), state);
            return;
        }
        const auto next = state.finished.find(state.nextToWrite);
        if (next == state.finished.end())
            break;
        answer = std::move(next->second);
        state.finished.erase(next);
    }
    // Send now: left to the event loop, the bytes would wait until every other socket that
    // became readable in the same poll had run its (possibly CPU-bound) handler.
    socket->flush();
    if (state.paused)
        updateFlow(static_cast<GuardedSocket *>(socket), state);
}

void ConnectionGuard::refuse(QTcpSocket *socket, int status, const char *code, const QString &message)
{
    refuse(socket, errorResponse(status, code, message));
}

void ConnectionGuard::refuse(QTcpSocket *socket, const ApiResponse &refusal)
{
    auto it = m_states.find(socket);
    if (it != m_states.end())
        refuseWith(static_cast<GuardedSocket *>(socket), it.value(), refusal);
}

void ConnectionGuard::reject(GuardedSocket *socket, ConnectionState &state, const FramingError &error)
{
    refuseWith(socket, state, errorResponse(error.status, error.code, describe(error)));
}

void ConnectionGuard::refuseWith(GuardedSocket *socket, ConnectionState &state, const ApiResponse &refusal)
{
    if (state.rejected)
        return;
    state.rejected = true;
    // What follows the error may be a request hidden in a body (smuggling): never read.
    stopReading(socket, state);
    const Answer answer{serializeResponse(refusal, state.framing.currentIsHttp10(), false, false), true};
    deliver(socket, state.nextSequence++, answer);
}

// The answer owed longest has not come within --answer-timeout-ms (a booking whose commit the
// database cannot settle, a handler stuck): the client hears so in its place, and the connection
// closes, since the answers behind it would have to wait for it. An answer that comes later finds
// the connection closing and is dropped; what it did is done (the ledger holds a booking
// committed meanwhile: the client reads it back or repeats the request with its Idempotency-Key).
void ConnectionGuard::answerOverdue(GuardedSocket *socket)
{
    answerInPlace(socket, errorResponse(503, "answer_timeout",
                                        QStringLiteral("no answer within %1 ms: %2")
                                            .arg(m_limits.answerTimeoutMs)
                                            .arg(QLatin1String(kMayStillBeDone))));
}

// The drain's time is up and the server stops: a request still owed its answer (a booking whose
// commit PostgreSQL has not settled) hears so, as an overdue one does, instead of its connection
// closing without a word, after which a client retrying without an Idempotency-Key books twice.
void ConnectionGuard::answerOwedBeforeStopping()
{
    QList<GuardedSocket *> owed;
    for (auto it = m_states.cbegin(); it != m_states.cend(); ++it)
        if (it->inFlight() > 0 && !it->closing)
            owed.append(static_cast<GuardedSocket *>(it.key()));
    for (GuardedSocket *socket : owed)
        answerInPlace(
            socket, errorResponse(
                        503, "shutting_down",
                        QStringLiteral("the server stopped before answering: %1").arg(QLatin1String(kMayStillBeDone))));
}

// Answers the oldest request owed with `answer` in place of its own, then closes: the answers
// behind it would have to wait for it. Its own answer, if it comes, finds the connection closing.
void ConnectionGuard::answerInPlace(GuardedSocket *socket, const ApiResponse &answer)
{
    auto it = m_states.find(socket);
    if (it == m_states.end())
        return;
    ConnectionState &state = it.value();
    stopReading(socket, state);
    deliver(socket, state.nextToWrite,
            Answer{serializeResponse(answer, state.framing.currentIsHttp10(), false, false), true});
}

void ConnectionGuard::stopReading(GuardedSocket *socket, ConnectionState &state)
{
    if (state.stoppedReading)
        return;
    state.stoppedReading = true;
    unpark(socket, state); // what waited for its pass is dropped with the rest
    // Qt's parser hears nothing more of this connection, nor does the direct path; its input is
    // dropped until the answers owed are out and it closes.
    disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
    connect(socket, &QTcpSocket::readyRead, this, [this, socket] { discardInput(socket); });
    if (state.paused) {
        state.paused = false;
        disconnect(state.drainWatch);
        socket->setReadBufferSize(m_readBufferBytes);
    }
    socket->setHeld(false);
    discardInput(socket);
}

void ConnectionGuard::discardInput(GuardedSocket *socket)
{
    // Qt's unfinished request would keep every byte since its start buffered.
    if (socket->isTransactionStarted())
        socket->commitTransaction();
    const qint64 dropped = socket->skip(socket->receivedBytes());
    auto it = m_states.find(socket);
    if (it == m_states.end() || dropped <= 0)
        return;
    it->discardedBytes += dropped;
    // A client that keeps sending holds a lingering connection no longer than kLingerBytes.
    if (it->lingering && it->discardedBytes - it->lingerDiscardStart > kLingerBytes)
        socket->abort();
}

// Input left unread (refused: its request, or the rest of it, never read; or dropped behind the
// request that closes) would make the kernel reset the connection on close: it lingers instead,
// once its answer is with the kernel. Until then the idle and answer sweeps bound it, as any.
void ConnectionGuard::closeAfterLastAnswer(GuardedSocket *socket, ConnectionState &state)
{
    if (!state.rejected && state.discardedBytes == 0) {
        socket->disconnectFromHost();
        return;
    }
    socket->flush();
    if (socket->bytesToWrite() == 0) {
        linger(socket);
        return;
    }
    connect(socket, &QIODevice::bytesWritten, this, [this, socket] {
        if (socket->bytesToWrite() == 0) {
            disconnect(socket, &QIODevice::bytesWritten, this, nullptr);
            linger(socket);
        }
    });
}

// The answer goes out, then an end of stream (FIN) instead of a reset; the client reads the
// answer and closes, and its close ends the socket here (disconnected → deleteLater). Nothing
// read meanwhile reaches Qt's parser or the direct path (stopReading): it is dropped.
void ConnectionGuard::linger(GuardedSocket *socket)
{
    auto it = m_states.find(socket);
    if (it == m_states.end())
        return;
    if (m_lingering >= kMaxLingering) {
        socket->disconnectFromHost();
        return;
    }
    it->lingering = true;
    it->lingerDiscardStart = it->discardedBytes;
    ++m_lingering;
    // Qt has no half-close: shutdown() on its descriptor queues the FIN behind the answer.
    ::shutdown(int(socket->socketDescriptor()), SHUT_WR);
    QTimer::singleShot(kLingerMs, socket, [socket] { socket->abort(); });
}

void ConnectionGuard::setParallelHandlers(bool parallel)
{
    m_pipelineCap = parallel ? std::min(kParallelReadAhead, m_limits.maxPipelined) : m_limits.maxPipelined;
}

// Backpressure: a connection whose client does not read its answers (unsent output over
// --max-pending-output) or has --max-pipelined requests unanswered is not read any further —
// neither by Qt's parser (the socket is held) nor from the kernel (no room in its buffer) —
// until its output drained to half the bound and its queue is below the cap. A connection thus
// holds at most the bound plus one answer per request under the cap (m_pipelineCap).
void ConnectionGuard::updateFlow(GuardedSocket *socket, ConnectionState &state)
{
    if (state.stoppedReading || state.closing)
        return;
    const qint64 unsent = socket->bytesToWrite();
    if (!state.paused) {
        if (state.inFlight() < m_pipelineCap && unsent <= m_limits.maxPendingOutputBytes)
            return;
        state.paused = true;
        socket->setHeld(true);
        socket->setReadBufferSize(kPausedReadBufferBytes);
        state.drainWatch = connect(socket, &QIODevice::bytesWritten, this, [this, socket] {
            auto it = m_states.find(socket);
            if (it == m_states.end())
                return;
            it->lastActivityMs = clock::monotonicMs(); // the client is reading: not idle
            updateFlow(socket, it.value());
        });
        return;
    }
    if (state.inFlight() < m_pipelineCap && unsent <= m_limits.maxPendingOutputBytes / kResumeOutputDivisor)
        resume(socket, state);
}

void ConnectionGuard::resume(GuardedSocket *socket, ConnectionState &state)
{
    state.paused = false;
    disconnect(state.drainWatch);
    socket->setReadBufferSize(m_readBufferBytes);
    socket->setHeld(state.framing.endsInsideFinalCrlf());
    if (socket->receivedBytes() == 0 && !socket->isParked())
        return;
    // Qt parses buffered requests only on readyRead (which also unparks what waited for its pass).
    readAgainLater(socket, false);
}

void ConnectionGuard::releaseUpgraded(QTcpSocket *socket)
{
    // The WebSocket reads on its own from here: no hold, no bound on its buffer.
    auto *guarded = static_cast<GuardedSocket *>(socket);
    guarded->setHeld(false);
    socket->setReadBufferSize(0);
    socket->disconnect(this);
    forget(socket);
    m_upgraded.append(socket);
}

bool ConnectionGuard::upgradeIsHttp10(QTcpSocket *socket) const
{
    const auto it = m_states.constFind(socket);
    return it != m_states.cend() && it->framing.awaitingUpgrade() && it->framing.currentIsHttp10();
}

void ConnectionGuard::startDraining()
{
    m_draining = true;
    m_drainStartedMs = clock::monotonicMs();
    close(); // stop listening; connections already accepted are still served
    sweep();
}

void ConnectionGuard::sweep()
{
    const long long now = clock::monotonicMs();
    QList<QTcpSocket *> toClose;
    QList<QTcpSocket *> overdue;
    for (auto it = m_states.begin(); it != m_states.end(); ++it) {
        ConnectionState &s = it.value();
        const bool owed = s.inFlight() > 0;
        if (owed && s.owedSinceMs != 0 && s.watchedToWrite == s.nextToWrite && !s.closing) {
            if (now - s.owedSinceMs > m_limits.answerTimeoutMs) {
                overdue.append(it.key());
                continue;
            }
        } else {
            s.watchedToWrite = s.nextToWrite;
            s.owedSinceMs = owed ? now : 0;
        }
        // Requests waiting for their pass are owed answers as much as those running: closed, the
        // client would lose them after answers that said keep-alive.
        const bool busy = owed || s.passQueued || static_cast<GuardedSocket *>(it.key())->isParked();
        const long long headStartedMs = s.framing.headStartedMs();
        const bool midHead = headStartedMs != 0; // the request's first byte came, not its last
        const long long bodyStartedMs = s.framing.bodyStartedMs();
        // Not while an answer is owed (a booking awaiting its commit, the next request's head
        // already begun): closing lost that answer. A handler ends in bounded time, and the head's
        // clock has run meanwhile, so a slow head is closed as soon as the answer is out.
        if (!busy && midHead && now - headStartedMs > m_limits.headerTimeoutMs)
            toClose.append(it.key()); // slowloris: the head never completes
        else if (!busy && bodyStartedMs != 0 && now - bodyStartedMs > m_limits.headerTimeoutMs)
            toClose.append(it.key()); // the same with a body: a byte at a time kept it open for good
        else if (!busy && !midHead && now - s.lastActivityMs > m_limits.idleTimeoutMs)
            toClose.append(it.key());
        else if (m_draining && !busy && !midHead && now - s.lastActivityMs > m_limits.drainGraceMs)
            toClose.append(it.key()); // idle for the grace period: no request can be on its way
        else if (m_draining && !busy && now - m_drainStartedMs > m_limits.drainGraceMs + m_limits.headerTimeoutMs)
            toClose.append(it.key());
    }
    for (QTcpSocket *socket : overdue)
        answerOverdue(static_cast<GuardedSocket *>(socket));
    for (QTcpSocket *socket : toClose)
        socket->disconnectFromHost();
    if (m_draining && m_states.isEmpty())
        Q_EMIT allConnectionsClosed();
}

} // namespace taxicore
