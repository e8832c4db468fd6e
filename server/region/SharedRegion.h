#pragma once

#include <QString>
#include <cstddef>
#include <memory>

namespace taxicore {

// A memfd-backed memory region laid out by RegionLayout.h. The primary creates it; worker
// processes attach to the same memory through an inherited file descriptor.
class SharedRegion {
public:
    // Creates and zero-fills a new region; on failure returns nullptr with a message.
    static std::unique_ptr<SharedRegion> create(QString &error);
    // Maps an existing region from an inherited descriptor; checks magic and version.
    static std::unique_ptr<SharedRegion> attach(int fd, QString &error);
    ~SharedRegion();

    SharedRegion(const SharedRegion &) = delete;
    SharedRegion &operator=(const SharedRegion &) = delete;

    char *base() const { return m_base; }
    std::size_t size() const { return m_size; }
    int fd() const { return m_fd; }

private:
    SharedRegion(int fd, char *base, std::size_t size);

    int m_fd;
    char *m_base;
    std::size_t m_size;
};

} // namespace taxicore
