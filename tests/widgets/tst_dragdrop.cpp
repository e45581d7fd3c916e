// Placing groups by hand: the palette's chips and their mime data, drops sent to the canvas's
// viewport (as a drag from the palette or a dragged GPU would end), the cue while dragging,
// refused drops that leave the document alone, rubber-band selection and "make a group here",
// hovering a GPU, colouring by a dimension and the link-load view. On the 16-server H200 preset
// (TP8 PP4 VP5 DP4), a TP group moved across two servers costs TP time and raises the warning,
// and moving it back restores the numbers exactly.
#include "document/document.h"
#include "document/groupref.h"
#include "layout/parallel.h"
#include "palette/groupchipmodel.h"
#include "palette/groupmime.h"
#include "palette/grouppalette.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"
#include "scene/levelofdetail.h"
#include "scene/style.h"
#include "step/routes.h"

#include "canvasfixture.h"
#include "testlayouts.h"
#include <QAbstractButton>
#include <QApplication>
#include <QDropEvent>
#include <QImage>
#include <QListView>
#include <QMimeData>
#include <QPainter>
#include <QSignalSpy>

#include <QTest>
#include <QUndoStack>

#include <cmath>
#include <set>

using namespace railyard;
using engine::Dim;

namespace {

using test::openLayout;

// The canvas of a document at 1600 x 1000, zoomed so a GPU is large enough to pick up.
struct Canvas : test::Canvas
{
    explicit Canvas(Document *doc, double zoom = 0.3)
        : test::Canvas(doc, {.zoom = zoom, .centre = true, .viewState = false})
    {}
    QPoint atGpu(int gpu)
    {
        const engine::Topology &t = scene.document()->topology();
        const QPointF c = scene.geometry().deviceRect(t.gpuDevice(gpu)).center();
        ensureVisible(c);
        return view.mapFromScene(c);
    }
    // Inside a server's box, on its title, off every device.
    QPoint atServer(int node)
    {
        const QPointF p = scene.geometry().nodeRect(node).topLeft() + QPointF(40, 8);
        ensureVisible(p);
        return view.mapFromScene(p);
    }
    // Inside a rack's frame, on its title band, off every server.
    QPoint atRack(int rack)
    {
        const QPointF p = scene.geometry().rackRect(rack).topLeft() + QPointF(30, 6);
        ensureVisible(p);
        return view.mapFromScene(p);
    }
    void ensureVisible(const QPointF &p)
    {
        if (!view.mapToScene(view.viewport()->rect())
                     .boundingRect()
                     .adjusted(40, 40, -40, -40)
                     .contains(p))
            view.centerOn(p);
    }
    // Pixels of `colour` (within a small tolerance) over GPU `gpu`'s box, as drawn now.
    int pixelsOver(const QImage &img, int gpu, const QColor &colour)
    {
        const engine::Topology &t = scene.document()->topology();
        const QRect box = view.mapFromScene(scene.geometry().deviceRect(t.gpuDevice(gpu)))
                                  .boundingRect()
                                  .adjusted(-6, -6, 6, 6)
                                  .intersected(img.rect());
        int n = 0;
        for (int y = box.top(); y <= box.bottom(); ++y)
            for (int x = box.left(); x <= box.right(); ++x) {
                const QColor c = img.pixelColor(x, y);
                if (std::abs(c.red() - colour.red()) + std::abs(c.green() - colour.green())
                            + std::abs(c.blue() - colour.blue())
                    < 40)
                    ++n;
            }
        return n;
    }
};

struct DropResult
{
    bool moveAccepted = false;
    bool dropAccepted = false;
};

// What a drag that ends on the canvas delivers to its viewport: enter, move, drop.
DropResult dragAndDrop(ClusterView &view, const QMimeData *data, const QPoint &pos)
{
    DropResult r;
    QWidget *vp = view.viewport();
    QDragEnterEvent enter(pos, Qt::MoveAction, data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(vp, &enter);
    QDragMoveEvent move(pos, Qt::MoveAction, data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(vp, &move);
    r.moveAccepted = move.isAccepted();
    QDropEvent drop(QPointF(pos), Qt::MoveAction, data, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(vp, &drop);
    r.dropAccepted = drop.isAccepted();
    return r;
}

// The mouse moving over the viewport with no button held.
void hover(QWidget *viewport, const QPoint &pos)
{
    QMouseEvent e(QEvent::MouseMove,
                  QPointF(pos),
                  viewport->mapToGlobal(QPointF(pos)),
                  Qt::NoButton,
                  Qt::NoButton,
                  Qt::NoModifier);
    QApplication::sendEvent(viewport, &e);
}

// Pixels within `tolerance` of `colour` (every channel).
int countNear(const QImage &img, const QColor &colour, int tolerance)
{
    int n = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const QColor p = img.pixelColor(x, y);
            n += std::abs(p.red() - colour.red()) <= tolerance
                 && std::abs(p.green() - colour.green()) <= tolerance
                 && std::abs(p.blue() - colour.blue()) <= tolerance;
        }
    return n;
}

// The mouse moving over the viewport with a button held.
void moveHeld(QWidget *viewport, const QPoint &pos, Qt::KeyboardModifiers modifiers = {})
{
    QMouseEvent e(QEvent::MouseMove,
                  QPointF(pos),
                  viewport->mapToGlobal(QPointF(pos)),
                  Qt::NoButton,
                  Qt::LeftButton,
                  modifiers);
    QApplication::sendEvent(viewport, &e);
}

std::unique_ptr<QMimeData> chip(const Document &doc, GroupKind kind, int index)
{
    return std::unique_ptr<QMimeData>(
            mime::encodeGroup(GroupRef{kind, index}, jobSignature(doc.layout())));
}

std::vector<int> range(int from, int count)
{
    std::vector<int> v(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i)
        v[static_cast<std::size_t>(i)] = from + i;
    return v;
}

std::vector<int> gpusOfRanks(const Document &doc, const std::vector<int> &ranks)
{
    const engine::RankLayout r(doc.layout());
    std::vector<int> out;
    for (int rank : ranks)
        out.push_back(r.gpuOfRank(rank));
    return out;
}

bool hasWarning(const engine::Evaluation &e, const std::string &code, const std::string &text)
{
    for (const engine::Warning &w : e.warnings)
        if (w.code == code && w.message.find(text) != std::string::npos)
            return true;
    return false;
}

} // namespace

class TestDragDrop : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void paletteMimeNamesTheGroupAndTheJob_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("index");
        QTest::addColumn<int>("count");
        QTest::addColumn<QString>("name");
        // The H200 preset: TP8 PP4 DP4 on 128 GPUs.
        QTest::newRow("TP group 3") << int(GroupKind::Tp) << 3 << 16 << "TP group 3";
        QTest::newRow("PP stage 2") << int(GroupKind::PpStage) << 2 << 4 << "PP stage 2";
        QTest::newRow("DP replica 1") << int(GroupKind::DpReplica) << 1 << 4 << "DP replica 1";
        QTest::newRow("CP group 127") << int(GroupKind::Cp) << 127 << 128 << "CP group 127";
    }

