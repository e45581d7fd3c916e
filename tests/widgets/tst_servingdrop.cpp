// Dragging a serving layout's groups on the canvas (DESIGN.md "Serving (inference)
// workloads"): the Groups palette shows the serving engine's groups (each pool's TP groups,
// replicas, the pools) where it used to hide them, and a chip dragged onto GPUs names the
// serving group it moves ("TP group 13 of replica 13 (decode pool)") in the cue and the status
// bar, prices the time per output token it would give, places the serving ranks (those on the
// target GPUs move to the ones it leaves), and one undo puts them back.
#include "document/document.h"
#include "palette/groupchipmodel.h"
#include "palette/grouppalette.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"
#include "scene/dropplan.h"
#include "serving/servingplacement.h"

#include "canvasfixture.h"
#include "testlayouts.h"

#include <QAbstractButton>
#include <QApplication>
#include <QContextMenuEvent>
#include <QDragEnterEvent>
#include <QDragMoveEvent>
#include <QDropEvent>
#include <QLabel>
#include <QListView>
#include <QMenu>
#include <QMimeData>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>
#include <QUndoStack>

#include <algorithm>
#include <optional>

using namespace railyard;

namespace {

using test::openLayout;
using K = engine::ServingGpuGroups;

constexpr const char *kDisaggNvl72 = "serving-disaggregated-gb200-nvl72.railyard.json";
constexpr const char *kDisagg400g = "serving-disaggregated-gb200-400g.railyard.json";

struct Canvas : test::Canvas
{
    explicit Canvas(Document *doc)
        : test::Canvas(doc, {.zoom = 0.3, .centre = true, .viewState = false})
    {}
    QPoint atGpu(int gpu)
    {
        const engine::Topology &t = scene.document()->topology();
        const QPointF c = scene.geometry().deviceRect(t.gpuDevice(gpu)).center();
        view.centerOn(c);
        return view.mapFromScene(c);
    }
};

int poolOf(const Document &doc, int gpu)
{
    return doc.servingGroups()->group[K::Pool][static_cast<std::size_t>(gpu)];
}

} // namespace

