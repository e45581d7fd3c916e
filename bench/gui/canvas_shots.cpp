// Renders the canvas of a layout at a few zooms, coloured and with a selection, into PNGs for
// design reviews and for looking at level-of-detail changes (not a benchmark: no timings).
//   QT_QPA_PLATFORM=offscreen canvas_shots LAYOUT OUTDIR [WIDTHxHEIGHT]
#include "document/document.h"
#include "layout/parallel.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <QApplication>
#include <QDir>
#include <QImage>
#include <QMouseEvent>
#include <QPainter>

#include <cstdio>

using namespace railyard;

namespace {

void save(ClusterView &view, const QString &path)
{
    QImage img(view.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::white);
    {
        QPainter p(&img);
        view.render(&p, QRectF(img.rect()), view.viewport()->rect());
    }
    if (!img.save(path))
        std::fprintf(stderr, "cannot write %s\n", qPrintable(path));
    else
        std::printf("wrote %s (zoom %.3f)\n", qPrintable(path), view.zoom());
}

// The mouse moving over the viewport with the left button held.
void moveHeld(QWidget *viewport, const QPoint &pos, Qt::KeyboardModifiers modifiers)
{
    QMouseEvent e(QEvent::MouseMove,
                  QPointF(pos),
                  viewport->mapToGlobal(QPointF(pos)),
                  Qt::NoButton,
                  Qt::LeftButton,
                  modifiers);
    QApplication::sendEvent(viewport, &e);
}

void press(QWidget *viewport, const QPoint &pos, Qt::KeyboardModifiers modifiers, bool down)
{
    QMouseEvent e(down ? QEvent::MouseButtonPress : QEvent::MouseButtonRelease,
                  QPointF(pos),
                  viewport->mapToGlobal(QPointF(pos)),
                  Qt::LeftButton,
                  down ? Qt::LeftButton : Qt::NoButton,
                  modifiers);
    QApplication::sendEvent(viewport, &e);
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    if (argc < 3) {
        std::fprintf(stderr, "usage: canvas_shots LAYOUT OUTDIR [WIDTHxHEIGHT]\n");
        return 2;
    }
    QString error;
    auto doc = Document::load(QString::fromLocal8Bit(argv[1]), &error);
    if (!doc) {
        std::fprintf(stderr, "%s\n", qPrintable(error));
        return 1;
    }
    const QDir out(QString::fromLocal8Bit(argv[2]));
    QDir().mkpath(out.path());
    QSize size(1600, 1000);
    if (argc > 3) {
        const QStringList wh = QString::fromLatin1(argv[3]).split(QLatin1Char('x'));
        if (wh.size() == 2)
            size = QSize(wh[0].toInt(), wh[1].toInt());
    }
    ClusterScene scene(doc.get());
    ClusterView view(&scene);
    view.setAttribute(Qt::WA_DontShowOnScreen);
    view.setFrameShape(QFrame::NoFrame);
    view.setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    view.setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    view.resize(size);
    view.show();
    scene.setColourBy(GroupKind::Tp);
    view.fitToCluster();
    save(view, out.filePath(QStringLiteral("fit-tp.png")));
    const QPointF centre = scene.sceneRect().center();
    for (double z : {0.03, 0.08, 0.15, 0.3}) {
        view.setZoom(z);
        view.centerOn(centre);
        save(view, out.filePath(QStringLiteral("zoom%1-tp.png").arg(qRound(z * 100))));
    }
    // A selected TP group, close enough to see each GPU's fill.
    if (const engine::RankLayout *ranks = scene.ranks()) {
        const std::vector<int> gpus = groupGpus(*ranks, GroupRef{GroupKind::Tp, 1});
        view.setZoom(0.6);
        view.showGpus(gpus);
        save(view, out.filePath(QStringLiteral("selected-tp.png")));
    }
    scene.setSelectedGpus({});
    // The cues while the mouse is held: a rubber band (Shift-drag), and a GPU pressed on at a
    // zoom where it is too small to pick up.
    QWidget *vp = view.viewport();
    view.setZoom(0.5);
    view.centerOn(scene.sceneRect().center());
    const QPoint from = vp->rect().center() - QPoint(200, 120);
    press(vp, from, Qt::ShiftModifier, true);
    moveHeld(vp, from + QPoint(420, 160), Qt::ShiftModifier);
    save(view, out.filePath(QStringLiteral("cue-band.png")));
    press(vp, from + QPoint(420, 160), Qt::ShiftModifier, false);
    scene.setSelectedGpus({});
    view.fitToCluster();
    const QPointF gpu = scene.geometry().nodeRect(scene.geometry().nodeCount() / 2).center();
    const QPoint at = view.mapFromScene(gpu);
    press(vp, at, Qt::NoModifier, true);
    moveHeld(vp, at + QPoint(40, 20), Qt::NoModifier);
    save(view, out.filePath(QStringLiteral("cue-too-small.png")));
    press(vp, at + QPoint(40, 20), Qt::NoModifier, false);
    for (auto [kind, name] :
         {std::pair{GroupKind::PpStage, "pp"}, std::pair{GroupKind::DpReplica, "dp"}}) {
        scene.setColourBy(kind);
        view.fitToCluster();
        save(view, out.filePath(QStringLiteral("fit-%1.png").arg(QLatin1String(name))));
    }
    scene.setColourBy(std::nullopt);
    scene.setLinkLoadVisible(true);
    view.fitToCluster();
    save(view, out.filePath(QStringLiteral("fit-load.png")));
    return 0;
}