    void paletteMimeNamesTheGroupAndTheJob()
    {
        QFETCH(int, kind);
        QFETCH(int, index);
        QFETCH(int, count);
        QFETCH(QString, name);
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ClusterScene scene(doc.get());
        GroupPalette palette;
        palette.setScene(&scene);
        palette.kindButton(static_cast<GroupKind>(kind))->click();
        QCOMPARE(palette.kind(), static_cast<GroupKind>(kind));
        // Choosing a kind colours the canvas by it.
        QCOMPARE(scene.colourBy(), std::optional(static_cast<GroupKind>(kind)));
        GroupChipModel *model = palette.model();
        QCOMPARE(model->rowCount(), count);
        const QModelIndex i = model->index(index);
        QCOMPARE(i.data().toString(), name);
        QCOMPARE(model->mimeTypes(), QStringList{QLatin1String(mime::kGroupType)});
        QVERIFY(model->flags(i) & Qt::ItemIsDragEnabled);
        std::unique_ptr<QMimeData> data(model->mimeData({i}));
        QVERIFY(data);
        QVERIFY(data->hasFormat(QLatin1String(mime::kGroupType)));
        QCOMPARE(data->text(), name);
        const auto drag = mime::decodeGroup(data.get());
        QVERIFY(drag);
        QCOMPARE(drag->group, (GroupRef{static_cast<GroupKind>(kind), index}));
        QCOMPARE(drag->job, jobSignature(doc->layout()));
        QVERIFY(drag->job.contains(QStringLiteral("tp8")));
        // The chip's colour is its GPUs' colour on the canvas.
        const engine::RankLayout ranks(doc->layout());
        const int gpu = groupGpus(ranks, drag->group).front();
        QCOMPARE(i.data(GroupChipModel::ColourRole).value<QColor>(),
                 scene.canvasState().gpuFill(gpu));
        // Its tooltip says where it is.
        QVERIFY(i.data(Qt::ToolTipRole).toString().contains(name));
    }

