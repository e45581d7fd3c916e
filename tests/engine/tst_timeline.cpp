// The step timeline (issue 10): phases per pipeline stage that tile the step, the bytes each
// puts on each link adding up to the link's bytes per step, the load at a moment, and the links
// a group's traffic crosses.
#include "layout/layout.h"
#include "report/moment.h"
#include "report/report.h"
#include "step/evaluate.h"
#include "step/routes.h"
#include "step/timeline.h"
#include "topology/topology.h"

#include <QDir>
#include <QTest>

#include "comparenear.h"
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

using namespace railyard::engine;

namespace {

// Two HGX H100 servers, TP 8 inside each, PP 2 across them: stage s runs on server s.
Layout twoServers(int micro)
{
    const std::string text = R"({"format": "railyard-layout", "version": 1,
        "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 8},
        "model": {"preset": "llama3-8b"},
        "training": {"seq_len": 4096, "global_batch": )"
                             + std::to_string(micro) + R"(, "micro_batch": 1,
                     "recompute": "selective",
                     "overlap": {"dp": true, "tp": false, "pp": true, "ep": false}},
        "parallel": {"tp": 8, "pp": 2, "dp": 1, "sequence_parallel": true,
                     "order": "tp-cp-ep-dp-pp"}})";
    return parseLayout(text, "two-servers.railyard.json");
}

Layout gmi()
{
    return readLayoutFile(RAILYARD_TEST_DATA "/gmi-h200-cluster.railyard.json");
}

// TP group 0 on GPUs 0-3 and 8-11 (two servers), group 1 on 4-7 and 12-15; the rest as before.
Layout tpSplit(Layout l, int gpus)
{
    l.mapping.resize(static_cast<std::size_t>(gpus));
    std::iota(l.mapping.begin(), l.mapping.end(), 0);
    for (int i = 4; i < 8; ++i)
        std::swap(l.mapping[static_cast<std::size_t>(i)],
                  l.mapping[static_cast<std::size_t>(i + 4)]);
    return l;
}

struct Priced
{
    Topology topology;
    Evaluation e;
};

Priced price(const Layout &l, bool timeline = true)
{
    Priced p{buildTopology(l.cluster, Catalog::builtin()), {}};
    EvaluateOptions o;
    o.timeline = timeline;
    p.e = evaluate(l, p.topology, o);
    return p;
}

double nicLeafMean(const Priced &p)
{
    for (const LinkTierSummary &s : summarizeLinks(p.topology, *p.e.links))
        if (s.tier.name() == "nic-leaf")
            return s.meanUtilization;
    return -1;
}

const Phase *firstPhase(const StepTimeline &tl, int stage, PhaseKind kind)
{
    for (const Phase &p : tl.phases)
        if (p.stage == stage && p.kind == kind)
            return &p;
    return nullptr;
}

// The highest utilization of any link at any moment of the step, as the app shows a moment (the
// Hottest Links list and the canvas read moveMoment()): at the moments where phases start and
// where a collective's rate changes (a link's load only rises then), and the link and moment
// where it is reached.
struct Peak
{
    double utilization = 0;
    int link = -1;
    double at = 0;
};

Peak peakUtilization(const Priced &p)
{
    std::vector<double> starts;
    for (const Phase &ph : p.e.timeline.phases)
        if (ph.pattern >= 0)
            starts.push_back(ph.start);
    for (const PhaseSegment &g : p.e.timeline.segments)
        starts.push_back(g.start);
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    Peak peak;
    StepMoment m;
    for (const double t : starts) {
        moveMoment(m, p.e.timeline, p.topology, t, 20);
        // The list's first entry is the moment's busiest link.
        if (!m.busiest.empty()) {
            const int l = m.busiest.front();
            const float u = m.utilization[static_cast<std::size_t>(l)];
            if (u > peak.utilization)
                peak = {u, l, t};
        }
    }
    return peak;
}

} // namespace

