#pragma once

// A live-feed client (QWebSocket) for the feed's hostile tests: counts what it receives and
// records how it was closed. Include after <QTest>.

#include "ServerProcess.h"
#include "Wait.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkRequest>
#include <QWebSocket>
#include <memory>

namespace taxicore::test::hostile {

constexpr int kFeedPollMs = 10; // messages arrive in this process: a short pause is cheap

class FeedClient {
public:
    FeedClient()
    {
        QWebSocket *s = socket.get();
        QObject::connect(s, &QWebSocket::textMessageReceived, s, [this](const QString &text) {
            const QJsonObject message = QJsonDocument::fromJson(text.toUtf8()).object();
            const QString type = message.value(QStringLiteral("type")).toString();
            hello = hello || type == QLatin1String("hello");
            updates += type == QLatin1String("update") ? 1 : 0;
            errors += type == QLatin1String("error") ? 1 : 0;
            lastError = type == QLatin1String("error") ? message : lastError;
        });
        QObject::connect(s, &QWebSocket::disconnected, s, [this] {
            closed = true;
            closeCode = int(socket->closeCode());
            closeReason = socket->closeReason();
        });
    }

    // Opens the feed of `server`; `forwardedFor` (when not null) as the X-Forwarded-For a proxy
    // in front would add. True once the feed said hello (it took the client).
    bool open(const ServerProcess &server, const QByteArray &forwardedFor = {})
    {
        QNetworkRequest request(QUrl(QStringLiteral("ws://%1:%2/api/v1/stream").arg(server.host()).arg(server.port())));
        if (!forwardedFor.isNull())
            request.setRawHeader(QByteArrayLiteral("X-Forwarded-For"), forwardedFor);
        socket->open(request);
        return waitUntil([this] { return hello || closed; }, 5000, kFeedPollMs) && hello && !closed;
    }

    void subscribe()
    {
        socket->sendTextMessage(QStringLiteral(R"({"subscribe":{"lat":57.7075,"lng":11.9675,"radius_m":3000}})"));
    }

    bool waitClosed(int timeoutMs)
    {
        return waitUntil([this] { return closed; }, timeoutMs, kFeedPollMs);
    }

    std::unique_ptr<QWebSocket> socket = std::make_unique<QWebSocket>();
    bool hello = false;
    int updates = 0;
    int errors = 0;
    QJsonObject lastError;
    bool closed = false;
    int closeCode = -1;
    QString closeReason;
};

} // namespace taxicore::test::hostile
