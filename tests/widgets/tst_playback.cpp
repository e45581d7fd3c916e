// Playing one step (issue 10): the view state's playback time drives the canvas's link loads
// (the links busy at that moment, with the engine's numbers), pause and scrub, and the timeline
// panel's Gantt (phases as the engine's, clicking scrubs).
#include "document/document.h"
#include "document/viewstate.h"
#include "panels/ganttview.h"
#include "panels/timelinepanel.h"
#include "scene/clusterscene.h"
#include "step/timeline.h"

#include "testlayouts.h"

#include "comparenear.h"
#include <QApplication>
#include <QFontMetricsF>
#include <QLabel>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

using namespace railyard;
using engine::PhaseKind;

namespace {
const engine::Phase *firstPhase(const engine::StepTimeline &tl, int stage, PhaseKind kind)
{
    for (const engine::Phase &p : tl.phases)
        if (p.stage == stage && p.kind == kind)
            return &p;
    return nullptr;
}
} // namespace

class TestPlayback : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void settingTheTimeLightsTheBusyLinks()
    {
        // TP group 0 sits on GPUs 4-11 across both servers and is pipeline stage 0; stage 1
        // (GPUs 0-3 and 12-15) waits for its first input at the start of the step.
        auto doc = test::openLayout("tp-across-servers.railyard.json");
        QVERIFY(doc);
        ClusterScene scene(doc.get());
        ViewState view(doc.get());
        scene.setViewState(&view);
        scene.setLinkLoadVisible(true);
        const engine::Evaluation &e = doc->evaluation();
        const engine::Topology &t = doc->topology();
        QVERIFY(!e.timeline.empty());
        QCOMPARE(view.stepLength(), e.timeline.stepS); // the evaluation's
        const engine::Phase *tp = firstPhase(e.timeline, 0, PhaseKind::Tp);
        QVERIFY(tp);
        const engine::Phase *fill = firstPhase(e.timeline, 1, PhaseKind::Bubble);
        QVERIFY(fill && fill->start == 0 && tp->start == 0);
        const double at = std::min(tp->end, fill->end) / 2; // both running

        // The step average first: every loaded link at its utilization over the step.
        const int nv4 = t.gpuNvlinks(4)[0], nv0 = t.gpuNvlinks(0)[0];
        QCOMPARE(scene.canvasState().load(nv4),
                 double(e.links->utilization[static_cast<std::size_t>(nv4)]));
        QVERIFY(scene.canvasState().load(nv0) > 0);

        QSignalSpy spy(&view, &ViewState::changed);
        view.setPlaybackTime(at);
        QCOMPARE(spy.count(), 1);
        // A moment where there was none: its loads are new too.
        QCOMPARE(spy[0][0].value<ViewState::Changes>(), ViewState::Playback | ViewState::Moment);
        std::vector<float> expected;
        engine::utilizationAt(e.timeline, t, at, expected);
        // GPU 4 (stage 0) runs its TP all-gather: its NVLinks and its NIC's uplink are busy,
        // with the bytes of that phase over its length.
        const int nic4 = t.devices()[static_cast<std::size_t>(t.gpuNics(4)[0])].index;
        const int ib4 = t.nicUplink(nic4);
        for (int l : {nv4, ib4}) {
            QVERIFY(expected[static_cast<std::size_t>(l)] > 0.01);
            QCOMPARE(scene.canvasState().load(l), double(expected[static_cast<std::size_t>(l)]));
        }
        // The bytes behind it: the phase's share of the link's TP bytes per step.
        double bytes = 0;
        for (const engine::LinkShare &l : e.timeline.phaseLinks(*tp))
            if (l.link == ib4)
                bytes = std::max(l.up, l.down);
        const double rate = t.links()[static_cast<std::size_t>(ib4)].effectiveGbPerS() * 1e9;
        RAILYARD_COMPARE_NEAR(scene.canvasState().load(ib4), bytes / tp->duration() / rate, 1e-3);
        // GPU 0 (stage 1) is still in the pipeline fill: dark.
        QCOMPARE(scene.canvasState().load(nv0), 0.0);

        // Back to the step average.
        view.clearPlaybackTime();
        QVERIFY(scene.canvasState().moment().empty());
        QVERIFY(scene.canvasState().load(nv0) > 0);
    }

    void pauseAndScrub()
    {
        ViewState nothing;
        nothing.play();
        QVERIFY(!nothing.isPlaying()); // no document, no step to play
        QCOMPARE(nothing.stepLength(), 0.0);
        auto doc = test::openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ViewState view(doc.get());
        const double step = doc->evaluation().timeline.stepS;
        QVERIFY(step > 0);
        view.play();
        QVERIFY(view.isPlaying());
        view.setPlaybackTime(step / 4); // scrubbing pauses
        QVERIFY(!view.isPlaying());
        QCOMPARE(view.playbackTime(), step / 4);
        view.setPlaybackTime(step * 3); // kept inside the step
        QCOMPARE(view.playbackTime(), step);
        view.setSpeed(4);
        QCOMPARE(view.speed(), 4.0);
        view.play();
        QVERIFY(view.isPlaying());
        view.pause();
        QVERIFY(!view.isPlaying());
        QCOMPARE(view.playbackTime(), step);
    }

    void timelinePanelShowsTheEnginesPhasesAndScrubs()
    {
        auto doc = test::openLayout("gmi-h200-cluster.railyard.json");
        QVERIFY(doc);
        ViewState view(doc.get());
        TimelinePanel panel(doc.get(), &view);
        panel.resize(1200, 200);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const engine::StepTimeline &tl = doc->evaluation().timeline;
        QCOMPARE(view.stepLength(), tl.stepS);
        GanttView *g = panel.gantt();
        // The chart paints the phases in the Pricing chart's colours.
        const QImage img = g->grab().toImage();
        const QColor tp = GanttView::kindColor(PhaseKind::Tp);
        int tpPixels = 0;
        for (int y = 0; y < img.height(); ++y)
            for (int xx = 0; xx < img.width(); xx += 2)
                tpPixels += img.pixelColor(xx, y).rgb() == tp.rgb();
        QVERIFY(tpPixels > 50);
        // A click in the chart scrubs to the moment under it.
        const double x = g->xOf(tl.stepS * 0.5);
        QTest::mouseClick(g, Qt::LeftButton, {}, QPoint(int(x), g->height() / 2));
        QVERIFY(std::abs(view.playbackTime() - tl.stepS * 0.5) < tl.stepS / g->width() * 2);
        // The label names stage 0's running phases, as the engine has them.
        QStringList expected;
        for (int i : tl.runningAt(view.playbackTime()))
            if (tl.phases[static_cast<std::size_t>(i)].stage == 0)
                expected << QString::fromStdString(tl.phases[static_cast<std::size_t>(i)].name);
        QVERIFY(!expected.isEmpty());
        QCOMPARE(panel.runningText(), expected.join(QStringLiteral(" \u00b7 ")));
    }

    // The timeline at scale (Llama 3.1 405B on 16,384 H100, PP 16 and PP 64): stages labelled
    // every Nth row in a readable font, the wheel zooms the time axis around the cursor and
    // Shift+wheel, the keys and the scroll bar pan it, and a phase a pixel or two wide takes a
    // click beside it.
    void timelineAtScale_data()
    {
        QTest::addColumn<int>("pp");
        QTest::newRow("PP 16") << 16;
        QTest::newRow("PP 64") << 64;
    }

    void timelineAtScale()
    {
        QFETCH(int, pp);
        auto loaded = test::openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(loaded);
        engine::Layout l = loaded->layout();
        l.parallel.pp = pp;
        l.parallel.vp = pp == 16 ? 8 : 1;
        l.parallel.dp = 16384 / (l.parallel.tp * pp);
        Document doc(l);
        QVERIFY(doc.evaluation().ok);
        const engine::StepTimeline &tl = doc.evaluation().timeline;
        QCOMPARE(tl.stages, pp);
        ViewState view(&doc);
        TimelinePanel panel(&doc, &view);
        panel.resize(1000, 170); // as under the canvas
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        GanttView *g = panel.gantt();

        // Labels: every stride-th stage, each label as tall as the font, at least two of them.
        const int stride = g->labelStride();
        const double rowH = (g->height() - 12 - QFontMetricsF(g->font()).height() - 7) / pp;
        QVERIFY2(rowH < QFontMetricsF(g->font()).height(), "rows are tall enough for a label each");
        QVERIFY(stride > 1);
        QVERIFY(stride * rowH >= QFontMetricsF(g->font()).height());
        QVERIFY2((pp + stride - 1) / stride >= 2, qPrintable(QString::number(stride)));
        QVERIFY(g->font().pointSizeF() >= 8 || g->font().pixelSize() >= 10);
        // The labels are painted: text pixels in the label column at each labelled row.
        const QImage img = g->grab().toImage();
        const QColor ink = g->palette().color(QPalette::Text);
        for (int stage = 0; stage < pp; stage += stride) {
            const int y = int(6 + (stage + 0.5) * rowH);
            int inked = 0;
            for (int yy = std::max(0, y - 6); yy < std::min(img.height(), y + 6); ++yy)
                for (int x = 0; x < 60; ++x)
                    inked += std::abs(img.pixelColor(x, yy).lightness() - ink.lightness()) < 60;
            QVERIFY2(inked > 10, qPrintable(QStringLiteral("stage %1: no label").arg(stage)));
        }

        // The wheel zooms around the cursor; the moment under it stays put.
        const double at = tl.stepS * 0.62;
        const QPointF cursor(g->xOf(at), g->height() / 2.0);
        for (int i = 0; i < 6; ++i) {
            QWheelEvent wheel(cursor,
                              g->mapToGlobal(cursor),
                              QPoint(),
                              QPoint(0, 120),
                              Qt::NoButton,
                              Qt::NoModifier,
                              Qt::NoScrollPhase,
                              false);
            QApplication::sendEvent(g, &wheel);
        }
        QVERIFY2(g->zoom() > 3, qPrintable(QString::number(g->zoom())));
        RAILYARD_COMPARE_ABS(g->xOf(at), cursor.x(), 1.0);
        QVERIFY(g->visibleSpan() < tl.stepS / 3);
        QVERIFY(panel.scrollBar()->isVisible());
        // Shift+wheel pans (later in the step for a notch down), as does the scroll bar.
        const double start = g->visibleStart();
        QWheelEvent pan(cursor,
                        g->mapToGlobal(cursor),
                        QPoint(),
                        QPoint(0, -120),
                        Qt::NoButton,
                        Qt::ShiftModifier,
                        Qt::NoScrollPhase,
                        false);
        QApplication::sendEvent(g, &pan);
        QVERIFY(g->visibleStart() > start);
        panel.scrollBar()->setValue(panel.scrollBar()->minimum());
        QCOMPARE(g->visibleStart(), 0.0);
        QTest::keyClick(g, Qt::Key_Right);
        QVERIFY(g->visibleStart() > 0);
        QTest::keyClick(g, Qt::Key_0);
        QCOMPARE(g->zoom(), 1.0);
        QVERIFY(!panel.scrollBar()->isVisible());

        // A phase narrower than a couple of pixels takes a click a few pixels beside it, which
        // scrubs into it.
        int narrow = -1;
        QPointF beside;
        for (int i = 0; i < int(tl.phases.size()) && narrow < 0; ++i) {
            const QRectF box = g->phaseRect(i);
            if (box.width() > 2)
                continue;
            const QPointF p(box.center().x() + GanttView::kMinTargetPx / 2 - 1, box.center().y());
            // Beside it is nothing else of its lane.
            bool free = true;
            for (int j = 0; j < int(tl.phases.size()) && free; ++j)
                free = j == i || !g->phaseRect(j).adjusted(0, -1, 0, 1).contains(p);
            // (Beside several narrow ones, the nearest takes the click.)
            if (free && g->phaseAt(p) == i) {
                narrow = i;
                beside = p;
            }
        }
        QVERIFY2(narrow >= 0, "no phase a pixel or two wide");
        const engine::Phase &ph = tl.phases[std::size_t(narrow)];
        QCOMPARE(g->phaseAt(beside), narrow);
        QTest::mouseClick(g, Qt::LeftButton, {}, beside.toPoint());
        QVERIFY2(view.playbackTime() >= ph.start && view.playbackTime() < ph.end,
                 qPrintable(QStringLiteral("%1 not in [%2, %3) (%4)")
                                    .arg(view.playbackTime())
                                    .arg(ph.start)
                                    .arg(ph.end)
                                    .arg(QString::fromStdString(ph.name))));
    }

    // The line beside Play names the running phases in the room it has: a long one is elided,
    // whole in its tip, and never widens the panel.
    void statusLineNeverWidensThePanel()
    {
        auto doc = test::openLayout("llama3.1-405b-16k-h100.railyard.json");
        QVERIFY(doc);
        ViewState view(doc.get());
        TimelinePanel panel(doc.get(), &view);
        panel.resize(700, 170);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const int minimum = panel.minimumSizeHint().width();
        const engine::StepTimeline &tl = doc->evaluation().timeline;
        // The moment with the longest line.
        double longest = 0;
        int most = 0;
        const std::size_t every = std::max<std::size_t>(1, tl.phases.size() / 200);
        for (std::size_t i = 0; i < tl.phases.size(); i += every) {
            const engine::Phase &p = tl.phases[i];
            view.setPlaybackTime((p.start + p.end) / 2);
            if (panel.statusText().size() > most) {
                most = int(panel.statusText().size());
                longest = (p.start + p.end) / 2;
            }
        }
        view.setPlaybackTime(longest);
        QApplication::processEvents();
        QLabel *label = panel.statusLabel();
        QVERIFY(label->fontMetrics().horizontalAdvance(panel.statusText()) > label->width());
        QVERIFY(label->fontMetrics().horizontalAdvance(label->text()) <= label->width());
        QCOMPARE(label->toolTip(), panel.statusText());
        QCOMPARE(panel.minimumSizeHint().width(), minimum);
        QVERIFY(panel.minimumSizeHint().width() <= 700);
    }
};

QTEST_MAIN(TestPlayback)
#include "tst_playback.moc"
