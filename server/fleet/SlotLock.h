#pragma once

#include <atomic>
#include <cstdint>
#include <signal.h>
#include <thread>
#include <unistd.h>

namespace taxicore {

// Spins before a lock or seqlock is presumed abandoned by a process that died inside it.
inline constexpr int kSpinsBeforeSteal = 1 << 20;

inline void cpuRelax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
}

// Cross-process spinlock holding the owner's pid, so a lock left by a crashed process is taken
// over instead of blocking every other process forever.
class SlotLock {
public:
    explicit SlotLock(std::atomic<uint32_t> &word)
        : m_word(word)
    {
        const auto self = static_cast<uint32_t>(getpid());
        for (int spins = 0;; ++spins) {
            uint32_t expected = 0;
            if (m_word.compare_exchange_weak(expected, self, std::memory_order_acquire))
                return;
            if (spins > kSpinsBeforeSteal && expected != self
                && kill(static_cast<pid_t>(expected), 0) != 0
                && m_word.compare_exchange_strong(expected, self, std::memory_order_acquire))
                return;
            if (expected == self && spins > kSpinsBeforeSteal) // a thread of ours: keep waiting
                spins = 0;
            cpuRelax();
        }
    }
    ~SlotLock() { m_word.store(0, std::memory_order_release); }
    SlotLock(const SlotLock &) = delete;
    SlotLock &operator=(const SlotLock &) = delete;

private:
    std::atomic<uint32_t> &m_word;
};

} // namespace taxicore
