// The canvas half of issue 10: hovering a link (view state, tooltip with the engine's bytes,
// utilization and crossing groups), the Hottest Links list (the engine's busiest link, following
// the playback from a TP phase to a DP phase, clicking selects), the flowing dashes (pixels move
// with the playback time) and the colouring and selection living in the ViewState.
#include "document/document.h"
#include "document/viewstate.h"
#include "layout/parallel.h"
#include "panels/hottestlinkspanel.h"
#include "panels/linkdescription.h"
#include "scene/clustergeometry.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"

#include "canvasfixture.h"
#include "step/routes.h"
#include "step/timeline.h"

#include "testlayouts.h"

#include <QApplication>
#include <QImage>
#include <QMouseEvent>
#include <QPainter>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>

#include <algorithm>

using namespace railyard;
using engine::PhaseKind;

namespace {

std::unique_ptr<Document> openTestData(const char *name)
{
    QString error;
    auto doc = Document::load(QStringLiteral(RAILYARD_SOURCE_DIR "/tests/data/")
                                      + QLatin1String(name),
                              &error);
    if (!doc)
        qWarning("%s", qPrintable(error));
    return doc;
}

// The busiest link of `v` (lowest id on ties), as the list ranks them.
int busiest(const std::vector<float> &v)
{
    int best = -1;
    for (std::size_t i = 0; i < v.size(); ++i)
        if (v[i] > 0 && (best < 0 || v[i] > v[static_cast<std::size_t>(best)]))
            best = static_cast<int>(i);
    return best;
}

// Mid TP collective of stage 0 (after the start) and late in the DP gradient reduction.
double midPhase(const engine::StepTimeline &tl, PhaseKind kind)
{
    for (const engine::Phase &p : tl.phases) {
        if (kind == PhaseKind::Tp && p.kind == kind && p.stage == 0 && p.start > 0)
            return (p.start + p.end) / 2;
        if (kind == PhaseKind::Dp && p.kind == kind && !p.exposed && p.share >= 1.0)
            return p.start + 0.8 * p.duration();
    }
    return -1;
}

// A mouse move with no button held, sent to the viewport (QTest::mouseMove moves the cursor,
// which an offscreen window never sees).
void hoverAt(QWidget *viewport, const QPoint &at)
{
    QMouseEvent move(QEvent::MouseMove,
                     QPointF(at),
                     QPointF(viewport->mapToGlobal(at)),
                     Qt::NoButton,
                     Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(viewport, &move);
}

struct Canvas : test::Canvas
{
    explicit Canvas(Document *doc)
        : test::Canvas(doc, {.size = {1200, 800}, .fit = false, .frame = true})
    {}
};

} // namespace

class TestLinkView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void engineNamesTheGroupsCrossingALink()
    {
        // Checked against routing every group of the job: the engine only routes the groups
        // under the link, and must find the same ones.
        auto doc = test::openLayout("tp-across-servers.railyard.json");
        QVERIFY(doc);
        const engine::Topology &t = doc->topology();
        const engine::RankLayout ranks(doc->layout());
        const int nic4 = t.devices()[static_cast<std::size_t>(t.gpuNics(4)[0])].index;
        const int ib4 = t.nicUplink(nic4);
        const int nv4 = t.gpuNvlinks(4)[0];
        for (int link : {ib4, nv4}) {
            const auto crossings = engine::groupsCrossingLink(t, ranks, link);
            for (engine::Dim d : engine::kAllDims) {
                if (ranks.size(d) <= 1)
                    continue;
                std::vector<int> expected;
                for (int g = 0; g < ranks.groupCount(d); ++g) {
                    const auto links = engine::groupTrafficLinks(t, ranks.groupGpus(d, g));
                    if (std::find(links.begin(), links.end(), link) != links.end())
                        expected.push_back(g);
                }
                std::vector<int> got;
                for (const auto &c : crossings)
                    if (c.dim == d)
                        got = c.groups;
                QCOMPARE(got, expected);
            }
        }
        // TP group 0 (GPUs 4-11, across both servers) crosses GPU 4's NIC uplink.
        const auto crossings = engine::groupsCrossingLink(t, ranks, ib4);
        const int tp4 = ranks.groupOf(ranks.rankOfGpu(4), engine::Dim::TP);
        QVERIFY(std::any_of(crossings.begin(), crossings.end(), [&](const auto &c) {
            return c.dim == engine::Dim::TP
                   && std::find(c.groups.begin(), c.groups.end(), tp4) != c.groups.end();
        }));
    }

