// The map as an operator sees it, in a real window (Xvfb + Mesa OpenGL) over a real embedded
// server with 500 cars: at full view cars are counted in circles, not drawn as specks; zoomed
// in they are single arrows in their state colours, with street names that do not overlap and
// a scale bar; a clicked car with a booking shows its route to the pickup and its trail.
// PNGs: $TAXICORE_ARTIFACT_DIR/console-map-{full,zoomed,selected}.png.
#include "ConsoleBackend.h"

#include "ConsoleKit.h"
#include "ConsoleProcessKit.h"
#include "Wait.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QQmlComponent>
#include <QQmlEngine>
#include <QQmlExtensionPlugin>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

Q_IMPORT_QML_PLUGIN(TaxiCorePlugin)
Q_IMPORT_QML_PLUGIN(TaxiCoreConsolePlugin)

using namespace taxicore::test;

namespace {
constexpr int kCars = 500;
constexpr int kStartTimeoutMs = 20000;
constexpr int kRequestTimeoutMs = 5000;
constexpr int kSettleMs = 1500;                              // frames drawn, labels painted, trail samples taken
constexpr double kPickupLat = 57.7065, kPickupLng = 11.9670; // Brunnsparken
constexpr double kDropoffLat = 57.6960, kDropoffLng = 11.9790;

// CityMap.qml's light palette (Xvfb has no dark theme).
const QColor kClusterFill(0x2b, 0x36, 0x3d);
const QColor kAvailable(0x2e, 0xa0, 0x4a);
const QColor kToPickup(0xf0, 0x8c, 0x10);
const QColor kHighlight(0xd6, 0x1f, 0x69);
} // namespace

class ConsoleMapScreenshotTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void fullViewCountsCarsInCircles();
    void zoomedInShowsCarsStreetNamesAndScale();
    void selectedCarShowsItsRouteAndTrail();

private:
    QImage shoot(const QString &name);
    QQuickItem *child(const char *objectName) const { return m_map->findChild<QQuickItem *>(objectName); }

    QTemporaryDir m_settings;
    QTemporaryDir m_data;
    std::unique_ptr<ConsoleBackend> m_backend;
    std::unique_ptr<QQmlEngine> m_engine;
    std::unique_ptr<QQuickWindow> m_window;
    QQuickItem *m_map = nullptr;
};

