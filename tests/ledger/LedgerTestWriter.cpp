// ledger-test-writer DIR FIRST COUNT [durability [walResetBytes]]: appends bookings FIRST.. with 64
// in flight; every third one is completed with a trip right after. Prints "<id> open" or "<id>
// completed" on stdout only after that booking's last record committed; "error ..." on stderr if
// one failed. At the end: "stats <transactions> <busy retries>" and "done".
#include "ledger/Ledger.h"

#include <QCoreApplication>
#include <QDateTime>
#include <condition_variable>
#include <cstdio>
#include <mutex>

using namespace taxicore;

namespace {

constexpr int kInFlight = 64;

BookingRecord bookingFor(quint64 id, qint64 now)
{
    BookingRecord b;
    b.bookingId = id;
    b.carId = int(id % 500) + 1;
    b.riderId = QStringLiteral("rider-%1").arg(id);
    b.pickup = {57.7, 11.97};
    b.createdMs = now;
    b.atMs = now;
    return b;
}

TripRecord tripFor(quint64 id, qint64 now)
{
    TripRecord t;
    t.bookingId = id;
    t.carId = int(id % 500) + 1;
    t.riderId = QStringLiteral("rider-%1").arg(id);
    t.startedMs = now;
    t.endedMs = now + 1;
    t.fare.total = 100;
    return t;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() < 4) {
        std::fprintf(stderr, "usage: ledger-test-writer DIR FIRST COUNT [normal|full]\n");
        return 2;
    }
    LedgerOptions options;
    options.dataDir = args.at(1);
    if (args.size() > 4)
        options.durability = parseLedgerDurability(args.at(4)).value_or(LedgerDurability::Normal);
    if (args.size() > 5)
        options.walResetBytes = args.at(5).toLongLong();
    const quint64 first = args.at(2).toULongLong();
    const int count = args.at(3).toInt();

    Ledger::Opened opened = Ledger::open(options);
    if (!opened.ledger) {
        std::fprintf(stderr, "error %s\n", qPrintable(opened.error));
        return 1;
    }
    std::mutex mutex;
    std::condition_variable slotFree;
    int inFlight = 0;
    int failures = 0;
    auto settle = [&](quint64 id, const char *what, bool committed, const QString &error) {
        std::lock_guard lock(mutex);
        if (committed) {
            std::printf("%llu %s\n", static_cast<unsigned long long>(id), what);
            std::fflush(stdout);
        } else {
            ++failures;
            std::fprintf(stderr, "error %llu %s\n", static_cast<unsigned long long>(id), qPrintable(error));
        }
        --inFlight;
        slotFree.notify_one();
    };
    for (int i = 0; i < count; ++i) {
        const quint64 id = first + quint64(i);
        {
            std::unique_lock lock(mutex);
            slotFree.wait(lock, [&] { return inFlight < kInFlight; });
            ++inFlight;
        }
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        if (id % 3 == 0) {
            opened.ledger->append(bookingFor(id, now));
            opened.ledger->append(tripFor(id, now),
                                  [&, id](bool ok, const QString &e) { settle(id, "completed", ok, e); });
        } else {
            opened.ledger->append(bookingFor(id, now),
                                  [&, id](bool ok, const QString &e) { settle(id, "open", ok, e); });
        }
    }
    {
        std::unique_lock lock(mutex);
        slotFree.wait(lock, [&] { return inFlight == 0; });
    }
    const LedgerStats stats = opened.ledger->stats();
    opened.ledger.reset();
    std::printf("stats %llu %llu\n", static_cast<unsigned long long>(stats.transactions),
                static_cast<unsigned long long>(stats.busyRetries));
    std::printf("done\n");
    std::fflush(stdout);
    return failures == 0 ? 0 : 1;
}
