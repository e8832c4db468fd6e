#include "runtime/QtWarningFilter.h"

#include <QString>
#include <QtGlobal>
#include <mutex>

namespace taxicore {

namespace {

QtMessageHandler g_previous = nullptr;

bool isExpected(const QString &message)
{
    // Qt 6.4's QAbstractHttpServer says this for every upgrade it was not told to take; the guard
    // answered such a handshake 400, 426 or 404 already, and a client sending them in a loop
    // would write the operator's log line by line.
    return message.startsWith(QLatin1StringView("WebSocket received but no slots connected"))
           || message.startsWith(QLatin1StringView("QTcpServer::nextPendingConnection() called while not listening"))
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
