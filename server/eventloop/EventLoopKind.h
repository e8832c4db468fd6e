#pragma once

#include <QString>
#include <optional>

class QAbstractEventDispatcher;

namespace taxicore {

// Which event dispatcher the server's loops run on (--event-loop): Qt's own (poll() over every
// enabled socket on each iteration) or EpollEventDispatcher (the ready sockets only).
enum class EventLoopKind { Qt, Epoll };
// The default of --event-loop (defined in the .cpp, so changing it rebuilds one file).
EventLoopKind defaultEventLoop();

std::optional<EventLoopKind> parseEventLoop(const QString &name);
QString eventLoopName(EventLoopKind kind);
// A new dispatcher of that kind, or nullptr for Qt's (the thread then creates its own).
QAbstractEventDispatcher *createEventDispatcher(EventLoopKind kind);
// --event-loop read straight from argv, for the main thread, whose dispatcher must be chosen
// before the application object (and its parser) exists. An unknown value gives the default:
// the parser rejects it later with a message.
EventLoopKind eventLoopFromArguments(int argc, char **argv);

} // namespace taxicore
