#include "runtime/CityLocator.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace taxicore {

namespace {
constexpr auto kBundledCityFile = "gothenburg.taxicity";
}

QString bundledCityPath()
{
    const QString name = QString::fromLatin1(kBundledCityFile);
    const QStringList candidates{
        QCoreApplication::applicationDirPath() + QStringLiteral("/../share/taxicore/cities/") + name,
        QStringLiteral(TAXICORE_SOURCE_DIR "/resources/cities/") + name,
    };
    for (const QString &path : candidates)
        if (QFileInfo::exists(path))
            return QFileInfo(path).canonicalFilePath();
    return {};
}

} // namespace taxicore
