#include "redis/RedisEndpoint.h"

#include <QUrl>

namespace taxicore::redis {

QString RedisEndpoint::display() const
{
    const QString hostPart = host.contains(u':') ? u'[' + host + u']' : host;
    QString text = hostPart + u':' + QString::number(port);
    if (db != 0)
        text += u'/' + QString::number(db);
    return text;
}

namespace {

std::optional<RedisEndpoint> fail(QString *error, const QString &text)
{
    if (error)
        *error = text;
    return std::nullopt;
}

} // namespace

std::optional<RedisEndpoint> parseRedisUrl(QStringView url, QString *error)
{
    const QString text = url.trimmed().toString();
    if (text.isEmpty())
        return fail(error, QStringLiteral("empty Redis URL (expected redis://[[user]:password@]host[:port][/db])"));
    if (!text.startsWith(QLatin1String("redis://"), Qt::CaseInsensitive))
        return fail(error, QStringLiteral("Redis URL must start with redis:// (TLS rediss:// is not supported): %1")
                               .arg(text.section(u':', 0, 0)));
    const QUrl parsed(text, QUrl::StrictMode);
    if (!parsed.isValid())
        return fail(error, QStringLiteral("malformed Redis URL: %1").arg(parsed.errorString()));
    if (parsed.hasQuery() || parsed.hasFragment())
        return fail(error, QStringLiteral("Redis URL takes no ?query or #fragment"));

    RedisEndpoint endpoint;
    endpoint.host = parsed.host(QUrl::FullyDecoded);
    if (endpoint.host.isEmpty())
        return fail(error, QStringLiteral("Redis URL has no host (redis://host[:port][/db])"));
    // QStrictMode already refused a port that is no number or above 65535; -1 means none given.
    if (const int port = parsed.port(-1); port != -1) {
        if (port < 1)
            return fail(error, QStringLiteral("Redis URL port must be 1..65535, not %1").arg(port));
        endpoint.port = port;
    }
    endpoint.user = parsed.userName(QUrl::FullyDecoded);
    endpoint.password = parsed.password(QUrl::FullyDecoded);
    if (!endpoint.user.isEmpty() && endpoint.password.isEmpty())
        return fail(error, QStringLiteral("Redis URL names user %1 without a password (redis://user:password@host)")
                               .arg(endpoint.user));

    QString path = parsed.path(QUrl::FullyDecoded);
    if (path.startsWith(u'/'))
        path.remove(0, 1);
    if (!path.isEmpty()) {
        bool ok = false;
        const int db = path.toInt(&ok);
        if (!ok || db < 0 || db > kRedisMaxDb)
            return fail(
                error,
                QStringLiteral("Redis URL database must be a number 0..%1, not \"%2\"").arg(kRedisMaxDb).arg(path));
        endpoint.db = db;
    }
    return endpoint;
}

} // namespace taxicore::redis
