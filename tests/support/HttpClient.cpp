#include "HttpClient.h"

#include <QDeadlineTimer>
#include <QTcpSocket>

namespace taxicore::test {

QByteArray HttpResponse::header(const QByteArray &name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    }
    return {};
}

QByteArray HttpResponse::describe() const
{
    if (!complete)
        return "no complete response (" + error.toUtf8() + "); raw: " + raw.left(200);
    return version + ' ' + QByteArray::number(status) + ' ' + reason + " body: " + body.left(300);
}

namespace {

bool parseChunked(const QByteArray &buffer, qsizetype start, QByteArray &body, qsizetype &end, bool &error)
{
    qsizetype pos = start;
    body.clear();
    for (;;) {
        const qsizetype lineEnd = buffer.indexOf("\r\n", pos);
        if (lineEnd < 0)
            return false;
        bool ok = false;
        const QByteArray sizeText = buffer.mid(pos, lineEnd - pos).split(';').first().trimmed();
        const qlonglong size = sizeText.toLongLong(&ok, 16);
        if (!ok || size < 0) {
            error = true;
            return false;
        }
        pos = lineEnd + 2;
        if (size == 0) {
            // Trailers, then an empty line.
            for (;;) {
                const qsizetype trailerEnd = buffer.indexOf("\r\n", pos);
                if (trailerEnd < 0)
                    return false;
                const bool last = trailerEnd == pos;
                pos = trailerEnd + 2;
                if (last) {
                    end = pos;
                    return true;
                }
            }
        }
        if (buffer.size() < pos + size + 2)
            return false;
        body += buffer.mid(pos, size);
        pos += size + 2;
    }
}

} // namespace

ResponseParser::Result ResponseParser::take(QByteArray &buffer, bool headRequest, bool eof, HttpResponse &out)
{
    const qsizetype headEnd = buffer.indexOf("\r\n\r\n");
    if (headEnd < 0) {
        if (eof) {
            out.error = buffer.isEmpty() ? QStringLiteral("connection closed before a response")
                                         : QStringLiteral("connection closed inside a response head");
            return Result::Error;
        }
        return Result::NeedMore;
    }
    HttpResponse r;
    const QList<QByteArray> lines = buffer.left(headEnd).split('\n');
    const QByteArray statusLine = lines.first().trimmed();
    const QList<QByteArray> parts = statusLine.split(' ');
    bool ok = false;
    if (parts.size() >= 2) {
        r.version = parts[0];
        r.status = parts[1].toInt(&ok);
        r.reason = statusLine.mid(parts[0].size() + parts[1].size() + 2);
    }
    if (!ok || !r.version.startsWith("HTTP/")) {
        out.error = QStringLiteral("bad status line: %1").arg(QString::fromLatin1(statusLine));
        return Result::Error;
    }
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines[i].trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        r.headers.append({line.left(colon).trimmed(), line.mid(colon + 1).trimmed()});
    }
    const qsizetype bodyStart = headEnd + 4;
    qsizetype end = bodyStart;
    const bool noBody = headRequest || (r.status >= 100 && r.status < 200) || r.status == 204 || r.status == 304;
    if (!noBody) {
        if (r.header("Transfer-Encoding").toLower().contains("chunked")) {
            bool error = false;
            if (!parseChunked(buffer, bodyStart, r.body, end, error)) {
                if (error || eof) {
                    out.error = QStringLiteral("bad or truncated chunked body");
                    return Result::Error;
                }
                return Result::NeedMore;
            }
        } else if (r.hasHeader("Content-Length")) {
            const qlonglong length = r.header("Content-Length").toLongLong(&ok);
            if (!ok || length < 0) {
                out.error = QStringLiteral("bad Content-Length");
                return Result::Error;
            }
            if (buffer.size() < bodyStart + length) {
                if (eof) {
                    out.error = QStringLiteral("connection closed after %1 of %2 body bytes")
                                    .arg(buffer.size() - bodyStart)
                                    .arg(length);
                    return Result::Error;
                }
                return Result::NeedMore;
            }
            r.body = buffer.mid(bodyStart, length);
            end = bodyStart + length;
        } else {
            if (!eof)
                return Result::NeedMore; // the body ends when the connection does
            r.body = buffer.mid(bodyStart);
            end = buffer.size();
        }
    }
    r.raw = buffer.left(end);
    r.complete = true;
    buffer.remove(0, end);
    out = std::move(r);
    return Result::Complete;
}

QByteArray formatRequest(const QByteArray &method, const QByteArray &path, const QByteArray &body,
                         const Headers &extraHeaders, const QByteArray &version)
{
    QByteArray out = method + ' ' + path + ' ' + version + "\r\n";
    bool hasHost = false, hasLength = false, hasType = false;
    for (const auto &h : extraHeaders) {
        hasHost |= h.first.compare("Host", Qt::CaseInsensitive) == 0;
        hasLength |= h.first.compare("Content-Length", Qt::CaseInsensitive) == 0;
        hasType |= h.first.compare("Content-Type", Qt::CaseInsensitive) == 0;
    }
    if (!hasHost)
        out += "Host: 127.0.0.1\r\n";
    for (const auto &h : extraHeaders)
        out += h.first + ": " + h.second + "\r\n";
    if (!hasLength && (!body.isEmpty() || method == "POST" || method == "PUT"))
        out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    if (!body.isEmpty() && !hasType)
        out += "Content-Type: application/json\r\n";
    out += "\r\n";
    out += body;
    return out;
}

HttpClient::HttpClient(QString host, quint16 port, int timeoutMs)
    : m_host(std::move(host))
    , m_port(port)
    , m_timeoutMs(timeoutMs)
{
}

HttpClient::~HttpClient()
{
    abort();
}