    void mimeDataRoundTripsAndRejectsGarbage()
    {
        std::unique_ptr<QMimeData> gpu(mime::encodeGpu(12, QStringLiteral("job")));
        const auto g = mime::decodeGpu(gpu.get());
        QVERIFY(g);
        QCOMPARE(g->gpu, 12);
        QVERIFY(!mime::decodeGroup(gpu.get()));
        QMimeData garbage;
        garbage.setData(QLatin1String(mime::kGroupType), "{not json");
        QVERIFY(!mime::decodeGroup(&garbage));
        QVERIFY(mime::isRailyardDrag(&garbage)); // ours, so a drop says it cannot use it
        QMimeData text;
        text.setText(QStringLiteral("TP group 3"));
        QVERIFY(!mime::isRailyardDrag(&text));
        QMimeData negative;
        negative.setData(QLatin1String(mime::kGroupType), R"({"kind":"tp","index":-2})");
        QVERIFY(!mime::decodeGroup(&negative));
    }

    void droppingAChipOnAGpuMovesTheGroupThereAndUndoRestores()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        const engine::Evaluation original = doc->evaluation();
        const std::string before = engine::layoutToText(doc->layout());
        QSignalSpy messages(&c.view, &ClusterView::message);
        auto data = chip(*doc, GroupKind::Tp, 0);
        const DropResult r = dragAndDrop(c.view, data.get(), c.atGpu(4));
        QVERIFY(r.moveAccepted);
        QVERIFY(r.dropAccepted);
        // TP group 0 (ranks 0-7) now runs on GPUs 4-11; the ranks that were on 8-11 (TP group
        // 1's first half) moved to the GPUs it left, 0-3.
        QCOMPARE(gpusOfRanks(*doc, range(0, 8)), range(4, 8));
        QCOMPARE(gpusOfRanks(*doc, range(8, 4)), range(0, 4));
        QCOMPARE(gpusOfRanks(*doc, range(12, 4)), range(12, 4));
        QCOMPARE(doc->undoStack()->count(), 1);
        QVERIFY(doc->undoStack()->undoText().contains(QStringLiteral("TP group 0")));
        QVERIFY(!messages.isEmpty());
        QVERIFY(messages.last().at(0).toString().contains(QStringLiteral("step time")));
        QCOMPARE(messages.last().at(1).toBool(), false);
        // The cue is gone after the drop.
        QVERIFY(c.scene.dropPreviewGpus().empty());
        QVERIFY(c.view.dragCaption().isEmpty());