    void hoveringALinkSetsTheViewStateAndItsTooltip()
    {
        auto doc = test::openLayout("tp-across-servers.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        const engine::Topology &t = doc->topology();
        const engine::Evaluation &e = doc->evaluation();
        const int nic4 = t.devices()[static_cast<std::size_t>(t.gpuNics(4)[0])].index;
        const int ib4 = t.nicUplink(nic4);
        c.view.showLink(ib4);
        QCOMPARE(c.state.selectedLink(), ib4);
        // The NIC's drop onto its lane is its own segment: hover its middle.
        const QPolygonF path = c.scene.geometry().linkPath(ib4);
        QVERIFY(path.size() >= 2);
        const QPoint at = c.view.mapFromScene((path[0] + path[1]) / 2);
        QSignalSpy hover(&c.state, &ViewState::changed);
        QCOMPARE(c.view.linkAtViewport(at), ib4);
        hoverAt(c.view.viewport(), at);
        QCOMPARE(c.state.hoveredLink(), ib4);
        QVERIFY(hover.count() >= 1);

        const QString tip = c.view.toolTipAt(at);
        const std::size_t i = static_cast<std::size_t>(ib4);
        const double bytes = double(e.links->bytesUp[i]) + double(e.links->bytesDown[i]);
        QVERIFY2(bytes > 0, "GPU 4's NIC carries the TP traffic across servers");
        // "Bytes: 752 GB per step": the engine's bytes per step, to the digits shown.
        const QRegularExpressionMatch m
                = QRegularExpression(QStringLiteral("Bytes: ([0-9.]+) GB per step")).match(tip);
        QVERIFY2(m.hasMatch(), qPrintable(tip));
        QVERIFY(std::abs(m.captured(1).toDouble() - bytes / 1e9) <= 0.005 * bytes / 1e9 + 0.05);
        const double u = e.links->utilization[i];
        QVERIFY2(tip.contains(
                         QStringLiteral("%1% step average").arg(100 * u, 0, 'f', u < 0.1 ? 1 : 0)),
                 qPrintable(tip));
        const engine::RankLayout ranks(doc->layout());
        const int tp4 = ranks.groupOf(ranks.rankOfGpu(4), engine::Dim::TP);
        QVERIFY2(tip.contains(QStringLiteral("TP group")) && tip.contains(QString::number(tp4)),
                 qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("TP collectives")), qPrintable(tip));

        // While a moment is shown the tooltip gives the load now, as the engine has it.
        const double tp = midPhase(e.timeline, PhaseKind::Tp);
        c.state.setPlaybackTime(tp >= 0 ? tp : e.timeline.stepS / 2);
        std::vector<float> now;
        engine::utilizationAt(e.timeline, t, c.state.playbackTime(), now);
        const double n = now[i];
        QVERIFY2(c.view.toolTipAt(at).contains(
                         QStringLiteral("%1% now").arg(100 * n, 0, 'f', n < 0.1 ? 1 : 0)),
                 qPrintable(c.view.toolTipAt(at)));

        // Off the link: nothing hovered.
        hoverAt(c.view.viewport(), QPoint(2, 2));
        QCOMPARE(c.state.hoveredLink(), -1);
    }

