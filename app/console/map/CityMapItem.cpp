#include "CityMapItem.h"

#include "CarLayer.h"
#include "ClusterLayer.h"
#include "CityRoads.h"
#include "ConsoleBackend.h"
#include "MapScale.h"
#include "StrokeGeometry.h"

#include "city/City.h"
#include "fleet/FleetStore.h"

#include <QGuiApplication>
#include <QMouseEvent>
#include <QSGVertexColorMaterial>
#include <QStyleHints>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>

namespace {
// Cars move every simulator tick; 60 Hz keeps them smooth without burning a core.
constexpr int kFrameIntervalMs = 16;
// A click selects the nearest car within this distance of the pointer.
constexpr double kHitRadiusPx = 10;
// A car is drawn moved on along its heading for at most this long after its last update
// (a little more than the simulator's tick), then it waits for the next one.
constexpr double kMaxExtrapolationMs = 300;
// The selected booking's roads are routed again this often (its car moves on).
constexpr qint64 kRouteRefreshMs = 1000;
// Each wheel notch (120 units) zooms by this factor.
constexpr double kWheelNotchZoom = 1.25;
// The selected car's trail, half its width in px.
constexpr double kTrailHalfWidthPx = 2;
// A click on a counted circle zooms in by this factor, centred on it.
constexpr double kClusterClickZoom = 3;
// showLocation() zooms in at least this far (px per metre): a few blocks across the view.
constexpr double kShowLocationScale = 0.5;

// The scene, in pixels: counted circles, single cars, then the selection over them.
struct MapNode : QSGNode {
    ClusterLayer *clusters = new ClusterLayer;
    CarLayer *cars = new CarLayer;
    QSGGeometryNode *highlight = new QSGGeometryNode;

    MapNode()
    {
        appendChildNode(clusters);
        appendChildNode(cars);
        auto *geometry = new QSGGeometry(QSGGeometry::defaultAttributes_ColoredPoint2D(), 0);
        geometry->setDrawingMode(QSGGeometry::DrawTriangles);
        highlight->setGeometry(geometry);
        highlight->setFlag(QSGNode::OwnsGeometry);
        highlight->setMaterial(new QSGVertexColorMaterial);
        highlight->setFlag(QSGNode::OwnsMaterial);
        appendChildNode(highlight);
    }
};
} // namespace

CityMapItem::CityMapItem(QQuickItem *parent)
    : QQuickItem(parent)
{
    setFlag(ItemHasContents);
    setAcceptedMouseButtons(Qt::LeftButton);
    m_frameTimer.setInterval(kFrameIntervalMs);
    connect(&m_frameTimer, &QTimer::timeout, this, [this] {
        const qint64 shown = shownBookingId();
        if (shown != m_routedBookingId || (shown > 0 && m_routeClock.elapsed() > kRouteRefreshMs))
            routeSelection();
        update();
        // m_cars and m_stateCounts are only written during the sync, while this thread waits.
        const QList<int> counts(m_stateCounts.begin(), m_stateCounts.end());
        if (int(m_cars.size()) != m_carsShown || counts != m_carsByState) {
            m_carsShown = int(m_cars.size());
            m_carsByState = counts;
            Q_EMIT carsShownChanged();
        }
    });
    m_frameTimer.start();
    connect(this, &CityMapItem::styleChanged, this, &QQuickItem::update);
}

CityMapItem::~CityMapItem() = default;

ConsoleBackend *CityMapItem::backend() const
{
    return m_backend;
}

void CityMapItem::setBackend(ConsoleBackend *backend)
{
    if (m_backend == backend)
        return;
    if (m_backend)
        disconnect(m_backend, &ConsoleBackend::servingChanged, this, &CityMapItem::cityChanged);
    m_backend = backend;
    if (m_backend)
        connect(m_backend, &ConsoleBackend::servingChanged, this, &CityMapItem::cityChanged);
    if (!m_userMoved && width() > 0 && height() > 0)
        fitCity(); // the city's own bounds
    Q_EMIT backendChanged();
    Q_EMIT cityChanged();
    update();
}

std::shared_ptr<const taxicore::city::City> CityMapItem::city() const
{
    return m_backend ? m_backend->city() : nullptr;
}

void CityMapItem::setSelectedCarId(int id)
{
    if (m_selectedCarId == id)
        return;
    m_selectedCarId = id;
    Q_EMIT selectionChanged();
    update();
}

void CityMapItem::setSelectedBookingId(qint64 id)
{
    if (m_selectedBookingId == id)
        return;
    m_selectedBookingId = id;
    routeSelection();
    Q_EMIT selectionChanged();
    update();
}

