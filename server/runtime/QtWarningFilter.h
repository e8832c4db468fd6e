#pragma once

namespace taxicore {

// Drops two Qt 6.4 warnings that are expected by design here and would otherwise be printed on
// every connection (docs/QT64.md §8): our guards take connections from the dispatcher or the
// worker channel, not from a socket of their own. Everything else goes to the previous handler.
void installQtWarningFilter();

} // namespace taxicore
