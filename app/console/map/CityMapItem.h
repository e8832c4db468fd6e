#pragma once

#include "CarClusters.h"
#include "CarMarker.h"
#include "CarTrails.h"
#include "MapProjection.h"
#include "MapViewport.h"

#include <QColor>
#include <QElapsedTimer>
#include <QSGGeometry>
#include <QPointer>
#include <QQuickItem>
#include <QTimer>
#include <QVariantMap>
#include <array>
#include <memory>
#include <qqmlregistration.h>
#include <vector>

class ConsoleBackend;
class QSGGeometryNode;
namespace taxicore::city {
class City;
}

// The live city map's view and its moving parts: every car (one node, rewritten each frame
// straight from the fleet's shared memory) and the selection; StreetsItem draws the streets
// under it in the same view. Drag pans, the wheel zooms towards the cursor, a click reports
// the car under it.
class CityMapItem : public QQuickItem {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConsoleBackend *backend READ backend WRITE setBackend NOTIFY backendChanged)
    Q_PROPERTY(int selectedCarId READ selectedCarId WRITE setSelectedCarId NOTIFY selectionChanged)
    Q_PROPERTY(qint64 selectedBookingId READ selectedBookingId WRITE setSelectedBookingId NOTIFY selectionChanged)
    Q_PROPERTY(bool live READ live WRITE setLive NOTIFY liveChanged)
    Q_PROPERTY(double metresPerPixel READ metresPerPixel NOTIFY viewChanged)
    Q_PROPERTY(int carsShown READ carsShown NOTIFY carsShownChanged)
    // Cars per state, indexed by CarState: offline, available, to pickup, on trip.
    Q_PROPERTY(QList<int> carsByState READ carsByState NOTIFY carsShownChanged)
    // Colours come from QML so that the legend and the palette (light/dark) share them.
    Q_PROPERTY(QColor offlineColor MEMBER m_offlineColor NOTIFY styleChanged)
    Q_PROPERTY(QColor availableColor MEMBER m_availableColor NOTIFY styleChanged)
    Q_PROPERTY(QColor toPickupColor MEMBER m_toPickupColor NOTIFY styleChanged)
    Q_PROPERTY(QColor onTripColor MEMBER m_onTripColor NOTIFY styleChanged)
    Q_PROPERTY(QColor highlightColor MEMBER m_highlightColor NOTIFY styleChanged)
    Q_PROPERTY(QColor markerHaloColor MEMBER m_markerHaloColor NOTIFY styleChanged)
    Q_PROPERTY(QColor clusterColor MEMBER m_clusterColor NOTIFY styleChanged)
    Q_PROPERTY(QColor clusterTextColor MEMBER m_clusterTextColor NOTIFY styleChanged)
    // True while zoomed out so far that cars are counted per cell instead of drawn one by one.
    Q_PROPERTY(bool clustered READ clustered NOTIFY viewChanged)

public:
    explicit CityMapItem(QQuickItem *parent = nullptr);
    ~CityMapItem() override;

    ConsoleBackend *backend() const;
    void setBackend(ConsoleBackend *backend);
    // The city shown, from the backend's server (it arrives when the server starts, goes when it
    // stops); null without one. The layers drawn in the map's view follow it (cityChanged).
    std::shared_ptr<const taxicore::city::City> city() const;
    int selectedCarId() const { return m_selectedCarId; }
    void setSelectedCarId(int id);
    qint64 selectedBookingId() const { return m_selectedBookingId; }
    void setSelectedBookingId(qint64 id);
    bool live() const { return m_frameTimer.isActive(); }
    void setLive(bool live);
    double metresPerPixel() const { return 1.0 / m_viewport.scale(); }
    int carsShown() const { return m_carsShown; }
    QList<int> carsByState() const { return m_carsByState; }
    bool clustered() const { return m_viewport.scale() < kClusterBelowScale; }

    // Below this zoom (px per metre, about 7 m a pixel) cars are counted per cell: single
    // arrows would overlap into a blot, and shrunk ones are unreadable specks.
    static constexpr double kClusterBelowScale = 0.15;

    // The car drawn nearest to (x, y) within a few pixels, or 0 (cars inside a counted
    // circle are not drawn, so not hit).
    Q_INVOKABLE int carAt(double x, double y) const;
    // The number of cars in the counted circle under (x, y), or 0.
    Q_INVOKABLE int clusterCountAt(double x, double y) const;
    Q_INVOKABLE void panBy(double dx, double dy);
    Q_INVOKABLE void zoomAt(double x, double y, double factor);
    Q_INVOKABLE void fitCity();
    // For layers drawn over the map (QML): the screen point of a coordinate, and back.
    Q_INVOKABLE QPointF toScreen(double lat, double lng) const;
    Q_INVOKABLE QVariantMap coordinateAt(double x, double y) const; // {lat, lng}
    // Centres the map on a coordinate, zoomed in to street level if it was further out.
    Q_INVOKABLE void showLocation(double lat, double lng);
    // The scale bar for a zoom: {metres, px, label}; metresPerPixel is an argument so that a
    // QML binding passing the property re-evaluates when the zoom changes.
    Q_INVOKABLE QVariantMap scaleBarFor(double metresPerPixel, double maxWidthPx) const;

    const MapViewport &viewport() const { return m_viewport; }
    const MapProjection &projection() const { return m_projection; }

