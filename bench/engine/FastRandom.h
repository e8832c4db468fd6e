#pragma once

#include <cstdint>

namespace taxicore::bench {

// splitmix64: a tiny, fast generator with 8 bytes of state, one per connection, so picking the
// next request costs a few instructions and no locks. Not for anything but load shaping.
class FastRandom {
public:
    explicit FastRandom(uint64_t seed)
        : m_state(seed)
    {
    }

    uint64_t next()
    {
        uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    double between(double low, double high) { return low + (high - low) * uniform(); }
    // Uniform integer in [low, high].
    int64_t integer(int64_t low, int64_t high)
    {
        return low + static_cast<int64_t>(next() % static_cast<uint64_t>(high - low + 1));
    }

private:
    uint64_t m_state;
};

} // namespace taxicore::bench
