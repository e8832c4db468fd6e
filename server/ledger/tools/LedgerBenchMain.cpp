// taxicore-ledger-bench: durable bookings/s into the ledger from 1, 2 and 4 writer processes at
// each durability, with commit latency (append → committed callback) p50/p99. Not a test.
//
//   taxicore-ledger-bench [--writers 1,2,4] [--durability normal,full] [--seconds 3]
//                         [--in-flight 64] [--dir DIR] [--url postgresql://...]
//
// Each writer process (this program re-executed with --child) keeps --in-flight bookings
// waiting for their commit, like that many HTTP clients waiting for their 201. With --url the
// writers append to that ledger (PostgreSQL: durable commits whatever --durability says); each
// booking claims a car of its own (the compare-and-swap is part of the cost), and the cars are
// released afterwards (untimed) so the next run can claim them again.
#include "ledger/Ledger.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>

using namespace taxicore;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kChildGraceS = 60; // a child may take this long beyond its run before it is killed

struct ChildResult {
    qint64 bookings = 0;
    double elapsedS = 0;
    quint64 transactions = 0;
    std::vector<qint64> latenciesUs;
};

BookingRecord benchBooking(quint64 id, bool carOfItsOwn)
{
    BookingRecord b;
    b.bookingId = id;
    b.carId = carOfItsOwn ? int(id) : int(id % 500) + 1;
    b.riderId = QStringLiteral("bench-%1").arg(id);
    b.pickup = {57.70, 11.97};
    b.dropoff = LedgerPoint{57.71, 11.95};
    b.createdMs = b.atMs = QDateTime::currentMSecsSinceEpoch();
    return b;
}

// --child: appends for `seconds`, keeping `inFlight` uncommitted; prints one JSON line.
int runChild(const LedgerOptions &options, quint64 firstId, double seconds, int inFlight)
{
    auto opened = Ledger::open(options);
    if (!opened.ledger) {
        std::fprintf(stderr, "%s\n", qPrintable(opened.error));
        return 1;
    }
    std::mutex mutex;
    std::condition_variable slotFree;
    int pending = 0;
    int failures = 0;
    std::vector<qint64> latencies;
    latencies.reserve(1 << 16);
    std::vector<quint64> booked; // released after the run, when the ledger claims cars
    const bool claimsCars = !options.url.isEmpty() && options.url != QLatin1String("sqlite:");
    const auto start = Clock::now();
    const auto until = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    quint64 id = firstId;
    while (Clock::now() < until) {
        {
            std::unique_lock lock(mutex);
            slotFree.wait(lock, [&] { return pending < inFlight; });
            ++pending;
        }
        const auto appended = Clock::now();
        const quint64 bookingId = id++;
        opened.ledger->append(
            benchBooking(bookingId, claimsCars), [&, appended, bookingId](bool committed, const QString &why) {
                const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - appended);
                std::lock_guard lock(mutex);
                if (committed) {
                    latencies.push_back(us.count());
                    booked.push_back(bookingId);
                } else if (++failures == 1) {
                    std::fprintf(stderr, "%s\n", qPrintable(why));
                }
                --pending;
                slotFree.notify_one();
            });
    }
    {
        std::unique_lock lock(mutex); // the last commits
        slotFree.wait(lock, [&] { return pending == 0; });
    }
    const LedgerStats stats = opened.ledger->stats();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (claimsCars) {
        for (quint64 bookingId : booked)
            opened.ledger->append(TransitionRecord{bookingId, QStringLiteral("cancelled"), int(bookingId),
                                                   QDateTime::currentMSecsSinceEpoch(), std::nullopt});
        opened.ledger->waitUntilIdle(kChildGraceS * 1000);
    }
    opened.ledger.reset();
    QJsonArray lat;
    for (qint64 us : latencies)
        lat.append(us);
    const QJsonObject out{{QStringLiteral("bookings"), qint64(latencies.size())},
                          {QStringLiteral("failures"), failures},
                          {QStringLiteral("elapsed"), elapsed},
                          {QStringLiteral("transactions"), qint64(stats.transactions)},
                          {QStringLiteral("latencies"), lat}};
    std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    return failures == 0 ? 0 : 1;
}

double percentileMs(std::vector<qint64> &us, double p)
{
    if (us.empty())
        return 0;
    const std::size_t k = std::min(us.size() - 1, std::size_t(p * double(us.size())));
    std::nth_element(us.begin(), us.begin() + std::ptrdiff_t(k), us.end());
    return double(us[k]) / 1000.0;
}

