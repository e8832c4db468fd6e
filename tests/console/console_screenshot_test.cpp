// End to end, in a real window (Xvfb + Mesa OpenGL; under the software backend the map's
// geometry nodes draw nothing): start taxicore, book two rides over HTTP, let it take its own
// screenshot, and check the pixels show streets and cars in their state colours. Also the server
// panel after a mode switch, a benchmark's result, and a booking reassigned from the bookings
// panel (the server and the ledger see the new car). The PNGs are kept in $TAXICORE_ARTIFACT_DIR.
#include "ConsoleProcessKit.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace taxicore::test;

namespace {
constexpr int kStartTimeoutMs = 20000;
constexpr int kRequestTimeoutMs = 5000;
// Long enough for the map to load and the booked cars to show; the console quits by itself.
constexpr int kScreenshotAfterMs = 6000;
constexpr int kServerPanelAfterMs = 9000; // a mode switch and a few seconds of load first
constexpr int kBenchmarkAfterMs = 10000;  // start-up, a 5 s benchmark, its result
constexpr int kExitTimeoutMs = 30000;
constexpr int kReassignAfterMs = 5000;     // start-up and the bookings first
constexpr int kReassignQuitAfterMs = 9000; // time to check the server sees the new car

// Colours CityMap.qml gives the map in the light palette (Xvfb has no dark theme).
const QColor kAvailable(0x2e, 0xa0, 0x4a);
const QColor kToPickup(0xf0, 0x8c, 0x10);
const QColor kMajorRoad(0xd9, 0xbf, 0x80);
const QColor kMinorRoad(0xb9, 0xb4, 0xaa);

} // namespace

class ConsoleScreenshotTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void mapShowsStreetsAndCars();
    void serverPanelFollowsAModeSwitch();
    void benchmarkRunsAndShowsItsResult();
    void reassignFromTheBookingsPanel();

private:
    // POST /api/v1/bookings; the 201's JSON, or an empty object.
    QJsonObject book(QNetworkAccessManager &network, const QUrl &base, const QString &rider, double lat, double lng);
    // Starts taxicore in the Xvfb window; returns its base URL (empty on failure).
    QUrl startConsole(QProcess &console, int quitAfterMs, const QStringList &extraArgs,
                      const QProcessEnvironment &extraEnv = {});
    QNetworkReply *send(QNetworkAccessManager &network, const QNetworkRequest &request, const QByteArray &verb,
                        const QByteArray &body = {});

    std::unique_ptr<QTemporaryDir> m_config;
};

QJsonObject ConsoleScreenshotTest::book(QNetworkAccessManager &network, const QUrl &base, const QString &rider,
                                        double lat, double lng)
{
    QNetworkRequest request(base.resolved(QUrl(QStringLiteral("/api/v1/bookings"))));
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    const QJsonObject body{
        {QStringLiteral("rider_id"), rider},
        {QStringLiteral("pickup"), QJsonObject{{QStringLiteral("lat"), lat}, {QStringLiteral("lng"), lng}}}};
    QNetworkReply *reply = network.post(request, QJsonDocument(body).toJson());
    QSignalSpy finished(reply, &QNetworkReply::finished);
    const bool ok =
        finished.wait(kRequestTimeoutMs) && reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 201;
    reply->deleteLater();
    return ok ? QJsonDocument::fromJson(reply->readAll()).object() : QJsonObject();
}