class TestTimeline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exposedPhasesTileTheStepOnEveryStage_data()
    {
        QTest::addColumn<QString>("which");
        QTest::newRow("two servers, 4 micro-batches") << "small4";
        QTest::newRow("two servers, 40 micro-batches (grouped)") << "small40";
        QTest::newRow("gmi-h200-cluster") << "gmi";
    }
    void exposedPhasesTileTheStepOnEveryStage()
    {
        QFETCH(QString, which);
        const Priced p = price(which == "gmi"      ? gmi()
                               : which == "small4" ? twoServers(4)
                                                   : twoServers(40));
        QVERIFY2(p.e.ok, p.e.error.c_str());
        const StepTimeline &tl = p.e.timeline;
        QCOMPARE(tl.stages, which == "gmi" ? 4 : 2);
        QCOMPARE(tl.stepS, p.e.stepTimeS);
        for (int s = 0; s < tl.stages; ++s) {
            std::vector<const Phase *> main;
            for (const Phase &ph : tl.phases) {
                QVERIFY(ph.start >= 0 && ph.end <= tl.stepS && ph.start <= ph.end);
                if (ph.stage == s && ph.exposed)
                    main.push_back(&ph);
            }
            QVERIFY(main.size() >= 3);
            std::sort(main.begin(), main.end(), [](auto *a, auto *b) {
                return a->start < b->start;
            });
            const double tol = 1e-9 * tl.stepS;
            QVERIFY(std::abs(main.front()->start) < tol);
            for (std::size_t i = 1; i < main.size(); ++i)
                RAILYARD_COMPARE_ABS(main[i]->start, main[i - 1]->end, tol);
            RAILYARD_COMPARE_ABS(main.back()->end, tl.stepS, tol);
            QVERIFY(firstPhase(tl, s, PhaseKind::Compute));
            QVERIFY(firstPhase(tl, s, PhaseKind::Tp));
            QVERIFY(firstPhase(tl, s, PhaseKind::PpP2p));
            QVERIFY(firstPhase(tl, s, PhaseKind::Optimizer));
            QVERIFY(firstPhase(tl, s, PhaseKind::Bubble));
        }
        // At most 16 compute phases per direction and stage.
        const auto computes = std::count_if(tl.phases.begin(), tl.phases.end(), [](const Phase &ph) {
            return ph.stage == 0 && ph.kind == PhaseKind::Compute;
        });
        QCOMPARE(int(computes), which == "small4" ? 8 : which == "small40" ? 32 : 2 * 16);
    }

    void phaseBytesAddUpToEachLinksBytesPerStep_data()
    {
        exposedPhasesTileTheStepOnEveryStage_data();
    }
    void phaseBytesAddUpToEachLinksBytesPerStep()
    {
        QFETCH(QString, which);
        const Priced p = price(which == "gmi"      ? gmi()
                               : which == "small4" ? twoServers(4)
                                                   : twoServers(40));
        QVERIFY2(p.e.ok, p.e.error.c_str());
        const LinkLoads &loads = *p.e.links;
        std::vector<double> sum(loads.size(), 0.0);
        for (const Phase &ph : p.e.timeline.phases)
            for (const LinkShare &l : p.e.timeline.phaseLinks(ph))
                sum[static_cast<std::size_t>(l.link)] += double(l.up) + double(l.down);
        std::size_t checked = 0;
        for (std::size_t i = 0; i < loads.size(); ++i) {
            const double step = double(loads.bytesUp[i]) + double(loads.bytesDown[i]);
            QVERIFY2(std::abs(sum[i] - step) <= 1e-4 * step + 1.0,
                     qPrintable(
                             QString("link %1: phases %2 B, step %3 B").arg(i).arg(sum[i]).arg(step)));
            checked += step > 0;
        }
        QCOMPARE(checked, loads.loaded);
        QVERIFY(checked > 100);
    }

    void settingTheTimeLightsTheRunningPhasesLinks()
    {
        // Two servers, stage 0 on server 0. At the start of the step stage 0 runs its first
        // forward with its TP all-gathers; stage 1 waits for its input (the pipeline fill).
        const Priced p = price(twoServers(4));
        QVERIFY2(p.e.ok, p.e.error.c_str());
        const StepTimeline &tl = p.e.timeline;
        const Topology &t = p.topology;
        const Phase *tp = firstPhase(tl, 0, PhaseKind::Tp);
        QVERIFY(tp);
        QCOMPARE(tp->start, 0.0);
        const double at = tp->duration() / 2;
        QVERIFY(firstPhase(tl, 1, PhaseKind::Bubble)->end > at);
        std::vector<float> util;
        utilizationAt(tl, t, at, util);
        QCOMPARE(util.size(), std::size_t(t.linkCount()));
        // GPU 0's NVLinks carry TP bytes only: forward is 4 of SP's 10 collectives per layer,
        // spread over 4 micro-batch phases, each over its phase's length.
        for (int l : t.gpuNvlinks(0)) {
            const std::size_t i = static_cast<std::size_t>(l);
            const double busiest = std::max(p.e.links->bytesUp[i], p.e.links->bytesDown[i]);
            const double rate = t.links()[i].effectiveGbPerS() * 1e9;
            const double expected = busiest * (4.0 / 10.0) / 4.0 / tp->duration() / rate;
            QVERIFY(expected > 0.01);
            RAILYARD_COMPARE_NEAR(util[i], expected, 1e-3);
        }
        // Stage 1 (server 1) is idle: its NVLinks are dark.
        for (int l : t.gpuNvlinks(8))
            QCOMPARE(util[static_cast<std::size_t>(l)], 0.0f);
        // After the step nothing runs.
        utilizationAt(tl, t, tl.stepS * 1.01, util);
        QVERIFY(std::all_of(util.begin(), util.end(), [](float u) { return u == 0; }));
        // A PP send of stage 0 lights GPU 0's NIC uplink while it runs.
        const Phase *send = firstPhase(tl, 0, PhaseKind::PpP2p);
        QVERIFY(send);
        utilizationAt(tl, t, (send->start + send->end) / 2, util);
        const int nic = t.devices()[static_cast<std::size_t>(t.gpuNics(0)[0])].index;
        QVERIFY(util[static_cast<std::size_t>(t.nicUplink(nic))] > 0);
    }

    void theBusiestByUtilizationAreTheTopOfASort()
    {
        // Highest first, ties by the lower id, idle links never listed, at most `count`.
        const std::vector<float> u{0.5f, 0.0f, 0.9f, 0.5f, 0.1f, 0.0f, 0.9f};
        QCOMPARE(busiestByUtilization(u, 4), (std::vector<int>{2, 6, 0, 3}));
        QCOMPARE(busiestByUtilization(u, 100), (std::vector<int>{2, 6, 0, 3, 4}));
        QVERIFY(busiestByUtilization(u, 0).empty());
        QVERIFY(busiestByUtilization(std::vector<float>(5, 0.0f), 3).empty());
        // On a real step's moment, halfway through the gradient reduction: the same as sorting
        // every loaded link.
        const Priced p = price(gmi());
        QVERIFY2(p.e.ok, p.e.error.c_str());
        double moment = -1;
        for (const Phase &ph : p.e.timeline.phases)
            if (ph.kind == PhaseKind::Dp && ph.pattern >= 0 && moment < 0)
                moment = 0.5 * (ph.start + ph.end);
        QVERIFY(moment > 0);
        std::vector<float> at;
        utilizationAt(p.e.timeline, p.topology, moment, at);
        std::vector<int> all;
        for (std::size_t i = 0; i < at.size(); ++i)
            if (at[i] > 0)
                all.push_back(static_cast<int>(i));
        std::sort(all.begin(), all.end(), [&](int a, int b) {
            return at[std::size_t(a)] != at[std::size_t(b)]
                           ? at[std::size_t(a)] > at[std::size_t(b)]
                           : a < b;
        });
        QVERIFY(all.size() > 20);
        all.resize(20);
        QCOMPARE(busiestByUtilization(at, 20), all);
    }

    void aMomentIsRecomputedOnlyWhenOtherPhasesRun()
    {
        const Priced p = price(twoServers(4));
        QVERIFY2(p.e.ok, p.e.error.c_str());
        const StepTimeline &tl = p.e.timeline;
        const Phase *tp = firstPhase(tl, 0, PhaseKind::Tp);
        QVERIFY(tp && tp->duration() > 0);
        StepMoment m;
        QVERIFY(m.empty());
        const double at = tp->start + tp->duration() / 4;
        QVERIFY(moveMoment(m, tl, p.topology, at, 5));
        QCOMPARE(m.at, at);
        QCOMPARE(m.running, tl.runningAt(at));
        std::vector<float> expected;
        std::vector<std::uint8_t> reverse;
        utilizationAt(tl, p.topology, at, expected, &reverse);
        QCOMPARE(m.utilization, expected);
        QCOMPARE(m.reverse, reverse);
        QCOMPARE(m.busiest, busiestByUtilization(expected, 5));
        // Later in the same phases: the time moves, the loads stay (not recomputed)...
        const double later = tp->start + tp->duration() / 2;
        QCOMPARE(tl.runningAt(later), m.running);
        QVERIFY(!moveMoment(m, tl, p.topology, later, 5));
        QCOMPARE(m.at, later);
        QCOMPARE(m.utilization, expected);
        // ...unless the caller says the timeline is new.
        QVERIFY(moveMoment(m, tl, p.topology, later, 5, true));
        // Past the phase's end other phases run: recomputed.
        QVERIFY(moveMoment(m, tl, p.topology, tp->end, 5));
        QVERIFY(m.running != tl.runningAt(at));
        // Past the step: clamped to its end. No moment: cleared, once.
        QVERIFY(moveMoment(m, tl, p.topology, tl.stepS * 2, 5));
        QCOMPARE(m.at, tl.stepS);
        QVERIFY(moveMoment(m, tl, p.topology, -1, 5));
        QVERIFY(m.empty() && m.utilization.empty() && m.busiest.empty());
        QVERIFY(!moveMoment(m, tl, p.topology, -1, 5));
        QVERIFY(!moveMoment(m, StepTimeline{}, p.topology, at, 5));
        QVERIFY(m.empty());
    }

    // A collective that shares its links runs slower for a stretch of its phase: the moment's
    // loads follow its rate, and are recomputed when it moves into another stretch even if the
    // same phases run.
    void aMomentFollowsARateChangeInsideAPhase()
    {
        const Priced p = price(twoServers(4));
        QVERIFY2(p.e.ok, p.e.error.c_str());
        StepTimeline tl;
        tl.stepS = 1.0;
        TrafficPattern pattern;
        const int link = p.topology.gpuNvlinks(0).front();
        const double rate = p.topology.links()[std::size_t(link)].effectiveGbPerS() * 1e9;
        pattern.links.push_back({link, float(rate), 0.0f}); // a second at the link's rate
        tl.patterns.push_back(pattern);
        Phase ph;
        ph.kind = PhaseKind::Dp;
        ph.end = 1.0;
        ph.pattern = 0;
        ph.share = 1.0;
        ph.firstSegment = 0;
        ph.segments = 2;
        tl.phases.push_back(ph);
        // A quarter of its bytes in the first half (shared), three quarters in the second.
        tl.segments.push_back({0.0, 0.5, 0.25});
        tl.segments.push_back({0.5, 1.0, 0.75});
        QCOMPARE(tl.segmentAt(tl.phases.front(), 0.2), 0);
        QCOMPARE(tl.segmentAt(tl.phases.front(), 0.7), 1);
        StepMoment m;
        QVERIFY(moveMoment(m, tl, p.topology, 0.2, 3));
        RAILYARD_COMPARE_NEAR(m.utilization[std::size_t(link)], 0.5, 1e-6);
        QVERIFY(moveMoment(m, tl, p.topology, 0.7, 3)); // the same phase, another rate
        RAILYARD_COMPARE_NEAR(m.utilization[std::size_t(link)], 1.5, 1e-6);
        QVERIFY(!moveMoment(m, tl, p.topology, 0.8, 3));
        // Without stretches the bytes spread evenly.
        tl.phases.front().segments = 0;
        QCOMPARE(tl.segmentAt(tl.phases.front(), 0.2), -1);
        QVERIFY(moveMoment(m, tl, p.topology, 0.2, 3, true));
        RAILYARD_COMPARE_NEAR(m.utilization[std::size_t(link)], 1.0, 1e-6);
    }

    void nicLeafUtilizationShowsATpGroupSplitAcrossServers()
    {
        const Priced good = price(gmi(), false);
        const Priced split = price(tpSplit(gmi(), 128), false);
        QVERIFY2(good.e.ok && split.e.ok, split.e.error.c_str());
        const double a = nicLeafMean(good), b = nicLeafMean(split);
        QVERIFY(a >= 0 && b >= 0);
        // The split TP group puts every layer's all-gathers on its NICs.
        QVERIFY2(b > 3 * a, qPrintable(QString("good %1, split %2").arg(a).arg(b)));
        // Step-average utilization: loaded links differ, none is saturated the whole step.
        const LinkLoads &l = *good.e.links;
        float lo = 1e9f, hi = 0;
        for (std::size_t i = 0; i < l.size(); ++i)
            if (l.bytesUp[i] + l.bytesDown[i] > 0) {
                lo = std::min(lo, l.utilization[i]);
                hi = std::max(hi, l.utilization[i]);
            }
        QVERIFY(hi < 1.0f);
        QVERIFY2(hi > 2 * lo, qPrintable(QString("%1 .. %2").arg(lo).arg(hi)));
    }

    void groupLinksCrossTheCoreInThreeTierFabrics()
    {
        ClusterConfig c;
        c.gpu = "H100-SXM";
        c.nodes = 24;
        c.gpusPerNode = 8;
        c.nvlinkDomain = 8;
        c.fabric.kind = FabricKind::ThreeTier;
        c.fabric.oversubscription = 0.1; // small leaves: several pods
        const Topology t = buildTopology(c, Catalog::builtin());
        QVERIFY(t.shape().leafGroups > 1);
        const int last = t.gpuCount() - 1;
        const std::vector<int> gpus{0, last};
        const std::vector<int> links = groupTrafficLinks(t, gpus);
        const auto has = [&](int l) { return std::binary_search(links.begin(), links.end(), l); };
        for (int l : t.gpuNvlinks(0))
            QVERIFY(has(l));
        const int nic0 = t.devices()[static_cast<std::size_t>(t.gpuNics(0)[0])].index;
        QVERIFY(has(t.nicUplink(nic0)));
        bool leafUp = false, core = false;
        for (int leaf = 0; leaf < t.countOf(DeviceKind::Leaf); ++leaf)
            for (int l : t.leafUplinks(leaf))
                leafUp = leafUp || has(l);
        for (int s = 0; s < t.countOf(DeviceKind::Spine); ++s)
            for (int l : t.spineUplinks(s))
                core = core || has(l);
        QVERIFY(leafUp);
        QVERIFY(core);
        // Inside one server: its NVLinks only.
        const std::vector<int> inside{0, 1, 2, 3};
        QCOMPARE(groupTrafficLinks(t, inside).size(), t.gpuNvlinks(0).size() * 4);
    }

    void kindsOnALinkNameWhatCrossesIt()
    {
        const Priced p = price(twoServers(4));
        const Topology &t = p.topology;
        const unsigned nv = kindsOnLink(p.e.timeline, t.gpuNvlinks(0)[0]);
        QVERIFY(nv & (1u << unsigned(PhaseKind::Tp)));
        const int nic = t.devices()[static_cast<std::size_t>(t.gpuNics(0)[0])].index;
        const unsigned ib = kindsOnLink(p.e.timeline, t.nicUplink(nic));
        QCOMPARE(ib, 1u << unsigned(PhaseKind::PpP2p));
    }

    // No link carries more than its rate at any moment: the phases running at once on a link,
    // each at its own rate, add up to at most 100% (1% for rounding), at the moments the app
    // shows (moveMoment, the Hottest Links list), and over the step (its average). Collectives
    // that run at once share the links (stepschedule.h): they last longer, and the step with
    // them where they are exposed.
    void noLinkCarriesMoreThanItsRate_data()
    {
        QTest::addColumn<QString>("file");
        const QDir dir(QStringLiteral(RAILYARD_SOURCE_DIR "/layouts"));
        const QStringList files = dir.entryList({QStringLiteral("*.railyard.json")}, QDir::Files);
        QVERIFY(files.size() >= 19);
        for (const QString &f : files)
            QTest::newRow(qPrintable(f.chopped(int(qstrlen(".railyard.json"))))) << dir.filePath(f);
    }
    void noLinkCarriesMoreThanItsRate()
    {
        QFETCH(QString, file);
        const Layout layout = readLayoutFile(file.toStdString());
        if (layout.isServing())
            QSKIP("a serving layout: no training step to play; tst_serving::shippedLayouts checks "
                  "that none of its links carries more than its rate");
        const Priced p = price(layout);
        QVERIFY2(p.e.ok, p.e.error.c_str());
        const Peak peak = peakUtilization(p);
        const QString where = QStringLiteral("%1% on %2 at %3 s")
                                      .arg(100 * peak.utilization, 0, 'f', 1)
                                      .arg(QString::fromStdString(
                                              peak.link >= 0 ? p.topology.linkName(peak.link) : ""))
                                      .arg(peak.at, 0, 'g', 4);
        qInfo("peak %s", qPrintable(where));
        QVERIFY(peak.utilization > 0.3); // every shipped layout loads some link
        QVERIFY2(peak.utilization <= 1.01, qPrintable(where));
        // The step's average (Link Load and Hottest Links without a moment).
        const LinkLoads &loads = *p.e.links;
        const auto busiest = std::max_element(loads.utilization.begin(), loads.utilization.end());
        QVERIFY(busiest != loads.utilization.end());
        QVERIFY2(*busiest <= 1.01f,
                 qPrintable(QStringLiteral("step average %1% on %2")
                                    .arg(100 * double(*busiest), 0, 'f', 1)
                                    .arg(QString::fromStdString(p.topology.linkName(
                                            int(busiest - loads.utilization.begin()))))));
    }

    // ZeRO-3 gathers every layer's parameters once forward and once backward (no full
    // recomputation): the two phases carry the same bytes, so they last as long and load the
    // links alike (the backward's once had half the time and twice the rate).
    void zero3GathersLoadTheLinksAlikeBothWays()
    {
        const Priced p = price(
                readLayoutFile(RAILYARD_SOURCE_DIR "/layouts/zero3-scaling.railyard.json"));
        QVERIFY2(p.e.ok, p.e.error.c_str());
        std::vector<const Phase *> gathers;
        for (const Phase &ph : p.e.timeline.phases)
            if (ph.stage == 0 && ph.name == "ZeRO-3 parameter gather")
                gathers.push_back(&ph);
        QVERIFY(gathers.size() >= 2);
        const Phase &fwd = *gathers.front(), &bwd = *gathers[1];
        RAILYARD_COMPARE_NEAR(bwd.duration(), fwd.duration(), 1e-9);
        RAILYARD_COMPARE_NEAR(bwd.share, fwd.share, 1e-9);
        QVERIFY(fwd.duration() > 0);
    }

    // A stage's pipeline sends carry their whole bytes on the NIC links of its own GPUs. Which
    // stage owns a link is kept in the workspace between evaluations of one topology
    // (steptimeline.cpp): it must follow each layout's stages, not the last one priced on it.
    void pipelineSendsFollowEachLayoutsStages()
    {
        const std::string text = R"({"format": "railyard-layout", "version": 1,
            "cluster": {"gpu": "H100-SXM", "nodes": 4, "gpus_per_node": 8},
            "model": {"preset": "llama3-8b"},
            "training": {"seq_len": 4096, "global_batch": 8, "micro_batch": 1},
            "parallel": {"tp": 8, "pp": 4, "dp": 1, "order": "tp-cp-ep-dp-pp"}})";
        const Layout inOrder = parseLayout(text, "pp4.railyard.json");
        Layout reversed = inOrder; // stage 0 on server 3, stage 3 on server 0
        reversed.mapping.resize(32);
        for (int r = 0; r < 32; ++r)
            reversed.mapping[static_cast<std::size_t>(r)] = 31 - r;
        const Topology t = buildTopology(inOrder.cluster, Catalog::builtin());
        const auto uplinkOf = [&](int gpu) {
            return t.nicUplink(t.devices()[static_cast<std::size_t>(t.gpuNics(gpu)[0])].index);
        };
        const int first = uplinkOf(0), last = uplinkOf(31);
        QVERIFY(first >= 0 && last >= 0);
        // Stage 0's send pattern: the bytes it puts on a link (0 where it puts none).
        const auto stageZero = [&](const Evaluation &e, int link) {
            for (const TrafficPattern &p : e.timeline.patterns)
                if (p.kind == PhaseKind::PpP2p && p.stage == 0)
                    for (const LinkShare &l : p.links)
                        if (l.link == link)
                            return double(l.up) + double(l.down);
            return 0.0;
        };
        EvaluateOptions o;
        o.timeline = true;
        EvaluationWorkspace workspace; // as a document keeps one
        const Evaluation a = evaluate(inOrder, t, workspace, o);
        QVERIFY2(a.ok, a.error.c_str());
        QVERIFY(stageZero(a, first) > 0);
        QCOMPARE(stageZero(a, last), 0.0);
        const Evaluation b = evaluate(reversed, t, workspace, o);
        QVERIFY2(b.ok, b.error.c_str());
        QCOMPARE(stageZero(b, first), 0.0);
        RAILYARD_COMPARE_NEAR(stageZero(b, last), stageZero(a, first), 1e-6);
        // And back: the first layout's patterns again, link for link.
        const Evaluation again = evaluate(inOrder, t, workspace, o);
        QCOMPARE(again.timeline.patterns.size(), a.timeline.patterns.size());
        for (std::size_t i = 0; i < a.timeline.patterns.size(); ++i) {
            const auto &x = a.timeline.patterns[i].links, &y = again.timeline.patterns[i].links;
            QCOMPARE(y.size(), x.size());
            for (std::size_t j = 0; j < x.size(); ++j) {
                QCOMPARE(y[j].link, x[j].link);
                QCOMPARE(y[j].up, x[j].up);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestTimeline)
#include "tst_timeline.moc"
