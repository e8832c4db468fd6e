#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// A small HTTP/1.x server for the bench tests, on 127.0.0.1 with an ephemeral port, run by one
// thread with poll(). Each instance misbehaves in one chosen way so the tests can check how the
// load generator classifies what it sees.
class TestHttpServer {
public:
    enum class Behaviour {
        Hello,     // 200 "Hello World\n"; honours HTTP/1.0 and Connection: close like a good server
        Chunked,   // 200 with a chunked body
        Status500, // 500 with a small body
        Reset,     // reads the request, then resets the connection (RST)
        Stall,     // reads the request and never answers
        FakeTaxi,  // answers API v1 booking calls with canned JSON (booking ids count up)
    };

    explicit TestHttpServer(Behaviour behaviour);
    ~TestHttpServer();
    TestHttpServer(const TestHttpServer &) = delete;
    TestHttpServer &operator=(const TestHttpServer &) = delete;

    uint16_t port() const { return m_port; }
    std::string url(const std::string &path = "/hello") const;

    uint64_t connectionsAccepted() const { return m_connectionsAccepted.load(); }
    uint64_t requestsSeen() const { return m_requestsSeen.load(); }
    uint64_t http10Requests() const { return m_http10Requests.load(); }
    std::vector<std::string> requestLines() const;

    // Freeze the server thread for `pause` when the request number `afterRequests` arrives, once:
    // a stand-in for a stop-the-world pause (GC, SIGSTOP) to check coordinated-omission handling.
    void pauseOnce(uint64_t afterRequests, std::chrono::milliseconds pause);

    // A port on 127.0.0.1 where nothing listens (bound, then closed).
    static uint16_t refusingPort();

private:
    struct Client {
        int fd = -1;
        std::string in;
        std::string out;
        bool closeAfterWrite = false;
    };

    void serve();
    void acceptClients();
    void readClient(Client &client);
    void writeClient(Client &client);
    bool handleRequest(Client &client); // false: the client was dropped
    std::string respond(const std::string &requestLine, bool http10, bool closeRequested);
    std::string taxiResponse(const std::string &requestLine);

    Behaviour m_behaviour;
    int m_listenFd = -1;
    int m_wakePipe[2] = {-1, -1};
    uint16_t m_port = 0;
    std::vector<Client> m_clients;
    std::atomic<uint64_t> m_connectionsAccepted{0};
    std::atomic<uint64_t> m_requestsSeen{0};
    std::atomic<uint64_t> m_http10Requests{0};
    std::atomic<int64_t> m_nextBookingId{1};
    std::atomic<uint64_t> m_pauseAfterRequests{0};
    std::atomic<int64_t> m_pauseMs{0};
    mutable std::mutex m_linesMutex;
    std::vector<std::string> m_requestLines;
    std::thread m_thread;
};