// One configuration: `writers` child processes on a fresh ledger in `parent`.
bool runConfiguration(const QString &parent, const QString &url, const QString &durability, int writers, double seconds,
                      int inFlight)
{
    QTemporaryDir dir(parent + QStringLiteral("/ledger-bench-XXXXXX"));
    if (!dir.isValid()) {
        std::fprintf(stderr, "cannot create a directory under %s\n", qPrintable(parent));
        return false;
    }
    { // create and migrate first, so the children measure appends only
        LedgerOptions options;
        options.dataDir = dir.path();
        options.url = url;
        if (auto opened = Ledger::open(options); !opened.ledger) {
            std::fprintf(stderr, "%s\n", qPrintable(opened.error));
            return false;
        }
    }
    std::vector<std::unique_ptr<QProcess>> children;
    for (int w = 0; w < writers; ++w) {
        auto child = std::make_unique<QProcess>();
        child->start(QCoreApplication::applicationFilePath(),
                     {QStringLiteral("--child"), QStringLiteral("--dir"), dir.path(), QStringLiteral("--durability"),
                      durability, QStringLiteral("--seconds"), QString::number(seconds), QStringLiteral("--in-flight"),
                      QString::number(inFlight), QStringLiteral("--first"),
                      QString::number(quint64(w + 1) * 100'000'000), QStringLiteral("--url"), url});
        children.push_back(std::move(child));
    }
    qint64 bookings = 0;
    qint64 transactions = 0;
    double elapsed = 0;
    std::vector<qint64> latencies;
    for (auto &child : children) {
        if (!child->waitForFinished(int((seconds + kChildGraceS) * 1000))) {
            child->kill();
            child->waitForFinished(5000);
            std::fprintf(stderr, "a writer process did not finish\n");
            return false;
        }
        const QJsonObject r = QJsonDocument::fromJson(child->readAllStandardOutput()).object();
        if (child->exitCode() != 0 || r.isEmpty()) {
            std::fprintf(stderr, "writer failed: %s\n", child->readAllStandardError().constData());
            return false;
        }
        bookings += r.value(QStringLiteral("bookings")).toInteger();
        transactions += r.value(QStringLiteral("transactions")).toInteger();
        elapsed = std::max(elapsed, r.value(QStringLiteral("elapsed")).toDouble());
        for (const QJsonValue &v : r.value(QStringLiteral("latencies")).toArray())
            latencies.push_back(v.toInteger());
    }
    std::printf("%-10s %7d %9d %12.0f %9.2f %9.2f %9.1f\n", qPrintable(durability), writers, inFlight,
                double(bookings) / elapsed, percentileMs(latencies, 0.50), percentileMs(latencies, 0.99),
                double(bookings) / double(std::max<qint64>(1, transactions)));
    std::fflush(stdout);
    return true;
}

QList<int> parseInts(const QString &text)
{
    QList<int> values;
    for (const QString &part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
        values.append(part.toInt());
    return values;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Durable bookings/s into the TaxiCore ledger."));
    parser.addHelpOption();
    const QCommandLineOption writersOpt(QStringLiteral("writers"), QStringLiteral("Writer processes, a list."),
                                        QStringLiteral("n,..."), QStringLiteral("1,2,4"));
    const QCommandLineOption durabilityOpt(QStringLiteral("durability"), QStringLiteral("normal and/or full."),
                                           QStringLiteral("d,..."), QStringLiteral("normal,full"));
    const QCommandLineOption secondsOpt(QStringLiteral("seconds"), QStringLiteral("Run length per configuration."),
                                        QStringLiteral("s"), QStringLiteral("3"));
    const QCommandLineOption inFlightOpt(QStringLiteral("in-flight"),
                                         QStringLiteral("Uncommitted bookings per writer (waiting clients)."),
                                         QStringLiteral("n"), QStringLiteral("64"));
    const QCommandLineOption dirOpt(QStringLiteral("dir"), QStringLiteral("Where the ledgers go (default: temp)."),
                                    QStringLiteral("dir"), QDir::tempPath());
    const QCommandLineOption childOpt(QStringLiteral("child"), QStringLiteral("Internal: be one writer."));
    const QCommandLineOption firstOpt(QStringLiteral("first"), QStringLiteral("Internal: first booking id."),
                                      QStringLiteral("id"), QStringLiteral("1"));
    const QCommandLineOption urlOpt(QStringLiteral("url"),
                                    QStringLiteral("The ledger (Ledger::open): empty is SQLite in --dir; "
                                                   "postgresql://... a PostgreSQL."),
                                    QStringLiteral("url"));
    parser.addOptions({writersOpt, durabilityOpt, secondsOpt, inFlightOpt, dirOpt, childOpt, firstOpt, urlOpt});
    parser.process(app);

    const double seconds = parser.value(secondsOpt).toDouble();
    const int inFlight = std::max(1, parser.value(inFlightOpt).toInt());
    if (parser.isSet(childOpt)) {
        LedgerOptions options;
        options.dataDir = parser.value(dirOpt);
        options.durability = parseLedgerDurability(parser.value(durabilityOpt)).value_or(LedgerDurability::Normal);
        options.url = parser.value(urlOpt);
        return runChild(options, parser.value(firstOpt).toULongLong(), seconds, inFlight);
    }
    std::printf("%-10s %7s %9s %12s %9s %9s %9s\n", "durability", "writers", "in-flight", "bookings/s", "p50 ms",
                "p99 ms", "per tx");
    for (const QString &durability : parser.value(durabilityOpt).split(QLatin1Char(','))) {
        if (!parseLedgerDurability(durability)) {
            std::fprintf(stderr, "unknown durability '%s' (normal or full)\n", qPrintable(durability));
            return 2;
        }
        for (int writers : parseInts(parser.value(writersOpt))) {
            if (!runConfiguration(parser.value(dirOpt), parser.value(urlOpt), durability, writers, seconds, inFlight))
                return 1;
        }
    }
    return 0;
}