void ConsoleScreenshotTest::mapShowsStreetsAndCars()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");

    const QString shot = artifactDir() + QStringLiteral("/console-map.png");
    QFile::remove(shot);

    QProcess console;
    auto cleanup = qScopeGuard([&console] {
        if (console.state() != QProcess::NotRunning) {
            console.kill();
            console.waitForFinished(kExitTimeoutMs);
        }
    });
    // QSG_INFO: the scene graph logs the OpenGL context it made (checked below).
    QProcessEnvironment info;
    info.insert(QStringLiteral("QSG_INFO"), QStringLiteral("1"));
    const QUrl base = startConsole(console, kScreenshotAfterMs, {QStringLiteral("--screenshot"), shot}, info);
    QVERIFY(!base.isEmpty());

    // Two rides in the centre: their cars turn "to pickup" (orange) on the map.
    QNetworkAccessManager network;
    QVERIFY(!book(network, base, QStringLiteral("screenshot-1"), 57.7065, 11.9670).isEmpty());
    QVERIFY(!book(network, base, QStringLiteral("screenshot-2"), 57.6990, 11.9750).isEmpty());

    QVERIFY(console.waitForFinished(kExitTimeoutMs));
    QCOMPARE(console.exitStatus(), QProcess::NormalExit);
    QCOMPARE(console.exitCode(), 0);

    // The window has no depth or stencil buffer: llvmpipe's fast paths for quads need neither.
    const QString log = QString::fromUtf8(console.readAllStandardError());
    const qsizetype context = log.indexOf(QLatin1String("Created OpenGL context"));
    QVERIFY2(context >= 0, "QSG_INFO logged no OpenGL context");
    const QString format = log.mid(context, log.indexOf(QLatin1Char('\n'), context) - context);
    QVERIFY2(format.contains(QLatin1String("depthBufferSize 0")), qPrintable(format));
    QVERIFY2(format.contains(QLatin1String("stencilBufferSize 0")), qPrintable(format));

    QImage image(shot);
    QVERIFY2(!image.isNull(), qPrintable(shot));
    image = image.convertToFormat(QImage::Format_RGB32);
    QVERIFY(image.width() >= 960 && image.height() >= 600);

    // The map is the left part of the window, under the tool bar and the legend (whose
    // swatches have the cars' colours), left of the side panel.
    const QRect map(0, 150, image.width() * 6 / 10, image.height() - 170);
    const int available = countNear(image, map, kAvailable, 12);
    const int toPickup = countNear(image, map, kToPickup, 12);
    const int streets = countNear(image, map, kMajorRoad, 16) + countNear(image, map, kMinorRoad, 16);
    qInfo("screenshot %s: %d available-car px, %d to-pickup px, %d street px", qPrintable(shot), available, toPickup,
          streets);
    QVERIFY2(streets > 20000, "the streets are not drawn");
    QVERIFY2(available > 2000, "the available cars are not drawn");
    QVERIFY2(toPickup > 10, "the booked cars are not drawn in the to-pickup colour");
}

QUrl ConsoleScreenshotTest::startConsole(QProcess &console, int quitAfterMs, const QStringList &extraArgs,
                                         const QProcessEnvironment &extraEnv)
{
    // Clean settings for each run: default layout, empty benchmark history.
    m_config = std::make_unique<QTemporaryDir>();
    QProcessEnvironment env = windowedEnvironment(m_config->path());
    env.insert(extraEnv);
    console.setProcessEnvironment(env);
    console.start(consoleBinary(),
                  QStringList{QStringLiteral("--host"), QStringLiteral("127.0.0.1"), QStringLiteral("--port"),
                              QStringLiteral("0"), QStringLiteral("--cars"), QStringLiteral("500"),
                              QStringLiteral("--quit-after-ms"), QString::number(quitAfterMs)}
                      + extraArgs);
    if (!console.waitForStarted(kStartTimeoutMs)) {
        qWarning("cannot start taxicore: %s", qPrintable(console.errorString()));
        return {};
    }
    QDeadlineTimer deadline(kStartTimeoutMs);
    while (!console.canReadLine() && !deadline.hasExpired() && console.state() == QProcess::Running)
        console.waitForReadyRead(100);
    const QString line = QString::fromUtf8(console.readLine()).trimmed();
    if (!line.startsWith(QLatin1String("listening on http://"))) {
        qWarning("unexpected first line: %s", qPrintable(line));
        return {};
    }
    return QUrl(line.mid(int(qstrlen("listening on "))));
}

QNetworkReply *ConsoleScreenshotTest::send(QNetworkAccessManager &network, const QNetworkRequest &request,
                                           const QByteArray &verb, const QByteArray &body)
{
    QNetworkReply *reply = network.sendCustomRequest(request, verb, body);
    QSignalSpy finished(reply, &QNetworkReply::finished);
    finished.wait(kRequestTimeoutMs);
    return reply;
}

