#pragma once

#include <string>

namespace taxicore::bench {

// Sockets beyond the connections: epoll, stdio, output files, a margin for the runtime.
inline constexpr int kSpareFileDescriptors = 64;

// Raises the soft RLIMIT_NOFILE (up to the hard limit) so `connections` sockets fit.
// Returns an empty string on success, else one sentence saying what is missing.
std::string ensureFileDescriptorsFor(int connections);

} // namespace taxicore::bench
