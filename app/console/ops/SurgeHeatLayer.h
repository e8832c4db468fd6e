#pragma once

#include "pricing/SurgeModel.h"

#include <QPointer>
#include <QQuickPaintedItem>
#include <QTimer>
#include <qqmlregistration.h>
#include <vector>

class CityMapItem;
class ConsoleBackend;

// The surge heat layer over the city map: each pricing cell whose surge is above 1 (as
// GET /api/v1/surge gives them) tinted from yellow to red as it nears the tariff's cap, and
// labelled "×1.8" when zoomed in. Reads the published grid once a second and only while shown;
// repaints when the map moves.
class SurgeHeatLayer : public QQuickPaintedItem {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConsoleBackend *backend READ backend WRITE setBackend NOTIFY backendChanged)
    // CityMap.qml or its CityMapItem: whose view the cells follow.
    Q_PROPERTY(QQuickItem *map READ map WRITE setMap NOTIFY mapChanged)
    Q_PROPERTY(double highestSurge READ highestSurge NOTIFY surgeChanged)
    Q_PROPERTY(double surgeCap READ surgeCap NOTIFY surgeChanged)
    Q_PROPERTY(int surgingCells READ surgingCells NOTIFY surgeChanged)

public:
    static constexpr int kRefreshMs = 1000;
    // Cells this close to 1 are left clear (smoothing leaves tails like 1.001).
    static constexpr double kShownAbove = 1.01;
    // A cell at least this wide on screen is labelled with its multiplier.
    static constexpr double kLabelMinCellPx = 48;

    explicit SurgeHeatLayer(QQuickItem *parent = nullptr);

    ConsoleBackend *backend() const;
    void setBackend(ConsoleBackend *backend);
    QQuickItem *map() const { return m_map; }
    void setMap(QQuickItem *map);
    double highestSurge() const { return m_highest; }
    double surgeCap() const { return m_cap; }
    int surgingCells() const { return m_surging; }

    void paint(QPainter *painter) override;
    Q_INVOKABLE void refresh();

    // The tint of a cell: transparent at 1, yellow → red up to `cap`.
    static QColor colourFor(double surge, double cap);

Q_SIGNALS:
    void backendChanged();
    void mapChanged();
    void surgeChanged();

private:
    QPointer<ConsoleBackend> m_backend;
    QPointer<QQuickItem> m_map;
    QPointer<CityMapItem> m_cityMap;
    QTimer m_timer;
    taxicore::SurgeGrid m_grid;
    std::vector<double> m_cells;
    int64_t m_updatedMs = -1;
    double m_highest = 1;
    double m_cap = 1;
    int m_surging = 0;
};