void CityMapItem::setLive(bool live)
{
    if (live == m_frameTimer.isActive())
        return;
    live ? m_frameTimer.start() : m_frameTimer.stop();
    Q_EMIT liveChanged();
}

int CityMapItem::carAt(double x, double y) const
{
    int best = 0;
    double bestDist = kHitRadiusPx * kHitRadiusPx;
    for (const auto &car : m_drawnCars) {
        const QPointF delta = m_viewport.toScreen(car.metres) - QPointF(x, y);
        const double dist = delta.x() * delta.x() + delta.y() * delta.y();
        if (dist <= bestDist) {
            bestDist = dist;
            best = car.id;
        }
    }
    return best;
}

const CarCluster *CityMapItem::clusterAt(QPointF pos) const
{
    for (const auto &cluster : m_clusters) {
        const QPointF delta = cluster.screen - pos;
        if (cluster.count > 1 && delta.x() * delta.x() + delta.y() * delta.y() <= cluster.radius * cluster.radius)
            return &cluster;
    }
    return nullptr;
}

int CityMapItem::clusterCountAt(double x, double y) const
{
    const CarCluster *cluster = clusterAt({x, y});
    return cluster ? cluster->count : 0;
}

void CityMapItem::panBy(double dx, double dy)
{
    m_userMoved = true;
    m_viewport.panBy({dx, dy});
    Q_EMIT viewChanged();
    update();
}

void CityMapItem::zoomAt(double x, double y, double factor)
{
    m_userMoved = true;
    m_viewport.zoomAt({x, y}, factor);
    Q_EMIT viewChanged();
    update();
}

void CityMapItem::fitCity()
{
    const auto city = m_backend ? m_backend->city() : nullptr;
    if (city) {
        const auto bounds = city->bounds();
        m_viewport.fit(m_projection.toMetres(bounds.max.lat, bounds.min.lng),
                       m_projection.toMetres(bounds.min.lat, bounds.max.lng));
    } else {
        m_viewport.fit(m_projection.toMetres(CityRoads::kNorth, CityRoads::kWest),
                       m_projection.toMetres(CityRoads::kSouth, CityRoads::kEast));
    }
    Q_EMIT viewChanged();
    update();
}

QPointF CityMapItem::toScreen(double lat, double lng) const
{
    return m_viewport.toScreen(m_projection.toMetres(lat, lng));
}

QVariantMap CityMapItem::coordinateAt(double x, double y) const
{
    const QPointF lngLat = m_projection.toLatLng(m_viewport.toMetres({x, y}));
    return {{QStringLiteral("lat"), lngLat.y()}, {QStringLiteral("lng"), lngLat.x()}};
}

void CityMapItem::showLocation(double lat, double lng)
{
    m_userMoved = true;
    if (m_viewport.scale() < kShowLocationScale)
        m_viewport.zoomAt({width() / 2, height() / 2}, kShowLocationScale / m_viewport.scale());
    const QPointF at = toScreen(lat, lng);
    m_viewport.panBy(QPointF(width() / 2, height() / 2) - at);
    Q_EMIT viewChanged();
    update();
}

QVariantMap CityMapItem::scaleBarFor(double metresPerPixel, double maxWidthPx) const
{
    const ScaleBarChoice bar = MapScale::choose(metresPerPixel, maxWidthPx);
    return {
        {QStringLiteral("metres"), bar.metres}, {QStringLiteral("px"), bar.px}, {QStringLiteral("label"), bar.label}};
}

void CityMapItem::geometryChange(const QRectF &newGeometry, const QRectF &oldGeometry)
{
    QQuickItem::geometryChange(newGeometry, oldGeometry);
    m_viewport.setSize(newGeometry.size());
    // Until the operator moves the map, it keeps showing the whole city.
    if (!m_userMoved && !newGeometry.isEmpty())
        fitCity();
    update();
}

void CityMapItem::mousePressEvent(QMouseEvent *event)
{
    m_pressPos = m_lastDragPos = event->position();
    m_dragging = false;
    event->accept();
}

void CityMapItem::mouseMoveEvent(QMouseEvent *event)
{
    const QPointF pos = event->position();
    if (!m_dragging && (pos - m_pressPos).manhattanLength() < QGuiApplication::styleHints()->startDragDistance())
        return;
    m_dragging = true;
    m_userMoved = true;
    panBy(pos.x() - m_lastDragPos.x(), pos.y() - m_lastDragPos.y());
    m_lastDragPos = pos;
}

