#include "runtime/AdminTokenFile.h"

#include "wire/SecretToken.h"

#include <QDir>
#include <QFile>
#include <QSaveFile>

namespace taxicore {

namespace {

// `what` names the token in messages ("admin token", "device token").
QString loadOrCreateToken(const QString &dataDir, const QString &fileName, const char *what, QString &error)
{
    const QString path = QDir(dataDir).filePath(fileName);
    QFile existing(path);
    if (existing.exists()) {
        if (!existing.open(QIODevice::ReadOnly)) {
            error =
                QStringLiteral("cannot read the %1 %2: %3").arg(QLatin1StringView(what), path, existing.errorString());
            return {};
        }
        const QString token = QString::fromLatin1(existing.readAll().trimmed());
        if (token.size() >= 16)
            return token;
        // An empty or truncated file (a crash while writing it): make a new token.
    }
    if (!QDir().mkpath(dataDir)) {
        error = QStringLiteral("cannot create the data directory %1").arg(dataDir);
        return {};
    }
    const QByteArray token = randomHexToken(16);
    QSaveFile file(path);
    // Owner only from the first byte on: the temporary file is created with these permissions.
    if (!file.open(QIODevice::WriteOnly) || !file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner)
        || file.write(token + '\n') != token.size() + 1 || !file.commit()) {
        error = QStringLiteral("cannot write the %1 %2: %3").arg(QLatin1StringView(what), path, file.errorString());
        return {};
    }
    return QString::fromLatin1(token);
}

} // namespace

QString loadOrCreateAdminToken(const QString &dataDir, QString &error)
{
    return loadOrCreateToken(dataDir, QStringLiteral("admin-token"), "admin token", error);
}

QString loadOrCreateDeviceToken(const QString &dataDir, QString &error)
{
    return loadOrCreateToken(dataDir, QStringLiteral("device-token"), "device token", error);
}

} // namespace taxicore
