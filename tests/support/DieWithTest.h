#pragma once
// A child a test starts (a server, PostgreSQL, Redis, nginx) must not outlive the test: a test
// killed by ctest's timeout, a crash or a kill -9 runs no destructor, and the child would keep
// its port, its CPU and (PostgreSQL) its data folder's lock until someone finds it.
// PR_SET_PDEATHSIG makes the kernel send `signal` when the test dies. Call it in the child, after
// any change of user (a credential change clears the setting), as the last step of a
// QProcess::setChildProcessModifier; `testPid` is getpid() read before the fork.
#include <csignal>
#include <sys/prctl.h>
#include <unistd.h>

namespace taxicore::test {

inline void dieWithTest(pid_t testPid, int signal)
{
    ::prctl(PR_SET_PDEATHSIG, signal);
    // The test may have died between the fork and the prctl: then no signal would ever come.
    if (::getppid() != testPid)
        ::_exit(1);
}

} // namespace taxicore::test
