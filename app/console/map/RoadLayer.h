#pragma once

#include "RoadStroke.h"

#include <QColor>
#include <QSGGeometryNode>
#include <vector>

// The roads as one geometry node, built once per zoom band: each stroke segment becomes two
// triangles (wide lines are not guaranteed by every graphics backend), coloured per vertex.
class RoadLayer : public QSGGeometryNode
{
public:
    struct Palette {
        QColor grid, boundary, major, minor, link, service;
    };

    RoadLayer();
    // Rebuilds the triangles; `minWidthM` keeps strokes at least about a pixel wide when zoomed out.
    void rebuild(const std::vector<RoadStroke> &strokes, const Palette &palette, double minWidthM);

    static double widthM(RoadStroke::Kind kind);
};
