#pragma once

#include "RoadStroke.h"

#include <QColor>
#include <QSGNode>
#include <vector>

// The roads, built once per zoom band: each stroke segment becomes two triangles (wide lines
// are not guaranteed by every graphics backend), coloured per vertex. The triangles are split
// into geometry nodes of at most kMaxVertices: Qt Quick's renderer (6.4, OpenGL) drew only
// part of a single 300k-vertex node.
class RoadLayer : public QSGNode {
public:
    struct Palette {
        QColor grid, boundary, major, minor, link, service;
    };

    static constexpr int kMaxVertices = 60000; // a multiple of 6: whole segments per chunk

    // Rebuilds the triangles for `scale` (px per metre): strokes keep their width in metres
    // when zoomed in and a minimum width in pixels when zoomed out (thinner ones break up).
    void rebuild(const std::vector<RoadStroke> &strokes, const Palette &palette, double scale);

    static double widthM(RoadStroke::Kind kind);
    static double minWidthPx(RoadStroke::Kind kind);
};
