#include "region/SharedRegion.h"

#include "region/RegionLayout.h"

#include <cerrno>
#include <cstring>
#include <new>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace taxicore {

namespace {

QString systemError(const char *what)
{
    return QStringLiteral("%1: %2").arg(QLatin1StringView(what), QString::fromLocal8Bit(std::strerror(errno)));
}

} // namespace

SharedRegion::SharedRegion(int fd, char *base, std::size_t size)
    : m_fd(fd)
    , m_base(base)
    , m_size(size)
{
}

SharedRegion::~SharedRegion()
{
    munmap(m_base, m_size);
    close(m_fd);
}

std::unique_ptr<SharedRegion> SharedRegion::create(QString &error)
{
    const std::size_t size = RegionOffsets::total;
    // Close-on-exec: only worker processes may map the region, and the supervisor gives each of
    // them its own copy as descriptor 3 (dup2 clears the flag there); any other child
    // (taxicore-bench started by the console) must not inherit a writable handle on it.
    const int fd = memfd_create("taxicore-region", MFD_CLOEXEC);
    if (fd < 0) {
        error = systemError("memfd_create");
        return nullptr;
    }
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        error = systemError("ftruncate of the shared region");
        close(fd);
        return nullptr;
    }
    void *base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        error = systemError("mmap of the shared region");
        close(fd);
        return nullptr;
    }
    // A fresh memfd is zero-filled: every atomic starts at 0, which each slot treats as empty.
    auto *header = new (base) RegionHeader{};
    header->magic = kRegionMagic;
    header->version = kRegionVersion;
    header->totalBytes = size;
    header->controlOffset = RegionOffsets::control;
    header->carsOffset = RegionOffsets::cars;
    header->bookingsOffset = RegionOffsets::bookings;
    header->workersOffset = RegionOffsets::workers;
    return std::unique_ptr<SharedRegion>(new SharedRegion(fd, static_cast<char *>(base), size));
}

std::unique_ptr<SharedRegion> SharedRegion::attach(int fd, QString &error)
{
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        error = systemError("fstat of the shared region");
        return nullptr;
    }
    const std::size_t size = static_cast<std::size_t>(st.st_size);
    if (size != RegionOffsets::total) {
        error = QStringLiteral("shared region has %1 bytes, expected %2").arg(size).arg(RegionOffsets::total);
        return nullptr;
    }
    void *base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        error = systemError("mmap of the shared region");
        return nullptr;
    }
    const auto *header = static_cast<const RegionHeader *>(base);
    if (header->magic != kRegionMagic || header->version != kRegionVersion) {
        munmap(base, size);
        error = QStringLiteral("shared region has an unknown layout (magic/version mismatch)");
        return nullptr;
    }
    return std::unique_ptr<SharedRegion>(new SharedRegion(fd, static_cast<char *>(base), size));
}

} // namespace taxicore
