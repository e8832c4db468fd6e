#include "runtime/QtWarningFilter.h"

#include <QString>
#include <QtGlobal>
#include <mutex>

namespace taxicore {

namespace {

QtMessageHandler g_previous = nullptr;

bool isExpected(const QString &message)
{
    return message.startsWith(QLatin1StringView("QTcpServer::nextPendingConnection() called while not listening"))
           || (message.startsWith(QLatin1StringView("The TCP server taxicore::ConnectionGuard"))
               && message.endsWith(QLatin1StringView("is not listening.")));
}

void filter(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    if (type == QtWarningMsg && isExpected(message))
        return;
    if (g_previous)
        g_previous(type, context, message);
}

} // namespace

void installQtWarningFilter()
{
    static std::once_flag once;
    std::call_once(once, [] { g_previous = qInstallMessageHandler(filter); });
}

} // namespace taxicore