    void hottestLinksFollowThePlayback()
    {
        auto doc = openTestData("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ViewState view(doc.get());
        HottestLinksPanel panel;
        panel.setDocument(doc.get(), &view);
        const engine::Evaluation &e = doc->evaluation();
        const engine::Topology &t = doc->topology();
        QCOMPARE(static_cast<int>(panel.links().size()), HottestLinksPanel::kTop);
        QCOMPARE(panel.list()->topLevelItemCount(), HottestLinksPanel::kTop);
        QCOMPARE(panel.links()[0], busiest(e.links->utilization));
        QVERIFY(std::is_sorted(panel.utilizations().rbegin(), panel.utilizations().rend()));

        const double tpAt = midPhase(e.timeline, PhaseKind::Tp);
        const double dpAt = midPhase(e.timeline, PhaseKind::Dp);
        QVERIFY(tpAt > 0 && dpAt > 0);
        std::vector<float> at;
        view.setPlaybackTime(tpAt);
        engine::utilizationAt(e.timeline, t, tpAt, at);
        const int tpTop = panel.links()[0];
        QCOMPARE(tpTop, busiest(at));
        QCOMPARE(double(panel.utilizations()[0]), double(at[static_cast<std::size_t>(tpTop)]));
        // During TP the busiest link is an NVLink; during the DP reduction, the network.
        QCOMPARE(t.links()[static_cast<std::size_t>(tpTop)].kind, engine::LinkKind::NvLink);
        const int rankings = panel.rankings();
        view.setPlaybackTime(tpAt * 1.0000001); // the same phases run: no re-ranking
        QCOMPARE(panel.rankings(), rankings);

        view.setPlaybackTime(dpAt);
        engine::utilizationAt(e.timeline, t, dpAt, at);
        const int dpTop = panel.links()[0];
        QCOMPARE(dpTop, busiest(at));
        QVERIFY(dpTop != tpTop);
        QVERIFY(panel.headerText().contains(QStringLiteral("Busiest links at")));

        view.clearPlaybackTime();
        QCOMPARE(panel.links()[0], busiest(e.links->utilization));
    }

    // Every row of the list can be told from the others at the widths the dock has (about
    // 300 px at 1280x800, 400 at 1600x1000): a server's NVLinks during TP ("GPU 3 \u2194
    // NVSwitch 0.1", once "GPU 0 \u2194 NVSwitc\u2026" on every row) and a 16k cluster's
    // NICs. Names are elided in the middle, whole in the tip with the link's kind.
    void hottestRowsCanBeToldApart_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("width");
        for (const char *layout : {"hgx-h100-server.railyard.json",
                                   "gmi-h200-cluster.railyard.json",
                                   "llama3.1-405b-16k-h100.railyard.json"})
            for (int width : {300, 400})
                QTest::addRow("%s %d px", layout, width) << QString::fromLatin1(layout) << width;
    }

