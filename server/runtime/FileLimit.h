#pragma once

#include <QString>

namespace taxicore {

// The process's open-file limit (RLIMIT_NOFILE). Every connection is a descriptor, so a server
// meant to hold thousands of them needs more than the usual soft limit of 1024.
struct FileLimit {
    long long soft = 0;
    long long hard = 0;
    bool raised = false; // the soft limit was below the hard one and now equals it
    QString error;       // getrlimit/setrlimit failed: the limit stays as it was
};

// Raises the soft limit to the hard limit (children, such as worker processes, inherit it).
FileLimit raiseFileLimit();

// Descriptors a process needs for `maxConnections` connections plus its own files (listeners,
// ledger, channels, pipes).
long long descriptorsNeeded(int maxConnections);

// Raises the limit and writes one line about it to stderr under `program`'s name; a second line
// warns when it is too low for `maxConnections` (connections over it are refused by the kernel
// with EMFILE, not answered with 503). Never fails: a low limit is a warning.
FileLimit raiseFileLimitAndReport(const char *program, int maxConnections);

} // namespace taxicore