        doc->undoStack()->undo();
        QCOMPARE(engine::layoutToText(doc->layout()), before);
        QCOMPARE(doc->evaluation().stepTimeS, original.stepTimeS);
        doc->undoStack()->redo();
        QCOMPARE(gpusOfRanks(*doc, range(0, 8)), range(4, 8));
    }

    void droppingOnAServerOrARackTakesItsFirstGpus()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        const engine::Topology &t = doc->topology();
        // A TP group onto server 2 (not on a GPU): GPUs 16-23.
        const QPoint server = c.atServer(2);
        QCOMPARE(c.scene.gpuAt(c.view.mapToScene(server)), -1);
        QCOMPARE(c.scene.nodeAt(c.view.mapToScene(server)), 2);
        auto tp = chip(*doc, GroupKind::Tp, 5);
        QVERIFY(dragAndDrop(c.view, tp.get(), server).dropAccepted);
        const engine::RankLayout ranks(doc->layout());
        QCOMPARE(groupGpus(ranks, GroupRef{GroupKind::Tp, 5}), range(16, 8));

        // PP stage 3 (TP8 x DP4 = 32 GPUs) onto rack 0: its four servers.
        const int gpusPerRack = (c.scene.geometry().firstNodeOfRack(1)) * t.shape().gpusPerNode;
        QCOMPARE(gpusPerRack, 32);
        const QPoint rack = c.atRack(0);
        QCOMPARE(c.scene.nodeAt(c.view.mapToScene(rack)), -1);
        QCOMPARE(c.scene.rackAt(c.view.mapToScene(rack)), 0);
        auto stage = chip(*doc, GroupKind::PpStage, 3);
        QVERIFY(dragAndDrop(c.view, stage.get(), rack).dropAccepted);
        const engine::RankLayout after(doc->layout());
        std::vector<int> stageGpus = groupGpus(after, GroupRef{GroupKind::PpStage, 3});
        std::sort(stageGpus.begin(), stageGpus.end());
        QCOMPARE(stageGpus, range(0, 32));
        QCOMPARE(doc->undoStack()->count(), 2);
        doc->undoStack()->undo();
        doc->undoStack()->undo();
        QVERIFY(doc->layout().mapping.empty());
    }

    void draggingOverTheCanvasShowsWhereAndWhatItCosts()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        auto data = chip(*doc, GroupKind::Tp, 0);
        QWidget *vp = c.view.viewport();
        const QPoint at4 = c.atGpu(4);
        QDragEnterEvent enter(at4, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &enter);
        QVERIFY(enter.isAccepted());
        QDragMoveEvent move(at4, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &move);
        QVERIFY(move.isAccepted());
        QCOMPARE(c.scene.dropPreviewGpus(), range(4, 8));
        QVERIFY(c.scene.dropPreviewOk());
        QVERIFY2(c.view.dragCaption().contains(QStringLiteral("TP group 0")),
                 qPrintable(c.view.dragCaption()));
        QVERIFY(c.view.dragCaption().contains(QStringLiteral("GPUs 4\u201311")));
        // The cue is drawn: green marks over each GPU where the group would land, none beside.
        const QImage img = c.render();
        for (int g = 4; g < 12; ++g)
            QVERIFY2(c.pixelsOver(img, g, style::kDropOk) > 8, qPrintable(QString::number(g)));
        QCOMPARE(c.pixelsOver(img, 13, style::kDropOk), 0);
        QCOMPARE(c.pixelsOver(img, 4, style::kDropRefused), 0);
        // Over the last GPUs the group cannot fit: refused, marked red, the reason in the cue.
        const QPoint at124 = c.atGpu(124);
        QDragMoveEvent refused(at124, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &refused);
        QVERIFY(!refused.isAccepted());
        QVERIFY(!c.scene.dropPreviewOk());
        QCOMPARE(c.scene.dropPreviewGpus(), range(124, 4)); // the GPUs it would run over, in red
        const QImage red = c.render();
        QVERIFY(c.pixelsOver(red, 124, style::kDropRefused) > 8);
        QCOMPARE(c.pixelsOver(red, 124, style::kDropOk), 0);
        QVERIFY(c.view.dragCaption().contains(QStringLiteral("TP group 0")));
        QDragLeaveEvent leave;
        QApplication::sendEvent(vp, &leave);
        QVERIFY(c.scene.dropPreviewGpus().empty());
        QVERIFY(c.view.dragCaption().isEmpty());
        QCOMPARE(doc->undoStack()->count(), 0);
    }

    void refusedDropsLeaveTheDocumentUnchanged_data()
    {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("reason");
        QTest::newRow("group past the end") << "tp-at-124"
                                            << "the cluster ends at GPU 127";
        QTest::newRow("group on the background") << "tp-on-background"
                                                 << "on a GPU, a server";
        QTest::newRow("group of another job") << "tp-other-job"
                                              << "other parallel sizes";
        QTest::newRow("group that does not exist") << "tp-99"
                                                   << "does not exist";
        QTest::newRow("GPU on a server") << "gpu-on-server"
                                         << "on another GPU";
        QTest::newRow("GPU of another job") << "gpu-other-job"
                                            << "another cluster or job";
        QTest::newRow("damaged chip") << "garbage"
                                      << "";
    }

    void refusedDropsLeaveTheDocumentUnchanged()
    {
        QFETCH(QString, what);
        QFETCH(QString, reason);
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        const std::string before = engine::layoutToText(doc->layout());
        const double step = doc->evaluation().stepTimeS;
        QSignalSpy messages(&c.view, &ClusterView::message);
        QSignalSpy changed(doc.get(), &Document::mappingChanged);
        std::unique_ptr<QMimeData> data;
        QPoint pos;
        const QString job = jobSignature(doc->layout());
        if (what == QLatin1String("tp-at-124")) {
            data = chip(*doc, GroupKind::Tp, 2);
            pos = c.atGpu(124);
        } else if (what == QLatin1String("tp-on-background")) {
            data = chip(*doc, GroupKind::Tp, 2);
            pos = c.view.mapFromScene(c.scene.sceneRect().bottomRight() - QPointF(5, 5));
            c.view.centerOn(c.scene.sceneRect().bottomRight());
            pos = c.view.mapFromScene(c.scene.sceneRect().bottomRight() - QPointF(5, 5));
        } else if (what == QLatin1String("tp-other-job")) {
            data.reset(mime::encodeGroup(GroupRef{GroupKind::Tp, 2},
                                         QStringLiteral("gpus128-tp4-cp1-ep1-etp1-pp4-dp8-x")));
            pos = c.atGpu(8);
        } else if (what == QLatin1String("tp-99")) {
            data = chip(*doc, GroupKind::Tp, 99);
            pos = c.atGpu(8);
        } else if (what == QLatin1String("gpu-on-server")) {
            data.reset(mime::encodeGpu(3, job));
            pos = c.atServer(1);
        } else if (what == QLatin1String("gpu-other-job")) {
            data.reset(mime::encodeGpu(3, QStringLiteral("other")));
            pos = c.atGpu(12);
        } else {
            data = std::make_unique<QMimeData>();
            data->setData(QLatin1String(mime::kGroupType), "{\"kind\":\"zz\"}");
            pos = c.atGpu(12);
        }
        const DropResult r = dragAndDrop(c.view, data.get(), pos);
        QVERIFY(!r.moveAccepted); // the forbidden cursor while dragging
        QVERIFY(!r.dropAccepted);
        QCOMPARE(engine::layoutToText(doc->layout()), before);
        QCOMPARE(doc->evaluation().stepTimeS, step);
        QCOMPARE(doc->undoStack()->count(), 0);
        QCOMPARE(changed.count(), 0);
        QVERIFY(!doc->isModified());
        if (!reason.isEmpty()) {
            // Never silently: the reason reaches the status bar, marked as a refusal.
            QVERIFY(!messages.isEmpty());
            QVERIFY2(messages.last().at(0).toString().contains(reason),
                     qPrintable(messages.last().at(0).toString()));
            QCOMPARE(messages.last().at(1).toBool(), true);
        }
    }

    void droppingAGpuOnAnotherSwapsTheirRanks()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        std::unique_ptr<QMimeData> data(mime::encodeGpu(3, jobSignature(doc->layout())));
        QVERIFY(dragAndDrop(c.view, data.get(), c.atGpu(12)).dropAccepted);
        engine::RankLayout ranks(doc->layout());
        QCOMPARE(ranks.rankOfGpu(12), 3);
        QCOMPARE(ranks.rankOfGpu(3), 12);
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Swap GPUs 3 and 12"));
        // TP group 0 now has a GPU in server 1: the engine says so.
        QVERIFY(hasWarning(doc->evaluation(), "tp-placement", "TP group 0 spans 2 NVLink domains"));
        doc->undoStack()->undo();
        QVERIFY(doc->layout().mapping.empty());
        // Onto itself: nothing happens, and nothing is pushed.
        QVERIFY(dragAndDrop(c.view, data.get(), c.atGpu(3)).dropAccepted);
        QCOMPARE(doc->undoStack()->index(), 0);
    }

    void movingATpGroupAcrossServersCostsTpTimeAndMovingItBackRestoresIt()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        const engine::Layout &l = doc->layout();
        QCOMPARE(l.parallel.tp, 8);
        QCOMPARE(l.parallel.pp, 4);
        QCOMPARE(l.parallel.vp, 5);
        QCOMPARE(l.dataParallel(), 4);
        Canvas c(doc.get());
        const engine::Evaluation inside = doc->evaluation();
        QVERIFY(inside.ok);
        QVERIFY(!hasWarning(inside, "tp-placement", ""));

        auto tp3 = chip(*doc, GroupKind::Tp, 3);
        // TP group 3 lives on server 3 (GPUs 24-31); drop it on GPU 36, so it spans servers 4
        // and 5.
        QVERIFY(dragAndDrop(c.view, tp3.get(), c.atGpu(36)).dropAccepted);
        const engine::Evaluation across = doc->evaluation();
        QVERIFY(across.ok);
        QCOMPARE(gpusOfRanks(*doc, engine::RankLayout(doc->layout()).groupRanks(Dim::TP, 3)),
                 range(36, 8));
        QVERIFY2(across.exposed.tp > inside.exposed.tp * 1.2,
                 qPrintable(QStringLiteral("TP %1 -> %2 s")
                                    .arg(inside.exposed.tp)
                                    .arg(across.exposed.tp)));
        QVERIFY(across.stepTimeS > inside.stepTimeS);
        QVERIFY(hasWarning(across, "tp-placement", "TP group 3 spans 2 NVLink domains"));
        // The document keeps what it was before the edit, for "+x% step time".
        QVERIFY(doc->previousEvaluation());
        QCOMPARE(doc->previousEvaluation()->stepTimeS, inside.stepTimeS);

        // Back where it was: drop it on GPU 24, the first GPU of server 3.
        QVERIFY(dragAndDrop(c.view, tp3.get(), c.atGpu(24)).dropAccepted);
        const engine::Evaluation back = doc->evaluation();
        QVERIFY(doc->layout().mapping.empty()); // the order's own placement again
        QCOMPARE(back.stepTimeS, inside.stepTimeS);
        QCOMPARE(back.exposed.tp, inside.exposed.tp);
        QCOMPARE(back.tokensPerS, inside.tokensPerS);
        QCOMPARE(back.mfu, inside.mfu);
        QCOMPARE(back.costPerMillionTokens, inside.costPerMillionTokens);
        QCOMPARE(back.warnings.size(), inside.warnings.size());
        QVERIFY(!hasWarning(back, "tp-placement", ""));
        QCOMPARE(doc->undoStack()->count(), 2);
    }

    void rubberBandSelectsGpusAndMakesAGroupThere()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get(), 0.4);
        const engine::Topology &t = doc->topology();
        const ClusterGeometry &g = c.scene.geometry();
        // GPUs 4-7 of server 0 and 8-11 of server 1 sit in one row: a band across them.
        const QRectF from = g.deviceRect(t.gpuDevice(4));
        const QRectF to = g.deviceRect(t.gpuDevice(11));
        c.ensureVisible(from.center());
        const QPoint p0 = c.view.mapFromScene(from.topLeft() - QPointF(4, 4));
        const QPoint p1 = c.view.mapFromScene(to.bottomRight() + QPointF(4, 4));
        QVERIFY(c.view.viewport()->rect().contains(p1));
        QWidget *vp = c.view.viewport();
        QTest::mousePress(vp, Qt::LeftButton, Qt::ShiftModifier, p0);
        QMouseEvent moveEvent(QEvent::MouseMove,
                              QPointF(p1),
                              c.view.viewport()->mapToGlobal(QPointF(p1)),
                              Qt::NoButton,
                              Qt::LeftButton,
                              Qt::ShiftModifier);
        QApplication::sendEvent(vp, &moveEvent);
        // While the band is held it shows, and the cue counts the GPUs it holds.
        QCOMPARE(c.view.dragCaption(), QStringLiteral("8 GPUs"));
        const QImage held = c.render();
        QTest::mouseRelease(vp, Qt::LeftButton, Qt::ShiftModifier, p1);
        QCOMPARE(c.scene.selectedGpus(), range(4, 8));
        QVERIFY(c.view.dragCaption().isEmpty());
        // The band showed: its dashed edge and its tint changed pixels along its border (the
        // selection's rings, drawn after the release, lie inside it).
        c.scene.setSelectedGpus({});
        const QImage released = c.render();
        const QRect band = QRect(p0, p1).normalized();
        int changed = 0;
        for (int x = band.left(); x <= band.right(); ++x)
            changed += held.pixel(x, band.top()) != released.pixel(x, band.top());
        QVERIFY2(changed > band.width() / 3, qPrintable(QString::number(changed)));
        c.scene.setSelectedGpus(range(4, 8));

        QSignalSpy messages(&c.view, &ClusterView::message);
        QVERIFY(c.view.makeGroupHere(GroupKind::Tp));
        // GPU 4's rank belongs to TP group 0: the group now runs on the selected GPUs.
        QCOMPARE(gpusOfRanks(*doc, range(0, 8)), range(4, 8));
        QCOMPARE(doc->undoStack()->count(), 1);
        QVERIFY(hasWarning(doc->evaluation(), "tp-placement", "TP group 0"));
        doc->undoStack()->undo();
        QVERIFY(doc->layout().mapping.empty());

        // Five GPUs cannot hold a TP group of eight: refused with the engine's reason.
        c.scene.setSelectedGpus(range(0, 5));
        QVERIFY(!c.view.makeGroupHere(GroupKind::Tp));
        QVERIFY(messages.last().at(0).toString().contains(
                QStringLiteral("8 GPUs; 5 are selected")));
        QCOMPARE(messages.last().at(1).toBool(), true);
        QCOMPARE(doc->undoStack()->index(), 0);
        // A PP stage here: GPU 16 runs stage 0, so stage 0 moves onto GPUs 16-47 and stage 1's
        // ranks from 32-47 take the GPUs it left, 0-15.
        c.scene.setSelectedGpus(range(16, 32));
        QVERIFY(c.view.makeGroupHere(GroupKind::PpStage));
        const engine::RankLayout ranks(doc->layout());
        for (int gpu = 16; gpu < 48; ++gpu)
            QCOMPARE(ranks.coord(ranks.rankOfGpu(gpu), Dim::PP), 0);
        for (int gpu = 0; gpu < 16; ++gpu)
            QCOMPARE(ranks.coord(ranks.rankOfGpu(gpu), Dim::PP), 1);
        // Escape clears the selection.
        QTest::keyClick(&c.view, Qt::Key_Escape);
        QVERIFY(c.scene.selectedGpus().empty());
    }

    void draggingAGpuTooSmallToPickUpSaysWhy()
    {
        // Fitted, 16,384 GPUs are slices of their servers a couple of pixels wide: a press on
        // one pans, and a card at the cursor and the status bar say to zoom in, and how far.
        auto doc = openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get(), 0);
        c.scene.setColourBy(GroupKind::Tp);
        QVERIFY(!c.view.canDragGpus());
        QCOMPARE(std::ceil(c.view.dragZoom() * 100), 22.0);
        const ClusterGeometry &g = c.scene.geometry();
        const QRectF node = g.nodeRect(884);
        // The third slice of server 884 is GPU 884 * 8 + 2.
        const QPoint p0 = c.view.mapFromScene(
                QPointF(node.left() + node.width() * 2.5 / 8, node.center().y()));
        const QPoint p1 = p0 + QPoint(40, 30);
        QWidget *vp = c.view.viewport();
        QSignalSpy messages(&c.view, &ClusterView::message);
        const QImage before = c.render();
        QTest::mousePress(vp, Qt::LeftButton, {}, p0);
        moveHeld(vp, p1);
        QCOMPARE(c.view.dragCaption(), QStringLiteral("Zoom in to drag single GPUs"));
        QVERIFY2(c.view.dragDetail().contains(QStringLiteral("GPU 7074 is 2 px wide")),
                 qPrintable(c.view.dragDetail()));
        QVERIFY(c.view.dragDetail().contains(QStringLiteral("from 22%")));
        QCOMPARE(messages.size(), 1);
        QVERIFY2(messages.first().at(0).toString().contains(QStringLiteral("zoom in to 22%")),
                 qPrintable(messages.first().at(0).toString()));
        QCOMPARE(messages.first().at(1).toBool(), false); // advice, not an error
        moveHeld(vp, p1 + QPoint(5, 5));
        QCOMPARE(messages.size(), 1); // said once per press
        // The card is drawn beside the cursor: a white box over the coloured racks.
        const QRect card(p1 + QPoint(24, 24), QSize(200, 40));
        const QImage held = c.render();
        QVERIFY2(countNear(held.copy(card), Qt::white, 12) > card.width() * card.height() / 2,
                 qPrintable(QString::number(countNear(held.copy(card), Qt::white, 12))));
        QVERIFY(countNear(before.copy(card), Qt::white, 12) < card.width() * card.height() / 4);
        QTest::mouseRelease(vp, Qt::LeftButton, {}, p1 + QPoint(5, 5));
        QVERIFY(c.view.dragCaption().isEmpty());
        QCOMPARE(doc->undoStack()->count(), 0);
        QVERIFY(doc->layout().mapping.empty());

        // Double-click zooms in on the point, far enough to pick GPUs up.
        c.view.fitToCluster();
        QTest::mouseDClick(vp, Qt::LeftButton, {}, p0);
        QVERIFY(c.view.canDragGpus());
        QVERIFY2(c.view.locationText().endsWith(QStringLiteral("Node 884")),
                 qPrintable(c.view.locationText()));
        // There, a press on a GPU and a move pick the GPU up (a QDrag, which returns at once
        // offscreen) instead of panning, and nothing says to zoom in.
        const QPoint at = c.atGpu(7074);
        const QPointF centre = c.view.mapToScene(vp->rect().center());
        messages.clear();
        QTest::mousePress(vp, Qt::LeftButton, {}, at);
        moveHeld(vp, at + QPoint(60, 0));
        QTest::mouseRelease(vp, Qt::LeftButton, {}, at + QPoint(60, 0));
        QCOMPARE(c.view.mapToScene(vp->rect().center()), centre);
        QVERIFY(c.view.dragCaption().isEmpty());
        QVERIFY(messages.isEmpty());
    }

    void hoveringAGpuMarksItsGroupAndTheLinksItsTrafficCrosses()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        c.scene.setColourBy(GroupKind::Tp);
        hover(c.view.viewport(), c.atGpu(13));
        QCOMPARE(c.scene.hoveredGpu(), 13);
        QCOMPARE(c.scene.hoveredGroup(), std::optional(GroupRef{GroupKind::Tp, 1}));
        QCOMPARE(c.scene.hoveredGroupGpus(), range(8, 8));
        const engine::Topology &t = doc->topology();
        // Inside one server: the eight GPUs' NVLinks.
        QCOMPARE(c.scene.hoveredLinkCount(), static_cast<int>(t.gpuNvlinks(8).size()) * 8);
        // Move the group across servers: its traffic now takes NICs and InfiniBand too.
        auto tp1 = chip(*doc, GroupKind::Tp, 1);
        QVERIFY(dragAndDrop(c.view, tp1.get(), c.atGpu(12)).dropAccepted);
        c.scene.setHoveredGpu(-1);
        hover(c.view.viewport(), c.atGpu(13));
        QCOMPARE(c.scene.hoveredGroupGpus(), range(12, 8));
        QVERIFY(c.scene.hoveredLinkCount() > static_cast<int>(t.gpuNvlinks(8).size()) * 8);
        // Coloured by PP stage, hovering marks the whole stage.
        c.scene.setColourBy(GroupKind::PpStage);
        QCOMPARE(c.scene.hoveredGroup()->kind, GroupKind::PpStage);
        QCOMPARE(c.scene.hoveredGroupGpus().size(), std::size_t(32));
        // Leaving the canvas clears it.
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(&c.view, &leave);
        QCOMPARE(c.scene.hoveredGpu(), -1);
        QVERIFY(c.scene.hoveredGroupGpus().empty());
    }

    void trafficLinksFollowThePlacement()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        const engine::Topology &t = doc->topology();
        const auto kindsOf = [&](const std::vector<int> &gpus) {
            std::set<engine::LinkKind> kinds;
            for (int l : engine::groupTrafficLinks(t, gpus, doc->evaluation().links.get()))
                kinds.insert(t.links()[static_cast<std::size_t>(l)].kind);
            return kinds;
        };
        // TP group 0 inside server 0: only its GPUs' NVLinks.
        QCOMPARE(kindsOf(range(0, 8)), std::set<engine::LinkKind>{engine::LinkKind::NvLink});
        QCOMPARE(engine::groupTrafficLinks(t, range(0, 8)).size(), t.gpuNvlinks(0).size() * 8);
        // Across two servers: the NICs' PCIe paths and their InfiniBand uplinks too.
        const auto spanning = kindsOf({4, 5, 6, 7, 8, 9, 10, 11});
        QVERIFY(spanning.count(engine::LinkKind::NvLink));
        QVERIFY(spanning.count(engine::LinkKind::Ib));
    }

    void colouringFollowsTheChosenDimension()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get(), 0);
        c.scene.setColourBy(GroupKind::Tp);
        const CanvasState &s = c.scene.canvasState();
        QCOMPARE(s.groupCount, 16);
        QCOMPARE(s.gpuGroup[9], 1);
        QCOMPARE(s.gpuGroup[127], 15);
        QVERIFY(s.gpuFill(0) != s.gpuFill(8));
        c.scene.setColourBy(GroupKind::PpStage);
        QCOMPARE(s.groupCount, 4);
        QCOMPARE(s.gpuGroup[31], 0);
        QCOMPARE(s.gpuGroup[32], 1); // ranks 32-63 are stage 1 (order tp-cp-ep-dp-pp)
        QCOMPARE(s.gpuGroup[127], 3);
        c.scene.setColourBy(GroupKind::DpReplica);
        QCOMPARE(s.gpuGroup[8], 1);
        QCOMPARE(s.gpuGroup[32], 0);
        // The colours are on the canvas: stage 3's colour shows when coloured by stage.
        c.scene.setColourBy(GroupKind::PpStage);
        const QColor stage3 = style::groupColor(3, 4, true);
        const auto count = [&](const QImage &img, const QColor &colour) {
            int n = 0;
            for (int y = 0; y < img.height(); y += 2)
                for (int x = 0; x < img.width(); x += 2) {
                    const QColor p = img.pixelColor(x, y);
                    n += std::abs(p.red() - colour.red()) < 8
                         && std::abs(p.green() - colour.green()) < 8
                         && std::abs(p.blue() - colour.blue()) < 8;
                }
            return n;
        };
        QVERIFY(count(c.render(), stage3) > 50);
        c.scene.setColourBy(std::nullopt);
        QVERIFY(!c.scene.canvasState().colouring());
        QCOMPARE(count(c.render(), stage3), 0);
    }

    void linkLoadViewColoursLinksByTheirLoad()
    {
        auto doc = openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get(), 0.35);
        const QImage plain = c.render();
        c.scene.setLinkLoadVisible(true);
        QVERIFY(c.scene.canvasState().showLoads());
        const engine::Topology &t = doc->topology();
        // Inside servers only NVLink and PCIe carry TP; a NIC uplink carries DP's ring.
        double nvlink = 0;
        for (int l : t.gpuNvlinks(0))
            nvlink = std::max(nvlink, c.scene.canvasState().load(l));
        QVERIFY(nvlink > 0);
        paintStats() = {};
        const QImage loaded = c.render();
        QVERIFY(paintStats().linkLines > 0);
        QVERIFY(loaded != plain);
        // The legend says what the colours mean.
        QVERIFY(c.view.fitZoom() > 0);
        // Idle links are grey: the idle colour is on the canvas, the NVLink green is gone.
        int green = 0;
        const QColor nv = style::linkColor(engine::LinkKind::NvLink);
        for (int y = 0; y < loaded.height() - 100; y += 2)
            for (int x = 0; x < loaded.width(); x += 2) {
                const QColor p = loaded.pixelColor(x, y);
                green += p == nv;
            }
        QCOMPARE(green, 0);
    }
};

QTEST_MAIN(TestDragDrop)
#include "tst_dragdrop.moc"
