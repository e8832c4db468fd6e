#include "city/Checksum.h"

#include <cstring>

namespace taxicore::city {

namespace {
constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;
} // namespace

uint64_t cityChecksum(const unsigned char *data, size_t size, size_t skipOffset)
{
    uint64_t hash = kFnvOffsetBasis;
    for (size_t offset = 0; offset < size; offset += 8) {
        uint64_t word = 0;
        const size_t take = size - offset < 8 ? size - offset : 8;
        if (offset != skipOffset)
            std::memcpy(&word, data + offset, take);
        hash = (hash ^ word) * kFnvPrime;
    }
    return hash;
}

} // namespace taxicore::city
