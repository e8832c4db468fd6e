#pragma once

#include "StreetLabels.h"

#include <QColor>
#include <QFont>
#include <QPointer>
#include <QQuickPaintedItem>
#include <qqmlregistration.h>
#include <vector>

class CityMapItem;

// The names of the streets in view (StreetLabels decides where), painted over the streets and
// under the cars. Placed (GUI thread, polish) and painted only when the view moves, and hidden
// while there is no name to show, so a still or zoomed-out map costs nothing per frame.
class StreetLabelsItem : public QQuickPaintedItem {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(CityMapItem *map READ map WRITE setMap NOTIFY mapChanged)
    Q_PROPERTY(QColor textColor MEMBER m_textColor NOTIFY styleChanged)
    Q_PROPERTY(QColor haloColor MEMBER m_haloColor NOTIFY styleChanged)
    Q_PROPERTY(int streetCount READ streetCount NOTIFY streetsChanged)
    // Rectangles (this item's coordinates) no label may touch: the legend, buttons, scale bar.
    Q_PROPERTY(QList<QRectF> reservedAreas READ reservedAreas WRITE setReservedAreas NOTIFY styleChanged)
    // The labels of the last paint, for tests: [{text, x, y, angle, width, height}].
    Q_PROPERTY(QVariantList placed READ placed NOTIFY placedChanged)

public:
    explicit StreetLabelsItem(QQuickItem *parent = nullptr);

    CityMapItem *map() const;
    void setMap(CityMapItem *map);
    int streetCount() const { return int(m_streets.size()); }
    QList<QRectF> reservedAreas() const { return m_reserved; }
    void setReservedAreas(const QList<QRectF> &areas);
    QVariantList placed() const;
    void paint(QPainter *painter) override;

protected:
    void updatePolish() override;

Q_SIGNALS:
    void mapChanged();
    void styleChanged();
    void streetsChanged();
    void placedChanged();

private:
    void loadStreets();

    QPointer<CityMapItem> m_map;
    std::vector<NamedStreet> m_streets;
    const void *m_streetsOf = nullptr; // the city m_streets came from
    std::vector<PlacedLabel> m_placed;
    QList<QRectF> m_reserved;
    QFont m_font;
    QColor m_textColor{0x33, 0x33, 0x33};
    QColor m_haloColor{255, 255, 255, 230};
};
