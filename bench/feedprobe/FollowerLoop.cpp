#include "FollowerLoop.h"

#include "WebSocketHandshake.h"

#include <QRandomGenerator>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace taxicore::feedprobe {
namespace {

const QByteArray kStreamPath = QByteArrayLiteral("/api/v1/stream");
constexpr int kReadChunk = 64 * 1024;
constexpr int kMaxEvents = 256;

double steadyMs()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

struct FollowerLoop::Connection {
    enum class State { Connecting, Handshaking, Open, Closed };
    int follower = 0;
    int fd = -1;
    State state = State::Connecting;
    sockaddr_in address{};
    QByteArray hostHeader, subscribeJson, key;
    QByteArray received; // Handshaking: the answer so far
    QByteArray outgoing; // bytes the socket has not taken yet
    bool wantsWrite = false;
    WebSocketFrameParser parser;
    std::vector<WebSocketFrameParser::Message> messages;
};

FollowerLoop::FollowerLoop(TextHandler handler)
    : m_handler(std::move(handler))
{
}

FollowerLoop::~FollowerLoop()
{
    stop();
}

void FollowerLoop::add(int follower, const sockaddr_in &address, const QByteArray &hostHeader,
                       const QByteArray &subscribeJson)
{
    auto c = std::make_unique<Connection>();
    c->follower = follower;
    c->address = address;
    c->hostHeader = hostHeader;
    c->subscribeJson = subscribeJson;
    m_connections.push_back(std::move(c));
}

void FollowerLoop::start()
{
    m_epoll = epoll_create1(EPOLL_CLOEXEC);
    for (auto &c : m_connections) {
        c->fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->fd < 0 || m_epoll < 0) {
            fail(*c, "socket", errno);
            continue;
        }
        const int one = 1;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (::connect(c->fd, reinterpret_cast<const sockaddr *>(&c->address), sizeof c->address) != 0
            && errno != EINPROGRESS) {
            fail(*c, "connect", errno);
            continue;
        }
        QByteArray nonce(16, Qt::Uninitialized);
        QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(nonce.data()), 4);
        c->key = nonce.toBase64();
        epoll_event event{};
        event.events = EPOLLIN | EPOLLOUT;
        event.data.ptr = c.get();
        c->wantsWrite = true;
        epoll_ctl(m_epoll, EPOLL_CTL_ADD, c->fd, &event);
    }
    m_thread = std::thread([this] { run(); });
}

void FollowerLoop::stop()
{
    if (m_thread.joinable()) {
        m_stop = true;
        m_thread.join();
    }
    for (auto &c : m_connections) {
        if (c->state == Connection::State::Open)
            c->outgoing += encodeClientFrame(WebSocketFrameParser::Kind::Close, QByteArray("\x03\xe8", 2),
                                             QRandomGenerator::global()->generate());
        if (c->fd >= 0 && !c->outgoing.isEmpty())
            (void)::send(c->fd, c->outgoing.constData(), std::size_t(c->outgoing.size()), MSG_NOSIGNAL);
        closeConnection(*c);
    }
    if (m_epoll >= 0)
        ::close(m_epoll);
    m_epoll = -1;
}

void FollowerLoop::run()
{
    epoll_event events[kMaxEvents];
    while (!m_stop.load(std::memory_order_relaxed)) {
        const int n = epoll_wait(m_epoll, events, kMaxEvents, kWakeMs);
        for (int i = 0; i < n; ++i) {
            auto &c = *static_cast<Connection *>(events[i].data.ptr);
            if (c.state == Connection::State::Closed)
                continue;
            if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                onReadable(c);
            if (c.state != Connection::State::Closed && (events[i].events & EPOLLOUT))
                onWritable(c);
        }
    }
}

