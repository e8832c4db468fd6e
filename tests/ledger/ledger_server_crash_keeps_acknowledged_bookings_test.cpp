// kill -9 of the whole server in the middle of a booking burst (issue 8): every booking the client
// saw acknowledged with 201 is there after a restart on the same data directory, still open and
// still holding its car, and new booking ids continue after the acknowledged ones. Run for the
// single-process server and for `--mode processes --workers 2` (the workers die with the primary).

#include "ApiAssert.h"
#include "HttpBatch.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "RuntimeKit.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QRegularExpression>
#include <QTest>
#include <QTimer>
#include <csignal>
#include <functional>
#include <memory>
#include <map>
#include <set>
#include <sys/types.h>
#include <vector>

using namespace taxicore::test;

namespace {

constexpr int kConnections = 16;
constexpr int kBurstMs = 2000;
constexpr int kKillAfterMs = 1000;
// The burst reaches ~3,000-5,000 bookings/s, so 2,000 cars would run out before kKillAfterMs and the kill
// would land after the writes: kill as soon as this many were acknowledged (whichever comes first),
// while every connection still has a booking in flight.
constexpr std::size_t kKillAtAcknowledged = 1200;

struct BurstLog {
    std::vector<qint64> acknowledged;          // booking ids answered 201
    std::map<qint64, int> carOf;               // the car each acknowledged booking was given
    std::map<qint64, QByteArray> riderTokenOf; // and the rider token it was answered with
    int sent = 0;
    int otherStatus = 0;
    int unanswered = 0; // requests in flight when the server died
    int inFlightAtKill = 0;
    qint64 killAtMs = -1;
    int reconnects = 0;     // connections the server ended with `Connection: close`
    int lostBeforeKill = 0; // connections that failed with a booking in flight before the kill
    QString firstLoss;
};

QByteArray bookingRequest(int n)
{
    QRandomGenerator *rng = QRandomGenerator::global();
    const double lat = 57.68 + rng->generateDouble() * 0.06;
    const double lng = 11.92 + rng->generateDouble() * 0.10;
    const QByteArray body = QJsonDocument(QJsonObject{{"rider_id", QStringLiteral("crash-%1").arg(n)},
                                                      {"pickup", QJsonObject{{"lat", lat}, {"lng", lng}}}})
                                .toJson(QJsonDocument::Compact);
    return formatRequest("POST", "/api/v1/bookings", body);
}

// `kConnections` keep-alive connections, each posting one booking after the other, all on one
// event loop. `onKill` runs once at kKillAfterMs or at kKillAtAcknowledged (the burst goes on against the dead server
// until every connection has failed or kBurstMs passed). Bounded by kBurstMs + 3 s.
BurstLog burst(const QString &host, quint16 port, const std::function<void()> &onKill)
{
    struct Conn {
        std::unique_ptr<QTcpSocket> socket;
        QByteArray buffer;
        bool waiting = false;
        bool dead = false;
    };
    BurstLog log;
    std::vector<Conn> conns(kConnections);
    QEventLoop loop;
    QElapsedTimer clock;
    clock.start();
    int deadCount = 0;
    bool killed = false;
    const auto killOnce = [&] {
        if (killed)
            return;
        killed = true;
        log.killAtMs = clock.elapsed();
        log.inFlightAtKill = 0;
        for (const Conn &c : conns)
            log.inFlightAtKill += c.waiting;
        onKill();
    };

    const auto markDead = [&](Conn &c) {
        if (c.dead)
            return;
        c.dead = true;
        if (c.waiting) {
            ++log.unanswered;
            if (!killed && log.lostBeforeKill++ == 0)
                log.firstLoss = QStringLiteral("at %1 ms: %2 (buffered: %3)")
                                    .arg(clock.elapsed())
                                    .arg(c.socket->errorString(), QString::fromLatin1(c.buffer.left(200)));
        }
        c.waiting = false;
        if (++deadCount == kConnections)
            loop.quit();
    };
    const auto sendNext = [&](Conn &c) {
        if (c.dead)
            return;
        if (clock.elapsed() >= kBurstMs) {
            c.socket->disconnectFromHost();
            markDead(c);
            return;
        }
        c.waiting = true;
        c.socket->write(bookingRequest(++log.sent));
    };
    // Opens (or reopens) the connection of `cp`: a response with `Connection: close` (the
    // primary hands its connections to the workers once they serve) ends the connection, and
    // the next booking goes on a new one.
    std::function<void(Conn *)> openConn;
    openConn = [&](Conn *cp) {
        if (cp->socket) {
            QObject::disconnect(cp->socket.get(), nullptr, &loop, nullptr);
            cp->socket->abort();
            cp->socket.release()->deleteLater(); // we may be inside one of its signals
        }
        cp->buffer.clear();
        cp->socket = std::make_unique<QTcpSocket>();
        QTcpSocket *socket = cp->socket.get();
        QObject::connect(socket, &QTcpSocket::connected, &loop, [&, cp] { sendNext(*cp); });
        QObject::connect(socket, &QTcpSocket::readyRead, &loop, [&, cp] {
            cp->buffer += cp->socket->readAll();
            for (;;) {
                HttpResponse r;
                if (ResponseParser::take(cp->buffer, false, false, r) != ResponseParser::Result::Complete)
                    break;
                cp->waiting = false;
                // A 201 read after the kill was still sent by the server: it counts.
                if (r.status == 201) {
                    const qint64 id = qint64(r.json().value("booking_id").toDouble());
                    log.acknowledged.push_back(id);
                    log.carOf[id] = r.json().value("car_id").toInt();
                    log.riderTokenOf[id] = riderToken(r.json());
                } else
                    ++log.otherStatus;
                if (log.acknowledged.size() >= kKillAtAcknowledged)
                    killOnce();
                if (killed)
                    continue;
                if (r.header("Connection").toLower().contains("close")) {
                    ++log.reconnects;
                    openConn(cp);
                    return;
                }
                sendNext(*cp);
            }
        });
        QObject::connect(socket, &QTcpSocket::disconnected, &loop, [&, cp] { markDead(*cp); });
        QObject::connect(socket, &QTcpSocket::errorOccurred, &loop,
                         [&, cp](QAbstractSocket::SocketError) { markDead(*cp); });
        socket->connectToHost(host, port);
    };
    for (Conn &c : conns)
        openConn(&c);
    QTimer killTimer;
    killTimer.setSingleShot(true);
    QObject::connect(&killTimer, &QTimer::timeout, &loop, killOnce);
    killTimer.start(kKillAfterMs);
    QTimer hardStop;
    hardStop.setSingleShot(true);
    QObject::connect(&hardStop, &QTimer::timeout, &loop, &QEventLoop::quit);
    hardStop.start(kBurstMs + 3000);
    loop.exec();
    killOnce();
    for (Conn &c : conns) {
        QObject::disconnect(c.socket.get(), nullptr, &loop, nullptr);
        if (c.waiting)
            ++log.unanswered;
        c.socket->abort();
    }
    return log;
}

} // namespace

class ServerCrashTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void acknowledgedBookingsSurviveKill9_data();
    void acknowledgedBookingsSurviveKill9();
};

void ServerCrashTest::acknowledgedBookingsSurviveKill9_data()
{
    QTest::addColumn<QStringList>("modeArgs");
    QTest::newRow("single") << QStringList{};
    QTest::newRow("single-full") << QStringList{QStringLiteral("--durability"), QStringLiteral("full")};
    QTest::newRow("processes") << QStringList{QStringLiteral("--mode"), QStringLiteral("processes"),
                                              QStringLiteral("--workers"), QStringLiteral("2")};
}

void ServerCrashTest::acknowledgedBookingsSurviveKill9()
{
    QFETCH(QStringList, modeArgs);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString dataDir = dir.filePath(QStringLiteral("data"));
    const QStringList args = QStringList{QStringLiteral("--data-dir"),  dataDir,
                                         QStringLiteral("--cars"),      QStringLiteral("2000"),
                                         QStringLiteral("--sim-speed"), QStringLiteral("0.001")}
                             + modeArgs;
    const bool processes = modeArgs.contains(QStringLiteral("processes"));

    auto first = std::make_unique<ServerProcess>(args);
    QVERIFY2(first->start(20'000), qPrintable(first->error()));
    std::vector<qint64> workerPids;
    if (processes) {
        // Wait (bounded) until both workers serve and new connections reach them (the primary
        // serves in-process until then), so the burst's bookings are written by the workers.
        // Fresh connections each round: a kept-alive one would stay with the primary.
        HttpResponse w;
        const bool started = waitUntil(
            [&] {
                const QList<HttpResponse> rs =
                    sendConcurrently(first->host(), first->port(),
                                     QList<QByteArray>(4, formatRequest("GET", "/admin/v1/workers")), 5000);
                w = rs.last();
                workerPids.clear();
                int serving = 0, used = 0;
                for (const QJsonValue &v : w.json().value("workers").toArray()) {
                    workerPids.push_back(v.toObject().value("pid").toInteger());
                    serving += v.toObject().value("state").toString() == QStringLiteral("serving");
                    used += v.toObject().value("requests").toInteger() > 0;
                }
                return serving == 2 && used == 2;
            },
            15'000, 100);
        QVERIFY2(started, "the workers did not start serving: " + w.describe());
    }

    const qint64 primaryPid = first->pid();
    const BurstLog log = burst(first->host(), first->port(), [primaryPid] { ::kill(pid_t(primaryPid), SIGKILL); });
    QVERIFY2(first->waitForExit(5000), "the primary outlived SIGKILL");
    QCOMPARE(first->exitStatus(), QProcess::CrashExit);
    // PR_SET_PDEATHSIG: the workers follow the primary (bounded wait; killed by pid if not).
    for (qint64 pid : workerPids) {
        const bool alive = !waitUntil([pid] { return !rt::pidAlive(pid); }, 5000, 20);
        if (alive)
            ::kill(pid_t(pid), SIGKILL);
        QVERIFY2(!alive, qPrintable(QStringLiteral("worker %1 survived the primary's kill -9").arg(pid)));
    }
    qInfo("%s: sent %d, acknowledged %zu, other status %d, reconnects %d, killed at %lld ms with %d in flight, "
          "unanswered %d",
          QTest::currentDataTag(), log.sent, log.acknowledged.size(), log.otherStatus, log.reconnects, log.killAtMs,
          log.inFlightAtKill, log.unanswered);
    // The kill landed inside the burst: bookings were being written, and none had been refused
    // for want of cars.
    QVERIFY2(log.lostBeforeKill == 0,
             qPrintable(QStringLiteral("%1 connections lost a booking in flight before the kill; first %2; "
                                       "server stderr: %3")
                            .arg(log.lostBeforeKill)
                            .arg(log.firstLoss, QString::fromLocal8Bit(first->stderrText().right(1500)))));
    QVERIFY2(log.inFlightAtKill > 0, "no booking was in flight when the server was killed");
    QCOMPARE(log.otherStatus, 0);
    QVERIFY2(log.acknowledged.size() >= 50, "too few bookings acknowledged before the kill to test anything");
    std::set<qint64> ids(log.acknowledged.begin(), log.acknowledged.end());
    QCOMPARE(ids.size(), log.acknowledged.size()); // no id acknowledged twice
    first.reset();

    ServerProcess second(args);
    QVERIFY2(second.start(30'000), qPrintable(second.error()));
    // The operator reads what the restart recovered on stderr, not only in the event log.
    const QRegularExpressionMatch said =
        QRegularExpression(QStringLiteral("(\\d+) open bookings restored from the ledger"))
            .match(QString::fromLocal8Bit(second.stderrText()));
    QVERIFY2(said.hasMatch(), second.stderrText().constData());
    QVERIFY2(said.captured(1).toULongLong() >= ids.size(), qPrintable(said.captured(0)));
    HttpClient http(second.host(), second.port(), 10'000);
    int missing = 0, notOpen = 0, carNotReserved = 0, otherCar = 0;
    std::set<int> cars;
    QByteArray firstProblem;
    for (qint64 id : ids) {
        const HttpResponse r = readBooking(http, id, log.riderTokenOf.at(id));
        if (r.status != 200) {
            if (missing++ == 0 && firstProblem.isEmpty())
                firstProblem = "booking " + QByteArray::number(id) + ": " + r.describe();
            continue;
        }
        const QJsonObject b = r.json();
        const QString state = b.value("state").toString();
        if (state != QStringLiteral("assigned") && state != QStringLiteral("arriving")
            && state != QStringLiteral("on_trip")) {
            if (notOpen++ == 0 && firstProblem.isEmpty())
                firstProblem = "booking " + QByteArray::number(id) + " not open: " + r.body.left(400);
            continue;
        }
        const int carId = b.value("car_id").toInt();
        if (carId != log.carOf.at(id) || !cars.insert(carId).second) {
            if (otherCar++ == 0 && firstProblem.isEmpty())
                firstProblem = "booking " + QByteArray::number(id) + " acknowledged with car "
                               + QByteArray::number(log.carOf.at(id)) + " (or its car is shared): " + r.body.left(400);
            continue;
        }
        const QString carState = b.value("car").toObject().value("state").toString();
        if (carState != QStringLiteral("to_pickup") && carState != QStringLiteral("waiting")
            && carState != QStringLiteral("on_trip")) {
            if (carNotReserved++ == 0 && firstProblem.isEmpty())
                firstProblem = "booking " + QByteArray::number(id) + " car not reserved: " + r.body.left(400);
        }
    }
    QVERIFY2(missing == 0 && notOpen == 0 && carNotReserved == 0 && otherCar == 0,
             qPrintable(QStringLiteral("of %1 acknowledged: %2 missing, %3 not open, %4 without a reserved car, "
                                       "%5 with another or a shared car; first: %6")
                            .arg(ids.size())
                            .arg(missing)
                            .arg(notOpen)
                            .arg(carNotReserved)
                            .arg(otherCar)
                            .arg(QString::fromUtf8(firstProblem))));

    // A new booking continues after every acknowledged id (free a car first: the burst may have
    // reserved most of them).
    // Its rider still owns it after the crash: the rider token was restored with it.
    TC_VERIFY_STATUS(moveBooking(http, *ids.begin(), "cancel", log.riderTokenOf.at(*ids.begin())), 200);
    const HttpResponse fresh =
        http.postJson("/api/v1/bookings", {{"rider_id", QStringLiteral("after-restart")},
                                           {"pickup", QJsonObject{{"lat", 57.70}, {"lng", 11.97}}}});
    TC_VERIFY_STATUS(fresh, 201);
    const qint64 freshId = qint64(fresh.json().value("booking_id").toDouble());
    QVERIFY2(freshId > *ids.rbegin(), qPrintable(QStringLiteral("new booking id %1 not above the largest "
                                                                "acknowledged id %2")
                                                     .arg(freshId)
                                                     .arg(*ids.rbegin())));
    QVERIFY2(second.isRunning(), second.stderrText().constData());
    QCOMPARE(second.stop(), 0);
}

QTEST_MAIN(ServerCrashTest)
#include "ledger_server_crash_keeps_acknowledged_bookings_test.moc"
