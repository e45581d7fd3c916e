#include "base/inputerror.h"
#include "collectives/concurrentcollective.h"
#include "faults/faultimpact.h"
#include "layout/layout.h"
#include "layout/parallel.h"
#include "lesson/tour.h"
#include "serving/servingevaluate.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <QFile>
#include <QTest>

#include "comparenear.h"
#include <algorithm>

using namespace railyard::engine;

// The guided teaching scenarios (resources/tour/scenarios.json and their layouts in layouts/),
// each with its headline number checked against what its text tells the student. Read from the
// source tree: these are the files the app ships.
namespace {

std::string sourcePath(const std::string &relative)
{
    return std::string(RAILYARD_SOURCE_DIR "/") + relative;
}

Layout shipped(const std::string &file)
{
    return readLayoutFile(sourcePath("layouts/" + file));
}

Evaluation run(const Layout &l)
{
    const Topology t = buildTopology(l.cluster, Catalog::builtin());
    return evaluate(l, t);
}

ServingEvaluation serve(const Layout &l)
{
    const Topology t = buildTopology(l.cluster, Catalog::builtin());
    ServingEvaluation e = evaluateServing(l, t);
    if (!e.ok)
        qWarning("%s: %s", l.title.c_str(), e.error.c_str());
    return e;
}

Evaluation runOk(const Layout &l)
{
    Evaluation e = run(l);
    if (!e.ok)
        qWarning("%s: %s", l.title.c_str(), e.error.c_str());
    return e;
}

// Every data-parallel group of the layout's job.
std::vector<std::vector<int>> dpGroups(const Layout &l)
{
    const RankLayout ranks(l);
    std::vector<std::vector<int>> groups;
    for (int g = 0; g < ranks.groupCount(Dim::DP); ++g)
        groups.push_back(ranks.groupGpus(Dim::DP, g));
    return groups;
}

// The highest utilization over the step among links from a device of kind `a` to one of kind
// `b`.
float busiest(const Topology &t, const Evaluation &e, DeviceKind a, DeviceKind b)
{
    float peak = 0;
    for (int l = 0; l < t.linkCount(); ++l) {
        const Link &k = t.links()[static_cast<std::size_t>(l)];
        if (t.devices()[static_cast<std::size_t>(k.a)].kind == a
            && t.devices()[static_cast<std::size_t>(k.b)].kind == b)
            peak = std::max(peak, e.links->utilization[static_cast<std::size_t>(l)]);
    }
    return peak;
}

} // namespace

