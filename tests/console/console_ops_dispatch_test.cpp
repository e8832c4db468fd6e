// The operations view end to end, in a real window (Xvfb + Mesa: the map's geometry is drawn):
// the console's QML (Main.qml) over its embedded server, which serves real HTTP on loopback.
// Rides booked over HTTP show in the KPI bar and, past a (lowered) threshold, in the alert list;
// a crowd of them makes a surge the heat layer shows; a car whose device stopped reporting is a
// stale-car alert. Manual dispatch: a booking is picked, a real mouse click on an available car on
// the map reassigns it through POST /admin/v1/bookings/{id}/reassign, and GET
// /api/v1/bookings/{id} shows the new car; a click on a taken car shows the server's 409 in the
// dispatch bar. Screenshots (surge heat layer on) go to $TAXICORE_ARTIFACT_DIR:
// console-operations.png, console-operations-refused.png (1280×800), console-operations-1920.png.
#include "ConsoleBackend.h"
#include "ops/ManualDispatch.h"
#include "ops/OperationsKpis.h"

#include "CityMapItem.h"
#include "fleet/FleetStore.h"

#include "ConsoleKit.h"
#include "ConsoleProcessKit.h"
#include "Wait.h"

#include <QApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QQmlApplicationEngine>
#include <QQmlExtensionPlugin>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

Q_IMPORT_QML_PLUGIN(TaxiCorePlugin)
Q_IMPORT_QML_PLUGIN(TaxiCoreConsolePlugin)

using namespace taxicore::test;

namespace {
constexpr int kCars = 300;
constexpr int kRequestTimeoutMs = 5000;
constexpr int kShownWithinMs = 15000;
constexpr int kDispatchTimeoutMs = 15000;
// Lowered alert thresholds (the settings ops/waitingAlertS, ops/staleCarS) so the screenshot has
// alerts within seconds.
constexpr double kWaitingAlertS = 1;
constexpr double kStaleCarS = 2;
// The map is zoomed in to at least this (px per metre) before a car is clicked: cars are drawn one
// by one there, not counted in clusters as at the whole city.
constexpr double kClickScale = 0.25;
// A click reaches the car drawn within a few pixels; no other car may be that close.
constexpr double kClearancePx = 14;
const taxicore::LatLng kPickups[] = {{57.7065, 11.9670}, {57.6990, 11.9750}, {57.7080, 11.9600}};
// More rides than cars around one corner: its pricing cell surges (the heat layer shows it).
const taxicore::LatLng kCrowd{57.7000, 11.9900};
constexpr int kCrowdRides = 5;
} // namespace

class ConsoleOpsDispatchTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void clickingACarReassignsThePickedBooking();

private:
    QJsonObject request(const QByteArray &verb, const QString &path, const QJsonObject &body = {},
                        const QByteArray &bearer = {}, int *status = nullptr);
    // An available car drawn inside the open part of the map with no other car near it; 0 if none.
    int clickableCar(QPointF *scenePos) const;
    void saveScreenshot(const QString &name);

    std::unique_ptr<QTemporaryDir> m_settingsDir;
    std::unique_ptr<QTemporaryDir> m_dataDir;
    std::unique_ptr<ConsoleBackend> m_backend;
    std::unique_ptr<QQmlApplicationEngine> m_engine;
    QQuickWindow *m_window = nullptr;
    CityMapItem *m_map = nullptr;
    QNetworkAccessManager m_network;
};

void ConsoleOpsDispatchTest::initTestCase()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");
    m_settingsDir = std::make_unique<QTemporaryDir>();
    m_dataDir = std::make_unique<QTemporaryDir>();
    useSettingsDirectory(m_settingsDir->path());
    QSettings().clear();
    QSettings().setValue(QStringLiteral("ops/waitingAlertS"), kWaitingAlertS);
    QSettings().setValue(QStringLiteral("ops/staleCarS"), kStaleCarS);

    const auto options = consoleOptions({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--host"),
                                         QStringLiteral("127.0.0.1"), QStringLiteral("--cars"), QString::number(kCars),
                                         QStringLiteral("--data-dir"), m_dataDir->path()},
                                        StoredSettings::Ignore);
    m_backend = std::make_unique<ConsoleBackend>(options);
    QVERIFY2(m_backend->start(), qPrintable(m_backend->errorString()));
    ConsoleBackend::setInstance(m_backend.get());

    m_engine = std::make_unique<QQmlApplicationEngine>();
    m_engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
    m_engine->load(QUrl(QStringLiteral("qrc:/qt/qml/TaxiCore/Main.qml")));
    QVERIFY(!m_engine->rootObjects().isEmpty());
    m_window = qobject_cast<QQuickWindow *>(m_engine->rootObjects().first());
    QVERIFY(m_window);
    m_window->resize(1280, 800);
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
    m_map = m_window->findChild<CityMapItem *>(QStringLiteral("cityMap"));
    QVERIFY(m_map);
}