Q_SIGNALS:
    void backendChanged();
    // The backend changed, or its server started or stopped: city() may be another.
    void cityChanged();
    void selectionChanged();
    void liveChanged();
    void viewChanged();
    void carsShownChanged();
    void styleChanged();
    // A click (not a drag) on the map: the car under it, or 0.
    void clicked(int carId, double x, double y);

protected:
    QSGNode *updatePaintNode(QSGNode *oldNode, UpdatePaintNodeData *) override;
    void geometryChange(const QRectF &newGeometry, const QRectF &oldGeometry) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;

private:
    void readFleet();
    // The booking whose roads are drawn: the one selected, else the selected car's.
    qint64 shownBookingId() const;
    // Routes the shown booking on the city's roads: car → pickup, pickup (or car) → drop-off.
    void routeSelection();
    void appendTrail(std::vector<QSGGeometry::ColoredPoint2D> &out, QPointF carScreen) const;
    void appendRoute(std::vector<QSGGeometry::ColoredPoint2D> &out, const std::vector<QPointF> &route, double halfWidth,
                     const QColor &colour) const;
    void updateHighlight(QSGGeometryNode *node) const;

    QPointer<ConsoleBackend> m_backend;
    MapProjection m_projection;
    MapViewport m_viewport;
    const CarCluster *clusterAt(QPointF pos) const;

    std::vector<CarMarker> m_cars;        // written during sync (GUI thread blocked), read on the GUI thread
    std::vector<CarCluster> m_clusters;   // likewise; empty unless clustered
    std::vector<CarMarker> m_drawnCars;   // the cars drawn one by one (all when not clustered)
    std::vector<QPointF> m_approachRoute; // metres; written on the GUI thread, read during sync
    std::vector<QPointF> m_tripRoute;
    qint64 m_routedBookingId = 0;
    CarTrails m_trails; // written during sync, read during sync
    QElapsedTimer m_routeClock;
    bool m_userMoved = false;
    int m_carsShown = 0;
    std::array<int, 5> m_stateCounts{}; // by CarState
    QList<int> m_carsByState{0, 0, 0, 0, 0};
    int m_selectedCarId = 0;
    qint64 m_selectedBookingId = 0;
    QTimer m_frameTimer;
    QPointF m_pressPos;
    QPointF m_lastDragPos;
    bool m_dragging = false;

    QColor m_offlineColor{0x8a, 0x8a, 0x8a};
    QColor m_availableColor{0x2e, 0xa0, 0x4a};
    QColor m_toPickupColor{0xf0, 0x90, 0x10};
    QColor m_onTripColor{0x2f, 0x6f, 0xd6};
    QColor m_highlightColor{0xd6, 0x1f, 0x69};
    QColor m_markerHaloColor{255, 255, 255, 220};
    QColor m_clusterColor{0x2b, 0x36, 0x3d, 230};
    QColor m_clusterTextColor{Qt::white};
};
