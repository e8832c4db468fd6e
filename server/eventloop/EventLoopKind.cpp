#include "eventloop/EventLoopKind.h"

#include "eventloop/EpollEventDispatcher.h"

#include <cstring>

namespace taxicore {

namespace {
constexpr EventLoopKind kDefaultEventLoop = EventLoopKind::Epoll;
}

EventLoopKind defaultEventLoop()
{
    return kDefaultEventLoop;
}

std::optional<EventLoopKind> parseEventLoop(const QString &name)
{
    if (name == QStringLiteral("qt"))
        return EventLoopKind::Qt;
    if (name == QStringLiteral("epoll"))
        return EventLoopKind::Epoll;
    return std::nullopt;
}

QString eventLoopName(EventLoopKind kind)
{
    return kind == EventLoopKind::Epoll ? QStringLiteral("epoll") : QStringLiteral("qt");
}

QAbstractEventDispatcher *createEventDispatcher(EventLoopKind kind)
{
    return kind == EventLoopKind::Epoll ? new EpollEventDispatcher : nullptr;
}

EventLoopKind eventLoopFromArguments(int argc, char **argv)
{
    static constexpr char kFlag[] = "--event-loop";
    static constexpr char kFlagEquals[] = "--event-loop=";
    EventLoopKind kind = defaultEventLoop();
    for (int i = 1; i < argc; ++i) {
        const char *value = nullptr;
        if (std::strcmp(argv[i], kFlag) == 0 && i + 1 < argc)
            value = argv[++i];
        else if (std::strncmp(argv[i], kFlagEquals, sizeof kFlagEquals - 1) == 0)
            value = argv[i] + sizeof kFlagEquals - 1;
        if (value) // the last one wins, as with QCommandLineParser::value
            kind = parseEventLoop(QString::fromLocal8Bit(value)).value_or(kind);
    }
    return kind;
}

} // namespace taxicore
