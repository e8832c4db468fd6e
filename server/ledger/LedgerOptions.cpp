#include "ledger/LedgerOptions.h"

#include <QDir>

namespace taxicore {

std::optional<LedgerDurability> parseLedgerDurability(QStringView text)
{
    if (text == u"normal")
        return LedgerDurability::Normal;
    if (text == u"full")
        return LedgerDurability::Full;
    return std::nullopt;
}

QString ledgerDurabilityName(LedgerDurability durability)
{
    return durability == LedgerDurability::Full ? QStringLiteral("full") : QStringLiteral("normal");
}

bool isSqliteLedgerUrl(const QString &url)
{
    return url.isEmpty() || url == QLatin1String("sqlite:");
}

QString ledgerFilePath(const QString &dataDir)
{
    return QDir(dataDir).filePath(QLatin1StringView(kLedgerFileName));
}

} // namespace taxicore