void ConsoleScreenshotTest::serverPanelFollowsAModeSwitch()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");

    const QString shot = artifactDir() + QStringLiteral("/console-server-panel.png");
    QFile::remove(shot);
    QProcess console;
    auto cleanup = qScopeGuard([&console] {
        if (console.state() != QProcess::NotRunning) {
            console.kill();
            console.waitForFinished(kExitTimeoutMs);
        }
    });
    const QUrl base =
        startConsole(console, kServerPanelAfterMs,
                     {QStringLiteral("--panel"), QStringLiteral("server"), QStringLiteral("--screenshot"), shot});
    QVERIFY(!base.isEmpty());

    // Switch to pool mode through the admin API, as an engineer's script would.
    QNetworkAccessManager network;
    QNetworkRequest admin(base.resolved(QUrl(QStringLiteral("/admin/v1/runtime"))));
    admin.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    QNetworkReply *switched = send(network, admin, "PUT", R"({"mode":"pool","threads":2})");
    QCOMPARE(switched->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
    switched->deleteLater();

    // Some load for the req/s chart.
    for (int i = 0; i < 200; ++i) {
        QNetworkReply *hello = send(network, QNetworkRequest(base.resolved(QUrl(QStringLiteral("/hello")))), "GET");
        QCOMPARE(hello->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
        hello->deleteLater();
        if (i % 50 == 49)
            QTest::qWait(600); // spread over a few chart samples
    }

    QVERIFY(console.waitForFinished(kExitTimeoutMs));
    QCOMPARE(console.exitCode(), 0);
    const QString out = QString::fromUtf8(console.readAllStandardOutput());
    QVERIFY2(out.contains(QLatin1String("quit mode=pool")), qPrintable(out));

    QImage image(shot);
    QVERIFY2(!image.isNull(), qPrintable(shot));
    image = image.convertToFormat(QImage::Format_RGB32);
    // The chart's line (#2f6fd6) in the side panel: the chart drew live samples.
    const QRect panel(image.width() * 7 / 10, 40, image.width() * 3 / 10 - 1, image.height() - 41);
    const int chartLine = countNear(image, panel, QColor(0x2f, 0x6f, 0xd6), 40);
    qInfo("screenshot %s: %d chart-line px", qPrintable(shot), chartLine);
    QVERIFY2(chartLine > 20, "the req/s chart shows no line");
}

void ConsoleScreenshotTest::benchmarkRunsAndShowsItsResult()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");

    const QString shot = artifactDir() + QStringLiteral("/console-benchmark.png");
    QFile::remove(shot);
    QProcess console;
    auto cleanup = qScopeGuard([&console] {
        if (console.state() != QProcess::NotRunning) {
            console.kill();
            console.waitForFinished(kExitTimeoutMs);
        }
    });
    // The panel's defaults: 64 clients for 5 s, run by taxicore-bench as a separate process.
    const QUrl base =
        startConsole(console, kBenchmarkAfterMs,
                     {QStringLiteral("--benchmark"), QStringLiteral("/hello"), QStringLiteral("--screenshot"), shot});
    QVERIFY(!base.isEmpty());

    QVERIFY(console.waitForFinished(kExitTimeoutMs));
    QCOMPARE(console.exitCode(), 0);
    const QString out = QString::fromUtf8(console.readAllStandardOutput());
    QVERIFY2(out.contains(QLatin1String("benchmark-results=1")), qPrintable(out));

    QImage image(shot);
    QVERIFY2(!image.isNull(), qPrintable(shot));
    image = image.convertToFormat(QImage::Format_RGB32);
    // The live req/s line (#d61f69) in the side panel.
    const QRect panel(image.width() * 2 / 3, 40, image.width() / 3 - 1, image.height() - 41);
    const int benchLine = countNear(image, panel, QColor(0xd6, 0x1f, 0x69), 40);
    qInfo("screenshot %s: %d benchmark-line px", qPrintable(shot), benchLine);
    QVERIFY2(benchLine > 20, "the benchmark chart shows no line");
}