void ConsoleOpsDispatchTest::cleanupTestCase()
{
    m_engine.reset();
    if (m_backend)
        m_backend->stop();
    ConsoleBackend::setInstance(nullptr);
    m_backend.reset();
}

QJsonObject ConsoleOpsDispatchTest::request(const QByteArray &verb, const QString &path, const QJsonObject &body,
                                            const QByteArray &bearer, int *status)
{
    QNetworkRequest r(m_backend->url().resolved(QUrl(path)));
    r.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    if (!bearer.isEmpty())
        r.setRawHeader("Authorization", "Bearer " + bearer);
    QNetworkReply *reply =
        m_network.sendCustomRequest(r, verb, body.isEmpty() ? QByteArray() : QJsonDocument(body).toJson());
    QSignalSpy finished(reply, &QNetworkReply::finished);
    finished.wait(kRequestTimeoutMs);
    if (status)
        *status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    reply->deleteLater();
    return QJsonDocument::fromJson(reply->readAll()).object();
}

int ConsoleOpsDispatchTest::clickableCar(QPointF *scenePos) const
{
    const taxicore::FleetStore &fleet = *m_backend->fleet();
    const MapViewport &view = m_map->viewport();
    // The open middle of the map: clear of the legend, zoom buttons, dispatch bar and alert list.
    const QRectF open(m_map->width() * 0.3, m_map->height() * 0.2, m_map->width() * 0.5, m_map->height() * 0.4);
    std::vector<std::pair<int, QPointF>> drawn;
    for (int id = 1; id <= fleet.carCount(); ++id)
        if (const auto car = fleet.car(id))
            drawn.emplace_back(id, view.toScreen(m_map->projection().toMetres(car->position.lat, car->position.lng)));
    for (const auto &[id, at] : drawn) {
        if (fleet.car(id)->state != taxicore::CarState::Available || !open.contains(at))
            continue;
        const bool alone = std::none_of(drawn.begin(), drawn.end(), [&, id = id, at = at](const auto &other) {
            return other.first != id && QLineF(other.second, at).length() < kClearancePx;
        });
        // ... and drawn on its own (zoomed out, the map counts cars sharing a cell in a circle).
        if (alone && m_map->carAt(at.x(), at.y()) == id) {
            *scenePos = m_map->mapToScene(at);
            return id;
        }
    }
    return 0;
}

void ConsoleOpsDispatchTest::saveScreenshot(const QString &name)
{
    const QString path = artifactDir() + QLatin1Char('/') + name;
    QVERIFY2(m_window->grabWindow().save(path), qPrintable(path));
    qInfo("screenshot %s", qPrintable(path));
}