void CityMapItem::mouseReleaseEvent(QMouseEvent *event)
{
    if (!m_dragging) {
        const QPointF pos = event->position();
        const int car = carAt(pos.x(), pos.y());
        // A counted circle opens up: zoom in on it, as map viewers do.
        if (const CarCluster *cluster = car ? nullptr : clusterAt(pos)) {
            const QPointF centre = cluster->screen;
            zoomAt(centre.x(), centre.y(), kClusterClickZoom);
            panBy(width() / 2 - centre.x(), height() / 2 - centre.y());
        } else {
            Q_EMIT clicked(car, pos.x(), pos.y());
        }
    }
    m_dragging = false;
}

void CityMapItem::wheelEvent(QWheelEvent *event)
{
    const double notches = event->angleDelta().y() / 120.0;
    if (notches != 0) {
        m_userMoved = true;
        zoomAt(event->position().x(), event->position().y(), std::pow(kWheelNotchZoom, notches));
    }
    event->accept();
}

void CityMapItem::readFleet()
{
    taxicore::FleetStore *fleet = m_backend ? m_backend->fleet() : nullptr;
    if (!fleet) {
        m_cars.clear();
        return;
    }
    const int count = fleet->carCount();
    const int64_t now = taxicore::clock::wallMs();
    m_cars.resize(size_t(count));
    m_stateCounts.fill(0);
    size_t n = 0;
    for (int id = 1; id <= count; ++id) {
        const auto car = fleet->car(id);
        if (!car)
            continue;
        // The simulator moves cars every few hundred ms; drawing them where their speed and
        // heading have taken them since keeps the motion smooth at the display's frame rate.
        const double ageS = std::clamp(double(now - car->updatedMs), 0.0, kMaxExtrapolationMs) / 1000.0;
        const double travelled = double(car->speedKmh) / 3.6 * ageS;
        const double rad = double(car->heading) * std::numbers::pi / 180.0;
        const QPointF at = m_projection.toMetres(car->position.lat, car->position.lng)
                           + QPointF(std::sin(rad), -std::cos(rad)) * travelled;
        m_cars[n++] = {car->id, at, car->heading, car->state};
        if (size_t(car->state) < m_stateCounts.size())
            ++m_stateCounts[size_t(car->state)];
    }
    m_cars.resize(n);
    m_trails.record(m_cars, now);
}

qint64 CityMapItem::shownBookingId() const
{
    if (m_selectedBookingId > 0)
        return m_selectedBookingId;
    taxicore::FleetStore *fleet = m_backend ? m_backend->fleet() : nullptr;
    const auto car = fleet && m_selectedCarId > 0 ? fleet->car(m_selectedCarId) : std::nullopt;
    return car ? qint64(car->bookingId) : 0;
}

void CityMapItem::routeSelection()
{
    m_approachRoute.clear();
    m_tripRoute.clear();
    m_routeClock.restart();
    m_routedBookingId = shownBookingId();
    taxicore::FleetStore *fleet = m_backend ? m_backend->fleet() : nullptr;
    const auto city = m_backend ? m_backend->city() : nullptr;
    const auto booking = fleet && m_routedBookingId > 0 ? fleet->booking(uint64_t(m_routedBookingId)) : std::nullopt;
    if (!city || !booking)
        return;
    const auto car = fleet->car(booking->carId);
    const bool toPickup =
        booking->state == taxicore::BookingState::Assigned || booking->state == taxicore::BookingState::Arriving;
    const bool onTrip = booking->state == taxicore::BookingState::OnTrip;
    const auto metres = [this](const taxicore::city::Route &route) {
        std::vector<QPointF> points;
        if (route.found) {
            for (const auto &p : route.polyline)
                points.push_back(m_projection.toMetres(p.lat, p.lng));
        }
        return points;
    };
    const taxicore::city::GeoPoint pickup{booking->pickup.lat, booking->pickup.lng};
    if (car && toPickup)
        m_approachRoute = metres(city->route(taxicore::city::GeoPoint{car->position.lat, car->position.lng}, pickup));
    if (booking->hasDropoff && (toPickup || onTrip)) {
        const taxicore::city::GeoPoint from =
            onTrip && car ? taxicore::city::GeoPoint{car->position.lat, car->position.lng} : pickup;
        m_tripRoute = metres(city->route(from, taxicore::city::GeoPoint{booking->dropoff.lat, booking->dropoff.lng}));
    }
}

void CityMapItem::appendRoute(StrokeGeometry::Vertices &out, const std::vector<QPointF> &route, double halfWidth,
                              const QColor &colour) const
{
    for (size_t i = 1; i < route.size(); ++i)
        StrokeGeometry::appendSegment(out, m_viewport.toScreen(route[i - 1]), m_viewport.toScreen(route[i]), halfWidth,
                                      colour);
}

