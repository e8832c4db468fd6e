#include "TestHttpServer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace {

constexpr int kListenBacklog = 1024;
constexpr int kPollTimeoutMs = 50; // also bounds how long the destructor waits
constexpr std::size_t kReadChunk = 16 * 1024;

std::string lowered(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

std::string httpResponse(int status, const char *reason, const std::string &body, bool http10, bool close,
                         const char *contentType = "text/plain")
{
    std::string response =
        std::string(http10 ? "HTTP/1.0 " : "HTTP/1.1 ") + std::to_string(status) + " " + reason + "\r\n";
    response +=
        std::string("Content-Type: ") + contentType + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    response += close ? "Connection: close\r\n" : (http10 ? "Connection: keep-alive\r\n" : "");
    return response + "\r\n" + body;
}

} // namespace

TestHttpServer::TestHttpServer(Behaviour behaviour)
    : m_behaviour(behaviour)
{
    m_listenFd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int on = 1;
    ::setsockopt(m_listenFd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    if (::bind(m_listenFd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0
        || ::listen(m_listenFd, kListenBacklog) != 0)
        throw std::runtime_error(std::string("test server cannot listen: ") + std::strerror(errno));
    socklen_t length = sizeof address;
    ::getsockname(m_listenFd, reinterpret_cast<sockaddr *>(&address), &length);
    m_port = ntohs(address.sin_port);
    if (::pipe2(m_wakePipe, O_CLOEXEC | O_NONBLOCK) != 0)
        throw std::runtime_error("test server cannot make its pipe");
    m_thread = std::thread([this] { serve(); });
}

TestHttpServer::~TestHttpServer()
{
    const char stop = 'x';
    [[maybe_unused]] const auto written = ::write(m_wakePipe[1], &stop, 1);
    m_thread.join();
    for (Client &client : m_clients)
        ::close(client.fd);
    ::close(m_listenFd);
    ::close(m_wakePipe[0]);
    ::close(m_wakePipe[1]);
}

std::string TestHttpServer::url(const std::string &path) const
{
    return "http://127.0.0.1:" + std::to_string(m_port) + path;
}

void TestHttpServer::pauseOnce(uint64_t afterRequests, std::chrono::milliseconds pause)
{
    m_pauseMs = pause.count();
    m_pauseAfterRequests = afterRequests;
}

std::vector<std::string> TestHttpServer::requestLines() const
{
    std::lock_guard lock(m_linesMutex);
    return m_requestLines;
}

uint16_t TestHttpServer::refusingPort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
    socklen_t length = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
    ::close(fd); // bound but never listening: connects are refused
    return ntohs(address.sin_port);
}

void TestHttpServer::serve()
{
    while (true) {
        std::vector<pollfd> fds;
        fds.push_back({m_wakePipe[0], POLLIN, 0});
        fds.push_back({m_listenFd, POLLIN, 0});
        for (const Client &client : m_clients)
            fds.push_back({client.fd, static_cast<short>(POLLIN | (client.out.empty() ? 0 : POLLOUT)), 0});
        if (::poll(fds.data(), fds.size(), kPollTimeoutMs) < 0 && errno != EINTR)
            return;
        if (fds[0].revents)
            return;
        if (fds[1].revents & POLLIN)
            acceptClients();
        // Walk the clients that were polled (accepting appended new ones after them).
        for (std::size_t i = 2; i < fds.size(); ++i) {
            Client &client = m_clients[i - 2];
            if (client.fd < 0)
                continue;
            if (fds[i].revents & POLLOUT)
                writeClient(client);
            if (client.fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                readClient(client);
        }
        m_clients.erase(std::remove_if(m_clients.begin(), m_clients.end(), [](const Client &c) { return c.fd < 0; }),
                        m_clients.end());
    }
}

void TestHttpServer::acceptClients()
{
    while (true) {
        const int fd = ::accept4(m_listenFd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        ++m_connectionsAccepted;
        m_clients.push_back({fd, {}, {}, false});
    }
}

void TestHttpServer::readClient(Client &client)
{
    char buffer[kReadChunk];
    const ssize_t n = ::recv(client.fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            ::close(client.fd);
            client.fd = -1;
        }
        return;
    }
    client.in.append(buffer, static_cast<std::size_t>(n));
    while (client.fd >= 0 && handleRequest(client)) {
    }
}

bool TestHttpServer::handleRequest(Client &client)
{
    const std::size_t headEnd = client.in.find("\r\n\r\n");
    if (headEnd == std::string::npos)
        return false;
    const std::string head = client.in.substr(0, headEnd);
    const std::string lowerHead = lowered(head);
    std::size_t bodyLength = 0;
    if (const std::size_t at = lowerHead.find("content-length:"); at != std::string::npos)
        bodyLength = std::stoul(head.substr(at + 15));
    if (client.in.size() < headEnd + 4 + bodyLength)
        return false;
    client.in.erase(0, headEnd + 4 + bodyLength);

    const std::string requestLine = head.substr(0, head.find("\r\n"));
    const bool http10 = requestLine.size() >= 8 && requestLine.compare(requestLine.size() - 8, 8, "HTTP/1.0") == 0;
    const bool keepAliveAsked = lowerHead.find("connection: keep-alive") != std::string::npos;
    const bool closeRequested = lowerHead.find("connection: close") != std::string::npos || (http10 && !keepAliveAsked);
    if (++m_requestsSeen == m_pauseAfterRequests.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(m_pauseMs.load()));
    if (http10)
        ++m_http10Requests;
    {
        std::lock_guard lock(m_linesMutex);
        m_requestLines.push_back(requestLine);
    }
    switch (m_behaviour) {
    case Behaviour::Stall:
        return false;
    case Behaviour::Reset: {
        const linger abortive{1, 0}; // close with RST instead of FIN
        ::setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive);
        ::close(client.fd);
        client.fd = -1;
        return false;
    }
    default:
        break;
    }
    client.out += respond(requestLine, http10, closeRequested);
    client.closeAfterWrite = client.closeAfterWrite || closeRequested;
    writeClient(client);
    return client.fd >= 0;
}

std::string TestHttpServer::respond(const std::string &requestLine, bool http10, bool closeRequested)
{
    switch (m_behaviour) {
    case Behaviour::Status500:
        return httpResponse(500, "Internal Server Error", "boom\n", http10, closeRequested);
    case Behaviour::Chunked: {
        std::string response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n";
        response += closeRequested ? "Connection: close\r\n\r\n" : "\r\n";
        return response + "6\r\nHello \r\n6\r\nWorld\n\r\n0\r\n\r\n";
    }
    case Behaviour::FakeTaxi: {
        const std::string body = taxiResponse(requestLine);
        const int status = body.find("no_car") != std::string::npos              ? 409
                           : requestLine.rfind("POST /api/v1/bookings ", 0) == 0 ? 201
                                                                                 : 200;
        return httpResponse(status,
                            status == 201   ? "Created"
                            : status == 409 ? "Conflict"
                                            : "OK",
                            body, http10, closeRequested, "application/json");
    }
    default:
        return httpResponse(200, "OK", "Hello World\n", http10, closeRequested);
    }
}

std::string TestHttpServer::taxiResponse(const std::string &requestLine)
{
    // Every third booking is refused, bookings read back as "arriving" so the flow picks up.
    if (requestLine.rfind("POST /api/v1/bookings ", 0) == 0) {
        const int64_t id = m_nextBookingId++;
        if (id % 3 == 0)
            return R"({"error":"no_car_available"})";
        return R"({"booking_id":)" + std::to_string(id) + R"(,"car_id":7,"state":"assigned"})";
    }
    if (requestLine.rfind("GET /api/v1/bookings/", 0) == 0)
        return R"({"booking_id":1,"state":"arriving"})";
    return R"({"ok":true})";
}

void TestHttpServer::writeClient(Client &client)
{
    while (!client.out.empty()) {
        const ssize_t n = ::send(client.fd, client.out.data(), client.out.size(), MSG_NOSIGNAL);
        if (n <= 0) {
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
            ::close(client.fd);
            client.fd = -1;
            return;
        }
        client.out.erase(0, static_cast<std::size_t>(n));
    }
    if (client.closeAfterWrite) {
        ::close(client.fd);
        client.fd = -1;
    }
}
