#include "wire/SecretToken.h"

#include <QCryptographicHash>
#include <QRandomGenerator>

namespace taxicore {

QByteArray randomHexToken(int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(raw.data()), bytes / 4);
    for (int i = bytes / 4 * 4; i < bytes; ++i)
        raw[i] = char(QRandomGenerator::system()->bounded(256));
    return raw.toHex();
}

QByteArray tokenHash(const QByteArray &token)
{
    return QCryptographicHash::hash(token, QCryptographicHash::Sha256).left(kTokenHashBytes);
}

bool sameSecret(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char difference = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        difference |= static_cast<unsigned char>(a[i] ^ b[i]);
    return difference == 0;
}

QByteArray bearerToken(const QByteArray &authorization)
{
    const QByteArray value = authorization.trimmed();
    constexpr char kScheme[] = "bearer ";
    if (value.size() <= qsizetype(sizeof kScheme - 1) || !value.left(sizeof kScheme - 1).toLower().startsWith(kScheme))
        return {};
    return value.mid(sizeof kScheme - 1).trimmed();
}

} // namespace taxicore
