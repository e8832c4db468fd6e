// taxicore-feed-probe: the cluster figures wrk cannot measure (scripts/bench-cluster.sh,
// docs/benchmarks.md §9). The bookings and reports use QNetworkAccessManager on the main thread;
// the WebSocket followers are plain sockets on their own epoll threads (FollowerLoop), as Qt's
// event loop poll()s every socket on each wake-up and spent the probe's CPU doing so.
//
//   fanout --node URL... [--bookings N] [--followers-per-booking F] [--moving-cars M]
//          [--rounds R] [--gap-ms G] [--hold-s S] [--pid PID...] [--no-follow] --device-token T
//     Books N cars through the nodes in turn, opens F WebSocket followers per booking on the
//     *other* nodes (subscribed with the booking's id and rider_token; --no-follow: the same point
//     without them),
//     parks every booked car with a device report through every node (so no simulator moves it),
//     holds S seconds idle measuring the CPU of the --pid processes, then R rounds: every G ms,
//     M of the cars get a new position reported through the node they were booked on.
//     Fan-out latency, per (report, follower on another node): from the moment the report's 200
//     was read here to the moment that follower's feed delivered that position or a later one.
//     Prints `IDLE ...` and `FANOUT ...` lines; cancels its bookings at the end.
//
//   stall --url URL --connections C --seconds D [--kill-pid PID --kill-at-s K] [--ids-file F]
//     C riders each book through URL (nginx) and cancel, in a loop, for D seconds; at K s it sends
//     SIGKILL to PID (a node). Prints the longest time with no successful answer (201 booking or
//     200 cancel) across all riders, the answers by status, and writes the id of every 201 to F
//     (one a line) for the caller to look up in PostgreSQL.

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRandomGenerator>
#include <QTimer>

#include "FeedMessageKind.h"
#include "FollowerLoop.h"

#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <unistd.h>
#include <vector>

using namespace taxicore::feedprobe;