void FollowerLoop::onWritable(Connection &c)
{
    if (c.state == Connection::State::Connecting) {
        int error = 0;
        socklen_t size = sizeof error;
        getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &size);
        if (error != 0) {
            return fail(c, "connect", error);
        }
        c.state = Connection::State::Handshaking;
        c.outgoing += handshakeRequest(c.hostHeader, kStreamPath, c.key);
    }
    while (!c.outgoing.isEmpty()) {
        const ssize_t sent = ::send(c.fd, c.outgoing.constData(), std::size_t(c.outgoing.size()), MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return fail(c, "send", errno);
        }
        c.outgoing.remove(0, sent);
    }
    const bool wantsWrite = !c.outgoing.isEmpty();
    if (wantsWrite != c.wantsWrite) {
        c.wantsWrite = wantsWrite;
        epoll_event event{};
        event.events = EPOLLIN | (wantsWrite ? EPOLLOUT : 0u);
        event.data.ptr = &c;
        epoll_ctl(m_epoll, EPOLL_CTL_MOD, c.fd, &event);
    }
}

void FollowerLoop::queue(Connection &c, const QByteArray &bytes)
{
    c.outgoing += bytes;
    onWritable(c);
}

void FollowerLoop::onReadable(Connection &c)
{
    if (c.state == Connection::State::Connecting)
        return onWritable(c); // the connect's outcome (an error shows as readable too)
    char buffer[kReadChunk];
    for (;;) {
        const ssize_t got = ::recv(c.fd, buffer, sizeof buffer, 0);
        if (got < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            return fail(c, "recv", errno);
        }
        if (got == 0)
            return fail(c, "closed by the server");
        const double atMs = steadyMs();
        const char *frames = buffer;
        qsizetype frameBytes = got;
        if (c.state == Connection::State::Handshaking) {
            c.received.append(buffer, got);
            const HandshakeAnswer answer = readHandshakeAnswer(c.received, c.key);
            if (answer.state == HandshakeAnswer::Incomplete)
                continue;
            if (answer.state == HandshakeAnswer::Rejected) {
                std::fprintf(stderr, "follower %d: %s\n", c.follower, qPrintable(answer.reason));
                return fail(c, "handshake");
            }
            c.state = Connection::State::Open;
            frames = c.received.constData() + answer.headerBytes;
            frameBytes = c.received.size() - answer.headerBytes;
            queue(c, encodeClientFrame(WebSocketFrameParser::Kind::Text, c.subscribeJson,
                                       QRandomGenerator::global()->generate()));
            if (c.state == Connection::State::Closed)
                return;
        }
        c.messages.clear();
        const bool ok = c.parser.feed(frames, frameBytes, c.messages);
        if (frames != buffer)
            c.received.clear();
        for (const auto &message : c.messages) {
            switch (message.kind) {
            case WebSocketFrameParser::Kind::Text:
                m_handler(c.follower, message.payload, atMs);
                break;
            case WebSocketFrameParser::Kind::Ping:
                queue(c, encodeClientFrame(WebSocketFrameParser::Kind::Pong, message.payload,
                                           QRandomGenerator::global()->generate()));
                break;
            case WebSocketFrameParser::Kind::Close:
                queue(c, encodeClientFrame(WebSocketFrameParser::Kind::Close, message.payload.left(2),
                                           QRandomGenerator::global()->generate()));
                return fail(c, "closed by the server");
            case WebSocketFrameParser::Kind::Binary:
            case WebSocketFrameParser::Kind::Pong:
                break;
            }
            if (c.state == Connection::State::Closed)
                return;
        }
        if (!ok) {
            std::fprintf(stderr, "follower %d: %s\n", c.follower, qPrintable(c.parser.error()));
            return fail(c, "protocol");
        }
        if (got < kReadChunk)
            return; // drained: level-triggered epoll says when there is more
    }
}

void FollowerLoop::fail(Connection &c, const char *what, int error)
{
    if (c.state == Connection::State::Closed)
        return;
    std::fprintf(stderr, "follower %d: %s%s%s\n", c.follower, what, error ? ": " : "",
                 error ? std::strerror(error) : "");
    ++m_failures;
    closeConnection(c);
}

void FollowerLoop::closeConnection(Connection &c)
{
    if (c.fd >= 0) {
        if (m_epoll >= 0)
            epoll_ctl(m_epoll, EPOLL_CTL_DEL, c.fd, nullptr);
        ::close(c.fd);
    }
    c.fd = -1;
    c.state = Connection::State::Closed;
}

} // namespace taxicore::feedprobe
