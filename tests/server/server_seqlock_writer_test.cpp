// The position seqlock's writer (issue 15 item 9): a writer that finds another writer inside an
// update waits for it by real time. A live writer that is merely slow (preempted on a loaded
// machine) is never taken over, however long the wait spins; only a writer silent for
// kSeqlockWriterGiveUp (a process that died mid-update) is, and then within a bounded time.

#include "fleet/SharedMemoryFleet.h"
#include "region/RegionLayout.h"
#include "region/SharedRegion.h"
#include "region/SlotLock.h"

#include <QElapsedTimer>
#include <QTest>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

using namespace taxicore;

namespace {
constexpr LatLng kStart{57.7000, 11.9700};
constexpr LatLng kMoved{57.7010, 11.9710};
// Far longer than any spin count takes to run out, shorter than kSeqlockWriterGiveUp.
constexpr auto kSlowWriterHold = std::chrono::milliseconds(600);
static_assert(kSlowWriterHold < kSeqlockWriterGiveUp);
} // namespace

class SeqlockWriterTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init()
    {
        QString error;
        m_region = SharedRegion::create(error);
        QVERIFY2(m_region, qPrintable(error));
        m_fleet = std::make_unique<SharedMemoryFleet>(*m_region);
        m_fleet->initialiseCars(1, [](int) { return kStart; });
    }
    void cleanup()
    {
        m_fleet.reset();
        m_region.reset();
    }

    void slowButLiveWriterIsNotTakenOver()
    {
        std::atomic<uint32_t> &seq = carSeq();
        std::atomic<bool> inside{false};
        std::atomic<bool> finished{false};
        // Another writer (a thread here; a worker process in the server) inside an update, slowly.
        std::thread slow([&] {
            const uint32_t odd = seq.fetch_add(1) + 1; // what a writer does on an even seq
            inside = true;
            std::this_thread::sleep_for(kSlowWriterHold);
            finished = true;
            seq.store(odd + 1, std::memory_order_release);
        });
        while (!inside)
            std::this_thread::yield();
        const uint32_t before = seq.load();
        QVERIFY(before % 2 == 1);
        m_fleet->updatePosition(1, kMoved, 90, 30, true);
        const bool waitedForIt = finished.load();
        slow.join();
        QVERIFY2(waitedForIt, "the writer took over an update another live writer was still making");
        // Two whole updates, one after the other: the slow one's and ours.
        QCOMPARE(seq.load(), before + 3);
        const auto car = m_fleet->car(1);
        QVERIFY(car);
        QCOMPARE(car->position.lat, kMoved.lat);
        QCOMPARE(car->speedKmh, 30.0f);
    }

    void writerThatDiedInsideIsTakenOverInBoundedTime()
    {
        std::atomic<uint32_t> &seq = carSeq();
        const uint32_t odd = seq.fetch_add(1) + 1; // an update begun and never finished: its process died
        QElapsedTimer timer;
        timer.start();
        m_fleet->updatePosition(1, kMoved, 90, 30, true);
        const qint64 waited = timer.elapsed();
        const auto giveUp = std::chrono::duration_cast<std::chrono::milliseconds>(kSeqlockWriterGiveUp).count();
        QVERIFY2(waited >= giveUp - 50, QByteArray::number(waited).constData());
        QVERIFY2(waited < giveUp + 2000, QByteArray::number(waited).constData());
        QCOMPARE(seq.load() % 2, 0u); // readers see a finished update again
        QVERIFY(seq.load() > odd);
        QCOMPARE(m_fleet->car(1)->position.lng, kMoved.lng);
    }

private:
    std::atomic<uint32_t> &carSeq()
    {
        return reinterpret_cast<CarSlot *>(m_region->base() + RegionOffsets::cars)[0].seq;
    }

    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<FleetStore> m_fleet;
};

QTEST_GUILESS_MAIN(SeqlockWriterTest)
#include "server_seqlock_writer_test.moc"