namespace {

// Threads that read the followers' sockets (each its own epoll loop); the reports and the
// bookings stay on the main thread's Qt event loop. Two so one busy thread does not hold the
// whole tail back on a 2-core machine.
constexpr int kFollowerThreads = 2;
// How long set-up steps (bookings, connects, first state) may take before the probe gives up.
constexpr int kSetupTimeoutMs = 60'000;
// After the last report, how long followers may still deliver before the rest count as lost.
constexpr int kDrainMs = 3000;
// stall: gaps beginning this long after the kill are still charged to it.
constexpr double kKillWindowMs = 2000;
// Device positions: a line starting ~650 m south of the car's pickup, kStepDeg per report, so
// the car never comes within the 40 m arrival radius.
constexpr double kStartOffsetDeg = -0.006;
constexpr double kStepDeg = 0.00001;

double nowMs()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// How often waitFor looks at its condition when no event woke it (the report rounds' clock).
constexpr int kWaitTickMs = 1;

// Runs the event loop until done() or timeoutMs. It sleeps between events: processEvents(flags,
// ms) drops WaitForMoreEvents and so spun a whole core; a kWaitTickMs timer wakes it instead.
bool waitFor(const std::function<bool()> &done, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    tick.start(kWaitTickMs);
    while (!done()) {
        if (timer.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    }
    return true;
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return NAN;
    std::sort(v.begin(), v.end());
    const std::size_t i = std::min(v.size() - 1, std::size_t(std::max(1.0, std::ceil(p / 100 * double(v.size())))) - 1);
    return v[i];
}

// utime + stime of a process, in clock ticks (/proc/PID/stat fields 14 and 15); -1 when gone.
long long cpuTicks(qint64 pid)
{
    QFile file(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray stat = file.readAll();
    const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    return fields.size() > 12 ? fields[11].toLongLong() + fields[12].toLongLong() : -1;
}

QNetworkRequest jsonRequest(const QUrl &base, const QString &path, const QByteArray &bearer = {})
{
    QUrl url = base;
    url.setPath(path);
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    if (!bearer.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + bearer);
    return request;
}

int statusOf(QNetworkReply *reply)
{
    return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

struct Booking {
    qint64 id = 0;
    int carId = 0;
    int node = 0;
    QByteArray riderToken;
    double pickupLat = 0, pickupLng = 0;
    std::vector<double> ackedMs; // per report index
};

struct Follower {
    int booking = 0;
    std::atomic<bool> assignedSeen{false}; // read by the main thread while its loop thread runs
    // Written only by the follower's loop thread; read by the main thread once that has stopped.
    QString lastState;              // the booking's state in the newest message (for a failure's report)
    long seenUpTo = -1;             // the highest report index delivered so far
    int byFollow = 0, byUpdate = 0; // which kind of message delivered a new position first
    std::vector<double> seenMs;     // per report index: when it (or a later one) was delivered
};

// One text message at a follower, on its loop thread; `at`: when its bytes were read.
void onFeedText(Follower &f, const Booking &booking, bool follow, const QByteArray &text, double at)
{
    // The 500 ms updates are large (nearby cars, the booking's whole view) and 4 in 5 messages:
    // once the booking was seen they are told from their first bytes and not parsed, so the
    // probe's own CPU stays out of the figures; the latency is the follow messages'.
    const FeedMessageKind kind = feedMessageKind(text);
    if (kind == FeedMessageKind::Update && f.assignedSeen.load(std::memory_order_relaxed))
        return;
    const QJsonObject message = QJsonDocument::fromJson(text).object();
    const QString type = message.value(QStringLiteral("type")).toString();
    if (type == QLatin1String("update") && !follow) {
        f.assignedSeen = true;
        return;
    }
    const QJsonObject bookingView = message.value(QStringLiteral("booking")).toObject();
    if (bookingView.contains(QStringLiteral("state")))
        f.lastState = bookingView.value(QStringLiteral("state")).toString();
    // Open here: the node's copy knows the booking (a car booked within 40 m of its pickup is
    // arriving at once).
    if (f.lastState == QLatin1String("assigned") || f.lastState == QLatin1String("arriving"))
        f.assignedSeen = true;
    const bool isFollow = type == QLatin1String("follow");
    const QJsonObject car = isFollow ? message.value(QStringLiteral("car")).toObject()
                                     : bookingView.value(QStringLiteral("car")).toObject();
    if (car.value(QStringLiteral("id")).toInt() != booking.carId)
        return;
    const double lat = car.value(QStringLiteral("lat")).toDouble();
    const long index = std::lround((lat - booking.pickupLat - kStartOffsetDeg) / kStepDeg);
    if (index <= f.seenUpTo || index >= long(f.seenMs.size()))
        return;
    for (long i = f.seenUpTo + 1; i <= index; ++i)
        f.seenMs[std::size_t(i)] = at;
    f.seenUpTo = index;
    ++(isFollow ? f.byFollow : f.byUpdate);
}

QByteArray subscribeJson(const Booking &booking, bool follow)
{
    QJsonObject subscribe{{QStringLiteral("lat"), booking.pickupLat},
                          {QStringLiteral("lng"), booking.pickupLng},
                          {QStringLiteral("radius_m"), 100},
                          {QStringLiteral("limit"), 1}};
    if (follow) {
        // A booking is followed only by its rider: the token its booking answer gave.
        subscribe.insert(QStringLiteral("booking_id"), booking.id);
        subscribe.insert(QStringLiteral("rider_token"), QString::fromLatin1(booking.riderToken));
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("subscribe"), subscribe}}).toJson(QJsonDocument::Compact);
}

QByteArray hostHeader(const QUrl &node)
{
    return node.host().toLatin1() + ':' + QByteArray::number(node.port(80));
}

// The node's IPv4 address and port, for the followers' plain sockets.
bool resolve(const QUrl &node, sockaddr_in &address)
{
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (getaddrinfo(node.host().toLatin1().constData(), nullptr, &hints, &found) != 0 || !found)
        return false;
    address = *reinterpret_cast<const sockaddr_in *>(found->ai_addr);
    address.sin_port = htons(quint16(node.port(80)));
    freeaddrinfo(found);
    return true;
}

int fanout(const QCommandLineParser &args)
{
    QList<QUrl> nodes;
    for (const QString &n : args.values(QStringLiteral("node")))
        nodes << QUrl(n);
    const QByteArray deviceToken = args.value(QStringLiteral("device-token")).toLatin1();
    const int wanted = args.value(QStringLiteral("bookings")).toInt();
    const int perBooking = args.value(QStringLiteral("followers-per-booking")).toInt();
    const int moving = args.value(QStringLiteral("moving-cars")).toInt();
    const int rounds = args.value(QStringLiteral("rounds")).toInt();
    const int gapMs = args.value(QStringLiteral("gap-ms")).toInt();
    const int holdS = args.value(QStringLiteral("hold-s")).toInt();
    const bool follow = !args.isSet(QStringLiteral("no-follow"));
    if (nodes.isEmpty() || wanted < 1 || perBooking < 1 || deviceToken.isEmpty()) {
        std::fprintf(stderr, "fanout needs --node URL (repeatable), --bookings N >= 1 and --device-token\n");
        return 2;
    }
    std::vector<std::unique_ptr<QNetworkAccessManager>> http;
    for (int i = 0; i < nodes.size(); ++i)
        http.push_back(std::make_unique<QNetworkAccessManager>());

    // 1. Bookings, spread over the nodes, in the inner city.
    std::vector<Booking> bookings;
    int answered = 0, refused = 0;
    QRandomGenerator random(17);
    for (int i = 0; i < wanted; ++i) {
        Booking b;
        b.node = i % int(nodes.size());
        b.pickupLat = std::round((57.690 + random.generateDouble() * 0.025) * 1e6) / 1e6;
        b.pickupLng = std::round((11.940 + random.generateDouble() * 0.050) * 1e6) / 1e6;
        const QByteArray body =
            QJsonDocument(QJsonObject{{QStringLiteral("rider_id"), QStringLiteral("probe-%1").arg(i)},
                                      {QStringLiteral("pickup"), QJsonObject{{QStringLiteral("lat"), b.pickupLat},
                                                                             {QStringLiteral("lng"), b.pickupLng}}}})
                .toJson(QJsonDocument::Compact);
        QNetworkReply *reply =
            http[std::size_t(b.node)]->post(jsonRequest(nodes[b.node], QStringLiteral("/api/v1/bookings")), body);
        QObject::connect(reply, &QNetworkReply::finished, [reply, b, &bookings, &answered, &refused]() mutable {
            ++answered;
            const QJsonObject json = QJsonDocument::fromJson(reply->readAll()).object();
            if (statusOf(reply) == 201) {
                b.id = json.value(QStringLiteral("booking_id")).toInteger();
                b.carId = json.value(QStringLiteral("car")).toObject().value(QStringLiteral("id")).toInt();
                b.riderToken = json.value(QStringLiteral("rider_token")).toString().toLatin1();
                bookings.push_back(b);
            } else {
                ++refused;
            }
            reply->deleteLater();
        });
    }
    if (!waitFor([&] { return answered == wanted; }, kSetupTimeoutMs)) {
        std::fprintf(stderr, "fanout: only %d of %d bookings answered\n", answered, wanted);
        return 1;
    }
    std::fprintf(stderr, "fanout: %zu bookings (%d refused)\n", bookings.size(), refused);

    // 2. Park every booked car where the reports will start, through every node: a device report
    // pauses that node's simulator for the car, and the simulator runs on whichever node leads.
    int parked = 0, parkFailed = 0, parkSent = 0;
    const auto report = [&](const Booking &b, int node, long index, const std::function<void(bool)> &done) {
        const QByteArray body =
            "{\"lat\":" + QByteArray::number(b.pickupLat + kStartOffsetDeg + double(index) * kStepDeg, 'f', 6)
            + ",\"lng\":" + QByteArray::number(b.pickupLng, 'f', 6) + '}';
        QNetworkReply *reply = http[std::size_t(node)]->put(
            jsonRequest(nodes[node], QStringLiteral("/api/v1/cars/%1/position").arg(b.carId), deviceToken), body);
        QObject::connect(reply, &QNetworkReply::finished, [reply, done] {
            done(statusOf(reply) == 200);
            reply->deleteLater();
        });
    };
    for (const Booking &b : bookings)
        for (int node = 0; node < nodes.size(); ++node) {
            ++parkSent;
            report(b, node, 0, [&](bool ok) { ok ? ++parked : ++parkFailed; });
        }
    if (!waitFor([&] { return parked + parkFailed == parkSent; }, kSetupTimeoutMs) || parkFailed) {
        std::fprintf(stderr, "fanout: %d of %d parking reports failed (device token?)\n", parkFailed, parkSent);
        return 1;
    }

    // 3. Followers on the other nodes, dealt over kFollowerThreads epoll loops.
    const int totalReports = rounds;
    std::vector<sockaddr_in> addresses;
    for (const QUrl &node : nodes) {
        addresses.push_back({});
        if (!resolve(node, addresses.back())) {
            std::fprintf(stderr, "fanout: cannot resolve %s\n", qPrintable(node.host()));
            return 1;
        }
    }
    std::vector<std::unique_ptr<Follower>> followers;
    std::vector<std::unique_ptr<FollowerLoop>> loops;
    for (int t = 0; t < kFollowerThreads; ++t)
        loops.push_back(
            std::make_unique<FollowerLoop>([&followers, &bookings, follow](int i, const QByteArray &text, double at) {
                Follower &f = *followers[std::size_t(i)];
                onFeedText(f, bookings[std::size_t(f.booking)], follow, text, at);
            }));
    for (std::size_t bi = 0; bi < bookings.size(); ++bi) {
        for (int k = 0; k < perBooking; ++k) {
            auto f = std::make_unique<Follower>();
            f->booking = int(bi);
            f->seenMs.assign(std::size_t(totalReports) + 1, -1);
            const int node =
                nodes.size() > 1 ? (bookings[bi].node + 1 + k % (int(nodes.size()) - 1)) % int(nodes.size()) : 0;
            const int id = int(followers.size());
            loops[std::size_t(id % kFollowerThreads)]->add(id, addresses[std::size_t(node)], hostHeader(nodes[node]),
                                                           subscribeJson(bookings[bi], follow));
            followers.push_back(std::move(f));
        }
    }
    for (auto &loop : loops)
        loop->start();
    const auto stopFollowers = [&loops] {
        for (auto &loop : loops)
            loop->stop();
    };
    const auto count = [&](const std::function<bool(const Follower &)> &pred) {
        return int(std::count_if(followers.begin(), followers.end(), [&](const auto &f) { return pred(*f); }));
    };
    if (!waitFor(
            [&] { return count([](const Follower &f) { return f.assignedSeen.load(); }) == int(followers.size()); },
            kSetupTimeoutMs)) {
        stopFollowers(); // their state is read here only once their threads are done
        std::map<QString, int> states;
        for (const auto &f : followers)
            if (!f->assignedSeen)
                ++states[f->lastState.isEmpty() ? QStringLiteral("none") : f->lastState];
        QString seen;
        for (const auto &[state, n] : states)
            seen += QStringLiteral(" %1x%2").arg(state).arg(n);
        int failures = 0;
        for (const auto &loop : loops)
            failures += loop->failures();
        std::fprintf(stderr,
                     "fanout: only %d of %zu followers saw their booking (connections failed: %d; the others saw:%s)\n",
                     count([](const Follower &f) { return f.assignedSeen.load(); }), followers.size(), failures,
                     qPrintable(seen));
        return 1;
    }
    std::fprintf(stderr, "fanout: %zu followers subscribed (%s)\n", followers.size(),
                 follow ? "following" : "not following");

    // 4. Idle: nothing moves; what does holding the followers cost the nodes?
    if (holdS > 0) {
        std::vector<qint64> pids;
        for (const QString &p : args.values(QStringLiteral("pid")))
            pids.push_back(p.toLongLong());
        std::vector<long long> before;
        for (qint64 pid : pids)
            before.push_back(cpuTicks(pid));
        const long long selfBefore = cpuTicks(getpid());
        const double started = nowMs();
        waitFor([&] { return nowMs() - started >= holdS * 1000.0; }, holdS * 1000 + 1000);
        const double seconds = (nowMs() - started) / 1000;
        const double hz = double(sysconf(_SC_CLK_TCK));
        QByteArray line = "IDLE followers=" + QByteArray::number(qulonglong(followers.size()))
                          + " following=" + (follow ? "yes" : "no") + " seconds=" + QByteArray::number(seconds, 'f', 1);
        double total = 0;
        for (std::size_t i = 0; i < pids.size(); ++i) {
            const double pct = double(cpuTicks(pids[i]) - before[i]) / hz / seconds * 100;
            total += pct;
            line += " pid" + QByteArray::number(pids[i]) + "_cpu_percent=" + QByteArray::number(pct, 'f', 1);
        }
        line += " nodes_cpu_percent=" + QByteArray::number(total, 'f', 1) + " probe_cpu_percent="
                + QByteArray::number(double(cpuTicks(getpid()) - selfBefore) / hz / seconds * 100, 'f', 1);
        std::printf("%s\n", line.constData());
        std::fflush(stdout);
    }

    // 5. Rounds of reports: every gapMs, `moving` cars (in turn) get their next position.
    if (follow && rounds > 0 && moving > 0) {
        int inFlight = 0, failed = 0, sent = 0;
        std::size_t nextCar = 0;
        std::vector<long> reportsOf(bookings.size(), 0);
        for (Booking &b : bookings)
            b.ackedMs.assign(std::size_t(rounds) + 1, -1);
        const double started = nowMs();
        const long long probeTicks = cpuTicks(getpid());
        for (int round = 0; round < rounds; ++round) {
            waitFor([&] { return nowMs() - started >= double(round) * gapMs; }, gapMs * 4 + 1000);
            for (int m = 0; m < moving && m < int(bookings.size()); ++m) {
                const std::size_t bi = nextCar++ % bookings.size();
                Booking &b = bookings[bi];
                const long index = ++reportsOf[bi];
                if (index >= long(b.ackedMs.size()))
                    continue;
                ++inFlight;
                ++sent;
                report(b, b.node, index, [&, bi, index](bool ok) {
                    --inFlight;
                    if (ok)
                        bookings[bi].ackedMs[std::size_t(index)] = nowMs();
                    else
                        ++failed;
                });
            }
        }
        waitFor([&] { return inFlight == 0; }, kSetupTimeoutMs);
        const double drainStart = nowMs();
        waitFor([&] { return nowMs() - drainStart >= kDrainMs; }, kDrainMs + 1000);
        const double drainEnd = nowMs();
        stopFollowers(); // their threads are done: their seenMs can be read here
        std::vector<double> latencies;
        int lost = 0, byFollow = 0, byUpdate = 0;
        for (const auto &f : followers) {
            byFollow += f->byFollow;
            byUpdate += f->byUpdate;
            const Booking &b = bookings[std::size_t(f->booking)];
            for (std::size_t i = 1; i < b.ackedMs.size(); ++i) {
                if (b.ackedMs[i] < 0)
                    continue;
                if (f->seenMs[i] < 0)
                    ++lost;
                else
                    latencies.push_back(std::max(0.0, f->seenMs[i] - b.ackedMs[i]));
            }
        }
        const double seconds = (drainEnd - started - kDrainMs) / 1000;
        const double probeCpu = double(cpuTicks(getpid()) - probeTicks) / double(sysconf(_SC_CLK_TCK))
                                / ((drainEnd - started) / 1000) * 100;
        std::printf("FANOUT followers=%zu reports=%d reports_per_s=%.0f failed=%d deliveries=%zu lost=%d by_follow=%d "
                    "by_update=%d probe_cpu_percent=%.0f p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f\n",
                    followers.size(), sent, sent / std::max(0.001, seconds), failed, latencies.size(), lost, byFollow,
                    byUpdate, probeCpu, percentile(latencies, 50), percentile(latencies, 90), percentile(latencies, 99),
                    percentile(latencies, 100));
        std::fflush(stdout);
    }

    // 6. Leave: close the followers, cancel the bookings (their cars are free for the next run).
    stopFollowers();
    int cancelled = 0;
    for (const Booking &b : bookings) {
        QNetworkReply *reply = http[std::size_t(b.node)]->post(
            jsonRequest(nodes[b.node], QStringLiteral("/api/v1/bookings/%1/cancel").arg(b.id), b.riderToken),
            QByteArray());
        QObject::connect(reply, &QNetworkReply::finished, [reply, &cancelled] {
            ++cancelled;
            reply->deleteLater();
        });
    }
    waitFor([&] { return cancelled == int(bookings.size()); }, kSetupTimeoutMs);
    return 0;
}

int stall(const QCommandLineParser &args)
{
    const QUrl url(args.value(QStringLiteral("url")));
    const int connections = args.value(QStringLiteral("connections")).toInt();
    const double seconds = args.value(QStringLiteral("seconds")).toDouble();
    const qint64 killPid = args.value(QStringLiteral("kill-pid")).toLongLong();
    const double killAtS = args.value(QStringLiteral("kill-at-s")).toDouble();
    if (!url.isValid() || connections < 1 || seconds <= 0) {
        std::fprintf(stderr, "stall needs --url, --connections >= 1 and --seconds > 0\n");
        return 2;
    }
    struct Rider {
        std::unique_ptr<QNetworkAccessManager> http; // its own connection: a closed-loop client
        qint64 pending = 0;
        QByteArray token;
        int n = 0;
    };
    std::vector<Rider> riders(static_cast<std::size_t>(connections));
    std::vector<double> successes; // when each 201 / 200 arrived
    std::vector<qint64> acknowledged;
    std::map<int, int> statuses;
    QRandomGenerator random(23);
    const double started = nowMs();
    double killedAt = -1;
    bool stopping = false;
    int inFlight = 0;
    std::function<void(std::size_t)> next = [&](std::size_t r) {
        if (stopping || nowMs() - started >= seconds * 1000)
            return;
        Rider &rider = riders[r];
        QNetworkReply *reply;
        const bool cancel = rider.pending != 0;
        if (cancel) {
            reply = rider.http->post(
                jsonRequest(url, QStringLiteral("/api/v1/bookings/%1/cancel").arg(rider.pending), rider.token),
                QByteArray());
        } else {
            const QByteArray body =
                "{\"rider_id\":\"stall-" + QByteArray::number(qulonglong(r)) + "-" + QByteArray::number(rider.n++)
                + "\",\"pickup\":{\"lat\":" + QByteArray::number(57.690 + random.generateDouble() * 0.025, 'f', 6)
                + ",\"lng\":" + QByteArray::number(11.940 + random.generateDouble() * 0.050, 'f', 6) + "}}";
            reply = rider.http->post(jsonRequest(url, QStringLiteral("/api/v1/bookings")), body);
        }
        ++inFlight;
        QObject::connect(reply, &QNetworkReply::finished, [&, reply, r, cancel] {
            --inFlight;
            const int status = statusOf(reply);
            ++statuses[status];
            Rider &me = riders[r];
            if (cancel) {
                if (status == 200)
                    successes.push_back(nowMs());
                me.pending = 0; // a failed cancel: the booking stays, the next rider books anew
            } else if (status == 201) {
                successes.push_back(nowMs());
                const QJsonObject json = QJsonDocument::fromJson(reply->readAll()).object();
                me.pending = json.value(QStringLiteral("booking_id")).toInteger();
                me.token = json.value(QStringLiteral("rider_token")).toString().toLatin1();
                acknowledged.push_back(me.pending);
            }
            reply->deleteLater();
            next(r);
        });
    };
    for (std::size_t r = 0; r < riders.size(); ++r) {
        riders[r].http = std::make_unique<QNetworkAccessManager>();
        next(r);
    }
    if (killPid > 0)
        QTimer::singleShot(int(killAtS * 1000), [&] {
            killedAt = nowMs();
            ::kill(pid_t(killPid), SIGKILL);
        });
    waitFor([&] { return nowMs() - started >= seconds * 1000; }, int(seconds * 1000) + 5000);
    stopping = true;
    waitFor([&] { return inFlight == 0; }, 30'000);

    std::sort(successes.begin(), successes.end());
    double longest = 0, longestAt = 0, afterKill = 0;
    double previous = started;
    for (double at : successes) {
        if (at - previous > longest) {
            longest = at - previous;
            longestAt = previous;
        }
        previous = at;
    }
    // The longest gap that includes the kill or begins within kKillWindowMs after it: what the
    // kill cost, told apart from the stalls a loaded machine has anyway.
    double killGap = -1;
    if (killedAt > 0) {
        const auto first = std::upper_bound(successes.begin(), successes.end(), killedAt);
        afterKill = first == successes.end() ? -1 : *first - killedAt;
        for (auto it = first; it != successes.end(); ++it) {
            const double from = it == successes.begin() ? started : *(it - 1);
            if (from > killedAt + kKillWindowMs)
                break;
            killGap = std::max(killGap, *it - from);
        }
    }
    QByteArray statusText;
    for (const auto &[status, n] : statuses)
        statusText += (statusText.isEmpty() ? "" : ",") + QByteArray::number(status) + "x" + QByteArray::number(n);
    std::printf(
        "STALL connections=%d seconds=%.1f successes=%zu bookings_acknowledged=%zu answers=%s longest_gap_ms=%.1f "
        "longest_gap_starts_s=%.2f killed_at_s=%.2f first_success_after_kill_ms=%.1f kill_gap_ms=%.1f\n",
        connections, seconds, successes.size(), acknowledged.size(), statusText.constData(), longest,
        (longestAt - started) / 1000, killedAt > 0 ? (killedAt - started) / 1000 : -1.0, afterKill, killGap);
    if (args.isSet(QStringLiteral("ids-file"))) {
        QFile ids(args.value(QStringLiteral("ids-file")));
        if (ids.open(QIODevice::WriteOnly | QIODevice::Truncate))
            for (qint64 id : acknowledged)
                ids.write(QByteArray::number(id) + '\n');
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser args;
    args.setApplicationDescription(QStringLiteral("The cluster figures wrk cannot measure: live-feed fan-out latency "
                                                  "and CPU, and the stall a node kill costs (see bench/README.md)."));
    args.addHelpOption();
    args.addPositionalArgument(QStringLiteral("mode"), QStringLiteral("fanout or stall"));
    args.addOptions({
        {QStringLiteral("node"), QStringLiteral("fanout: a node's URL (repeatable)."), QStringLiteral("url")},
        {QStringLiteral("device-token"), QStringLiteral("fanout: the nodes' device token."), QStringLiteral("t")},
        {QStringLiteral("bookings"), QStringLiteral("fanout: cars to book (default 100)."), QStringLiteral("n"),
         QStringLiteral("100")},
        {QStringLiteral("followers-per-booking"), QStringLiteral("fanout: followers of each booking (default 1)."),
         QStringLiteral("n"), QStringLiteral("1")},
        {QStringLiteral("moving-cars"), QStringLiteral("fanout: cars moved per round (default 20)."),
         QStringLiteral("n"), QStringLiteral("20")},
        {QStringLiteral("rounds"), QStringLiteral("fanout: rounds of reports (default 50)."), QStringLiteral("n"),
         QStringLiteral("50")},
        {QStringLiteral("gap-ms"), QStringLiteral("fanout: milliseconds between rounds (default 50)."),
         QStringLiteral("ms"), QStringLiteral("50")},
        {QStringLiteral("hold-s"), QStringLiteral("fanout: idle seconds measuring --pid CPU (default 0)."),
         QStringLiteral("s"), QStringLiteral("0")},
        {QStringLiteral("pid"), QStringLiteral("fanout: a process whose CPU to measure (repeatable)."),
         QStringLiteral("pid")},
        {QStringLiteral("no-follow"), QStringLiteral("fanout: subscribe without booking_id (the baseline).")},
        {QStringLiteral("url"), QStringLiteral("stall: where to book (nginx)."), QStringLiteral("url")},
        {QStringLiteral("connections"), QStringLiteral("stall: riders booking at once (default 16)."),
         QStringLiteral("n"), QStringLiteral("16")},
        {QStringLiteral("seconds"), QStringLiteral("stall: how long (default 10)."), QStringLiteral("s"),
         QStringLiteral("10")},
        {QStringLiteral("kill-pid"), QStringLiteral("stall: the node to SIGKILL."), QStringLiteral("pid")},
        {QStringLiteral("kill-at-s"), QStringLiteral("stall: when (default 3)."), QStringLiteral("s"),
         QStringLiteral("3")},
        {QStringLiteral("ids-file"), QStringLiteral("stall: where to write the acknowledged booking ids."),
         QStringLiteral("file")},
    });
    args.process(app);
    const QString mode = args.positionalArguments().value(0);
    if (mode == QLatin1String("fanout"))
        return fanout(args);
    if (mode == QLatin1String("stall"))
        return stall(args);
    std::fprintf(stderr, "taxicore-feed-probe: say fanout or stall (--help)\n");
    return 2;
}
