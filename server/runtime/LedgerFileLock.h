#pragma once

#include <QString>
#include <memory>

namespace taxicore {

// One server per SQLite ledger FILE, whatever path leads to it. The data directory's lock
// (DataDirLock) does not see two directories whose ledger.sqlite is one file: through a symbolic
// link two servers acknowledged bookings of the same cars; through a hard link each name had its
// own -wal and -shm, so two servers wrote one file without excluding each other and corrupted it.
// This is an advisory lock (flock) on the file itself, held while the server runs; SQLite's own
// locks are POSIX record locks, which flock does not touch on Linux. A file with more than one name
// (hard links) is refused: even one server at a time would find another name's WAL missing.
// The descriptor stays open until the ledger is closed: closing any descriptor of a file drops
// the process's POSIX locks on it, SQLite's included. Worker processes do not take it.
class LedgerFileLock {
public:
    // Null with `error` naming the file (and the holder's pid when another process holds it).
    static std::unique_ptr<LedgerFileLock> acquire(const QString &ledgerFile, QString &error);
    ~LedgerFileLock();
    LedgerFileLock(const LedgerFileLock &) = delete;
    LedgerFileLock &operator=(const LedgerFileLock &) = delete;

private:
    explicit LedgerFileLock(int fd)
        : m_fd(fd)
    {
    }
    int m_fd;
};

} // namespace taxicore
