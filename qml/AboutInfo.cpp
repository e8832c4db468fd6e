#include "AboutInfo.h"

#include <QtGlobal>

QString AboutInfo::version()
{
    return QStringLiteral(TAXICORE_VERSION);
}

QString AboutInfo::qtVersion()
{
    return QString::fromLatin1(qVersion());
}

QString AboutInfo::qtBuildVersion()
{
    return QStringLiteral(QT_VERSION_STR);
}