class TestScenarios : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Every scenario has its texts, and each of its layouts loads and prices a step that fits
    // in memory.
    void tourFile()
    {
        QFile f(QString::fromStdString(sourcePath("resources/tour/scenarios.json")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const std::vector<TourScenario> tour = parseTour(f.readAll().toStdString(),
                                                         "scenarios.json");
        QCOMPARE(tour.size(), std::size_t(12));
        for (const TourScenario &s : tour) {
            QVERIFY(!s.layouts.empty());
            for (const TourLayout &tl : s.layouts) {
                const Layout l = shipped(tl.file);
                if (l.isServing()) { // priced by the serving engine
                    const ServingEvaluation e = serve(l);
                    QVERIFY2(e.ok, (tl.file + ": " + e.error).c_str());
                    for (const Warning &w : e.warnings)
                        QVERIFY2(w.severity != Severity::Error,
                                 (tl.file + ": " + w.code + ": " + w.message).c_str());
                    continue;
                }
                const Evaluation e = run(l);
                QVERIFY2(e.ok, (tl.file + ": " + e.error).c_str());
                for (const Warning &w : e.warnings)
                    QVERIFY2(w.severity != Severity::Error,
                             (tl.file + ": " + w.code + ": " + w.message).c_str());
            }
        }
    }

    void tourErrorsNameTheFileAndPlace_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        const QString one = QStringLiteral(
                R"({"id": "a", "title": "T", "layouts": [{"file": "x.railyard.json", "label": "L"}],
                    "intro": "i", "try": "t", "look_for": "l", "assumes": "a"})");
        const auto doc = [](const QString &scenarios) {
            return QStringLiteral(R"({"format": "railyard-tour", "version": 1, "scenarios": [%1]})")
                    .arg(scenarios);
        };
        QTest::newRow("wrong format") << R"({"format": "railyard-layout", "version": 1})"
                                      << "tour.json: /format: expected \"railyard-tour\"";
        QTest::newRow("no scenarios") << doc(QString()) << "/scenarios: expected at least one";
        QTest::newRow("id twice") << doc(one + "," + one)
                                  << "/scenarios/1/id: the id \"a\" is given to two scenarios";
        QString path = one;
        path.replace("x.railyard.json", "../secret.railyard.json");
        QTest::newRow("path") << doc(path) << "/scenarios/0/layouts/0/file: expected the name";
        QString empty = one;
        empty.replace(R"("try": "t")", R"("try": "  ")");
        QTest::newRow("empty text") << doc(empty) << "/scenarios/0/try: expected a non-empty";
        QString missing = one;
        missing.replace(R"("assumes": "a")", R"("x": "a")");
        QTest::newRow("missing") << doc(missing)
                                 << "/scenarios/0: missing required key \"assumes\"";
    }
    void tourErrorsNameTheFileAndPlace()
    {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        try {
            parseTour(text.toStdString(), "tour.json");
            QFAIL("accepted");
        } catch (const InputError &e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(expected), e.what());
            QVERIFY2(QString::fromUtf8(e.what()).startsWith("tour.json"), e.what());
        }
    }

    // a. The seed's worked example: the flat ring's 0.068 s and 0.694 s (about 10x), and the
    // topology-aware estimate that does far better across servers.
    void seedWorkedExample()
    {
        const Layout l = shipped("seed-worked-example.railyard.json");
        const Topology t = buildTopology(l.cluster, Catalog::builtin());
        QCOMPARE(t.gpuCount(), 128);
        CollectiveRequest req;
        req.op = CollectiveOp::AllReduce;
        req.bytes = 14e9;
        req.algorithm = Algorithm::FlatRing;
        req.efficiency = 0.8;
        const CollectiveResult flatAcross = estimateCollective(t, req);
        req.gpus = {0, 1, 2, 3, 4, 5, 6, 7};
        const CollectiveResult flatInside = estimateCollective(t, req);
        req.algorithm = Algorithm::Auto;
        req.efficiency.reset();
        const CollectiveResult realInside = estimateCollective(t, req);
        req.gpus.clear();
        const CollectiveResult realAcross = estimateCollective(t, req);
        qInfo("flat ring: %.4f s inside, %.4f s across (x%.2f); realistic: %.4f s inside (%s), "
              "%.4f s across (%s, x%.2f)",
              flatInside.timeS,
              flatAcross.timeS,
              flatAcross.timeS / flatInside.timeS,
              realInside.timeS,
              toString(realInside.algorithm),
              realAcross.timeS,
              toString(realAcross.algorithm),
              realAcross.timeS / realInside.timeS);
        // The article prints ~0.068 and ~0.694: one millisecond.
        RAILYARD_COMPARE_ABS(flatInside.timeS, 0.068, 0.001);
        RAILYARD_COMPARE_ABS(flatAcross.timeS, 0.694, 0.001);
        RAILYARD_COMPARE_ABS(flatAcross.timeS / flatInside.timeS, 10.2, 0.1);
        // Realistic: NVLS inside (0.051 s); eight rings over eight NICs per server across
        // (0.074 s), 1.4x the server alone and 9x faster than the flat ring.
        RAILYARD_COMPARE_ABS(realInside.timeS, 0.051, 0.005);
        RAILYARD_COMPARE_ABS(realAcross.timeS, 0.074, 0.007);
        RAILYARD_COMPARE_ABS(realAcross.timeS / realInside.timeS, 1.45, 0.15);
        QVERIFY(flatAcross.timeS / realAcross.timeS > 8);
    }

    // b. TP inside vs across servers: the straddling groups as shipped, then Reset Placement.
    void tpAcrossServers()
    {
        const Layout across = shipped("tp-across-servers.railyard.json");
        QVERIFY(!across.mapping.empty());
        Layout inside = across;
        inside.mapping.clear(); // Edit > Reset Placement
        const Evaluation a = runOk(across), b = runOk(inside);
        QVERIFY(a.ok && b.ok);
        qInfo("TP across: step %.2f s (TP %.2f s); inside: step %.2f s (TP %.2f s)",
              a.stepTimeS,
              a.exposed.tp,
              b.stepTimeS,
              b.exposed.tp);
        RAILYARD_COMPARE_ABS(a.exposed.tp / b.exposed.tp, 1.8, 0.1);
        RAILYARD_COMPARE_ABS(a.stepTimeS / b.stepTimeS, 1.22, 0.04);
    }

    // c. MoE on a GB200 NVL72 rack vs H200 servers over InfiniBand.
    void moeNvl72VersusH200()
    {
        const Evaluation rack = runOk(shipped("moe-gb200-nvl72.railyard.json"));
        const Evaluation ib = runOk(shipped("moe-h200-ib.railyard.json"));
        QVERIFY(rack.ok && ib.ok);
        qInfo("NVL72: step %.2f s, EP %.2f s, compute %.2f s, %.0f tokens/s/GPU; H200+IB: step "
              "%.2f s, EP %.2f s, compute %.2f s, %.0f tokens/s/GPU",
              rack.stepTimeS,
              rack.exposed.ep,
              rack.exposed.compute,
              rack.tokensPerSPerGpu,
              ib.stepTimeS,
              ib.exposed.ep,
              ib.exposed.compute,
              ib.tokensPerSPerGpu);
        QVERIFY(rack.exposed.ep < 0.5 * rack.exposed.compute);
        QVERIFY(ib.exposed.ep > 2 * ib.exposed.compute);
        QVERIFY(ib.exposed.ep > 10 * rack.exposed.ep);
        RAILYARD_COMPARE_ABS(rack.tokensPerSPerGpu / ib.tokensPerSPerGpu, 4.3, 0.4);
    }

    // l. Serving DeepSeek-R1 with wide EP: on an NVL72 rack vs over InfiniBand between H200
    // servers. The numbers the scenario's text gives.
    void servingWideEpNvl72VersusIb()
    {
        const ServingEvaluation rack = serve(
                shipped("serving-deepseek-r1-wide-ep-gb200-nvl72.railyard.json"));
        const ServingEvaluation ib = serve(
                shipped("serving-deepseek-r1-wide-ep-h200-ib.railyard.json"));
        QVERIFY(rack.ok && ib.ok);
        qInfo("NVL72: TPOT %.2f ms, decode step %.2f ms (EP %.2f ms), %.0f tokens/s/GPU, %.1f per "
              "user; H200+IB: TPOT %.2f ms, decode step %.2f ms (EP %.2f ms), %.0f tokens/s/GPU, "
              "%.1f per user",
              1e3 * rack.tpotS,
              1e3 * rack.decodeStepS,
              1e3 * rack.decode.ep,
              rack.outputTokensPerSPerGpu,
              rack.tokensPerSPerUser,
              1e3 * ib.tpotS,
              1e3 * ib.decodeStepS,
              1e3 * ib.decode.ep,
              ib.outputTokensPerSPerGpu,
              ib.tokensPerSPerUser);
        // "about an eighth" on the rack, "a quarter" over InfiniBand.
        RAILYARD_COMPARE_NEAR(rack.decode.ep / rack.decodeStepS, 0.125, 0.1);
        RAILYARD_COMPARE_NEAR(ib.decode.ep / ib.decodeStepS, 0.25, 0.05);
        RAILYARD_COMPARE_NEAR(rack.decodeStepS, 14.8e-3, 0.01);
        RAILYARD_COMPARE_NEAR(ib.decodeStepS, 25.2e-3, 0.01);
        RAILYARD_COMPARE_NEAR(rack.tpotS, 15.9e-3, 0.01);
        RAILYARD_COMPARE_NEAR(ib.tpotS, 29.8e-3, 0.01);
        RAILYARD_COMPARE_NEAR(rack.outputTokensPerSPerGpu, 1000, 0.01);
        RAILYARD_COMPARE_NEAR(rack.tokensPerSPerUser, 63.0, 0.01);
        RAILYARD_COMPARE_NEAR(ib.tokensPerSPerUser, 34, 0.02);
        RAILYARD_COMPARE_NEAR(ib.outputTokensPerSPerGpu, 532, 0.01);
        RAILYARD_COMPARE_NEAR(ib.decode.ep / rack.decode.ep, 3.6, 0.03);
    }

    // d. Queue pairs per connection: ECMP collisions of all the DP groups' flows on the spine.
    void queuePairs()
    {
        const Layout one = shipped("qp-tuning-gb300-qps1.railyard.json");
        const Layout four = shipped("qp-tuning-gb300-qps4.railyard.json");
        QCOMPARE(one.cluster.tuning.qpsPerConnection, 1);
        QCOMPARE(four.cluster.tuning.qpsPerConnection, 4);
        // The two files differ in the setting alone.
        Layout same = four;
        same.cluster.tuning.qpsPerConnection = 1;
        QVERIFY(same.cluster == one.cluster && same.training == one.training
                && same.parallel == one.parallel && same.model == one.model);
        QCOMPARE(one.cluster.gpuCount(), 512);

        const auto allGather = [](const Layout &l) {
            const Topology t = buildTopology(l.cluster, Catalog::builtin());
            return estimateConcurrentCollective(t, CollectiveOp::AllGather, 1 << 30, dpGroups(l));
        };
        const CollectiveResult a = allGather(one), b = allGather(four);
        Layout adaptive = one;
        adaptive.cluster.tuning.adaptiveRouting = true;
        const CollectiveResult ideal = allGather(adaptive);
        const Topology t = buildTopology(one.cluster, Catalog::builtin());
        CollectiveRequest alone;
        alone.op = CollectiveOp::AllGather;
        alone.bytes = 1 << 30;
        alone.gpus = dpGroups(one).front();
        const CollectiveResult single = estimateCollective(t, alone);
        const Evaluation ea = runOk(one), eb = runOk(four);
        QVERIFY(ea.ok && eb.ok);
        qInfo("DP all-gather busbw, 64 groups at once: %.1f GB/s (1 QP, %s), %.1f GB/s (4 QPs), "
              "%.1f GB/s (adaptive routing); one group alone %.1f GB/s (%s). Step %.3f s -> "
              "%.3f s (%.1f%% faster)",
              a.busbwGBps,
              a.bottleneck.c_str(),
              b.busbwGBps,
              ideal.busbwGBps,
              single.busbwGBps,
              single.bottleneck.c_str(),
              ea.stepTimeS,
              eb.stepTimeS,
              100 * (1 - eb.stepTimeS / ea.stepTimeS));
        // What the mechanism gives (NVIDIA measured about 28 -> 61 GB/s and 1.09 -> 0.83 s).
        RAILYARD_COMPARE_ABS(a.busbwGBps, 34.0, 2.0);
        RAILYARD_COMPARE_ABS(b.busbwGBps, 53.5, 2.5);
        QCOMPARE(QString::fromStdString(a.bottleneck), QStringLiteral("spine uplinks"));
        // Without collisions, an 800G NIC's worth (96 GB/s achieved, less latency).
        RAILYARD_COMPARE_ABS(ideal.busbwGBps, 94.7, 1.5);
        RAILYARD_COMPARE_ABS(single.busbwGBps, 94.7, 1.5);
        QVERIFY(ea.stepTimeS > eb.stepTimeS);
        // The iteration: NVIDIA measured about 1.09 -> 0.83 s (x1.31) and published neither
        // the model nor its settings. A workload that gives both published numbers: Llama 3 70B
        // under ZeRO-3, TP32 and PP2 in each rack, DP8 across the racks, three micro-batches
        // of 5,120 tokens per replica, whose parameter gathers and gradient reduce-scatters per
        // micro-batch cross the spine and are partly exposed: 1.07 -> 0.82 s (8K sequences gave
        // 1.11 -> 0.86 s until Blackwell's persistent GEMMs paid for running beside the gathers:
        // 1.19 -> 0.94 s, x1.27). (The mechanism gives 34 ->
        // 54 GB/s where 28 -> 61 were measured: balls into bins bounds the gain of 4x the flows
        // at about 1.6x for this many uplinks.)
        RAILYARD_COMPARE_ABS(ea.stepTimeS, 1.09, 0.05);
        RAILYARD_COMPARE_ABS(eb.stepTimeS, 0.83, 0.05);
        RAILYARD_COMPARE_ABS(ea.stepTimeS / eb.stepTimeS, 1.31, 0.04);
        QVERIFY(ea.exposed.dp > eb.exposed.dp);
    }

    // e. SHARP on and off: the DP all-reduce about halves.
    void sharp()
    {
        Layout off = shipped("sharp-512-h200.railyard.json");
        QVERIFY(!off.cluster.fabric.sharp);
        QVERIFY(!off.training.optimizer.distributed); // a plain all-reduce
        Layout on = off;
        on.cluster.fabric.sharp = true;
        const Evaluation a = runOk(off), b = runOk(on);
        QVERIFY(a.ok && b.ok);
        off.training.overlap.dp = on.training.overlap.dp = false;
        const Evaluation c = runOk(off), d = runOk(on);
        qInfo("DP all-reduce: %.3f s without SHARP, %.3f s with (x%.2f); step %.3f -> %.3f s "
              "with DP overlap, %.3f -> %.3f s without",
              a.total.dp,
              b.total.dp,
              a.total.dp / b.total.dp,
              a.stepTimeS,
              b.stepTimeS,
              c.stepTimeS,
              d.stepTimeS);
        RAILYARD_COMPARE_ABS(a.total.dp / b.total.dp, 2.1, 0.2);
        QVERIFY(b.stepTimeS <= a.stepTimeS);
        // Overlapped, the all-reduce mostly hides, and SHARP saves what its shorter run costs
        // the H200's persistent GEMMs beside it (at most half its difference); exposed, SHARP
        // saves its difference.
        QVERIFY(a.stepTimeS - b.stepTimeS > 0);
        QVERIFY(a.stepTimeS - b.stepTimeS <= 0.5 * (a.total.dp - b.total.dp) + 1e-6);
        RAILYARD_COMPARE_ABS(c.stepTimeS - d.stepTimeS, a.total.dp - b.total.dp, 0.005);
    }

    // f. An oversubscribed spine: MoE all-to-all through 4:1.
    void oversubscribedSpine()
    {
        const Layout four = shipped("oversubscribed-spine.railyard.json");
        QCOMPARE(four.cluster.fabric.oversubscription, 4.0);
        Layout one = four;
        one.cluster.fabric.oversubscription = 1;
        const Topology t4 = buildTopology(four.cluster, Catalog::builtin());
        const Topology t1 = buildTopology(one.cluster, Catalog::builtin());
        const Evaluation a = evaluate(four, t4), b = evaluate(one, t1);
        QVERIFY(a.ok && b.ok);
        const float spine4 = busiest(t4, a, DeviceKind::Leaf, DeviceKind::Spine);
        const float nic4 = busiest(t4, a, DeviceKind::Nic, DeviceKind::Leaf);
        const float spine1 = busiest(t1, b, DeviceKind::Leaf, DeviceKind::Spine);
        const float nic1 = busiest(t1, b, DeviceKind::Nic, DeviceKind::Leaf);
        qInfo("EP %.2f s at 4:1, %.2f s at 1:1 (x%.2f); step %.2f -> %.2f s; busiest over the "
              "step, 4:1: "
              "spine %.2f, NIC %.2f; 1:1: spine %.2f, NIC %.2f",
              a.exposed.ep,
              b.exposed.ep,
              a.exposed.ep / b.exposed.ep,
              a.stepTimeS,
              b.stepTimeS,
              spine4,
              nic4,
              spine1,
              nic1);
        RAILYARD_COMPARE_ABS(a.exposed.ep / b.exposed.ep, 2.2, 0.2);
        // Which link saturates first: the spine at 4:1, the NICs on a non-blocking fabric.
        QVERIFY(spine4 > nic4);
        QVERIFY(nic1 > spine1);
    }

    // g. The pipeline bubble is (p-1)/(v m) of the time the micro-batches take.
    void pipelineBubble_data()
    {
        QTest::addColumn<int>("globalBatch");
        QTest::addColumn<int>("vp");
        QTest::newRow("m=8") << 8 << 1;
        QTest::newRow("m=32") << 32 << 1;
        QTest::newRow("m=8, v=2") << 8 << 2;
        QTest::newRow("m=8, v=5") << 8 << 5;
        QTest::newRow("m=64, v=5") << 64 << 5;
    }
    void pipelineBubble()
    {
        QFETCH(int, globalBatch);
        QFETCH(int, vp);
        Layout l = shipped("pipeline-bubble.railyard.json");
        QCOMPARE(l.parallel.pp, 4);
        QCOMPARE(l.dataParallel(), 1);
        l.training.globalBatch = globalBatch;
        l.parallel.vp = vp;
        const Evaluation e = runOk(l);
        QVERIFY(e.ok);
        const int m = globalBatch / l.training.microBatch;
        const double expected = double(l.parallel.pp - 1) / (vp * m);
        const double busy = e.exposed.compute + e.exposed.tp + e.exposed.cp + e.exposed.ep;
        const double fraction = e.exposed.ppBubble / busy;
        qInfo("m=%d v=%d: bubble %.4f s over %.4f s = %.4f; (p-1)/(v m) = %.4f",
              m,
              vp,
              e.exposed.ppBubble,
              busy,
              fraction,
              expected);
        // Priced from the average stage; the last stage (output layer and loss) is the
        // slowest, so the fraction of the slowest stage's time is a few percent under.
        QVERIFY2(fraction <= expected * 1.001 && fraction >= expected * 0.95,
                 qPrintable(QString::number(fraction)));
    }

    // h. ZeRO-3 at growing scale (fixed global batch): tokens/s per GPU fall.
    void zero3Scaling()
    {
        const Layout base = shipped("zero3-scaling.railyard.json");
        QCOMPARE(base.training.optimizer.zeroStage, 3);
        std::vector<double> perGpu;
        for (int nodes : {1, 2, 4, 8, 16}) {
            Layout l = base;
            l.cluster.nodes = nodes;
            l.parallel.dp.reset(); // follows the GPU count, as in the Cluster panel
            const Evaluation e = runOk(l);
            QVERIFY(e.ok);
            qInfo("%2d servers: %.0f tokens/s per GPU, step %.3f s (DP exposed %.3f s)",
                  nodes,
                  e.tokensPerSPerGpu,
                  e.stepTimeS,
                  e.exposed.dp);
            if (!perGpu.empty())
                QVERIFY2(e.tokensPerSPerGpu < perGpu.back(), "should fall with every step");
            perGpu.push_back(e.tokensPerSPerGpu);
        }
        RAILYARD_COMPARE_ABS(perGpu[1] / perGpu[0], 0.94, 0.02);
        // 0.73 since Hopper's persistent GEMMs run at half their rate beside the hidden
        // gathers and reduce-scatters, which cost the one server as much as the sixteen
        // (0.67 before; 0.63 when the optimizer step read every gradient, not the shard).
        RAILYARD_COMPARE_ABS(perGpu.back() / perGpu.front(), 0.73, 0.04);
    }

    // i. A leaf switch dies on the GMI-style cluster: rail 3 moves onto NIC 2 of every server,
    // whose links carry twice their bytes; the step hardly moves and nothing needs recovering.
    // On the 16,384-GPU layout the same failure of leaf 0 costs 40%, and dropping the two
    // replicas on that unit wins most of it back.
    void leafDown()
    {
        const Layout l = shipped("gmi-h200-leaf-down.railyard.json");
        const Topology healthy = buildTopology(withoutFaults(l).cluster, Catalog::builtin());
        const Topology faulted = withFaults(healthy, l.cluster.faults);
        const FaultImpact impact = analyzeFaults(l, healthy, faulted);
        QVERIFY(impact.healthy.ok && impact.faulted.ok);
        QVERIFY(!impact.links.empty());
        for (const LinkChange &c : impact.links)
            if (c.bytesB > c.bytesA)
                RAILYARD_COMPARE_NEAR(c.bytesB, 2 * c.bytesA, 1e-5);
        const int nic2 = healthy.nicUplink(5 * 8 + 2);
        RAILYARD_COMPARE_ABS(impact.faulted.links->bytesUp[std::size_t(nic2)] / 1e9,
                             2 * impact.healthy.links->bytesUp[std::size_t(nic2)] / 1e9,
                             0.01);
        qInfo("leaf 3 down: step %.3f -> %.3f s (%+.2f%%), DP exposed %.4f -> %.4f s, PP sends "
              "%.4f -> %.4f s",
              impact.healthy.stepTimeS,
              impact.faulted.stepTimeS,
              100 * (impact.faulted.stepTimeS / impact.healthy.stepTimeS - 1),
              impact.healthy.exposed.dp,
              impact.faulted.exposed.dp,
              impact.healthy.exposed.ppP2p,
              impact.faulted.exposed.ppP2p);
        RAILYARD_COMPARE_ABS(impact.healthy.stepTimeS, 16.07, 0.05);
        // The DP part holds what the hidden reduction costs the H200's persistent GEMMs
        // beside it (0.06 s healthy): twice the bytes on rail 3's NIC double that too.
        RAILYARD_COMPARE_ABS(impact.faulted.stepTimeS / impact.healthy.stepTimeS - 1,
                             0.0048,
                             0.0005);
        RAILYARD_COMPARE_ABS(impact.healthy.exposed.dp, 0.071, 0.002);
        RAILYARD_COMPARE_ABS(impact.faulted.exposed.dp, 0.146, 0.003);
        QVERIFY(!impact.recovery);

        Layout big = shipped("llama3.1-405b-16k-h100.railyard.json");
        Fault leaf0;
        leaf0.device = "leaf 0";
        big.cluster.faults = {leaf0};
        const Topology bigHealthy = buildTopology(withoutFaults(big).cluster, Catalog::builtin());
        const FaultImpact b = analyzeFaults(big,
                                            bigHealthy,
                                            withFaults(bigHealthy, big.cluster.faults));
        QVERIFY(b.recovery);
        const double loss = 1 - b.faulted.tokensPerS / b.healthy.tokensPerS;
        qInfo("16k, leaf 0 down: %.1f%% of the throughput; %s recovers %.1f%%",
              100 * loss,
              b.recovery->summary.c_str(),
              100 * b.recovery->recovered);
        RAILYARD_COMPARE_ABS(loss, 0.405, 0.01);
        QCOMPARE(b.recovery->layout.dataParallel(), 126);
        RAILYARD_COMPARE_ABS(b.recovery->recovered, 0.97, 0.01);
    }

    // j. One straggler among 16,384: its TP group's wait and its stage's compute as the text
    // gives them; the step hides the slower compute under its DP traffic, and pays for it in
    // full without DP overlap.
    void straggler16k()
    {
        const Layout l = shipped("llama3.1-405b-16k-straggler.railyard.json");
        Layout healthy = withoutFaults(l);
        const Evaluation a = runOk(healthy), b = runOk(l);
        QVERIFY(a.ok && b.ok);
        qInfo("16k straggler: compute %.3f -> %.3f s, step %.3f -> %.3f s (%+.3f%%), DP exposed "
              "%.3f -> %.3f s",
              a.exposed.compute,
              b.exposed.compute,
              a.stepTimeS,
              b.stepTimeS,
              100 * (b.stepTimeS / a.stepTimeS - 1),
              a.exposed.dp,
              b.exposed.dp);
        RAILYARD_COMPARE_ABS(b.exposed.compute - a.exposed.compute, 0.386, 0.002);
        RAILYARD_COMPARE_ABS(a.stepTimeS, 6.785, 0.002); // 6.789 before the optimizer's parts
        // The slower backward hides 386 ms more of the DP reduce-scatters, and spreads them
        // over a longer window where they share the NICs and spine with less of the pipeline's
        // traffic (links are shared max-min): the step comes out 0.27% shorter, a second-order
        // effect inside the model's resolution, not a gain to expect from a slow GPU.
        RAILYARD_COMPARE_ABS(b.stepTimeS / a.stepTimeS - 1, -0.0027, 0.001);
        RAILYARD_COMPARE_ABS(a.exposed.dp, 1.66, 0.01);
        RAILYARD_COMPARE_ABS(b.exposed.dp, 1.25, 0.01);
        const auto warning = std::find_if(b.warnings.begin(),
                                          b.warnings.end(),
                                          [](const Warning &w) { return w.code == "straggler"; });
        QVERIFY(warning != b.warnings.end());
        QVERIFY2(warning->message.find("+3.01 ms per layer and micro-batch") != std::string::npos,
                 warning->message.c_str());
        QVERIFY2(warning->message.find("waiting on its data-parallel traffic anyway")
                         != std::string::npos,
                 warning->message.c_str());
        Layout noOverlap = l;
        noOverlap.training.overlap.dp = false;
        healthy.training.overlap.dp = false;
        const Evaluation c = runOk(healthy), d = runOk(noOverlap);
        qInfo("16k straggler: %.3f -> %.3f s with DP overlap, %.2f -> %.2f s without",
              a.stepTimeS,
              b.stepTimeS,
              c.stepTimeS,
              d.stepTimeS);
        RAILYARD_COMPARE_ABS(c.stepTimeS, 11.46, 0.01);
        RAILYARD_COMPARE_ABS(d.stepTimeS, 11.85, 0.01);
    }

    // k. MLPerf Training v5.0, Llama 3.1 405B at 512 GPUs: NVIDIA's two closed-division
    // submissions priced as submitted (configurations and sources in the layouts' notes).
    // Measured (median train_step_time over each submission's three result files): 55.1 s per
    // step of 1,152 x 8K tokens on 512 H100, 19.4 s per step of 896 x 8K on 512 GB200: 334 and
    // 738 tokens/s per GPU, 2.21x: the seed's "2.2x faster per GPU".
    void mlperfLlama405b()
    {
        const Layout h100 = shipped("mlperf5-llama405b-h100-512.railyard.json");
        const Layout gb200 = shipped("mlperf5-llama405b-gb200-512.railyard.json");
        QCOMPARE(h100.cluster.gpuCount(), 512);
        QCOMPARE(gb200.cluster.gpuCount(), 512);
        const Evaluation a = runOk(h100), b = runOk(gb200);
        QVERIFY(a.ok && b.ok);
        const double measuredH100 = 1152.0 * 8192 / 55.14 / 512;
        const double measuredGb200 = 896.0 * 8192 / 19.43 / 512;
        const auto comm = [](const Evaluation &e) {
            return e.exposed.tp + e.exposed.cp + e.exposed.ep + e.exposed.ppBubble + e.exposed.ppP2p
                   + e.exposed.dp;
        };
        qInfo("H100: %.1f tokens/s/GPU (measured %.1f, %+.1f%%), step %.1f s: compute %.1f s, "
              "exposed communication and bubble %.2f s",
              a.tokensPerSPerGpu,
              measuredH100,
              100 * (a.tokensPerSPerGpu / measuredH100 - 1),
              a.stepTimeS,
              a.exposed.compute,
              comm(a));
        qInfo("GB200: %.1f tokens/s/GPU (measured %.1f, %+.1f%%), step %.1f s: compute %.1f s, "
              "exposed communication and bubble %.2f s",
              b.tokensPerSPerGpu,
              measuredGb200,
              100 * (b.tokensPerSPerGpu / measuredGb200 - 1),
              b.stepTimeS,
              b.exposed.compute,
              comm(b));
        qInfo("per GPU, GB200 / H100: %.2fx (measured %.2fx); compute per token %.2fx",
              b.tokensPerSPerGpu / a.tokensPerSPerGpu,
              measuredGb200 / measuredH100,
              (a.exposed.compute / (1152.0 * 8192 / 512))
                      / (b.exposed.compute / (896.0 * 8192 / 512)));
        RAILYARD_COMPARE_NEAR(measuredGb200 / measuredH100, 2.21, 0.01);
        // What is off is GB200's compute: exposed communication and the bubble are under 6%
        // of either step. H100 lands 2% fast, GB200 7% fast, so the engine says 2.32x where
        // 2.2x was measured (2.45x and 14% fast until B200's sustained clock became its GEMMs',
        // 2026-12-07). Blackwell's compute is priced from kernel benchmarks (cuBLAS FP8 at 0.86
        // of GB200's peak, tests/data/kernels) at GB200's clock under FP8 load (0.664: B200's
        // GEMMs at the power limit hold its SM clock's 0.80, and GB200's FP8 GEMM loop at the
        // 1,200 W limit holds less than B200's BF16 one, scaled to every GPU of the tray
        // running, tests/data/kernels/gemmloops.csv). The run reaches 36% of GB200's FP8 peak
        // in model FLOPs where the H100 run reaches 41% of its own. A known miss, pinned so
        // that it cannot grow unnoticed (tests/data/throughput/README.md, "Known misses").
        QVERIFY(comm(a) < 0.06 * a.stepTimeS && comm(b) < 0.06 * b.stepTimeS);
        RAILYARD_COMPARE_NEAR(a.tokensPerSPerGpu, measuredH100, 0.12);
        RAILYARD_COMPARE_NEAR(b.tokensPerSPerGpu, 1.074 * measuredGb200, 0.05);
        RAILYARD_COMPARE_ABS(b.tokensPerSPerGpu / a.tokensPerSPerGpu, 2.32, 0.12);
    }
};

QTEST_APPLESS_MAIN(TestScenarios)
#include "tst_scenarios.moc"
