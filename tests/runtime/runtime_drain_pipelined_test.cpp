// Pipelined bookings through a drain: every booking the server ran is answered before the
// connection closes — one it closes on is never run. Each client connection pipelines 6 bookings
// at a time and cancels every booking it was answered 201 for.
// - Live mode switches (single → processes → single) drain the in-process server's connections,
//   then the workers': once the load stops, no car may stay taken (a booking run but never
//   answered holds its car for good).
// - SIGTERM drains every process: once the server exited, every booking in its ledger is one a
//   client was answered 201 for.

#include "IdempotencyKit.h"
#include "LedgerValue.h"
#include "RawSocket.h"
#include "RuntimeKit.h"
#include "ServingKit.h"

#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {

constexpr int kCars = 100;
constexpr int kSigtermCars = 1000;
constexpr int kConnections = 4;
constexpr int kPipelined = 6;
constexpr int kReadTimeoutMs = 5000;
// Bookings answered 201 between two steps: the load is flowing before, through and after each switch.
constexpr int kBookingsPerStep = 60;

const QByteArray kBookingBody = R"({"rider_id":"pipelined-switch","pickup":{"lat":57.70,"lng":11.97}})";

QByteArray bookingRequest()
{
    return "POST /api/v1/bookings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           "Content-Length: "
           + QByteArray::number(kBookingBody.size()) + "\r\n\r\n" + kBookingBody;
}

// A blocking loopback connection whose reads give up after kReadTimeoutMs; -1 when refused.
int connectBlocking(quint16 port)
{
    const int fd = connectRaw(port);
    if (fd < 0)
        return -1;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    timeval timeout{kReadTimeoutMs / 1000, (kReadTimeoutMs % 1000) * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    return fd;
}

// Reads up to `count` answers; fewer when the server closed (or went quiet for kReadTimeoutMs).
QList<HttpResponse> readAnswers(int fd, int count, bool *closed)
{
    QList<HttpResponse> answers;
    QByteArray buffer;
    *closed = false;
    char chunk[16384];
    while (answers.size() < count) {
        HttpResponse r;
        const auto result = ResponseParser::take(buffer, false, false, r);
        if (result == ResponseParser::Result::Complete) {
            answers.append(r);
            continue;
        }
        if (result == ResponseParser::Result::Error)
            break;
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) {
            *closed = true;
            break;
        }
        buffer.append(chunk, n);
    }
    return answers;
}

struct Tally {
    std::atomic<int> sent{0};
    std::atomic<int> created{0};
    std::atomic<int> unanswered{0};
    std::atomic<int> other{0};
    std::atomic<int> cancelFailures{0};
    // The answer that closes says so, and is the last: one that says close with more after it, or
    // a cut short round whose last answer said keep-alive, is counted here.
    std::atomic<int> misleadingCloses{0};
    std::mutex mutex;
    QSet<qint64> answeredIds; // every booking answered 201
};

// Cancels a booking on a connection of its own (Connection: close), retried until it is answered.
void cancel(quint16 port, qint64 id, const QByteArray &token, const std::atomic<bool> &stop, Tally &tally)
{
    const QByteArray request = "POST /api/v1/bookings/" + QByteArray::number(id)
                               + "/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token
                               + "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
    for (int attempt = 0; attempt < 50; ++attempt) {
        const int fd = connectBlocking(port);
        if (fd >= 0) {
            bool closed = false;
            const bool sent = sendAll(fd, request);
            const QList<HttpResponse> answers = sent ? readAnswers(fd, 1, &closed) : QList<HttpResponse>{};
            ::close(fd);
            if (!answers.isEmpty())
                return; // 200, or 409 when a lost answer's cancel did run: the car is free either way
        }
        if (stop && attempt >= 2)
            break; // the server is stopping (SIGTERM): the ledger check needs no cancel
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ++tally.cancelFailures;
}

// One client: 6 pipelined bookings per round on a keep-alive connection (a new one when the
// server closed it); with `cancels`, each one answered 201 is cancelled before the next round.
void pipelineBookings(quint16 port, bool cancels, const std::atomic<bool> &stop, Tally &tally)
{
    const QByteArray round = bookingRequest().repeated(kPipelined);
    int fd = -1;
    while (!stop) {
        if (fd < 0) {
            fd = connectBlocking(port);
            if (fd < 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                continue;
            }
        }
        if (!sendAll(fd, round)) {
            ::close(fd);
            fd = -1;
            continue;
        }
        tally.sent += kPipelined;
        bool closed = false;
        const QList<HttpResponse> answers = readAnswers(fd, kPipelined, &closed);
        tally.unanswered += kPipelined - int(answers.size());
        QList<std::pair<qint64, QByteArray>> booked;
        bool closes = closed || answers.size() < kPipelined;
        for (qsizetype i = 0; i < answers.size(); ++i) {
            const HttpResponse &r = answers[i];
            if (r.status == 201) {
                ++tally.created;
                booked.append({bookingIdOf(r), r.json().value(QStringLiteral("rider_token")).toString().toLatin1()});
                const std::lock_guard lock(tally.mutex);
                tally.answeredIds.insert(bookingIdOf(r));
            } else {
                ++tally.other;
            }
            const bool saysClose = r.header("Connection").toLower() == "close";
            closes = closes || saysClose;
            const bool lastOfRound = i == answers.size() - 1;
            if ((saysClose && !lastOfRound) || (lastOfRound && answers.size() < kPipelined && !saysClose))
                ++tally.misleadingCloses;
        }
        if (closes) {
            ::close(fd);
            fd = -1;
        }
        if (cancels)
            for (const auto &[id, token] : booked)
                cancel(port, id, token, stop, tally);
    }
    if (fd >= 0)
        ::close(fd);
}

// The client threads, stopped and joined however the test ends.
class Load {
public:
    Load(quint16 port, bool cancels, Tally &tally)
    {
        for (int i = 0; i < kConnections; ++i)
            m_clients.emplace_back(pipelineBookings, port, cancels, std::cref(m_stop), std::ref(tally));
    }
    ~Load() { stop(); }
    void stop()
    {
        m_stop = true;
        for (std::thread &t : m_clients)
            t.join();
        m_clients.clear();
    }

private:
    std::atomic<bool> m_stop{false};
    std::vector<std::thread> m_clients;
};

} // namespace

class DrainPipelinedTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void modeSwitchAnswersEveryBookingItRan();
    void sigtermAnswersEveryBookingItRan_data();
    void sigtermAnswersEveryBookingItRan();
};

namespace {

QByteArray describe(const Tally &tally)
{
    return QStringLiteral("%1 bookings sent, %2 answered 201, %3 other answers, %4 unanswered")
        .arg(tally.sent.load())
        .arg(tally.created.load())
        .arg(tally.other.load())
        .arg(tally.unanswered.load())
        .toUtf8();
}

} // namespace

void DrainPipelinedTest::modeSwitchAnswersEveryBookingItRan()
{
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("single"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QString::number(kCars),
                          QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    const int before = [&] {
        HttpClient http(server.host(), server.port(), 10'000);
        return availableCars(http);
    }();
    QCOMPARE(before, kCars);

    Tally tally;
    const auto progress = [&tally] { return describe(tally); };
    const auto flows = [&tally] {
        const int from = tally.created;
        return waitUntil([&] { return tally.created >= from + kBookingsPerStep; }, 20'000, 20);
    };
    {
        Load load(server.port(), true, tally);
        QVERIFY2(flows(), "no bookings answered before the first switch: " + progress());
        const HttpResponse toProcesses =
            putRuntime(server, {{QStringLiteral("mode"), QStringLiteral("processes")}, {QStringLiteral("workers"), 2}});
        TC_VERIFY_STATUS(toProcesses, 200);
        QVERIFY2(waitUntil([&] { return serving(server).size() == 2; }, 20'000, 100),
                 "2 workers not serving within 20 s");
        QVERIFY2(flows(), "bookings stopped being answered after the switch to processes: " + progress());
        const HttpResponse toSingle = putRuntime(server, {{QStringLiteral("mode"), QStringLiteral("single")}});
        TC_VERIFY_STATUS(toSingle, 200);
        QVERIFY2(waitUntil([&] { return workers(server).isEmpty(); }, 20'000, 100),
                 "workers still listed 20 s after the switch to single");
        QVERIFY2(flows(), "bookings stopped being answered after the switch back to single: " + progress());
    }

    QCOMPARE(tally.cancelFailures.load(), 0);
    QCOMPARE(tally.misleadingCloses.load(), 0);
    HttpClient http(server.host(), server.port(), 10'000);
    const int after = availableCars(http);
    const QByteArray summary = progress() + "; " + QByteArray::number(before - after) + " cars still taken";
    qInfo("%s", summary.constData());
    QVERIFY2(after == before, "bookings run without an answer: " + summary);
    QVERIFY2(server.isRunning(), "the server died: " + server.stderrText());
    QCOMPARE(server.stop(), 0);
}

void DrainPipelinedTest::sigtermAnswersEveryBookingItRan_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("pool") << QStringLiteral("pool");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void DrainPipelinedTest::sigtermAnswersEveryBookingItRan()
{
    QFETCH(QString, mode);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"),
                          QStringLiteral("--cars"), QString::number(kSigtermCars), QStringLiteral("--sim-speed"),
                          QStringLiteral("0.001"), QStringLiteral("--data-dir"), dir.path()});
    QString error;
    QVERIFY2(startServing(server, mode, error), qPrintable(error));

    Tally tally;
    {
        // No cancels: the rounds follow each other on their connections, so the drain finds
        // bookings in flight (the cars last a few hundred of them).
        Load load(server.port(), false, tally);
        QVERIFY2(waitUntil([&] { return tally.created >= kPipelined; }, 20'000, 1),
                 "no bookings answered: " + describe(tally));
        QVERIFY(server.terminate());
        QVERIFY2(server.waitForExit(20'000), "the server did not exit within 20 s of SIGTERM");
    }
    QCOMPARE(server.exitCode(), 0);
    QCOMPARE(tally.misleadingCloses.load(), 0);

    const QString ids =
        ledgerValue(dir, QStringLiteral("SELECT coalesce(group_concat(id), '') FROM bookings")).toString();
    QStringList unanswered;
    for (const QString &id : ids.split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!tally.answeredIds.contains(id.toLongLong()))
            unanswered.append(id);
    const QByteArray summary =
        describe(tally) + "; " + QByteArray::number(unanswered.size()) + " bookings in the ledger never answered";
    qInfo("%s", summary.constData());
    QVERIFY2(!ids.isEmpty(), "no bookings in the ledger");
    QVERIFY2(unanswered.isEmpty(),
             "bookings run without an answer (" + unanswered.join(QLatin1Char(' ')).toUtf8() + "): " + summary);
}

QTEST_GUILESS_MAIN(DrainPipelinedTest)
#include "runtime_drain_pipelined_test.moc"
