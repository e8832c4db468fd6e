#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <signal.h>
#include <thread>
#include <unistd.h>

namespace taxicore {

// Spins before a lock whose owner's pid is gone is presumed abandoned by a process that died in it.
inline constexpr int kSpinsBeforeSteal = 1 << 20;
// Real time a seqlock writer waits for another writer's update before presuming that writer died
// inside it. Real time, not spins: a live writer preempted mid-update on a loaded machine can
// stay there for many milliseconds (the readers wait by real time too, FleetStore::readCar).
inline constexpr std::chrono::milliseconds kSeqlockWriterGiveUp{1000};
// Spins before the clock is read at all (the common wait is a few dozen nanoseconds).
inline constexpr int kSeqlockSpinsBeforeClock = 1000;

inline void cpuRelax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
}

// Enters a seqlock update: makes `seq` odd and returns that odd value (the update ends by storing
// it + 1, release). Waits while another writer is inside; after kSeqlockWriterGiveUp of real time
// without that writer finishing, takes the update over (its process died mid-update).
inline uint32_t beginSeqlockWrite(std::atomic<uint32_t> &seq)
{
    uint32_t current = seq.load(std::memory_order_relaxed);
    uint32_t waitingFor = 0; // the odd value of the update we wait on (never 0)
    std::chrono::steady_clock::time_point giveUpAt{};
    for (int spins = 0;; ++spins) {
        if ((current & 1) == 0) {
            if (seq.compare_exchange_weak(current, current + 1, std::memory_order_acq_rel))
                return current + 1;
            continue; // `current` holds what the compare saw
        }
        if (spins < kSeqlockSpinsBeforeClock) {
            cpuRelax();
        } else {
            const auto now = std::chrono::steady_clock::now();
            if (current != waitingFor) { // another update than before: it gets the whole wait
                waitingFor = current;
                giveUpAt = now + kSeqlockWriterGiveUp;
            } else if (now >= giveUpAt
                       && seq.compare_exchange_strong(current, current + 2, std::memory_order_acq_rel)) {
                return current + 2; // odd: the abandoned update is ours now
            }
            std::this_thread::yield();
        }
        current = seq.load(std::memory_order_relaxed);
    }
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
            if (spins > kSpinsBeforeSteal && expected != self && kill(static_cast<pid_t>(expected), 0) != 0
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
