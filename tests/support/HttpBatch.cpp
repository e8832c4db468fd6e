#include "HttpBatch.h"

#include <QEventLoop>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QTimer>
#include <memory>
#include <vector>

namespace taxicore::test {

QList<HttpResponse> sendConcurrently(const QString &host, quint16 port, const QList<QByteArray> &requests,
                                     int timeoutMs)
{
    struct Conn {
        std::unique_ptr<QTcpSocket> socket;
        QByteArray buffer;
        bool connected = false;
        bool done = false;
        HttpResponse response;
    };
    const qsizetype n = requests.size();
    std::vector<Conn> conns(static_cast<std::size_t>(n));
    QEventLoop loop;
    qsizetype connectedCount = 0, doneCount = 0;
    bool sent = false;

    const auto finishOne = [&](Conn &c) {
        if (c.done)
            return;
        c.done = true;
        if (++doneCount == n)
            loop.quit();
    };
    const auto tryParse = [&](Conn &c, bool eof) {
        if (c.done)
            return;
        HttpResponse r;
        const auto result = ResponseParser::take(c.buffer, false, eof, r);
        if (result == ResponseParser::Result::NeedMore)
            return;
        if (result == ResponseParser::Result::Complete && r.status >= 100 && r.status < 200)
            return; // interim
        c.response = r;
        finishOne(c);
    };
    const auto sendAll = [&] {
        sent = true;
        for (qsizetype i = 0; i < n; ++i)
            conns[std::size_t(i)].socket->write(requests[i]);
    };

    for (qsizetype i = 0; i < n; ++i) {
        Conn &c = conns[std::size_t(i)];
        c.socket = std::make_unique<QTcpSocket>();
        QTcpSocket *s = c.socket.get();
        QObject::connect(s, &QTcpSocket::connected, &loop, [&, i] {
            conns[std::size_t(i)].connected = true;
            if (++connectedCount == n && !sent)
                sendAll();
        });
        QObject::connect(s, &QTcpSocket::readyRead, &loop, [&, i] {
            Conn &cc = conns[std::size_t(i)];
            cc.buffer += cc.socket->readAll();
            tryParse(cc, false);
        });
        QObject::connect(s, &QTcpSocket::disconnected, &loop, [&, i] {
            Conn &cc = conns[std::size_t(i)];
            cc.buffer += cc.socket->readAll();
            tryParse(cc, true);
            if (!cc.done) {
                cc.response.error = QStringLiteral("closed without a complete response");
                finishOne(cc);
            }
        });
        QObject::connect(s, &QTcpSocket::errorOccurred, &loop, [&, i](QAbstractSocket::SocketError) {
            Conn &cc = conns[std::size_t(i)];
            if (cc.done || cc.socket->state() == QAbstractSocket::ConnectedState)
                return;
            if (!cc.connected) {
                cc.response.error = QStringLiteral("connect failed: %1").arg(cc.socket->errorString());
                finishOne(cc);
                if (++connectedCount == n && !sent)
                    sendAll();
            }
        });
        s->connectToHost(host, port);
    }
    QTimer timeout;
    timeout.setSingleShot(true);
    QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
    timeout.start(timeoutMs);
    if (n > 0 && doneCount < n)
        loop.exec();

    QList<HttpResponse> out;
    out.reserve(n);
    for (Conn &c : conns) {
        if (!c.done && c.response.error.isEmpty())
            c.response.error = c.connected ? QStringLiteral("timed out waiting for the response")
                                           : QStringLiteral("timed out connecting");
        out.append(c.response);
        QObject::disconnect(c.socket.get(), nullptr, &loop, nullptr);
        c.socket->abort();
    }
    return out;
}

QList<QByteArray> bookingBurst(int riders)
{
    QList<QByteArray> requests;
    for (int i = 0; i < riders; ++i) {
        const double lat = 57.69 + 0.03 * (i % 10) / 10.0;
        const double lng = 11.94 + 0.06 * (i / 10 % 10) / 10.0;
        const QByteArray body = QJsonDocument(QJsonObject{{"rider_id", QStringLiteral("rider-%1").arg(i)},
                                                          {"pickup", QJsonObject{{"lat", lat}, {"lng", lng}}}})
                                    .toJson(QJsonDocument::Compact);
        requests.append(formatRequest("POST", "/api/v1/bookings", body));
    }
    return requests;
}

} // namespace taxicore::test
