#pragma once

#include "RoadStroke.h"

#include <QColor>
#include <QPointer>
#include <QQuickItem>
#include <qqmlregistration.h>
#include <vector>

class CityMapItem;

// The streets under a CityMapItem's cars, in the map's view. A separate item so that QML can
// cache it in a layer (layer.enabled): it then costs one textured quad per frame and is only
// re-rendered when the view moves, while the cars above change every frame.
class StreetsItem : public QQuickItem {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(CityMapItem *map READ map WRITE setMap NOTIFY mapChanged)
    Q_PROPERTY(int strokeCount READ strokeCount NOTIFY strokesChanged)
    Q_PROPERTY(QColor majorRoadColor MEMBER m_majorRoadColor NOTIFY styleChanged)
    Q_PROPERTY(QColor minorRoadColor MEMBER m_minorRoadColor NOTIFY styleChanged)
    Q_PROPERTY(QColor gridColor MEMBER m_gridColor NOTIFY styleChanged)

public:
    explicit StreetsItem(QQuickItem *parent = nullptr);
    ~StreetsItem() override;

    CityMapItem *map() const;
    void setMap(CityMapItem *map);
    int strokeCount() const { return int(m_strokes.size()); }

Q_SIGNALS:
    void mapChanged();
    void strokesChanged();
    void styleChanged();

protected:
    QSGNode *updatePaintNode(QSGNode *oldNode, UpdatePaintNodeData *) override;

private:
    void loadStreets();
    int zoomBand() const;

    QPointer<CityMapItem> m_map;
    std::vector<RoadStroke> m_strokes;
    const void *m_strokesOf = nullptr; // the city m_strokes were made from
    bool m_dirty = true;
    int m_builtBand = 0;
    QColor m_majorRoadColor{0xd9, 0xc3, 0x8f};
    QColor m_minorRoadColor{0xb9, 0xb4, 0xaa};
    QColor m_gridColor{0xe2, 0xde, 0xd5};
};
