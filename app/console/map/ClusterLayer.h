#pragma once

#include "CarClusters.h"

#include <QColor>
#include <QHash>
#include <QRectF>
#include <QSGNode>
#include <array>
#include <memory>
#include <vector>

class QQuickWindow;
class QSGGeometryNode;
class QSGTexture;

// The counted circles of CarClusters: a disc, a ring split by the cars' states (so the share
// of free cars shows at a glance) and the count, drawn from a small texture of digits made
// once per window, so that hundreds of counts cost two geometry nodes and no text layout.
class ClusterLayer : public QSGNode {
public:
    struct Style {
        QColor fill, text;
        std::array<QColor, 5> states; // by CarState, as CarLayer::Palette
    };

    ClusterLayer();
    ~ClusterLayer() override;
    // Clusters of one car are skipped: the map draws that car itself.
    void update(const std::vector<CarCluster> &clusters, const Style &style, QQuickWindow *window);

private:
    void makeGlyphs(QQuickWindow *window, QColor colour);

    QSGGeometryNode *m_shapes;
    QSGGeometryNode *m_labels;
    std::unique_ptr<QSGTexture> m_glyphTexture;
    QColor m_glyphColour;
    QHash<QChar, QRectF> m_glyphRects; // normalized texture coordinates
    QHash<QChar, QSizeF> m_glyphSizes; // logical px
};
