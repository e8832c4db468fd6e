// A failed commit leaves no half-done move (issue 15 item 6): when the ledger cannot record a
// pickup, cancel, complete or an operator's reassign (503 ledger_unavailable), the booking and its
// car stay exactly as the ledger has them, and a restart brings back that same state.
//
// The failure is real: the server's file-size limit (RLIMIT_FSIZE, set on the running processes
// with prlimit) is lowered to one byte, so SQLite's next write of the WAL fails with EFBIG. The
// server ignores SIGXFSZ, so this is a failed commit, not a crash.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ProcessInfo.h"
#include "RiderToken.h"
#include "ServerProcess.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <cstring>

using namespace taxicore::test;

namespace {
constexpr int kStartMs = 20'000;
const QJsonObject kPickup{{"lat", 57.7000}, {"lng", 11.9700}};

QStringList serverArgs(const QString &dataDir, const QString &mode)
{
    return {QStringLiteral("--data-dir"), dataDir, QStringLiteral("--cars"),    QStringLiteral("5"),
            QStringLiteral("--mode"),     mode,    QStringLiteral("--workers"), QStringLiteral("2")};
}

HttpResponse send(const ServerProcess &server, const QByteArray &method, const QByteArray &path,
                  const QByteArray &body = {}, const Headers &headers = {})
{
    HttpClient http(server.host(), server.port(), 10'000);
    return http.request(method, path, body, headers);
}

// Every process of the server: the primary and, in processes mode, its workers (any of them may
// serve the request and write its own ledger connection).
QList<qint64> serverPids(const ServerProcess &server)
{
    QList<qint64> pids{server.pid()};
    for (const QJsonValue &w : send(server, "GET", "/admin/v1/workers").json().value("workers").toArray())
        if (const qint64 pid = qint64(w.toObject().value("pid").toDouble()); pid > 0)
            pids.append(pid);
    return pids;
}

// Booking `id` as the rider holding `token` sees it.
QJsonObject bookingOf(const ServerProcess &server, qint64 id, const QByteArray &token)
{
    return send(server, "GET", "/api/v1/bookings/" + QByteArray::number(id), {}, bearer(token)).json();
}
} // namespace

class ServerFailedCommitTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void failedCommitsLeaveStateAsTheLedgerHasIt_data();
    void failedCommitsLeaveStateAsTheLedgerHasIt();
};

void ServerFailedCommitTest::failedCommitsLeaveStateAsTheLedgerHasIt_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void ServerFailedCommitTest::failedCommitsLeaveStateAsTheLedgerHasIt()
{
    QFETCH(QString, mode);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    qint64 id = 0;
    int carId = 0;
    QByteArray token;
    {
        ServerProcess server(serverArgs(dir.path(), mode));
        QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
        if (mode == QStringLiteral("processes"))
            QTRY_VERIFY_WITH_TIMEOUT(serverPids(server).size() == 3, kStartMs);

        HttpClient http(server.host(), server.port(), 10'000);
        const HttpResponse booked =
            http.postJson("/api/v1/bookings", {{"rider_id", "commit-rider"}, {"pickup", kPickup}});
        TC_VERIFY_STATUS(booked, 201);
        id = qint64(booked.json().value("booking_id").toDouble());
        carId = booked.json().value("car_id").toInt();
        token = riderToken(booked.json());
        // The car's device reports it at the pickup: the booking is arriving (and recorded so).
        TC_VERIFY_STATUS(send(server, "PUT", "/api/v1/cars/" + QByteArray::number(carId) + "/position",
                              QJsonDocument(kPickup).toJson(QJsonDocument::Compact)),
                         200);
        QCOMPARE(bookingOf(server, id, token).value("state").toString(), QStringLiteral("arriving"));

        const auto expectArrivingWithItsCar = [&] {
            const QJsonObject b = bookingOf(server, id, token);
            QCOMPARE(b.value("state").toString(), QStringLiteral("arriving"));
            QCOMPARE(b.value("car_id").toInt(), carId);
            const QJsonObject car = b.value("car").toObject();
            QCOMPARE(qint64(car.value("booking_id").toDouble()), id); // still reserved for it
            QVERIFY2(car.value("state").toString() != QStringLiteral("available")
                         && car.value("state").toString() != QStringLiteral("on_trip"),
                     qPrintable(car.value("state").toString()));
        };

        const QList<qint64> pids = serverPids(server);
        QVERIFY2(limitFileSize(pids, true), strerror(errno));
        TC_VERIFY_ERROR(moveBooking(http, id, "pickup", token), 503, "ledger_unavailable");
        expectArrivingWithItsCar();
        TC_VERIFY_ERROR(moveBooking(http, id, "cancel", token), 503, "ledger_unavailable");
        expectArrivingWithItsCar();
        // An operator's reassign the ledger refused moved nothing: the booking keeps its car, and
        // the car it was to get is free for others (the fleet has 5: four are free).
        TC_VERIFY_ERROR(http.request("POST", "/admin/v1/bookings/" + QByteArray::number(id) + "/reassign"), 503,
                        "ledger_unavailable");
        expectArrivingWithItsCar();
        int available = 0;
        const HttpResponse everyCar = send(server, "GET", "/api/v1/cars/nearby?lat=57.70&lng=11.97&radius_m=50000");
        TC_VERIFY_STATUS(everyCar, 200);
        for (const QJsonValue &car : everyCar.json().value("cars").toArray())
            available += car.toObject().value("state").toString() == QStringLiteral("available");
        QCOMPARE(available, 4);

        // The disk has room again: the same moves go through.
        QVERIFY(limitFileSize(pids, false));
        const HttpResponse pickedUp = moveBooking(http, id, "pickup", token);
        TC_VERIFY_STATUS(pickedUp, 200);
        QCOMPARE(pickedUp.json().value("state").toString(), QStringLiteral("on_trip"));

        QVERIFY(limitFileSize(pids, true));
        TC_VERIFY_ERROR(moveBooking(http, id, "complete", token), 503, "ledger_unavailable");
        const QJsonObject onTrip = bookingOf(server, id, token);
        QCOMPARE(onTrip.value("state").toString(), QStringLiteral("on_trip"));
        QCOMPARE(onTrip.value("car").toObject().value("state").toString(), QStringLiteral("on_trip"));
        QCOMPARE(qint64(onTrip.value("car").toObject().value("booking_id").toDouble()), id);
        QVERIFY(limitFileSize(pids, false));

        // The hardest stop: whatever the ledger holds now is all a restart has.
        QVERIFY(::kill(pid_t(server.pid()), SIGKILL) == 0);
        QVERIFY(server.waitForExit(10'000));
    }
    ServerProcess restarted(serverArgs(dir.path(), QStringLiteral("single")));
    QVERIFY2(restarted.start(kStartMs), qPrintable(restarted.error()));
    const QJsonObject after = bookingOf(restarted, id, token);
    QCOMPARE(after.value("state").toString(), QStringLiteral("on_trip"));
    QCOMPARE(after.value("car_id").toInt(), carId);
    QCOMPARE(after.value("car").toObject().value("state").toString(), QStringLiteral("on_trip"));
    QCOMPARE(restarted.stop(), 0);
}

QTEST_GUILESS_MAIN(ServerFailedCommitTest)
#include "ledger_server_failed_commit_test.moc"
