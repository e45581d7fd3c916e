// The playback clock (issue 18): the view state's one animation driver moves the playback time,
// the moment (running phases, link loads, busiest links) is computed once beside the view
// state, and the canvas, the Hottest Links list and the timeline's label read it. Each test
// advances the driver with setCurrentTime, as a frame of the animation would.
#include "commands/changeworkload.h"
#include "document/document.h"
#include "document/viewstate.h"
#include "panels/hottestlinkspanel.h"
#include "panels/timelinepanel.h"
#include "report/report.h"
#include "scene/clusterscene.h"
#include "scene/clusterview.h"
#include "step/timeline.h"

#include "testlayouts.h"

#include <QAbstractAnimation>
#include <QPainter>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>

using namespace railyard;
using engine::PhaseKind;

namespace {

// The driver's time (ms of wall time into the loop) that shows `at` seconds of the step.
int driverMs(const ViewState &view, double at)
{
    return static_cast<int>(at / view.stepLength() * view.driver()->duration());
}

// A moment inside a phase of `kind` (stage 0 for TP; a full-share DP reduction), or -1.
double inside(const engine::StepTimeline &tl, PhaseKind kind)
{
    for (const engine::Phase &p : tl.phases) {
        if (kind == PhaseKind::Tp && p.kind == kind && p.stage == 0 && p.start > 0)
            return (p.start + p.end) / 2;
        if (kind == PhaseKind::Dp && p.kind == kind && !p.exposed && p.share >= 1.0)
            return p.start + 0.8 * p.duration();
    }
    return -1;
}

} // namespace

