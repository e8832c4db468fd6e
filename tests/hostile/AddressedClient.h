#pragma once

// A client connection from a chosen loopback address (127.0.0.2, 127.0.0.3, ...: each a peer
// address of its own to a server on 127.0.0.1), for tests of what the server does per address:
// POSIX calls, every wait bounded, closed by its destructor.

#include "HttpClient.h"

#include <QDeadlineTimer>
#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace taxicore::test::hostile {

class AddressedClient {
public:
    AddressedClient(const char *from, quint16 port)
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (m_fd < 0)
            return;
        sockaddr_in local{};
        local.sin_family = AF_INET;
        ::inet_pton(AF_INET, from, &local.sin_addr);
        sockaddr_in server{};
        server.sin_family = AF_INET;
        server.sin_port = htons(port);
        server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::bind(m_fd, reinterpret_cast<sockaddr *>(&local), sizeof local) != 0
            || ::connect(m_fd, reinterpret_cast<sockaddr *>(&server), sizeof server) != 0) {
            ::close(m_fd);
            m_fd = -1;
        }
    }
    ~AddressedClient() { close(); }
    AddressedClient(const AddressedClient &) = delete;
    AddressedClient &operator=(const AddressedClient &) = delete;

    bool connected() const { return m_fd >= 0; }
    void close()
    {
        if (m_fd >= 0)
            ::close(m_fd);
        m_fd = -1;
    }

    // Reads one response (or until the peer closes) within `timeoutMs`.
    HttpResponse read(int timeoutMs)
    {
        HttpResponse response;
        const QDeadlineTimer deadline(timeoutMs);
        bool eof = false;
        for (;;) {
            const auto result = ResponseParser::take(m_buffer, false, eof, response);
            if (result == ResponseParser::Result::Complete)
                return response;
            if (result == ResponseParser::Result::Error || eof) {
                response.error = eof ? QStringLiteral("closed without a response") : QStringLiteral("unparsable");
                return response;
            }
            pollfd p{m_fd, POLLIN, 0};
            if (::poll(&p, 1, int(std::max<qint64>(0, deadline.remainingTime()))) <= 0) {
                response.error = QStringLiteral("no response within %1 ms").arg(timeoutMs);
                return response;
            }
            char chunk[8192];
            const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
            if (n <= 0)
                eof = true;
            else
                m_buffer.append(chunk, n);
        }
    }

    // True when all of `bytes` went out in one blocking send.
    bool send(const QByteArray &bytes)
    {
        return m_fd >= 0 && ::send(m_fd, bytes.constData(), size_t(bytes.size()), MSG_NOSIGNAL) == bytes.size();
    }

    // A keep-alive GET /hello and its answer.
    HttpResponse hello()
    {
        if (!send("GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) {
            HttpResponse failed;
            failed.error = QStringLiteral("not connected");
            return failed;
        }
        return read(5000);
    }

    // What a connection gets: a refusal the server sends unasked (before any request), else the
    // answer to GET /hello.
    HttpResponse served()
    {
        pollfd p{m_fd, POLLIN, 0};
        if (m_fd >= 0 && ::poll(&p, 1, 100) > 0)
            return read(5000);
        return hello();
    }

    // True once bytes from the server (or its close) are there to read, within `timeoutMs`.
    bool waitReadable(int timeoutMs)
    {
        pollfd p{m_fd, POLLIN, 0};
        return m_fd >= 0 && ::poll(&p, 1, timeoutMs) > 0;
    }

    // How the server ends the connection after what was read: "end of stream" (an orderly close),
    // "reset" (ECONNRESET: it closed with bytes of ours unread), "more bytes", or "still open"
    // after `timeoutMs`.
    QByteArray howItEnds(int timeoutMs)
    {
        pollfd p{m_fd, POLLIN, 0};
        if (m_fd < 0 || ::poll(&p, 1, timeoutMs) <= 0)
            return "still open";
        char chunk[4096];
        const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
        if (n > 0)
            return "more bytes";
        if (n == 0)
            return "end of stream";
        return errno == ECONNRESET ? QByteArray("reset") : QByteArray("error ") + QByteArray::number(errno);
    }

    // True once the server closed this connection (end of stream or reset).
    bool closedByServer(int timeoutMs)
    {
        const QDeadlineTimer deadline(timeoutMs);
        for (;;) {
            pollfd p{m_fd, POLLIN, 0};
            if (::poll(&p, 1, int(std::max<qint64>(0, deadline.remainingTime()))) <= 0)
                return false;
            char chunk[4096];
            const ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
            if (n <= 0)
                return true;
        }
    }

private:
    int m_fd = -1;
    QByteArray m_buffer;
};

} // namespace taxicore::test::hostile