bool HttpClient::isConnected() const
{
    return m_socket && m_socket->state() == QAbstractSocket::ConnectedState && !m_peerClosed;
}

void HttpClient::disconnect()
{
    if (m_socket) {
        m_socket->disconnectFromHost();
        if (m_socket->state() != QAbstractSocket::UnconnectedState)
            m_socket->waitForDisconnected(m_timeoutMs);
    }
    m_socket.reset();
    m_buffer.clear();
    m_peerClosed = false;
}

void HttpClient::abort()
{
    if (m_socket)
        m_socket->abort();
    m_socket.reset();
    m_buffer.clear();
    m_peerClosed = false;
}

bool HttpClient::connectToServer()
{
    abort();
    m_socket = std::make_unique<QTcpSocket>();
    m_socket->connectToHost(m_host, m_port);
    if (!m_socket->waitForConnected(m_timeoutMs)) {
        m_socket.reset();
        return false;
    }
    ++m_connections;
    return true;
}

bool HttpClient::ensureConnected()
{
    if (isConnected() && m_buffer.isEmpty() && m_socket->bytesAvailable() == 0)
        return true;
    return connectToServer();
}

bool HttpClient::sendRaw(const QByteArray &bytes)
{
    if (!m_socket && !connectToServer())
        return false;
    if (m_socket->write(bytes) != bytes.size())
        return false;
    QDeadlineTimer deadline(m_timeoutMs);
    while (m_socket->bytesToWrite() > 0) {
        if (deadline.hasExpired() || m_socket->state() != QAbstractSocket::ConnectedState)
            return false;
        m_socket->waitForBytesWritten(int(qMax<qint64>(1, deadline.remainingTime())));
    }
    return true;
}

bool HttpClient::readMore(int timeoutMs)
{
    if (!m_socket)
        return false;
    if (m_socket->bytesAvailable() > 0) {
        m_buffer += m_socket->readAll();
        return true;
    }
    if (m_peerClosed || m_socket->state() != QAbstractSocket::ConnectedState) {
        m_peerClosed = true;
        return false;
    }
    if (m_socket->waitForReadyRead(timeoutMs)) {
        m_buffer += m_socket->readAll();
        return true;
    }
    m_buffer += m_socket->readAll();
    if (m_socket->state() != QAbstractSocket::ConnectedState)
        m_peerClosed = true;
    return false;
}

QList<HttpResponse> HttpClient::readResponses(int count, bool headRequests)
{
    QList<HttpResponse> out;
    QDeadlineTimer deadline(m_timeoutMs);
    while (out.size() < count) {
        HttpResponse r;
        const auto result = ResponseParser::take(m_buffer, headRequests, m_peerClosed, r);
        if (result == ResponseParser::Result::Complete) {
            out.append(r);
            continue;
        }
        if (result == ResponseParser::Result::Error) {
            out.append(r);
            break;
        }
        if (deadline.hasExpired()) {
            r.error = QStringLiteral("timed out after %1 ms waiting for a response").arg(m_timeoutMs);
            out.append(r);
            break;
        }
        readMore(int(qMax<qint64>(1, deadline.remainingTime())));
    }
    return out;
}

QByteArray HttpClient::readUntilClosed(bool *closed)
{
    QDeadlineTimer deadline(m_timeoutMs);
    while (!m_peerClosed && !deadline.hasExpired())
        readMore(int(qMax<qint64>(1, deadline.remainingTime())));
    if (closed)
        *closed = m_peerClosed;
    QByteArray all = m_buffer;
    m_buffer.clear();
    return all;
}

bool HttpClient::waitForPeerClose(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!m_peerClosed && !deadline.hasExpired())
        readMore(int(qMax<qint64>(1, deadline.remainingTime())));
    return m_peerClosed;
}

HttpResponse HttpClient::request(const QByteArray &method, const QByteArray &path, const QByteArray &body,
                                 const Headers &extraHeaders)
{
    const bool headRequest = method == "HEAD";
    for (int attempt = 0; attempt < 2; ++attempt) {
        HttpResponse failed;
        const bool reused = isConnected() && m_buffer.isEmpty() && m_socket->bytesAvailable() == 0;
        if (!ensureConnected()) {
            failed.error = QStringLiteral("cannot connect to %1:%2").arg(m_host).arg(m_port);
            return failed;
        }
        if (!sendRaw(formatRequest(method, path, body, extraHeaders))) {
            if (reused)
                continue; // the server closed the idle connection: one fresh try
            failed.error = QStringLiteral("cannot send the request");
            return failed;
        }
        QList<HttpResponse> responses = readResponses(1, headRequest);
        // An interim 1xx response comes before the final answer.
        while (responses.size() == 1 && responses.first().complete && responses.first().status >= 100
               && responses.first().status < 200)
            responses = readResponses(1, headRequest);
        if (responses.isEmpty()) {
            failed.error = QStringLiteral("no response");
            return failed;
        }
        HttpResponse r = responses.first();
        if (!r.complete && reused && m_peerClosed && m_buffer.isEmpty() && r.raw.isEmpty()
            && r.error.startsWith(QStringLiteral("connection closed before")))
            continue; // closed while idle before it read our request: one fresh try
        if (r.complete && r.header("Connection").toLower().contains("close")) {
            waitForPeerClose(m_timeoutMs);
            abort();
        }
        return r;
    }
    HttpResponse failed;
    failed.error = QStringLiteral("the connection closed twice before a response");
    return failed;
}

HttpResponse HttpClient::postJson(const QByteArray &path, const QJsonObject &body)
{
    return request("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

HttpResponse HttpClient::putJson(const QByteArray &path, const QJsonObject &body)
{
    return request("PUT", path, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

} // namespace taxicore::test