void ConsoleMapScreenshotTest::initTestCase()
{
    if (QGuiApplication::platformName() == QLatin1String("offscreen"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");
    useSettingsDirectory(m_settings.path());
    m_backend = std::make_unique<ConsoleBackend>(
        consoleOptions({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cars"), QString::number(kCars),
                        QStringLiteral("--data-dir"), m_data.path()},
                       StoredSettings::Ignore));
    QVERIFY2(m_backend->start(), qPrintable(m_backend->errorString()));
    QVERIFY(waitUntil([this] { return m_backend->city() != nullptr; }, kStartTimeoutMs));
    ConsoleBackend::setInstance(m_backend.get());

    m_engine = std::make_unique<QQmlEngine>();
    m_engine->addImportPath(QStringLiteral("qrc:/qt/qml"));
    QQmlComponent component(m_engine.get());
    component.setData("import QtQuick\nimport TaxiCore\nCityMap { width: 1280; height: 800 }", QUrl());
    m_map = qobject_cast<QQuickItem *>(component.create());
    QVERIFY2(m_map, qPrintable(component.errorString()));
    m_window = std::make_unique<QQuickWindow>();
    m_window->resize(1280, 800);
    m_map->setParentItem(m_window->contentItem());
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void ConsoleMapScreenshotTest::cleanupTestCase()
{
    delete m_map;
    m_window.reset();
    m_engine.reset();
    ConsoleBackend::setInstance(nullptr);
    m_backend.reset();
}

QImage ConsoleMapScreenshotTest::shoot(const QString &name)
{
    QTest::qWait(kSettleMs);
    const QImage image = m_window->grabWindow().convertToFormat(QImage::Format_RGB32);
    const QString path = artifactDir() + QStringLiteral("/console-map-%1.png").arg(name);
    if (!image.save(path))
        qWarning("could not save %s", qPrintable(path));
    qInfo("screenshot %s", qPrintable(path));
    return image;
}

void ConsoleMapScreenshotTest::fullViewCountsCarsInCircles()
{
    QVERIFY(waitUntil([this] { return m_map->property("carsShown").toInt() == kCars; }, kStartTimeoutMs));
    QVERIFY(m_map->property("map").value<QObject *>()->property("clustered").toBool());
    const QImage image = shoot(QStringLiteral("full"));
    // The circles' dark fill (blended a little with the map): dozens of circles of 11+ px radius.
    const int circles = countNear(image, image.rect(), kClusterFill, 32);
    qInfo("%d cluster px", circles);
    QVERIFY2(circles > 30 * 300, qPrintable(QString::number(circles)));
    QCOMPARE(child("carCount")->property("text").toString(), QStringLiteral("500 cars"));
    QVERIFY(!child("scaleBarLabel")->property("text").toString().isEmpty());
}

void ConsoleMapScreenshotTest::zoomedInShowsCarsStreetNamesAndScale()
{
    QObject *map = m_map->property("map").value<QObject *>();
    const QString wide = child("scaleBarLabel")->property("text").toString();
    QMetaObject::invokeMethod(map, "showLocation", Q_ARG(double, kPickupLat), Q_ARG(double, kPickupLng));
    QVERIFY(!map->property("clustered").toBool());
    const QImage image = shoot(QStringLiteral("zoomed"));
    const int available = countNear(image, image.rect(), kAvailable, 12);
    qInfo("%d available-car px", available);
    QVERIFY2(available > 200, qPrintable(QString::number(available)));
    QVERIFY(child("scaleBarLabel")->property("text").toString() != wide);

    // Street names in view, none overlapping another.
    const QVariantList labels = child("streetLabels")->property("placed").toList();
    qInfo("%lld street labels", qlonglong(labels.size()));
    QVERIFY2(labels.size() >= 5, qPrintable(QString::number(labels.size())));
    std::vector<QPolygonF> boxes;
    for (const QVariant &v : labels) {
        const QVariantMap l = v.toMap();
        QTransform t;
        t.translate(l[QStringLiteral("x")].toDouble(), l[QStringLiteral("y")].toDouble());
        t.rotate(l[QStringLiteral("angle")].toDouble());
        const double w = l[QStringLiteral("width")].toDouble(), h = l[QStringLiteral("height")].toDouble();
        boxes.push_back(t.map(QPolygonF(QRectF(-w / 2, -h / 2, w, h))));
    }
    for (size_t i = 0; i < boxes.size(); ++i) {
        for (size_t j = i + 1; j < boxes.size(); ++j)
            QVERIFY2(!boxes[i].intersects(boxes[j]),
                     qPrintable(labels[qsizetype(i)].toMap()[QStringLiteral("text")].toString()));
    }
}

void ConsoleMapScreenshotTest::selectedCarShowsItsRouteAndTrail()
{
    // A ride from Brunnsparken: its car drives to the pickup (orange route) and leaves a trail.
    QNetworkAccessManager network;
    QNetworkRequest request(m_backend->url().resolved(QUrl(QStringLiteral("/api/v1/bookings"))));
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    const QJsonObject body{{QStringLiteral("rider_id"), QStringLiteral("map-screenshot")},
                           {QStringLiteral("pickup"),
                            QJsonObject{{QStringLiteral("lat"), kPickupLat}, {QStringLiteral("lng"), kPickupLng}}},
                           {QStringLiteral("dropoff"),
                            QJsonObject{{QStringLiteral("lat"), kDropoffLat}, {QStringLiteral("lng"), kDropoffLng}}}};
    QNetworkReply *reply = network.post(request, QJsonDocument(body).toJson());
    QSignalSpy finished(reply, &QNetworkReply::finished);
    QVERIFY(finished.wait(kRequestTimeoutMs));
    QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 201);
    const int carId = QJsonDocument::fromJson(reply->readAll()).object().value(QStringLiteral("car_id")).toInt();
    reply->deleteLater();
    QVERIFY(carId > 0);

    m_map->setProperty("selectedCarId", carId);
    QObject *map = m_map->property("map").value<QObject *>();
    const QVariantMap car = m_backend->carInfo(carId);
    QMetaObject::invokeMethod(map, "showLocation", Q_ARG(double, car[QStringLiteral("lat")].toDouble()),
                              Q_ARG(double, car[QStringLiteral("lng")].toDouble()));
    QTest::qWait(3000); // a few trail samples
    const QImage image = shoot(QStringLiteral("selected"));
    const int route = countNear(image, image.rect(), kToPickup, 14);
    const int highlight = countNear(image, image.rect(), kHighlight, 14);
    qInfo("%d route px, %d highlight px", route, highlight);
    QVERIFY2(route > 100, "no route to the pickup");
    QVERIFY2(highlight > 100, "the selected car is not ringed");
}

QTEST_MAIN(ConsoleMapScreenshotTest)
#include "console_map_screenshot_test.moc"
