#pragma once

#include <QString>
#include <memory>

namespace taxicore {

// One server per data directory: advisory locks (flock) on the directory itself and on
// DATA_DIR/server.lock, held for the life of the returned object and released by the kernel when
// the process ends (even by kill -9), so a stale file never blocks a restart. The file holds the
// owner's pid for the message a second server prints; the directory's lock keeps a second server
// out even when the file was deleted (it looks like a stale pidfile), and the message then names
// the owner's pid from /proc/locks. Worker processes never take them: they run under the primary
// that holds them (both descriptors are close-on-exec).
class DataDirLock {
public:
    // Null with `error` naming the directory (and the owner's pid when another process holds it).
    static std::unique_ptr<DataDirLock> acquire(const QString &dataDir, QString &error);
    ~DataDirLock();
    DataDirLock(const DataDirLock &) = delete;
    DataDirLock &operator=(const DataDirLock &) = delete;

private:
    DataDirLock(int fd, int dirFd)
        : m_fd(fd)
        , m_dirFd(dirFd)
    {
    }
    int m_fd;
    int m_dirFd;
};

} // namespace taxicore