void ConsoleScreenshotTest::reassignFromTheBookingsPanel()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");

    const QString shot = artifactDir() + QStringLiteral("/console-reassign.png");
    QFile::remove(shot);
    QTemporaryDir data;
    QVERIFY(data.isValid());
    QProcess console;
    auto cleanup = qScopeGuard([&console] {
        if (console.state() != QProcess::NotRunning) {
            console.kill();
            console.waitForFinished(kExitTimeoutMs);
        }
    });
    // The hook selects the newest open booking in the bookings panel and presses "Reassign".
    const QUrl base = startConsole(console, kReassignQuitAfterMs,
                                   {QStringLiteral("--data-dir"), data.path(), QStringLiteral("--reassign-after-ms"),
                                    QString::number(kReassignAfterMs), QStringLiteral("--screenshot"), shot});
    QVERIFY(!base.isEmpty());
    QNetworkAccessManager network;
    const QJsonObject booked = book(network, base, QStringLiteral("reassign-me"), 57.7065, 11.9670);
    QVERIFY(!booked.isEmpty());
    const qint64 id = booked.value(QStringLiteral("booking_id")).toInteger();
    const int firstCar = booked.value(QStringLiteral("car_id")).toInt();

    // "reassigned booking ID car OLD -> NEW" on stdout once the panel did it.
    QString out;
    const QRegularExpression done(QStringLiteral("reassigned booking (\\d+) car (\\d+) -> (\\d+)"));
    QRegularExpressionMatch match;
    QDeadlineTimer deadline(kReassignAfterMs + kStartTimeoutMs);
    while (!(match = done.match(out)).hasMatch() && !deadline.hasExpired() && console.state() == QProcess::Running) {
        console.waitForReadyRead(200);
        out += QString::fromUtf8(console.readAllStandardOutput());
    }
    QVERIFY2(match.hasMatch(), qPrintable(out));
    QCOMPARE(match.captured(1).toLongLong(), id);
    QCOMPARE(match.captured(2).toInt(), firstCar);
    const int newCar = match.captured(3).toInt();
    QVERIFY(newCar > 0 && newCar != firstCar);

    // The rider sees the new car (a booking is shown only with its rider token).
    QNetworkRequest read(base.resolved(QUrl(QStringLiteral("/api/v1/bookings/%1").arg(id))));
    read.setRawHeader("Authorization", "Bearer " + booked.value(QStringLiteral("rider_token")).toString().toLatin1());
    QNetworkReply *reply = send(network, read, "GET");
    QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
    const QJsonObject now = QJsonDocument::fromJson(reply->readAll()).object();
    reply->deleteLater();
    QCOMPARE(now.value(QStringLiteral("car_id")).toInt(), newCar);
    // Assigned again, or arriving already when the new car was next to the pickup.
    QVERIFY2(QStringList({QStringLiteral("assigned"), QStringLiteral("arriving")})
                 .contains(now.value(QStringLiteral("state")).toString()),
             qPrintable(now.value(QStringLiteral("state")).toString()));

    QVERIFY(console.waitForFinished(kExitTimeoutMs));
    QCOMPARE(console.exitCode(), 0);
    QVERIFY(QFile::exists(shot));

    // And the ledger: a restart would restore the booking with its new car.
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("reassign-check"));
        db.setDatabaseName(data.filePath(QStringLiteral("ledger.sqlite")));
        QVERIFY(db.open());
        QSqlQuery row(db);
        QVERIFY(row.exec(QStringLiteral("SELECT car_id FROM bookings WHERE id = %1").arg(id)) && row.next());
        QCOMPARE(row.value(0).toInt(), newCar);
        QSqlQuery moves(db);
        QVERIFY(moves.exec(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id = %1 AND car_id = %2")
                               .arg(id)
                               .arg(newCar))
                && moves.next());
        QCOMPARE(moves.value(0).toInt(), 1);
    }
    QSqlDatabase::removeDatabase(QStringLiteral("reassign-check"));
}

QTEST_GUILESS_MAIN(ConsoleScreenshotTest)
#include "console_screenshot_test.moc"