class TestServingDrop : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The palette lists a disaggregated layout's TP groups and pools (it hid them).
    void paletteShowsTheServingGroups()
    {
        auto doc = openLayout(kDisaggNvl72);
        QVERIFY(doc && doc->isServing());
        const engine::ServingGpuGroups &s = *doc->servingGroups();
        QVERIFY(s.ok() && s.disaggregated);
        Canvas c(doc.get());
        GroupPalette palette;
        palette.setScene(&c.scene);
        palette.resize(320, 500);
        palette.show();
        palette.kindButton(GroupKind::Tp)->click();
        QCOMPARE(palette.kind(), GroupKind::Tp);
        QVERIFY(palette.chipView()->isVisibleTo(&palette));
        GroupChipModel *m = palette.model();
        QCOMPARE(m->rowCount(), s.count[K::Tp]); // 11 prefill + 7 decode
        QCOMPARE(m->rowCount(), 18);
        const QModelIndex last = m->index(17);
        QCOMPARE(last.data().toString(), QStringLiteral("TP group 17"));
        QCOMPARE(last.data(GroupChipModel::FullNameRole).toString(),
                 QStringLiteral("TP group 17 of replica 17 (decode pool)"));
        QCOMPARE(m->index(0).data(GroupChipModel::FullNameRole).toString(),
                 QStringLiteral("TP group 0 of replica 0 (prefill pool)"));
        QCOMPARE(last.data(GroupChipModel::GpuCountRole).toInt(), 4);
        // Its GPUs are the serving engine's: the decode pool's last four.
        QCOMPARE(palette.groupGpus(GroupRef{GroupKind::Tp, 17}), (std::vector<int>{68, 69, 70, 71}));
        // The pools, in the CP slot.
        palette.kindButton(GroupKind::Cp)->click();
        QCOMPARE(m->rowCount(), 2);
        QCOMPARE(m->index(0).data().toString(), QStringLiteral("prefill pool"));
        QCOMPARE(m->index(1).data().toString(), QStringLiteral("decode pool"));
        QCOMPARE(m->index(1).data(GroupChipModel::GpuCountRole).toInt(), 28);
        // The summary counts them mid-sentence, in lower case.
        QStringList summaries;
        for (const QLabel *label : palette.findChildren<QLabel *>())
            summaries << label->text();
        QVERIFY2(summaries.join('|').contains(QStringLiteral("<b>2 prefill/decode pools</b>")),
                 qPrintable(summaries.join('|')));
    }

    // A decode TP group dragged from the palette onto GPU 0 (a prefill GPU): the cue and the
    // status bar name the serving group and what it does to TPOT; the drop swaps it with
    // the prefill ranks there; one undo restores the layout.
    void dropNamesTheServingGroupAndOneUndoRestoresIt_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::newRow("NVL72") << QString::fromLatin1(kDisaggNvl72);
        QTest::newRow("400G") << QString::fromLatin1(kDisagg400g);
    }

    void dropNamesTheServingGroupAndOneUndoRestoresIt()
    {
        QFETCH(QString, layout);
        auto doc = openLayout(layout.toLatin1().constData());
        QVERIFY(doc && doc->isServing() && doc->servingEvaluation()->ok);
        const engine::Layout before = doc->layout();
        const double tpotBefore = doc->servingEvaluation()->tpotS;
        Canvas c(doc.get());
        GroupPalette palette;
        palette.setScene(&c.scene);
        palette.kindButton(GroupKind::Tp)->click();
        GroupChipModel *m = palette.model();
        const int group = m->rowCount() - 1; // the decode pool's last TP group
        const std::vector<int> from = palette.groupGpus(GroupRef{GroupKind::Tp, group});
        QCOMPARE(from.size(), std::size_t(4));
        QCOMPARE(poolOf(*doc, from.front()), 1);
        QCOMPARE(poolOf(*doc, 0), 0);
        const QString name = m->index(group).data(GroupChipModel::FullNameRole).toString();
        QVERIFY2(name.endsWith(QStringLiteral("(decode pool)")), qPrintable(name));
        // The chip's own drag data, as the palette's list view starts the drag with.
        std::unique_ptr<QMimeData> data(m->mimeData({m->index(group)}));
        QVERIFY(data);

        QSignalSpy said(&c.view, &ClusterView::message);
        QWidget *vp = c.view.viewport();
        // In over the decode pool, then on to GPU 0, as a drag from the palette arrives.
        const QPoint in = c.atGpu(from.front());
        QDragEnterEvent enter(in, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &enter);
        const QPoint at0 = c.atGpu(0);
        QDragMoveEvent move(at0, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &move);
        QVERIFY(move.isAccepted());
        QCOMPARE(c.scene.dropPreviewGpus(), (std::vector<int>{0, 1, 2, 3}));
        QVERIFY(c.scene.dropPreviewOk());
        QVERIFY2(c.view.dragCaption().startsWith(name), qPrintable(c.view.dragCaption()));
        QVERIFY(c.view.dragCaption().contains(QStringLiteral("GPUs 0\u20133")));
        // The cue prices the move: TPOT before and after (or says the same).
        QVERIFY2(c.view.dragDetail().contains(QStringLiteral("TPOT")),
                 qPrintable(c.view.dragDetail()));
        QVERIFY(!said.isEmpty());
        const QString status = said.last().at(0).toString();
        QVERIFY2(status.contains(name) && status.contains(QStringLiteral("TPOT")),
                 qPrintable(status));

        QDropEvent drop(QPointF(at0), Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(vp, &drop);
        QVERIFY(drop.isAccepted());
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->undoStack()->undoText(),
                 QStringLiteral("Place %1 on GPUs 0\u20133").arg(name));
        QVERIFY2(said.last().at(0).toString().startsWith(doc->undoStack()->undoText()),
                 qPrintable(said.last().at(0).toString()));
        // The decode group is on GPUs 0-3 now; the prefill ranks it met took its old GPUs.
        const engine::ServingGpuGroups &after = *doc->servingGroups();
        QVERIFY(after.ok());
        for (int gpu = 0; gpu < 4; ++gpu) {
            QCOMPARE(poolOf(*doc, gpu), 1);
            QCOMPARE(after.group[K::Tp][static_cast<std::size_t>(gpu)], group);
        }
        for (int gpu : from)
            QCOMPARE(poolOf(*doc, gpu), 0);
        QCOMPARE(engine::servingGroupGpus(after, K::Tp, 0), from); // prefill TP group 0 moved whole
        QVERIFY(doc->servingEvaluation()->ok);
        QCOMPARE(doc->layout().mapping.size(), std::size_t(72));
        const double tpotAfter = doc->servingEvaluation()->tpotS;

        // One undo: the mapping, the pools and the price as they were.
        doc->undoStack()->undo();
        QVERIFY(doc->layout().mapping == before.mapping);
        QCOMPARE(poolOf(*doc, 0), 0);
        QCOMPARE(poolOf(*doc, from.front()), 1);
        QCOMPARE(doc->servingEvaluation()->tpotS, tpotBefore);
        // Dropped back where it was, the group leaves the layout as it started.
        doc->undoStack()->redo();
        QCOMPARE(doc->servingEvaluation()->tpotS, tpotAfter);
        const auto back = engine::planServingGroupDrop(doc->layout(),
                                                       *doc->servingGroups(),
                                                       K::Tp,
                                                       group,
                                                       engine::DropSite::gpu(from.front()));
        QVERIFY(back.ok());
        QCOMPARE(engine::servingGroupGpus(*doc->servingGroups(), K::Tp, 0), from);
    }

    // "Make a TP group here" on a serving layout makes the serving group: GPUs 46-49 selected,
    // GPU 46 serves decode replica 11, so its TP group moves onto them (the next replica's
    // ranks on 48-49 take 44-45), named as the serving engine places it, in one undo step. On
    // the 400G layout (4 GPUs per NVLink domain) the group then spans two servers and the
    // status bar says what its TP all-reduces over the NICs cost per token. The canvas menu
    // offers the serving groups and their sizes, not the training ranks'.
    void makeGroupHereMakesTheServingGroup()
    {
        auto doc = openLayout(kDisagg400g);
        QVERIFY(doc && doc->isServing() && doc->servingEvaluation()->ok);
        const double tpotBefore = doc->servingEvaluation()->tpotS;
        Canvas c(doc.get());
        const std::vector<int> selected = {46, 47, 48, 49};
        c.scene.setSelectedGpus(selected);
        const std::optional<GpuGroup> held = groupOfGpu(*doc, GroupKind::Tp, 46);
        QVERIFY(held);
        const QString name = QStringLiteral("TP group 11 of replica 11 (decode pool)");
        QCOMPARE(held->name, name);
        QCOMPARE(held->gpus, (std::vector<int>{44, 45, 46, 47}));
        QCOMPARE(groupOfGpu(*doc, GroupKind::Cp, 46)->name, QStringLiteral("decode pool"));

        // The canvas menu: the serving group's size, enabled for these four GPUs.
        QStringList items;
        QTimer::singleShot(0, this, [&items] {
            if (auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget())) {
                for (QAction *a : menu->actions())
                    if (!a->isSeparator())
                        items << a->text()
                                         + (a->isEnabled() ? QString() : QStringLiteral(" [off]"));
                menu->close();
            }
        });
        const QPoint at46 = c.atGpu(46);
        QContextMenuEvent menuEvent(QContextMenuEvent::Mouse,
                                    at46,
                                    c.view.viewport()->mapToGlobal(at46));
        QApplication::sendEvent(c.view.viewport(), &menuEvent);
        QVERIFY2(items.contains(QStringLiteral("Make a TP group Here (4 GPUs)")),
                 qPrintable(items.join(QLatin1Char('|'))));
        QVERIFY2(items.contains(QStringLiteral("Select %1").arg(name)),
                 qPrintable(items.join(QLatin1Char('|'))));
        QVERIFY2(items.contains(QStringLiteral("Make a Prefill/decode pool Here (28 GPUs) [off]")),
                 qPrintable(items.join(QLatin1Char('|'))));

        QSignalSpy said(&c.view, &ClusterView::message);
        QVERIFY(c.view.makeGroupHere(GroupKind::Tp));
        QCOMPARE(doc->undoStack()->count(), 1);
        QCOMPARE(doc->undoStack()->undoText(),
                 QStringLiteral("Make %1 on GPUs 46\u201349").arg(name));
        const engine::ServingGpuGroups &after = *doc->servingGroups();
        QCOMPARE(engine::servingGroupGpus(after, K::Tp, 11), selected);
        std::vector<int> next = engine::servingGroupGpus(after, K::Tp, 12);
        std::sort(next.begin(), next.end());
        QCOMPARE(next, (std::vector<int>{44, 45, 50, 51}));
        for (int gpu = 0; gpu < 72; ++gpu)
            QCOMPARE(poolOf(*doc, gpu), gpu < 44 ? 0 : 1);
        // Across two servers' NICs the decode TP all-reduces cost more: TPOT rises, and the
        // status bar says by how much.
        const double tpotAfter = doc->servingEvaluation()->tpotS;
        QVERIFY2(tpotAfter > tpotBefore,
                 qPrintable(QStringLiteral("%1 -> %2").arg(tpotBefore).arg(tpotAfter)));
        const QString status = said.last().at(0).toString();
        QVERIFY2(status.startsWith(doc->undoStack()->undoText()) && status.contains("TPOT"),
                 qPrintable(status));

        // A selection of the wrong size is refused with the serving group's name.
        doc->undoStack()->undo();
        QCOMPARE(engine::servingGroupGpus(*doc->servingGroups(), K::Tp, 11), held->gpus);
        QCOMPARE(doc->servingEvaluation()->tpotS, tpotBefore);
        c.scene.setSelectedGpus({46, 47, 48});
        QVERIFY(!c.view.makeGroupHere(GroupKind::Tp));
        QVERIFY2(said.last().at(0).toString().contains(name
                                                       + QStringLiteral(" has 4 GPUs; 3 are "
                                                                        "selected")),
                 qPrintable(said.last().at(0).toString()));
        QCOMPARE(doc->undoStack()->index(), 0);
    }

    // Past the cluster's end the drop is refused, the serving group named in the reason.
    void dropPastTheEndIsRefusedNamingTheGroup()
    {
        auto doc = openLayout(kDisaggNvl72);
        QVERIFY(doc);
        Canvas c(doc.get());
        GroupPalette palette;
        palette.setScene(&c.scene);
        palette.kindButton(GroupKind::DpReplica)->click();
        GroupChipModel *m = palette.model();
        QCOMPARE(m->rowCount(), 18);
        std::unique_ptr<QMimeData> data(m->mimeData({m->index(3)}));
        const QPoint at70 = c.atGpu(70);
        QDragEnterEvent enter(at70, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(c.view.viewport(), &enter);
        QDragMoveEvent move(at70, Qt::MoveAction, data.get(), Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(c.view.viewport(), &move);
        QVERIFY(!move.isAccepted());
        QVERIFY(!c.scene.dropPreviewOk());
        QVERIFY2(c.view.dragDetail().contains(
                         QStringLiteral("Replica 3 (prefill pool) needs 4 GPUs "
                                        "from GPU 70")),
                 qPrintable(c.view.dragDetail()));
        QCOMPARE(doc->undoStack()->count(), 0);
    }
};

QTEST_MAIN(TestServingDrop)
#include "tst_servingdrop.moc"
