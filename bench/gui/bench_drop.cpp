// A drop re-prices the step and repaints in under 50 ms on the 16,384-GPU preset (DESIGN.md,
// issue #5). Drives the real main window offscreen: a TP group chip is dropped on a GPU through
// the canvas viewport (QDropEvent, as a drag from the palette ends), which plans the drop,
// pushes the undo command, re-evaluates the step, re-syncs the scene, the palette, the pricing
// panel (Qt Charts) and the warnings; then the canvas and the pricing panel are painted. The
// clock stops when both are painted. Prints medians; not a ctest test.
//
// Run: QT_QPA_PLATFORM=offscreen build/bin/bench_drop
#include "document/document.h"
#include "document/groupref.h"
#include "mainwindow.h"
#include "palette/groupmime.h"
#include "panels/pricingpanel.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include <QApplication>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QMimeData>
#include <QPainter>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace railyard;

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double ms(const QElapsedTimer &t)
{
    return t.nsecsElapsed() / 1e6;
}

void paint(QWidget *w, QImage &img)
{
    QPainter p(&img);
    w->render(&p);
}

struct Times
{
    std::vector<double> drop, canvas, charts, total;
};

void report(const char *label, const Times &t)
{
    std::printf("%-44s median %7.2f ms (target < 50 ms): drop, re-price and re-sync %6.2f ms, "
                "paint canvas %6.2f ms, paint pricing panel %6.2f ms; %zu drops\n",
                label,
                median(t.total),
                median(t.drop),
                median(t.canvas),
                median(t.charts),
                t.total.size());
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    QTemporaryDir recovery;
    MainWindow w(nullptr, recovery.path());
    QString error;
    QFile f(QStringLiteral(":/layouts/llama3.1-405b-16k-h100.railyard.json"));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read the 16k preset");
    auto doc = Document::fromText(f.readAll(), QStringLiteral("16k"), &error);
    if (!doc)
        qFatal("%s", qPrintable(error));
    w.setDocument(std::move(doc));
    w.setAttribute(Qt::WA_DontShowOnScreen);
    w.resize(1920, 1200);
    w.show();
    QCoreApplication::processEvents();
    Document *d = w.document();
    ClusterView *view = w.view();
    QWidget *pricing = w.pricingPanel();
    const engine::Topology &t = d->topology();
    std::printf("%d GPUs, %d links; TP%d PP%d DP%d; step %.3f s\n",
                t.gpuCount(),
                t.linkCount(),
                d->layout().parallel.tp,
                d->layout().parallel.pp,
                d->layout().dataParallel(),
                d->evaluation().stepTimeS);

    QString lastMessage;
    QObject::connect(view, &ClusterView::message, [&](const QString &text, bool) {
        lastMessage = text;
    });
    QImage canvasImg(view->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    QImage chartImg(pricing->size(), QImage::Format_ARGB32_Premultiplied);
    const auto run = [&](const char *label, double zoom, int drops) {
        if (zoom > 0)
            view->setZoom(zoom);
        else
            view->fitToCluster();
        Times times;
        const QString job = jobSignature(d->layout());
        for (int i = 0; i < drops + 2; ++i) {
            // TP group g onto GPU 8g + 4 (across two servers), then back onto 8g.
            const int g = 100 + (i / 2) * 37;
            const int gpu = 8 * g + (i % 2 == 0 ? 4 : 0);
            const QPointF c = view->clusterScene()->geometry().deviceRect(t.gpuDevice(gpu)).center();
            if (zoom > 0)
                view->centerOn(c);
            const QPoint pos = view->mapFromScene(c);
            std::unique_ptr<QMimeData> data(mime::encodeGroup(GroupRef{GroupKind::Tp, g}, job));
            const int before = d->undoStack()->index();
            // The drag arrives first (it is planned and priced for the cue then); the clock
            // runs from the drop.
            QDragEnterEvent enter(pos, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(view->viewport(), &enter);
            QElapsedTimer clock;
            clock.start();
            QDropEvent drop(QPointF(pos), Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(view->viewport(), &drop);
            const double dropped = ms(clock);
            paint(view->viewport(), canvasImg);
            const double canvas = ms(clock);
            paint(pricing, chartImg);
            const double total = ms(clock);
            if (d->undoStack()->index() != before + 1)
                qFatal("the drop of TP group %d on GPU %d did not apply: %s",
                       g,
                       gpu,
                       qPrintable(lastMessage));
            if (i < 2)
                continue; // warm-up
            times.drop.push_back(dropped);
            times.canvas.push_back(canvas - dropped);
            times.charts.push_back(total - canvas);
            times.total.push_back(total);
        }
        report(label, times);
    };
    run("drop on 16,384 GPUs, whole cluster in view", 0, 30);
    run("drop on 16,384 GPUs, zoomed to the GPUs (30%)", 0.3, 30);

    // While dragging, each new target is planned and priced (without link loads) for the cue.
    {
        view->setZoom(0.3);
        std::vector<double> moves;
        const QString job = jobSignature(d->layout());
        std::unique_ptr<QMimeData> data(mime::encodeGroup(GroupRef{GroupKind::Tp, 500}, job));
        {
            const QPoint pos = view->mapFromScene(
                    view->clusterScene()->geometry().deviceRect(t.gpuDevice(3999)).center());
            QDragEnterEvent enter(pos, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(view->viewport(), &enter);
        }
        for (int i = 0; i < 32; ++i) {
            const int gpu = 4000 + i * 3;
            const QPointF c = view->clusterScene()->geometry().deviceRect(t.gpuDevice(gpu)).center();
            view->centerOn(c);
            const QPoint pos = view->mapFromScene(c);
            QElapsedTimer clock;
            clock.start();
            QDragMoveEvent move(pos, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(view->viewport(), &move);
            paint(view->viewport(), canvasImg);
            moves.push_back(ms(clock));
        }
        QDragLeaveEvent leave;
        QApplication::sendEvent(view->viewport(), &leave);
        std::printf("%-44s median %7.2f ms (plan, price without link loads, paint the cue)\n",
                    "drag move to a new GPU, 16,384 GPUs",
                    median(moves));
    }
    // Hovering a GPU marks its group and the links its traffic crosses: a TP group (8 GPUs), a
    // DP replica (128 GPUs) and a pipeline stage (1,024 GPUs) of the 16k job.
    {
        view->fitToCluster();
        ClusterScene *scene = view->clusterScene();
        for (GroupKind kind : {GroupKind::Tp, GroupKind::DpReplica, GroupKind::PpStage}) {
            scene->setColourBy(kind);
            std::vector<double> hovers;
            for (int i = 0; i < 16; ++i) {
                QElapsedTimer clock;
                clock.start();
                scene->setHoveredGpu(1000 + i * 517);
                paint(view->viewport(), canvasImg);
                hovers.push_back(ms(clock));
            }
            std::printf("hover a GPU, 16,384 GPUs, %-18s median %7.2f ms (%zu GPUs, %d links "
                        "marked, and the repaint)\n",
                        qPrintable(kindNoun(kind)),
                        median(hovers),
                        scene->hoveredGroupGpus().size(),
                        scene->hoveredLinkCount());
        }
    }
    return 0;
}
