#include "runtime/FlockHolder.h"

#include <QFile>

#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace taxicore {

QString flockHolderPid(int fd)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return {};
    // "1: FLOCK  ADVISORY  WRITE 4711 08:01:1234 0 EOF"; waiters read "1: -> FLOCK ...".
    const QByteArray file = QByteArray::number(major(st.st_dev), 16).rightJustified(2, '0') + ':'
                            + QByteArray::number(minor(st.st_dev), 16).rightJustified(2, '0') + ':'
                            + QByteArray::number(quint64(st.st_ino));
    QFile locks(QStringLiteral("/proc/locks"));
    if (!locks.open(QIODevice::ReadOnly | QIODevice::Text))
        return {};
    for (QByteArray line = locks.readLine(); !line.isEmpty(); line = locks.readLine()) {
        const QList<QByteArray> fields = line.simplified().split(' ');
        if (fields.size() >= 6 && fields.at(1) == "FLOCK" && fields.at(5) == file)
            return QString::fromLatin1(fields.at(4));
    }
    return {};
}

} // namespace taxicore
