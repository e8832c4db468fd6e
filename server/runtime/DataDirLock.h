#pragma once

#include <QString>
#include <memory>

namespace taxicore {

// One server per data directory: an advisory lock (flock) on DATA_DIR/server.lock, held for the
// life of the returned object and released by the kernel when the process ends (even by kill -9),
// so a stale file never blocks a restart. The file holds the owner's pid for the message a second
// server prints. Worker processes never take it: they run under the primary that holds it.
class DataDirLock {
public:
    // Null with `error` naming the directory (and the owner's pid when another process holds it).
    static std::unique_ptr<DataDirLock> acquire(const QString &dataDir, QString &error);
    ~DataDirLock();
    DataDirLock(const DataDirLock &) = delete;
    DataDirLock &operator=(const DataDirLock &) = delete;

private:
    explicit DataDirLock(int fd)
        : m_fd(fd)
    {
    }
    int m_fd;
};

} // namespace taxicore
