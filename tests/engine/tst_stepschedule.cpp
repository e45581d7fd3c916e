// Collectives that run at once share the links (issue 19, point 5; engine/step/stepschedule.h):
// each link's rate is split max-min fairly between them, they last longer, and the step grows
// by what of the stretch is waited for. With the sharing off (EvaluateOptions::shareLinks) each
// collective is priced with the links to itself, as before, and the timeline puts more on a link
// than it carries.
#include "base/units.h"
#include "layout/layout.h"
#include "report/moment.h"
#include "step/evaluate.h"
#include "step/timeline.h"
#include "topology/topology.h"

#include <QDir>
#include <QTest>

#include "comparenear.h"
#include <algorithm>
#include <regex>
#include <vector>

using namespace railyard::engine;

namespace {

struct Priced
{
    Topology topology;
    Evaluation shared, alone;
};

Priced price(const char *name)
{
    const Layout l = readLayoutFile(std::string(RAILYARD_SOURCE_DIR "/layouts/") + name
                                    + ".railyard.json");
    Priced p{buildTopology(l.cluster, Catalog::builtin()), {}, {}};
    p.shared = evaluate(l, p.topology);
    EvaluateOptions alone;
    alone.shareLinks = false;
    p.alone = evaluate(l, p.topology, alone);
    return p;
}

// The highest utilization of any link at any moment (a link's load only rises when a phase
// starts or its rate changes), read as the app reads a moment (moveMoment, whose first busiest
// link is the moment's highest).
double peak(const Evaluation &e, const Topology &t)
{
    std::vector<double> moments;
    for (const Phase &ph : e.timeline.phases)
        if (ph.pattern >= 0)
            moments.push_back(ph.start);
    for (const PhaseSegment &g : e.timeline.segments)
        moments.push_back(g.start);
    std::sort(moments.begin(), moments.end());
    moments.erase(std::unique(moments.begin(), moments.end()), moments.end());
    double most = 0;
    StepMoment m;
    for (double at : moments) {
        moveMoment(m, e.timeline, t, at, 1);
        if (!m.busiest.empty())
            most = std::max(most, double(m.utilization[std::size_t(m.busiest.front())]));
    }
    return most;
}

std::vector<const Phase *> phasesOf(const Evaluation &e, int stage, PhaseKind kind)
{
    std::vector<const Phase *> out;
    for (const Phase &p : e.timeline.phases)
        if (p.stage == stage && p.kind == kind && !p.exposed)
            out.push_back(&p);
    return out;
}

} // namespace