void ConsoleOpsDispatchTest::clickingACarReassignsThePickedBooking()
{
    // Surge that follows demand at once (no smoothing), so the heat layer has something to show.
    int status = 0;
    request("PUT", QStringLiteral("/admin/v1/tariff"),
            {{QStringLiteral("surge_smoothing_s"), 0}, {QStringLiteral("surge_per_excess"), 1}},
            m_backend->adminToken().toUtf8(), &status);
    QCOMPARE(status, 200);

    // Three rides over HTTP, as riders book them, and a crowd at one corner.
    QList<qint64> bookings;
    for (const auto &pickup : kPickups) {
        const QJsonObject booked =
            request("POST", QStringLiteral("/api/v1/bookings"),
                    {{QStringLiteral("rider_id"), QStringLiteral("ops-rider-%1").arg(bookings.size())},
                     {QStringLiteral("pickup"),
                      QJsonObject{{QStringLiteral("lat"), pickup.lat}, {QStringLiteral("lng"), pickup.lng}}}},
                    {}, &status);
        QCOMPARE(status, 201);
        bookings.append(booked.value(QStringLiteral("booking_id")).toInteger());
    }
    for (int i = 0; i < kCrowdRides; ++i) {
        request("POST", QStringLiteral("/api/v1/bookings"),
                {{QStringLiteral("rider_id"), QStringLiteral("ops-crowd-%1").arg(i)},
                 {QStringLiteral("pickup"),
                  QJsonObject{{QStringLiteral("lat"), kCrowd.lat}, {QStringLiteral("lng"), kCrowd.lng + i * 0.0005}}}},
                {}, &status);
        QCOMPARE(status, 201);
    }
    const qint64 bookingId = bookings.first();
    const int firstCar =
        request("GET", QStringLiteral("/api/v1/bookings/%1").arg(bookingId), {}, m_backend->adminToken().toUtf8())
            .value(QStringLiteral("car_id"))
            .toInt();
    QVERIFY(firstCar > 0);

    // A car whose device reports once and then falls silent: a stale-car alert.
    const int silentCar = kCars;
    request("PUT", QStringLiteral("/api/v1/cars/%1/position").arg(silentCar),
            {{QStringLiteral("lat"), 57.7030}, {QStringLiteral("lng"), 11.9500}}, m_backend->deviceToken().toUtf8(),
            &status);
    QCOMPARE(status, 200);

    // The KPI bar counts the open bookings; the alerts list the waiting riders and the silent car.
    auto *kpis = m_window->findChild<OperationsKpis *>();
    QVERIFY(kpis);
    QVERIFY(waitUntil([&] { return kpis->openBookings() >= 3 && kpis->waitingForPickup() >= 1; }, kShownWithinMs));
    QVERIFY(kpis->utilisation() > 0);
    QVERIFY(kpis->bookingsPerMinute() >= 3);
    OpsAlertModel *alerts = kpis->alerts();
    const auto hasAlert = [alerts](const QString &kind, int carId) {
        for (int row = 0; row < alerts->rowCount(); ++row) {
            const QModelIndex index = alerts->index(row);
            if (index.data(OpsAlertModel::KindRole).toString() == kind
                && (carId == 0 || index.data(OpsAlertModel::CarIdRole).toInt() == carId))
                return true;
        }
        return false;
    };
    QVERIFY2(waitUntil([&] { return hasAlert(QStringLiteral("waiting_booking"), 0); }, kShownWithinMs),
             "no alert for the riders waiting past the threshold");
    QVERIFY2(waitUntil([&] { return hasAlert(QStringLiteral("stale_car"), silentCar); }, kShownWithinMs),
             "no alert for the car that stopped reporting");

    // Manual dispatch: pick the booking, then click an available car on the map.
    auto *dispatch = m_window->findChild<ManualDispatch *>();
    QVERIFY(dispatch);
    // As an operator does: the booking selected in the list (its car ringed), then picked.
    QObject *bookingsPanel = m_window->findChild<QObject *>(QStringLiteral("bookingsPanel"));
    QVERIFY(bookingsPanel);
    QMetaObject::invokeMethod(bookingsPanel, "select", Q_ARG(QVariant, bookingId), Q_ARG(QVariant, firstCar));
    QCOMPARE(m_map->selectedBookingId(), bookingId);
    QCOMPARE(m_map->selectedCarId(), firstCar);
    dispatch->pick(bookingId);
    if (m_map->viewport().scale() < kClickScale)
        m_map->zoomAt(m_map->width() / 2, m_map->height() / 2, kClickScale / m_map->viewport().scale());
    QTest::qWait(200); // a frame at the new zoom
    QPointF at;
    int chosen = 0;
    QVERIFY(waitUntil([&] { return (chosen = clickableCar(&at)) > 0; }, kShownWithinMs));
    QSignalSpy finished(dispatch, &ManualDispatch::finished);
    QTest::mouseClick(m_window, Qt::LeftButton, {}, at.toPoint());
    QVERIFY2(finished.wait(kDispatchTimeoutMs) || !finished.isEmpty(), "the click sent no reassign");
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(4).toString()));
    QCOMPARE(finished.first().at(1).toInt(), 200);

    // The server has the booking on the clicked car.
    const QJsonObject after =
        request("GET", QStringLiteral("/api/v1/bookings/%1").arg(bookingId), {}, m_backend->adminToken().toUtf8());
    QCOMPARE(after.value(QStringLiteral("car_id")).toInt(), chosen);
    QVERIFY(chosen != firstCar);
    QCOMPARE(dispatch->bookingId(), 0); // done: the next click selects again
    // The booking stays selected with the car it now has (its roads and the car ringed on the map).
    QCOMPARE(m_map->selectedBookingId(), bookingId);
    QCOMPARE(m_map->selectedCarId(), chosen);
    QVERIFY2(dispatch->message().contains(QStringLiteral("#%1").arg(chosen)), qPrintable(dispatch->message()));

    // The surge heat layer on, then the view as the operator sees it.
    QObject *surgeToggle = m_window->findChild<QObject *>(QStringLiteral("surgeToggle"));
    QVERIFY(surgeToggle);
    surgeToggle->setProperty("checked", true);
    auto *surge = m_window->findChild<QQuickItem *>(QStringLiteral("surgeLayer"));
    QVERIFY(surge);
    // In the map's overlay slot: over the streets, under the street names and the cars.
    QQuickItem *slot = surge->parentItem();
    QVERIFY(slot);
    QCOMPARE(slot->objectName(), QStringLiteral("overlays"));
    const QList<QQuickItem *> mapLayers = slot->parentItem()->childItems();
    const auto layerIndex = [&mapLayers](const QString &name) {
        for (qsizetype i = 0; i < mapLayers.size(); ++i)
            if (mapLayers[i]->objectName() == name)
                return i;
        return qsizetype(-1);
    };
    QVERIFY(layerIndex(QStringLiteral("streets")) >= 0);
    QVERIFY(layerIndex(QStringLiteral("streets")) < layerIndex(QStringLiteral("overlays")));
    QVERIFY(layerIndex(QStringLiteral("overlays")) < layerIndex(QStringLiteral("streetLabels")));
    QVERIFY(layerIndex(QStringLiteral("streetLabels")) < layerIndex(QStringLiteral("cityMap")));
    QCOMPARE(surge->size(), m_map->size());
    QVERIFY2(waitUntil([surge] { return surge->property("surgingCells").toInt() > 0; }, kShownWithinMs),
             "no pricing cell surges around the crowd");
    QTest::qWait(1200); // a KPI sample and a few frames
    saveScreenshot(QStringLiteral("console-operations.png"));

    // The same booking to a car that is not free (the one it has now): the server's 409, shown.
    dispatch->pick(bookingId);
    finished.clear();
    const QPointF taken = m_map->mapToScene(m_map->viewport().toScreen(m_map->projection().toMetres(
        m_backend->fleet()->car(chosen)->position.lat, m_backend->fleet()->car(chosen)->position.lng)));
    QTest::mouseClick(m_window, Qt::LeftButton, {}, taken.toPoint());
    QVERIFY2(finished.wait(kDispatchTimeoutMs) || !finished.isEmpty(), "the click sent no reassign");
    QVERIFY(!finished.first().at(0).toBool());
    QCOMPARE(finished.first().at(1).toInt(), 409);
    QVERIFY(dispatch->failed());
    QVERIFY2(dispatch->message().contains(QLatin1String("409 car_not_available")), qPrintable(dispatch->message()));
    QObject *shown = m_window->findChild<QObject *>(QStringLiteral("dispatchMessage"));
    QVERIFY(shown);
    QCOMPARE(shown->property("text").toString(), dispatch->message());
    QVERIFY(shown->property("visible").toBool());
    QCOMPARE(request("GET", QStringLiteral("/api/v1/bookings/%1").arg(bookingId), {}, m_backend->adminToken().toUtf8())
                 .value(QStringLiteral("car_id"))
                 .toInt(),
             chosen);
    QTest::qWait(300);
    saveScreenshot(QStringLiteral("console-operations-refused.png"));

    // The same view on a large screen (the window may exceed Xvfb's screen; it renders whole).
    m_window->resize(1920, 1080);
    QTest::qWait(1200);
    QCOMPARE(m_window->grabWindow().size(), QSize(1920, 1080));
    saveScreenshot(QStringLiteral("console-operations-1920.png"));
}

int main(int argc, char *argv[])
{
    // QApplication: the Server panel's charts draw through QGraphicsScene, as in the console.
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("TaxiCoreTest"));
    ConsoleOpsDispatchTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "console_ops_dispatch_test.moc"
