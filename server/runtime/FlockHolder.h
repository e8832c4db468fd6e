#pragma once

#include <QString>

namespace taxicore {

// The pid of the process holding a flock on the file `fd` is open on, from /proc/locks ("" when
// not found or /proc is unreadable): for the message a server refused a lock prints.
QString flockHolderPid(int fd);

} // namespace taxicore
