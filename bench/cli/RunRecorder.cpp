#include "RunRecorder.h"

#include "../report/BenchmarkEvent.h"
#include "../scenarios/JsonPeek.h"

#include <QJsonDocument>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <poll.h>
#include <unistd.h>

namespace taxicore::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct Answer {
    int status = 0;
    std::string body;
    std::string error;
};

int remainingMs(Clock::time_point deadline)
{
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::max<int64_t>(0, left.count()));
}

bool waitFor(int fd, short events, Clock::time_point deadline)
{
    pollfd waiter{fd, events, 0};
    int ready = 0;
    do {
        ready = ::poll(&waiter, 1, remainingMs(deadline));
    } while (ready < 0 && errno == EINTR);
    return ready > 0;
}

// One request on its own connection (Connection: close), read to the end. Plain sockets: this
// runs once, after the measurement, and the bench library has no HTTP client besides its engine.
Answer exchange(const Target &server, const std::string &request, std::chrono::milliseconds timeout)
{
    Answer answer;
    const Clock::time_point deadline = Clock::now() + timeout;
    const std::string where = server.host + ":" + std::to_string(server.port);
    const int fd = ::socket(server.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        answer.error = std::string("cannot create a socket: ") + std::strerror(errno);
        return answer;
    }
    const auto fail = [&](const std::string &what) {
        answer.error = what + " (" + where + ")";
        ::close(fd);
        return answer;
    };
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&server.address), server.addressLength) != 0
        && errno != EINPROGRESS)
        return fail(std::string("cannot connect: ") + std::strerror(errno));
    std::size_t sent = 0;
    while (sent < request.size()) {
        if (!waitFor(fd, POLLOUT, deadline))
            return fail("timed out sending");
        const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return fail(std::string("cannot send: ") + std::strerror(errno));
        if (n > 0)
            sent += static_cast<std::size_t>(n);
    }
    std::string received;
    char buffer[4096];
    for (;;) {
        if (!waitFor(fd, POLLIN, deadline))
            return fail("timed out waiting for the answer");
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n == 0)
            break;
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return fail(std::string("cannot read: ") + std::strerror(errno));
        if (n > 0)
            received.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    // "HTTP/1.1 201 Created\r\n...\r\n\r\nbody"
    const std::size_t space = received.find(' ');
    const std::size_t headEnd = received.find("\r\n\r\n");
    if (received.rfind("HTTP/1.", 0) != 0 || space == std::string::npos || headEnd == std::string::npos) {
        answer.error = "not an HTTP answer (" + where + ")";
        return answer;
    }
    answer.status = std::atoi(received.c_str() + space + 1);
    answer.body = received.substr(headEnd + 4);
    return answer;
}

std::string requestText(const Target &server, const char *method, const char *path, const std::string &token,
                        const std::string &body = {})
{
    std::string text = std::string(method) + " " + path + " HTTP/1.1\r\nHost: " + server.hostHeader
                       + "\r\nConnection: close\r\nUser-Agent: taxicore-bench\r\n";
    if (!token.empty())
        text += "Authorization: Bearer " + token + "\r\n";
    if (!body.empty() || std::strcmp(method, "POST") == 0)
        text += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    return text + "\r\n" + body;
}

} // namespace

std::string recordRun(const Target &server, const QJsonObject &resultJson, const std::string &token,
                      std::chrono::milliseconds timeout)
{
    // The mode is the server's, not the bench's: a missing /healthz just leaves it out.
    const Answer health = exchange(server, requestText(server, "GET", "/healthz", token), timeout);
    QString mode;
    if (health.status == 200) {
        if (const auto name = peekJsonString(health.body, "mode"))
            mode = QString::fromUtf8(name->data(), static_cast<qsizetype>(name->size()));
    }
    const QByteArray body =
        QJsonDocument(benchmarkEventBody(benchmarkEventDetail(resultJson, mode))).toJson(QJsonDocument::Compact);
    const Answer posted =
        exchange(server, requestText(server, "POST", "/admin/v1/events", token, body.toStdString()), timeout);
    if (!posted.error.empty())
        return "cannot record the run: " + posted.error;
    if (posted.status != 201)
        return "cannot record the run: the server answered " + std::to_string(posted.status) + " "
               + posted.body.substr(0, 200);
    return {};
}

} // namespace taxicore::bench