class TestPlaybackClock : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theClockMovesTheMoment()
    {
        auto doc = test::openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ViewState view(doc.get());
        ClusterScene scene(doc.get());
        scene.setViewState(&view);
        view.setLinkLoad(true);
        HottestLinksPanel panel;
        panel.setDocument(doc.get(), &view);
        TimelinePanel timeline(doc.get(), &view);
        const engine::StepTimeline &tl = doc->evaluation().timeline;
        const engine::Topology &t = doc->topology();
        const double tpAt = inside(tl, PhaseKind::Tp), dpAt = inside(tl, PhaseKind::Dp);
        QVERIFY(tpAt > 0 && dpAt > 0);

        QVERIFY(view.moment().empty());
        view.play();
        QVERIFY(view.isPlaying());
        QSignalSpy spy(&view, &ViewState::changed);
        view.driver()->setCurrentTime(driverMs(view, tpAt));
        QVERIFY(view.isPlaying()); // a frame, not a scrub
        QVERIFY(!spy.isEmpty());
        QVERIFY(spy.last()[0].value<ViewState::Changes>().testFlag(ViewState::Playback));
        const double t1 = view.playbackTime();
        QVERIFY(std::abs(t1 - tpAt) < view.stepLength() * 1e-3);
        // The moment is the engine's at that time.
        std::vector<float> expected;
        engine::utilizationAt(tl, t, t1, expected);
        QCOMPARE(view.moment().at, t1);
        QCOMPARE(view.moment().running, tl.runningAt(t1));
        QCOMPARE(view.moment().utilization, expected);
        QCOMPARE(view.moment().busiest,
                 engine::busiestByUtilization(expected, ViewState::kBusiestLinks));
        // The canvas and the list show it.
        const int tpTop = view.moment().busiest.front();
        QCOMPARE(scene.canvasState().load(tpTop), double(expected[std::size_t(tpTop)]));
        QCOMPARE(panel.links(), view.moment().busiest);
        const QString tpRow = panel.list()->topLevelItem(0)->text(0);
        QVERIFY(panel.headerText().contains(QStringLiteral("Busiest links at")));
        QVERIFY(!timeline.runningText().isEmpty());

        // A frame later in the same phases: the time moves, the loads (and the list) do not.
        const int rankings = panel.rankings();
        spy.clear();
        view.driver()->setCurrentTime(driverMs(view, tpAt) + 1);
        if (view.moment().running == tl.runningAt(t1)) {
            QCOMPARE(panel.rankings(), rankings);
            QVERIFY(!spy.last()[0].value<ViewState::Changes>().testFlag(ViewState::Moment));
        }

        // On into the DP reduction: other loads, another busiest link, other rows.
        spy.clear();
        view.driver()->setCurrentTime(driverMs(view, dpAt));
        QVERIFY(spy.last()[0].value<ViewState::Changes>().testFlag(ViewState::Moment));
        const double t2 = view.playbackTime();
        QVERIFY(t2 != t1);
        engine::utilizationAt(tl, t, t2, expected);
        QCOMPARE(view.moment().utilization, expected);
        const int dpTop = view.moment().busiest.front();
        QVERIFY(dpTop != tpTop);
        QCOMPARE(t.links()[std::size_t(tpTop)].kind, engine::LinkKind::NvLink);
        QVERIFY(t.links()[std::size_t(dpTop)].kind != engine::LinkKind::NvLink);
        QCOMPARE(scene.canvasState().load(dpTop), double(expected[std::size_t(dpTop)]));
        QCOMPARE(panel.links(), view.moment().busiest);
        QVERIFY(panel.rankings() > rankings);
        QVERIFY(panel.list()->topLevelItem(0)->text(0) != tpRow);

        // Pausing keeps the moment; the step average has none, and the list goes back to it.
        view.pause();
        QCOMPARE(view.playbackTime(), t2);
        view.clearPlaybackTime();
        QVERIFY(view.moment().empty());
        QVERIFY(scene.canvasState().moment().empty());
        QCOMPARE(panel.links(),
                 engine::busiestByUtilization(doc->evaluation().links->utilization,
                                              HottestLinksPanel::kTop));
    }

    void aLinksPixelsFollowTheClock()
    {
        auto doc = test::openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ViewState view(doc.get());
        ClusterScene scene(doc.get());
        scene.setViewState(&view);
        view.setLinkLoad(true);
        ClusterView widget(&scene);
        widget.setAttribute(Qt::WA_DontShowOnScreen);
        widget.resize(1000, 700);
        widget.show();
        const engine::StepTimeline &tl = doc->evaluation().timeline;
        const double tpAt = inside(tl, PhaseKind::Tp), dpAt = inside(tl, PhaseKind::Dp);
        std::vector<float> atDp;
        engine::utilizationAt(tl, doc->topology(), dpAt, atDp);
        const int link = engine::busiestByUtilization(atDp, 1).front();
        std::vector<float> atTp;
        engine::utilizationAt(tl, doc->topology(), tpAt, atTp);
        QVERIFY(atTp[std::size_t(link)] < atDp[std::size_t(link)] / 2); // quieter during TP
        widget.showLink(link); // the link at the middle of the view
        const auto middle = [&] {
            QImage img(widget.viewport()->size(), QImage::Format_ARGB32_Premultiplied);
            img.fill(Qt::white);
            QPainter p(&img);
            widget.render(&p, QRectF(img.rect()), widget.viewport()->rect());
            p.end();
            const QRect r(img.width() / 2 - 40, img.height() / 2 - 40, 80, 80);
            return img.copy(r);
        };
        view.play();
        view.driver()->setCurrentTime(driverMs(view, dpAt));
        const QImage busy = middle();
        view.driver()->setCurrentTime(driverMs(view, tpAt));
        const QImage quiet = middle();
        QVERIFY(busy != quiet);
        view.driver()->setCurrentTime(driverMs(view, dpAt));
        // Back at the same frame: the same loads, the same dashes, the same pixels.
        QCOMPARE(middle(), busy);
    }

    void theStepLengthIsTheEvaluations()
    {
        auto doc = test::openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ViewState view(doc.get());
        QCOMPARE(view.stepLength(), doc->evaluation().timeline.stepS);
        view.setPlaybackTime(view.stepLength()); // the end of the step
        const double before = view.stepLength();
        QSignalSpy spy(&view, &ViewState::changed);
        // Half the batch: a shorter step; the moment stays inside it, with its new loads.
        engine::TrainingConfig training = doc->layout().training;
        training.globalBatch /= 2;
        doc->undoStack()->push(new ChangeWorkload(doc.get(),
                                                  doc->layout().model,
                                                  training,
                                                  QStringLiteral("Batch")));
        const double after = doc->evaluation().timeline.stepS;
        QVERIFY(after < before);
        QCOMPARE(view.stepLength(), after);
        QCOMPARE(view.playbackTime(), after);
        QVERIFY(!spy.isEmpty());
        QVERIFY(spy.last()[0].value<ViewState::Changes>().testFlag(ViewState::Playback));
        std::vector<float> expected;
        engine::utilizationAt(doc->evaluation().timeline, doc->topology(), after, expected);
        QCOMPARE(view.moment().utilization, expected);
    }
};

QTEST_MAIN(TestPlaybackClock)
#include "tst_playbackclock.moc"
