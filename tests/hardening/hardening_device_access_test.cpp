// Car position reports need the device token (issue 15 item 4): PUT /api/v1/cars/{id}/position
// is answered to a request with the device token or the admin token, or without any token from a
// trusted loopback client. No token otherwise → 401 device_token_required, a wrong one → 401
// invalid_device_token (even from loopback), and the car does not move: its booking stays
// assigned. The token is made at first start in DATA_DIR/device-token (0600) and kept;
// --device-token and $TAXICORE_DEVICE_TOKEN override it. Worker processes check it alike.

#include "HardeningKit.h"

#include <QFile>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <sys/stat.h>

using namespace taxicore::test;
using namespace taxicore::test::hardening;

namespace {

constexpr int kStartMs = 20'000;
// Enough requests, each on its own connection, that every worker of two serves some.
constexpr int kRequestsPerCase = 4;
const QByteArray kPickupBody = R"({"lat":57.7,"lng":11.97})";

QByteArray readTokenFile(const QString &dataDir, const char *name)
{
    QFile file(dataDir + QLatin1Char('/') + QLatin1StringView(name));
    return file.open(QIODevice::ReadOnly) ? file.readAll().trimmed() : QByteArray();
}

QByteArray positionPath(int carId)
{
    return "/api/v1/cars/" + QByteArray::number(carId) + "/position";
}

#define TC_VERIFY_UNAUTHORIZED(response, code)                                                                         \
    do {                                                                                                               \
        const HttpResponse &tcU_ = (response);                                                                         \
        TC_VERIFY_ERROR(tcU_, 401, code);                                                                              \
        QVERIFY2(tcU_.header("WWW-Authenticate").startsWith("Bearer"), tcU_.describe().constData());                   \
    } while (false)

QStringList serverArgs(const QString &dataDir, const QString &mode, const QString &trustLoopback)
{
    return {QStringLiteral("--cars"),           QStringLiteral("10"),
            QStringLiteral("--data-dir"),       dataDir,
            QStringLiteral("--mode"),           mode,
            QStringLiteral("--workers"),        QStringLiteral("2"),
            QStringLiteral("--admin-token"),    QString::fromLatin1(kAdminToken),
            QStringLiteral("--trust-loopback"), trustLoopback};
}

void waitForWorkers(const ServerProcess &server, const QString &mode)
{
    if (mode == QStringLiteral("processes"))
        QVERIFY2(waitUntil([&] { return servingWorkers(server, kAdminToken) == 2; }, kStartMs),
                 "workers did not start");
}

} // namespace

class DeviceAccessTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void positionReportsNeedTheDeviceOrAdminToken_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::newRow("single") << QStringLiteral("single");
        QTest::newRow("processes") << QStringLiteral("processes");
    }

    void positionReportsNeedTheDeviceOrAdminToken()
    {
        QFETCH(QString, mode);
        QTemporaryDir data;
        ServerProcess server(serverArgs(data.path(), mode, QStringLiteral("off")));
        QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
        waitForWorkers(server, mode);
        const QByteArray device = readTokenFile(data.path(), "device-token");
        QVERIFY2(device.size() >= 32 && QByteArray::fromHex(device).toHex() == device, device.constData());
        struct stat info {};
        QCOMPARE(::stat(qPrintable(data.path() + QStringLiteral("/device-token")), &info), 0);
        QCOMPARE(info.st_mode & 0777, mode_t(0600));

        // A booked car: a report at its pickup would mark the booking arriving.
        const HttpResponse booked = book(server, QStringLiteral("device-rider"), 57.70, 11.97, kAdminToken);
        TC_VERIFY_STATUS(booked, 201);
        const int carId = booked.json().value(QStringLiteral("car_id")).toInt();
        const QByteArray bookingPath = "/api/v1/bookings/" + QByteArray::number(bookingId(booked));
        for (int i = 0; i < kRequestsPerCase; ++i) {
            TC_VERIFY_UNAUTHORIZED(send(server, "PUT", positionPath(carId), {}, kPickupBody), "device_token_required");
            TC_VERIFY_UNAUTHORIZED(send(server, "PUT", positionPath(carId), "not-the-device-token-at-all", kPickupBody),
                                   "invalid_device_token");
        }
        // Refused reports moved nothing.
        QCOMPARE(send(server, "GET", bookingPath, riderToken(booked.json()))
                     .json()
                     .value(QStringLiteral("state"))
                     .toString(),
                 QStringLiteral("assigned"));

        for (int i = 0; i < kRequestsPerCase; ++i) {
            const HttpResponse moved = send(server, "PUT", positionPath(carId), device, kPickupBody);
            TC_VERIFY_STATUS(moved, 200);
            QCOMPARE(moved.json().value(QStringLiteral("id")).toInt(), carId);
            TC_VERIFY_STATUS(send(server, "PUT", positionPath(1 + i % 10), kAdminToken, kPickupBody), 200);
        }
        QCOMPARE(send(server, "GET", bookingPath, riderToken(booked.json()))
                     .json()
                     .value(QStringLiteral("state"))
                     .toString(),
                 QStringLiteral("arriving"));
        // The device token is not an admin token.
        TC_VERIFY_UNAUTHORIZED(send(server, "GET", "/admin/v1/runtime", device), "invalid_admin_token");
        QCOMPARE(server.stop(), 0);
    }

    void trustedLoopbackNeedsNoTokenButAWrongOneIsRefused()
    {
        QTemporaryDir data;
        ServerProcess server(serverArgs(data.path(), QStringLiteral("single"), QStringLiteral("on")));
        QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
        TC_VERIFY_STATUS(send(server, "PUT", positionPath(1), {}, kPickupBody), 200);
        TC_VERIFY_UNAUTHORIZED(send(server, "PUT", positionPath(1), "not-the-device-token-at-all", kPickupBody),
                               "invalid_device_token");
        TC_VERIFY_STATUS(send(server, "PUT", positionPath(1), readTokenFile(data.path(), "device-token"), kPickupBody),
                         200);
        QCOMPARE(server.stop(), 0);
    }

    void tokenIsKeptAcrossRestartsAndTheFlagAndEnvironmentOverrideIt()
    {
        QTemporaryDir data;
        QByteArray first;
        {
            ServerProcess server(serverArgs(data.path(), QStringLiteral("single"), QStringLiteral("off")));
            QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
            first = readTokenFile(data.path(), "device-token");
            QVERIFY(!first.isEmpty());
            QCOMPARE(server.stop(), 0);
        }
        {
            ServerProcess again(serverArgs(data.path(), QStringLiteral("single"), QStringLiteral("off")));
            QVERIFY2(again.start(kStartMs), qPrintable(again.error()));
            QCOMPARE(readTokenFile(data.path(), "device-token"), first);
            TC_VERIFY_STATUS(send(again, "PUT", positionPath(1), first, kPickupBody), 200);
            QCOMPARE(again.stop(), 0);
        }
        const QByteArray flagToken = "device-token-from-the-flag-0123";
        {
            ServerProcess flagged(serverArgs(data.path(), QStringLiteral("single"), QStringLiteral("off"))
                                  + QStringList{QStringLiteral("--device-token"), QString::fromLatin1(flagToken)});
            QVERIFY2(flagged.start(kStartMs), qPrintable(flagged.error()));
            TC_VERIFY_STATUS(send(flagged, "PUT", positionPath(1), flagToken, kPickupBody), 200);
            TC_VERIFY_UNAUTHORIZED(send(flagged, "PUT", positionPath(1), first, kPickupBody), "invalid_device_token");
            QCOMPARE(flagged.stop(), 0);
        }
        const QByteArray envToken = "device-token-from-the-environment";
        qputenv("TAXICORE_DEVICE_TOKEN", envToken);
        auto unset = qScopeGuard([] { qunsetenv("TAXICORE_DEVICE_TOKEN"); });
        ServerProcess fromEnv(serverArgs(data.path(), QStringLiteral("single"), QStringLiteral("off")));
        QVERIFY2(fromEnv.start(kStartMs), qPrintable(fromEnv.error()));
        TC_VERIFY_STATUS(send(fromEnv, "PUT", positionPath(1), envToken, kPickupBody), 200);
        TC_VERIFY_UNAUTHORIZED(send(fromEnv, "PUT", positionPath(1), first, kPickupBody), "invalid_device_token");
        QCOMPARE(fromEnv.stop(), 0);
        // A malformed token is refused at start, naming the flag.
        const auto bad =
            ServerProcess::run({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"),
                                data.path(), QStringLiteral("--device-token"), QStringLiteral("short")});
        QVERIFY2(bad.finished && bad.exitCode == 2 && bad.err.contains("--device-token"), bad.err.constData());
    }
};

QTEST_GUILESS_MAIN(DeviceAccessTest)
#include "hardening_device_access_test.moc"