    void hottestRowsCanBeToldApart()
    {
        QFETCH(QString, layout);
        QFETCH(int, width);
        auto doc = test::openLayout(layout.toLatin1().constData());
        QVERIFY(doc);
        ViewState view(doc.get());
        HottestLinksPanel panel;
        panel.setDocument(doc.get(), &view);
        panel.resize(width, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const double tp = midPhase(doc->evaluation().timeline, PhaseKind::Tp);
        for (const double at : {-1.0, tp}) {
            if (at > 0)
                view.setPlaybackTime(at);
            QApplication::processEvents();
            QTreeWidget *list = panel.list();
            QVERIFY(list->topLevelItemCount() >= 8);
            const QFontMetrics fm(list->font());
            const int room = list->columnWidth(0) - 8; // the cell's margins
            QVERIFY2(room >= 100, qPrintable(QString::number(room)));
            QStringList shown;
            for (int r = 0; r < list->topLevelItemCount(); ++r) {
                const QTreeWidgetItem *item = list->topLevelItem(r);
                const QString name = item->text(0);
                shown << fm.elidedText(name, list->textElideMode(), room);
                QVERIFY(item->toolTip(0).contains(name));
            }
            QCOMPARE(list->textElideMode(), Qt::ElideMiddle);
            QStringList unique = shown;
            unique.removeDuplicates();
            QVERIFY2(unique.size() == shown.size(), qPrintable(shown.join(QStringLiteral(" | "))));
            // Nothing scrolls sideways: the columns fit the list.
            int total = 0;
            for (int c = 0; c < list->columnCount(); ++c)
                total += list->columnWidth(c);
            QVERIFY2(total <= list->viewport()->width(),
                     qPrintable(QStringLiteral("%1 px in %2")
                                        .arg(total)
                                        .arg(list->viewport()->width())));
        }
    }

    void clickingARowSelectsTheLink()
    {
        auto doc = openTestData("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ViewState view(doc.get());
        HottestLinksPanel panel;
        panel.setDocument(doc.get(), &view);
        panel.resize(500, 600);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QSignalSpy activated(&panel, &HottestLinksPanel::linkActivated);
        QTreeWidgetItem *row = panel.list()->topLevelItem(2);
        const QRect r = panel.list()->visualItemRect(row);
        QTest::mouseClick(panel.list()->viewport(), Qt::LeftButton, {}, r.center());
        QCOMPARE(view.selectedLink(), panel.links()[2]);
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated[0][0].toInt(), panel.links()[2]);
        // Selected elsewhere (the canvas): the list marks it.
        view.setSelectedLink(panel.links()[0]);
        QCOMPARE(panel.list()->currentItem(), panel.list()->topLevelItem(0));
    }

    void dashesMoveWithThePlaybackTime()
    {
        auto doc = openTestData("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        Canvas c(doc.get());
        c.state.setLinkLoad(true);
        const engine::Evaluation &e = doc->evaluation();
        const double dpAt = midPhase(e.timeline, PhaseKind::Dp);
        QVERIFY(dpAt > 0);
        c.state.setPlaybackTime(dpAt);
        std::vector<float> at;
        engine::utilizationAt(e.timeline, doc->topology(), dpAt, at);
        c.view.showLink(busiest(at)); // zoomed in on a loaded link
        const auto grab = [&] {
            QImage img(c.view.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
            img.fill(Qt::white);
            QPainter p(&img);
            c.view.render(&p, QRectF(img.rect()), c.view.viewport()->rect());
            return img;
        };
        const QImage first = grab();
        QCOMPARE(grab(), first); // deterministic
        // A little later in the same phases: the same loads, the dashes moved on.
        const auto running = e.timeline.runningAt(dpAt);
        double firstEnd = e.timeline.stepS;
        for (int p : running)
            firstEnd = std::min(firstEnd, e.timeline.phases[static_cast<std::size_t>(p)].end);
        const double later = dpAt + std::min((firstEnd - dpAt) / 2, e.timeline.stepS * 0.003);
        QCOMPARE(e.timeline.runningAt(later), running);
        c.state.setPlaybackTime(later);
        QVERIFY(grab() != first);
        c.state.setPlaybackTime(dpAt);
        QCOMPARE(grab(), first);
        // Without a moment there are no dashes: the step average is still.
        c.state.clearPlaybackTime();
        QVERIFY(c.scene.canvasState().moment().empty());
    }

    void colouringAndSelectionLiveInTheViewState()
    {
        auto doc = openTestData("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ViewState view(doc.get());
        ClusterScene scene(doc.get());
        scene.setViewState(&view);
        QSignalSpy changes(&view, &ViewState::changed);
        const auto last = [&] { return changes.last()[0].value<ViewState::Changes>(); };
        scene.setColourBy(GroupKind::Tp);
        QCOMPARE(view.colourBy(), std::optional(GroupKind::Tp));
        QCOMPARE(changes.count(), 1);
        QCOMPARE(last(), ViewState::Changes(ViewState::Colouring));
        view.setColourBy(GroupKind::DpReplica);
        QCOMPARE(scene.colourBy(), std::optional(GroupKind::DpReplica));
        const engine::RankLayout ranks(doc->layout());
        QCOMPARE(scene.canvasState().groupCount, groupCount(ranks, GroupKind::DpReplica));

        view.setLinkLoad(true);
        QVERIFY(scene.isLinkLoadVisible() && scene.canvasState().showLoads());
        QCOMPARE(last(), ViewState::Changes(ViewState::LinkLoad));

        // One flag per field of the selection, each only when that field changes.
        changes.clear();
        scene.setSelectedGpus({9, 3, 3, 100000});
        QCOMPARE(view.selectedGpus(), (std::vector<int>{3, 9}));
        QCOMPARE(changes.count(), 1);
        QCOMPARE(last(), ViewState::Changes(ViewState::SelectedGpus));
        view.setSelectedDevice(5);
        QCOMPARE(scene.selectedDevice(), 5);
        QCOMPARE(changes.count(), 2);
        QCOMPARE(last(), ViewState::Changes(ViewState::SelectedDevice));
        scene.setSelectedLink(7);
        QCOMPARE(view.selectedLink(), 7);
        QCOMPARE(changes.count(), 3);
        QCOMPARE(last(), ViewState::Changes(ViewState::SelectedLink));
        scene.setSelectedGpus({3, 9}); // the same GPUs: nothing changed, nothing said
        view.setSelectedDevice(5);
        QCOMPARE(changes.count(), 3);
        // A second scene on the same view state shows the same colouring at once.
        ClusterScene other(doc.get());
        other.setViewState(&view);
        QCOMPARE(other.colourBy(), std::optional(GroupKind::DpReplica));
        QCOMPARE(other.canvasState().groupCount, scene.canvasState().groupCount);
    }
};

QTEST_MAIN(TestLinkView)
#include "tst_linkview.moc"
