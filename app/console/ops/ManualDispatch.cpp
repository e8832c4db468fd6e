#include "ManualDispatch.h"

#include "ConsoleBackend.h"

#include <QHostAddress>
#include <algorithm>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <QNetworkRequest>

ManualDispatch::ManualDispatch(QObject *parent)
    : QObject(parent)
{
    m_network.setTransferTimeout(kRequestTimeoutMs);
}

ManualDispatch::~ManualDispatch()
{
    if (m_reply)
        m_reply->abort();
}

ConsoleBackend *ManualDispatch::backend() const
{
    return m_backend;
}

void ManualDispatch::setBackend(ConsoleBackend *backend)
{
    if (m_backend == backend)
        return;
    m_backend = backend;
    Q_EMIT backendChanged();
}

void ManualDispatch::pick(qint64 bookingId)
{
    m_bookingId = std::max<qint64>(0, bookingId);
    m_message.clear();
    m_failed = false;
    Q_EMIT stateChanged();
}

void ManualDispatch::cancel()
{
    pick(0);
}

QUrl ManualDispatch::reassignUrl(const QUrl &base, qint64 bookingId)
{
    QUrl url = base;
    // A server listening on every address is reached over loopback.
    const QHostAddress host(url.host());
    if (host == QHostAddress::AnyIPv4)
        url.setHost(QStringLiteral("127.0.0.1"));
    else if (host == QHostAddress::AnyIPv6)
        url.setHost(QStringLiteral("::1"));
    url.setPath(QStringLiteral("/admin/v1/bookings/%1/reassign").arg(bookingId));
    return url;
}

bool ManualDispatch::assignTo(int carId)
{
    if (m_bookingId <= 0 || carId <= 0 || m_reply)
        return false;
    if (!m_backend || !m_backend->serving()) {
        settle(false, tr("Not dispatched: the server is not running"));
        return false;
    }
    QNetworkRequest request(reassignUrl(m_backend->url(), m_bookingId));
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    request.setRawHeader("Authorization", "Bearer " + m_backend->adminToken().toUtf8());
    m_requestedCarId = carId;
    const QJsonObject body{{QStringLiteral("car_id"), carId}};
    m_reply = m_network.post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));
    connect(m_reply, &QNetworkReply::finished, this, &ManualDispatch::onReply);
    m_message = tr("Sending booking #%1 to car #%2…").arg(m_bookingId).arg(carId);
    m_failed = false;
    Q_EMIT stateChanged();
    return true;
}

void ManualDispatch::onReply()
{
    QNetworkReply *reply = m_reply;
    m_reply = nullptr;
    if (!reply)
        return;
    reply->deleteLater();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QJsonObject answer = QJsonDocument::fromJson(reply->readAll()).object();
    const qint64 bookingId = m_bookingId;
    if (status == 200) {
        const int carId = answer.value(QStringLiteral("car_id")).toInt();
        const int previous = answer.value(QStringLiteral("previous_car_id")).toInt();
        settle(true, tr("Booking #%1 now goes to car #%2 (was car #%3)").arg(bookingId).arg(carId).arg(previous));
        m_bookingId = 0; // done: the next click on the map selects again
        Q_EMIT stateChanged();
        Q_EMIT finished(true, status, bookingId, carId, m_message);
        return;
    }
    // The server's own words: "409 car_not_available: car 12 is not available".
    const QString reason = status == 0 ? reply->errorString()
                                       : QStringLiteral("%1 %2: %3")
                                             .arg(status)
                                             .arg(answer.value(QStringLiteral("error")).toString(),
                                                  answer.value(QStringLiteral("message")).toString());
    settle(
        false,
        tr("The server refused to give booking #%1 to car #%2 — %3").arg(bookingId).arg(m_requestedCarId).arg(reason));
    Q_EMIT finished(false, status, bookingId, 0, m_message);
}

void ManualDispatch::settle(bool ok, const QString &message)
{
    m_message = message;
    m_failed = !ok;
    Q_EMIT stateChanged();
}
