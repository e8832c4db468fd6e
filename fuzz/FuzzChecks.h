#pragma once
// How the fuzz targets state an invariant, and how they turn libFuzzer bytes into Qt ones.

#include <QByteArray>
#include <cstdio>
#include <cstdlib>

namespace taxicore::fuzz {

// A broken invariant is a finding: print it and abort, so libFuzzer saves the input.
#define TAXICORE_FUZZ_CHECK(condition)                                                                                 \
    do {                                                                                                               \
        if (!(condition)) {                                                                                            \
            std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #condition, __FILE__, __LINE__);               \
            std::abort();                                                                                              \
        }                                                                                                              \
    } while (false)

inline QByteArray bytesOf(const uint8_t *data, size_t size)
{
    return QByteArray(reinterpret_cast<const char *>(data), qsizetype(size));
}

} // namespace taxicore::fuzz