void CityMapItem::appendTrail(StrokeGeometry::Vertices &out, QPointF carScreen) const
{
    // Fades in from the oldest position to the car, so the direction of travel reads at a glance.
    std::vector<QPointF> trail = m_trails.trailOf(m_selectedCarId);
    for (auto &p : trail)
        p = m_viewport.toScreen(p);
    trail.push_back(carScreen);
    QColor colour = m_highlightColor;
    for (size_t i = 1; i < trail.size(); ++i) {
        colour.setAlphaF(float(0.15 + 0.6 * double(i) / double(trail.size())));
        StrokeGeometry::appendSegment(out, trail[i - 1], trail[i], kTrailHalfWidthPx, colour);
    }
}

void CityMapItem::updateHighlight(QSGGeometryNode *node) const
{
    StrokeGeometry::Vertices out;
    taxicore::FleetStore *fleet = m_backend ? m_backend->fleet() : nullptr;
    const auto carScreen = [this, fleet](int id) -> std::optional<QPointF> {
        const auto car = fleet ? fleet->car(id) : std::nullopt;
        if (!car)
            return std::nullopt;
        return m_viewport.toScreen(m_projection.toMetres(car->position.lat, car->position.lng));
    };

    if (const auto car = carScreen(m_selectedCarId))
        appendTrail(out, *car);
    if (fleet && m_routedBookingId > 0) {
        if (const auto booking = fleet->booking(uint64_t(m_routedBookingId))) {
            const QPointF pickup = m_viewport.toScreen(m_projection.toMetres(booking->pickup.lat, booking->pickup.lng));
            const auto car = carScreen(booking->carId);
            const bool toPickup = booking->state == taxicore::BookingState::Assigned
                                  || booking->state == taxicore::BookingState::Arriving;
            // Along the roads when routed, else as the crow flies.
            if (!m_approachRoute.empty())
                appendRoute(out, m_approachRoute, 2, m_toPickupColor);
            else if (car && toPickup)
                StrokeGeometry::appendSegment(out, *car, pickup, 1.5, m_toPickupColor);
            if (booking->hasDropoff) {
                const QPointF dropoff =
                    m_viewport.toScreen(m_projection.toMetres(booking->dropoff.lat, booking->dropoff.lng));
                const QPointF from = (car && booking->state == taxicore::BookingState::OnTrip) ? *car : pickup;
                if (!m_tripRoute.empty())
                    appendRoute(out, m_tripRoute, 2.5, m_onTripColor);
                else
                    StrokeGeometry::appendSegment(out, from, dropoff, 2, m_onTripColor);
                StrokeGeometry::appendDisc(out, dropoff, 6, m_highlightColor);
            }
            StrokeGeometry::appendDisc(out, pickup, 6, m_availableColor);
            StrokeGeometry::appendRing(out, pickup, 7, 1.5, m_highlightColor);
        }
    }
    if (const auto car = carScreen(m_selectedCarId))
        StrokeGeometry::appendRing(out, *car, 13, 3, m_highlightColor);
    StrokeGeometry::upload(node, out);
}

QSGNode *CityMapItem::updatePaintNode(QSGNode *oldNode, UpdatePaintNodeData *)
{
    // Runs on the render thread while the GUI thread waits: members are safe to touch here.
    auto *root = static_cast<MapNode *>(oldNode);
    if (!root)
        root = new MapNode;

    readFleet();
    const CarLayer::Palette palette{m_offlineColor, m_availableColor, m_toPickupColor, m_onTripColor, m_toPickupColor};
    m_clusters.clear();
    if (clustered()) {
        m_clusters = CarClusters::build(m_cars, m_viewport);
        // Drawn singly: the only car of its cell, and the selected car wherever it is.
        m_drawnCars.clear();
        for (const auto &cluster : m_clusters) {
            if (cluster.count == 1 && cluster.carId != m_selectedCarId)
                m_drawnCars.push_back(m_cars[cluster.carIndex]);
        }
        for (const auto &car : m_cars) {
            if (car.id == m_selectedCarId && m_selectedCarId > 0)
                m_drawnCars.push_back(car);
        }
    } else {
        m_drawnCars = m_cars;
    }
    root->clusters->update(m_clusters, {m_clusterColor, m_clusterTextColor, palette}, window());
    root->cars->update(m_drawnCars, m_viewport, palette, m_markerHaloColor);
    updateHighlight(root->highlight);
    return root;
}