class TestStepSchedule : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The shipped layouts whose collectives meet on a link: alone, the timeline puts more on a
    // link than it carries; shared, never; the step only grows, and only in communication.
    void sharingKeepsEveryLinkWithinItsRate_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<double>("alonePeak"); // at least, with the links to itself
        // DP all-gather at the step's start beside EP on NVLink or on a NIC, beside TP and EP;
        // DP reduce-scatter beside the cool-down's sends on a NIC; ZeRO-2 reduce-scatters
        // beside the sends.
        QTest::newRow("gb200-nvl72-rack") << "gb200-nvl72-rack" << 1.2;
        // (1.17 since all-to-all on Blackwell's NVLink runs at its measured 0.865 of the rings'
        // rate: the same bytes over a longer time.)
        QTest::newRow("moe-gb200-nvl72") << "moe-gb200-nvl72" << 1.15;
        QTest::newRow("moe-h200-ib") << "moe-h200-ib" << 1.4;
        QTest::newRow("oversubscribed-spine") << "oversubscribed-spine" << 1.4;
        QTest::newRow("gmi-h200-cluster") << "gmi-h200-cluster" << 1.05;
        QTest::newRow("dgx-h100-superpod-su") << "dgx-h100-superpod-su" << 1.05;
        QTest::newRow("llama3.1-405b-16k-h100") << "llama3.1-405b-16k-h100" << 1.05;
    }
    void sharingKeepsEveryLinkWithinItsRate()
    {
        QFETCH(QString, layout);
        QFETCH(double, alonePeak);
        const Priced p = price(qPrintable(layout));
        QVERIFY2(p.shared.ok && p.alone.ok, p.shared.error.c_str());
        const double alone = peak(p.alone, p.topology), shared = peak(p.shared, p.topology);
        qInfo("peak alone %.1f%%, shared %.1f%%; step %.4f -> %.4f s",
              100 * alone,
              100 * shared,
              p.alone.stepTimeS,
              p.shared.stepTimeS);
        QVERIFY2(alone >= alonePeak, qPrintable(QString::number(alone)));
        QVERIFY2(shared <= 1.01, qPrintable(QString::number(shared)));
        QVERIFY(p.shared.stepTimeS > p.alone.stepTimeS);
        RAILYARD_COMPARE_NEAR(p.shared.exposed.sum(), p.shared.stepTimeS, 1e-9);
        const StepBreakdown &a = p.alone.exposed, &s = p.shared.exposed;
        QCOMPARE(s.compute, a.compute);
        QCOMPARE(s.ppBubble, a.ppBubble);
        QCOMPARE(s.optimizer, a.optimizer);
        for (double grown : {s.tp - a.tp, s.cp - a.cp, s.ep - a.ep, s.ppP2p - a.ppP2p, s.dp - a.dp})
            QVERIFY(grown >= -1e-12);
    }

    // moe-h200-ib at the step's start: the DP parameter all-gather (47% of a NIC alone) and the
    // first forward's EP all-to-all (98%) meet on every NIC. Max-min fair: the gather asks less
    // than half a NIC and keeps its own rate; the all-to-all gets the rest, and the NIC is full.
    void theSmallerDemandKeepsItsRate()
    {
        const Priced p = price("moe-h200-ib");
        QVERIFY2(p.shared.ok && p.alone.ok, p.shared.error.c_str());
        const auto gather = phasesOf(p.shared, 0, PhaseKind::Dp);
        const auto gatherAlone = phasesOf(p.alone, 0, PhaseKind::Dp);
        const auto ep = phasesOf(p.shared, 0, PhaseKind::Ep);
        const auto epAlone = phasesOf(p.alone, 0, PhaseKind::Ep);
        QVERIFY(!gather.empty() && !ep.empty() && !gatherAlone.empty() && !epAlone.empty());
        QCOMPARE(QString::fromStdString(gather.front()->name), "DP parameter all-gather");
        QCOMPARE(gather.front()->start, 0.0);
        QCOMPARE(ep.front()->start, 0.0);
        RAILYARD_COMPARE_NEAR(gather.front()->duration(), gatherAlone.front()->duration(), 1e-9);
        QVERIFY(gather.front()->segments == 0);
        // The all-to-all ran slower while the gather ran, then at its own rate again.
        const Phase &a2a = *ep.front();
        QCOMPARE(a2a.segments, 2);
        const PhaseSegment &slow = p.shared.timeline.segments[std::size_t(a2a.firstSegment)];
        const PhaseSegment &fast = p.shared.timeline.segments[std::size_t(a2a.firstSegment) + 1];
        RAILYARD_COMPARE_NEAR(slow.end, gather.front()->end, 1e-9);
        RAILYARD_COMPARE_NEAR(slow.fraction + fast.fraction, 1.0, 1e-9);
        QVERIFY(slow.fraction / slow.end < fast.fraction / (fast.end - fast.start));
        QVERIFY(a2a.duration() > epAlone.front()->duration());
        // The NIC of GPU 0 is full while both run, and at the all-to-all's own load after.
        const int nic = p.topology.nicUplink(
                p.topology.devices()[std::size_t(p.topology.gpuNics(0)[0])].index);
        std::vector<float> u;
        utilizationAt(p.shared.timeline, p.topology, slow.end / 2, u);
        RAILYARD_COMPARE_NEAR(u[std::size_t(nic)], 1.0, 0.01);
        utilizationAt(p.alone.timeline, p.topology, slow.end / 2, u);
        QVERIFY(u[std::size_t(nic)] > 1.3f); // alone, both at their own rates: 145%
    }

    // The EP all-to-all is on the critical path (no EP overlap): the step grows by every
    // all-to-all's stretch, and the breakdown says it is EP's.
    void anExposedStretchAddsToTheStep()
    {
        const Priced p = price("moe-h200-ib");
        QVERIFY2(p.shared.ok && p.alone.ok, p.shared.error.c_str());
        double stretch = 0;
        const auto shared = phasesOf(p.shared, 0, PhaseKind::Ep);
        const auto alone = phasesOf(p.alone, 0, PhaseKind::Ep);
        QCOMPARE(shared.size(), alone.size());
        for (std::size_t i = 0; i < shared.size(); ++i)
            stretch += shared[i]->duration() - alone[i]->duration();
        QVERIFY(stretch > 1e-3);
        RAILYARD_COMPARE_NEAR(p.shared.stepTimeS - p.alone.stepTimeS, stretch, 1e-6);
        RAILYARD_COMPARE_NEAR(p.shared.exposed.ep - p.alone.exposed.ep, stretch, 1e-6);
        QCOMPARE(p.shared.exposed.dp, p.alone.exposed.dp);
        // The evaluation says what the sharing cost (to three digits, in ms).
        const std::string said = "share its links max-min fairly (here +"
                                 + formatNumber(1e3 * stretch);
        const auto mentions = [&](const Evaluation &e) {
            return std::any_of(e.assumptions.begin(), e.assumptions.end(), [&](const auto &a) {
                return a.find(said) != std::string::npos;
            });
        };
        QVERIFY(mentions(p.shared));
        QVERIFY(!mentions(p.alone));
    }

    // Where sharing costs nothing measurable, the line says so instead of printing the
    // schedule's rounding (it read "+2.7e-12 ms of step" on the GB200 MLPerf layout).
    void aNegligibleSharingCostIsNotPrinted()
    {
        const Priced p = price("mlperf5-llama405b-gb200-512");
        QVERIFY2(p.shared.ok, p.shared.error.c_str());
        const auto line = std::find_if(p.shared.assumptions.begin(),
                                       p.shared.assumptions.end(),
                                       [](const std::string &a) {
                                           return a.find("max-min fairly") != std::string::npos;
                                       });
        QVERIFY(line != p.shared.assumptions.end());
        QVERIFY2(line->find("here it adds nothing to the step") != std::string::npos, line->c_str());
        const std::regex scientific(R"(\d(\.\d+)?e[-+]\d)");
        for (const std::string &a : p.shared.assumptions)
            QVERIFY2(!std::regex_search(a, scientific), a.c_str());
    }

    // A stage's TP, CP and EP collectives are issued by its layers one after another: they
    // never run at once (they used to start together at each micro-batch's start).
    void aStagesLayerCollectivesRunOneAfterAnother()
    {
        const Priced p = price("gb200-nvl72-two-racks-ib");
        QVERIFY2(p.shared.ok, p.shared.error.c_str());
        for (int stage = 0; stage < p.shared.timeline.stages; ++stage) {
            std::vector<const Phase *> layer = phasesOf(p.shared, stage, PhaseKind::Tp);
            for (const Phase *e : phasesOf(p.shared, stage, PhaseKind::Ep))
                layer.push_back(e);
            QVERIFY(layer.size() > 4);
            std::sort(layer.begin(), layer.end(), [](auto *a, auto *b) {
                return a->start < b->start;
            });
            for (std::size_t i = 1; i < layer.size(); ++i)
                QVERIFY2(layer[i]->start >= layer[i - 1]->end - 1e-12,
                         qPrintable(QString::fromStdString(layer[i]->name)));
        }
    }

    // On llama3.1-405b-16k-h100 only TP uses NVLink and it asks less than a port: nothing can
    // slow it, so its collectives are placed after the run, not simulated
    // (StepScheduler::m_free). Each starts with its micro-batch, keeps one rate, lasts its time
    // alone (one length forward, one backward) and ends within its micro-batch.
    void aCollectiveNothingSlowsRunsWithItsMicroBatch()
    {
        const Priced p = price("llama3.1-405b-16k-h100");
        QVERIFY2(p.shared.ok, p.shared.error.c_str());
        double forwardLen = -1, backwardLen = -1;
        int placed = 0;
        for (int stage = 0; stage < p.shared.timeline.stages; ++stage) {
            std::vector<const Phase *> batches;
            for (const Phase &ph : p.shared.timeline.phases)
                if (ph.stage == stage && ph.exposed && ph.kind == PhaseKind::Compute)
                    batches.push_back(&ph);
            for (const Phase *tp : phasesOf(p.shared, stage, PhaseKind::Tp)) {
                const auto owner = std::find_if(batches.begin(), batches.end(), [&](auto *b) {
                    return std::abs(b->start - tp->start) <= 1e-12 * p.shared.stepTimeS;
                });
                QVERIFY2(owner != batches.end(), qPrintable(QString::number(tp->start)));
                QVERIFY(tp->end <= (*owner)->end + 1e-12);
                QCOMPARE(tp->segments, 0);
                double &len = (*owner)->name.rfind("forward", 0) == 0 ? forwardLen : backwardLen;
                if (len < 0)
                    len = tp->duration();
                RAILYARD_COMPARE_NEAR(tp->duration(), len, 1e-12);
                ++placed;
            }
        }
        QCOMPARE(placed, p.shared.timeline.stages * 2 * 16);
        QVERIFY(forwardLen > 0 && backwardLen > forwardLen);
    }

    // ZeRO-2: each micro-batch group's reduce-scatter queues on the DP stream after the one
    // before (they once overlapped where the step left too little time: 178% of a NIC), and the
    // optimizer waits for the last.
    void reductionsQueueOnTheirStream()
    {
        const Priced p = price("llama3.1-405b-16k-h100");
        QVERIFY2(p.shared.ok, p.shared.error.c_str());
        for (int stage = 0; stage < p.shared.timeline.stages; ++stage) {
            std::vector<const Phase *> rs;
            for (const Phase *d : phasesOf(p.shared, stage, PhaseKind::Dp))
                if (d->name == "DP gradient reduce-scatter")
                    rs.push_back(d);
            QCOMPARE(int(rs.size()), 16);
            for (std::size_t i = 1; i < rs.size(); ++i)
                QVERIFY(rs[i]->start >= rs[i - 1]->end - 1e-12);
            const Phase *wait = nullptr;
            for (const Phase &ph : p.shared.timeline.phases)
                if (ph.stage == stage && ph.name == "DP wait")
                    wait = &ph;
            QVERIFY(wait);
            QVERIFY(rs.back()->end <= wait->end + 1e-12);
        }
    }
};

QTEST_APPLESS_MAIN(TestStepSchedule)
#include "tst_stepschedule.moc"
