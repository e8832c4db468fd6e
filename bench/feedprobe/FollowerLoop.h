#pragma once

#include "WebSocketFrameParser.h"

#include <QByteArray>

#include <netinet/in.h>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace taxicore::feedprobe {

// WebSocket followers on one thread of their own: non-blocking sockets on an epoll loop, so a
// wake-up costs the sockets that are ready rather than a poll() over all 2,000 (what Qt's
// event loop does, and where the probe's CPU went). Each connection does the handshake, sends
// its subscribe, answers pings and closes, and hands every text message to the handler on this
// thread with the steady-clock time its bytes were read.
class FollowerLoop {
public:
    // follower: the id given to add(); atMs: steady clock (nowMs in main.cpp), same as the reports'.
    using TextHandler = std::function<void(int follower, const QByteArray &text, double atMs)>;
    // How long one epoll_wait sleeps at most, so that stop() is seen promptly.
    static constexpr int kWakeMs = 50;

    explicit FollowerLoop(TextHandler handler);
    ~FollowerLoop(); // stop()
    FollowerLoop(const FollowerLoop &) = delete;
    FollowerLoop &operator=(const FollowerLoop &) = delete;

    // Before start(): one follower to connect to `address`, subscribing with `subscribeJson`.
    void add(int follower, const sockaddr_in &address, const QByteArray &hostHeader, const QByteArray &subscribeJson);
    void start();
    // Sends a close frame on every open connection (without waiting for the answer), closes them
    // and joins the thread. Idempotent.
    void stop();
    // Connections that failed (refused, bad handshake, protocol error, closed by the server).
    int failures() const { return m_failures.load(); }

private:
    struct Connection;
    void run();
    void onReadable(Connection &c);
    void onWritable(Connection &c);
    void queue(Connection &c, const QByteArray &bytes);
    void fail(Connection &c, const char *what, int error = 0); // error: an errno value, or 0
    void closeConnection(Connection &c);

    TextHandler m_handler;
    std::vector<std::unique_ptr<Connection>> m_connections;
    int m_epoll = -1;
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_failures{0};
};

} // namespace taxicore::feedprobe
