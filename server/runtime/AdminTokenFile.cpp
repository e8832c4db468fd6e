#include "runtime/AdminTokenFile.h"

#include "wire/SecretToken.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QSaveFile>

namespace taxicore {

bool isWellFormedToken(const QString &token)
{
    static const QRegularExpression tokenChars(QStringLiteral("^[A-Za-z0-9._~+/=-]{16,128}$"));
    return tokenChars.match(token).hasMatch();
}

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
        // Latin-1: any byte that is no ASCII becomes a character the rule refuses. The file is
        // written whole (QSaveFile) or not at all, so a bad one is the operator's: never replaced.
        const QString token = QString::fromLatin1(existing.readAll().trimmed());
        if (isWellFormedToken(token))
            return token;
        const QString found = token.size() < 16 || token.size() > 128
                                  ? QStringLiteral("%1 characters").arg(token.size())
                                  : QStringLiteral("other characters (spaces, quotes or non-ASCII)");
        error = QStringLiteral("the %1 file %2 must hold %3 (and a newline), not %4; correct it, or delete it "
                               "to have a new random token made")
                    .arg(QLatin1StringView(what), path, QLatin1StringView(kTokenRule), found);
        return {};
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
