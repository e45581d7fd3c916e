#pragma once
// The canvas of a document as the widget tests drive it: a ClusterScene on the document, a view
// state beside it (colouring, selection, hover, playback), and a ClusterView laid out offscreen
// at a real size, so the viewport, the zoom and what is drawn are as on screen.

#include "document/document.h"
#include "document/viewstate.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <QColor>
#include <QFrame>
#include <QImage>
#include <QPainter>
#include <QRect>

#include <cmath>
#include <cstdlib>

namespace railyard::test {

struct CanvasOptions
{
    QSize size{1600, 1000};
    bool fit = true;        // fitToCluster() once shown
    double zoom = 0;        // > 0: then setZoom(zoom), centred on the cluster
    bool centre = false;    // centre the view on the cluster (also without a zoom)
    bool scrollBars = true; // false: no scroll bars (as the exports render)
    bool viewState = true;  // attach `state` to the scene (else the scene keeps its own)
    bool frame = false;     // the view's frame (off: the viewport is the whole widget)
};

struct Canvas
{
    explicit Canvas(Document *doc, const CanvasOptions &o = {})
        : state(doc)
        , scene(doc)
        , view(&scene)
    {
        if (o.viewState)
            scene.setViewState(&state);
        view.setAttribute(Qt::WA_DontShowOnScreen);
        if (!o.frame)
            view.setFrameShape(QFrame::NoFrame);
        if (!o.scrollBars) {
            view.setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
            view.setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        }
        view.resize(o.size);
        view.show();
        if (o.fit)
            view.fitToCluster();
        if (o.zoom > 0)
            view.setZoom(o.zoom);
        if (o.centre || o.zoom > 0)
            view.centerOn(scene.sceneRect().center());
    }

    // What the viewport shows now, on white.
    QImage render()
    {
        QImage img(view.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
        img.fill(Qt::white);
        QPainter p(&img);
        view.render(&p, QRectF(img.rect()), view.viewport()->rect());
        return img;
    }

    // Where a scene point shows in the viewport.
    QPoint onScreen(const QPointF &scenePos) const { return view.mapFromScene(scenePos); }

    ViewState state; // declared first: the scene and the view hold pointers to it
    ClusterScene scene;
    ClusterView view;
};

// Pixels of `colour` (each channel within `tolerance`) in `area` of `img` (all of it if empty),
// every `step`-th pixel in each direction.
inline int countColour(
        const QImage &img, const QColor &colour, int tolerance = 12, QRect area = {}, int step = 1)
{
    area = area.isEmpty() ? img.rect() : area.intersected(img.rect());
    int n = 0;
    for (int y = area.top(); y <= area.bottom(); y += step)
        for (int x = area.left(); x <= area.right(); x += step) {
            const QColor c = img.pixelColor(x, y);
            if (std::abs(c.red() - colour.red()) <= tolerance
                && std::abs(c.green() - colour.green()) <= tolerance
                && std::abs(c.blue() - colour.blue()) <= tolerance)
                ++n;
        }
    return n;
}

} // namespace railyard::test
