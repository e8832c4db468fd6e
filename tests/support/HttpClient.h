#pragma once

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <memory>

class QTcpSocket;

namespace taxicore::test {

using Headers = QList<QPair<QByteArray, QByteArray>>;

struct HttpResponse {
    bool complete = false; // a whole response was read
    QString error;         // why not, when !complete
    QByteArray version;    // "HTTP/1.1"
    int status = 0;
    QByteArray reason;
    Headers headers; // in wire order, names as sent
    QByteArray body;
    QByteArray raw; // the bytes of this response exactly as received

    // Case-insensitive; the first value, or a null QByteArray.
    QByteArray header(const QByteArray &name) const;
    bool hasHeader(const QByteArray &name) const { return !header(name).isNull(); }
    QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
    bool isJsonObject() const { return QJsonDocument::fromJson(body).isObject(); }
    // One line for failure messages: status, error and the start of the body.
    QByteArray describe() const;
};

// Incremental HTTP/1.x response parser over a byte buffer.
class ResponseParser {
public:
    enum class Result { Complete, NeedMore, Error };
    // Tries to take one response from the front of `buffer`. `headRequest`: the response has no
    // body whatever its headers say. `eof`: the peer closed, so a body without length ends here.
    static Result take(QByteArray &buffer, bool headRequest, bool eof, HttpResponse &out);
};

// A small, real HTTP/1.1 client over QTcpSocket. Every wait is bounded by `timeoutMs`.
// request() reuses the connection while the server keeps it alive (connections() counts the TCP
// connects it made); the raw functions send and read bytes as they are, for protocol tests.
class HttpClient {
public:
    HttpClient(QString host, quint16 port, int timeoutMs = 10'000);
    ~HttpClient();
    HttpClient(const HttpClient &) = delete;
    HttpClient &operator=(const HttpClient &) = delete;

    HttpResponse request(const QByteArray &method, const QByteArray &path, const QByteArray &body = {},
                         const Headers &extraHeaders = {});
    HttpResponse get(const QByteArray &path) { return request("GET", path); }
    HttpResponse post(const QByteArray &path, const QByteArray &body) { return request("POST", path, body); }
    HttpResponse put(const QByteArray &path, const QByteArray &body) { return request("PUT", path, body); }
    HttpResponse postJson(const QByteArray &path, const QJsonObject &body);
    HttpResponse putJson(const QByteArray &path, const QJsonObject &body);

    // Raw mode.
    bool connectToServer(); // a fresh connection (closes any open one)
    bool sendRaw(const QByteArray &bytes);
    // Reads until `count` responses were parsed, the peer closed, or the timeout.
    QList<HttpResponse> readResponses(int count, bool headRequests = false);
    // Reads everything until the peer closes (or the timeout); `closed` tells which.
    QByteArray readUntilClosed(bool *closed = nullptr);
    // True when the peer closes the connection within the timeout (pending bytes are kept).
    bool waitForPeerClose(int timeoutMs);
    bool isConnected() const;
    void disconnect();
    void abort();

    int connections() const { return m_connections; }
    QTcpSocket *socket() const { return m_socket.get(); }
    QByteArray buffered() const { return m_buffer; }
    void setTimeout(int timeoutMs) { m_timeoutMs = timeoutMs; }

private:
    bool ensureConnected();
    bool readMore(int timeoutMs); // false on timeout or close

    QString m_host;
    quint16 m_port;
    int m_timeoutMs;
    std::unique_ptr<QTcpSocket> m_socket;
    QByteArray m_buffer;
    bool m_peerClosed = false;
    int m_connections = 0;
};

// Formats a request the way HttpClient sends it (Host and Content-Length added).
QByteArray formatRequest(const QByteArray &method, const QByteArray &path, const QByteArray &body = {},
                         const Headers &extraHeaders = {}, const QByteArray &version = "HTTP/1.1");

} // namespace taxicore::test
