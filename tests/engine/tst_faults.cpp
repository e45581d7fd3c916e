// Faults (cluster.faults): reading and writing them, bad input, and what the engine does with
// them: ECMP over the uplinks left, NICs replaced by a neighbour's (over PCIe, or over NVLink:
// PXN), stragglers pacing their TP group, pipeline and replicas, GPUs out re-forming the job.
#include "base/inputerror.h"
#include "collectives/collective.h"
#include "collectives/traffic.h"
#include "layout/layout.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include "comparenear.h"
#include <QTest>

#include <cmath>

using namespace railyard::engine;

namespace {

// A layout from its JSON parts: `cluster` and `faults` are inserted as written.
Layout layoutOf(const std::string &cluster,
                const std::string &faults,
                const std::string &model,
                const std::string &training,
                const std::string &parallel)
{
    std::string c = cluster;
    if (!faults.empty())
        c.insert(c.rfind('}'), ", \"faults\": " + faults);
    const std::string text = R"({"format": "railyard-layout", "version": 1, "cluster": )" + c
                             + R"(, "model": )" + model + R"(, "training": )" + training
                             + R"(, "parallel": )" + parallel + "}";
    return parseLayout(text, "faults.railyard.json");
}

std::string hgx(int nodes)
{
    return R"({"gpu": "H100-SXM", "nodes": )" + std::to_string(nodes)
           + R"(, "gpus_per_node": 8, "nic": {"gbps": 400, "per_gpu": 1}})";
}

Topology build(const Layout &l)
{
    return buildTopology(l.cluster, Catalog::builtin());
}

ClusterConfig cluster(int nodes, std::vector<Fault> faults = {})
{
    ClusterConfig c;
    c.gpu = "H100-SXM";
    c.nodes = nodes;
    c.faults = std::move(faults);
    return c;
}

Fault down(const std::string &device)
{
    Fault f;
    f.device = device;
    return f;
}

// Every DP group of a TP8 job (GPU k of every server) running a ring all-reduce of `bytes` at
// once, as the step's DP phase does; returns the phase's time.
double dpRingPhase(LinkTraffic &tr, const Topology &t, double bytes)
{
    tr.beginPhase();
    const int nodes = t.shape().nodes;
    for (int k = 0; k < 8; ++k) {
        std::vector<int> gpus;
        for (int n = 0; n < nodes; ++n)
            gpus.push_back(n * 8 + k);
        GroupShape g;
        analyzeGroup(t, gpus, g);
        addCollectiveTraffic(tr, t, g, CollectiveOp::AllReduce, Algorithm::Ring, bytes);
    }
    return tr.phaseTime();
}

double bytesOn(const LinkTraffic &tr, int link)
{
    return tr.phaseUp(link) + tr.phaseDown(link);
}

// The error parsing a layout and building its topology gives (empty: none).
std::string errorOf(const std::string &faults)
{
    try {
        const Layout l = layoutOf(hgx(2),
                                  faults,
                                  R"({"preset": "llama3-8b"})",
                                  R"({"global_batch": 16})",
                                  R"({"tp": 8})");
        build(l);
    } catch (const InputError &e) {
        return e.what();
    }
    return {};
}

const char *kModel = R"({"preset": "llama3-8b"})";

} // namespace

class TestFaults : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip()
    {
        const std::string faults = R"([
            {"device": "leaf 0", "state": "down"},
            {"link": 3, "state": "degraded", "rate": 0.5},
            {"link": "GPU 0 \u2014 NVSwitch 0.0", "state": "degraded", "lanes_down": 2},
            {"rail": 3},
            {"device": "GPU 5", "slowdown": 1.1},
            {"device": "NIC 1.2", "rate": 0.25}])";
        const Layout a = layoutOf(hgx(2), faults, kModel, R"({"global_batch": 16})", R"({"tp": 8})");
        QCOMPARE(a.cluster.faults.size(), std::size_t(6));
        QCOMPARE(a.cluster.faults[1].linkId.value_or(-1), 3);
        QCOMPARE(a.cluster.faults[2].linkName, std::string("GPU 0 \xE2\x80\x94 NVSwitch 0.0"));
        QCOMPARE(a.cluster.faults[3].target, FaultTarget::Rail);
        QCOMPARE(a.cluster.faults[4].state, FaultState::Degraded); // inferred from slowdown
        QCOMPARE(a.cluster.faults[5].rate.value_or(0), 0.25);
        // Saved and read back: the same faults, in a file older builds refuse (format 2).
        const std::string text = layoutToText(a);
        const Layout b = parseLayout(text, "again.railyard.json");
        QVERIFY(a.cluster.faults == b.cluster.faults);
        QVERIFY(a.sameContent(b));
        QVERIFY(text.find("\"version\": 2") != std::string::npos);
        QCOMPARE(layoutToText(b), text);
        // Without faults the file stays format 1 and has no key.
        Layout c = b;
        c.cluster.faults.clear();
        QVERIFY(layoutToText(c).find("faults") == std::string::npos);
        // Every fault resolves on the cluster it names.
        const Topology t = build(a);
        QCOMPARE(t.faults().size(), std::size_t(6));
        QCOMPARE(t.gpuSlowdown(5), 1.1);
    }

    void badInput_data()
    {
        QTest::addColumn<QString>("faults");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("unknown device") << R"([{"device": "leaf 99"}])"
                                        << "/cluster/faults/0/device"
                                        << "no device \"leaf 99\"";
        QTest::newRow("unknown link id") << R"([{"device": "GPU 1"}, {"link": 99999}])"
                                         << "/cluster/faults/1/link"
                                         << "no link 99999";
        QTest::newRow("unknown link name") << R"([{"link": "GPU 0 - leaf 0"}])"
                                           << "/cluster/faults/0/link"
                                           << "no link between GPU 0 and leaf 0";
        QTest::newRow("rate above 1") << R"([{"link": 3, "rate": 1.5}])"
                                      << "/cluster/faults/0/rate"
                                      << "at most 1";
        QTest::newRow("rate below 0") << R"([{"link": 3, "rate": -0.1}])"
                                      << "/cluster/faults/0/rate"
                                      << "above 0";
        QTest::newRow("rate 0") << R"([{"link": 3, "state": "degraded", "rate": 0}])"
                                << "/cluster/faults/0/rate"
                                << "\"state\": \"down\"";
        QTest::newRow("faster GPU") << R"([{"device": "GPU 1", "slowdown": 0.9}])"
                                    << "/cluster/faults/0/slowdown"
                                    << "from 1 to 100";
        QTest::newRow("down with a rate")
                << R"([{"device": "NIC 0.0", "state": "down", "rate": 0.5}])"
                << "/cluster/faults/0/state"
                << "takes no rate";
        QTest::newRow("two targets") << R"([{"device": "leaf 0", "link": 3}])"
                                     << "/cluster/faults/0"
                                     << "only one of";
        QTest::newRow("no target") << R"([{"state": "down"}])"
                                   << "/cluster/faults/0"
                                   << "expected";
        QTest::newRow("slowdown of a switch") << R"([{"device": "leaf 0", "slowdown": 1.2}])"
                                              << "/cluster/faults/0/slowdown"
                                              << "a GPU's";
        QTest::newRow("too many lanes")
                << R"([{"link": "GPU 0 \u2014 NVSwitch 0.0", "lanes_down": 5}])"
                << "/cluster/faults/0/lanes_down"
                << "bundles 5 lanes";
        QTest::newRow("no such rail") << R"([{"rail": 8}])"
                                      << "/cluster/faults/0/rail"
                                      << "no rail 8";
        QTest::newRow("a rack") << R"([{"device": "rack 0"}])"
                                << "/cluster/faults/0/device"
                                << "not one device";
        QTest::newRow("a CPU") << R"([{"device": "CPU 0.1"}])"
                               << "/cluster/faults/0/device"
                               << "takes its server";
        // Every NIC of server 1 down: its GPUs cannot reach server 0.
        QTest::newRow("no NIC left")
                << R"([{"device": "NIC 1.0"}, {"device": "NIC 1.1"}, {"device": "NIC 1.2"},
                      {"device": "NIC 1.3"}, {"device": "NIC 1.4"}, {"device": "NIC 1.5"},
                      {"device": "NIC 1.6"}, {"device": "NIC 1.7"}])"
                << "/cluster/faults/0"
                << "no working NIC";
        QTest::newRow("every NVLink of a GPU")
                << R"([{"device": "NVSwitch 0.0"}, {"device": "NVSwitch 0.1"},
                      {"device": "NVSwitch 0.2"}, {"device": "NVSwitch 0.3"}])"
                << "/cluster/faults/0"
                << "every NVLink of GPU 0";
    }

    void badInput()
    {
        QFETCH(QString, faults);
        QFETCH(QString, where);
        QFETCH(QString, says);
        const std::string error = errorOf(faults.toStdString());
        QVERIFY2(!error.empty(), "no error");
        QVERIFY2(error.find(where.toStdString() + ":") != std::string::npos, error.c_str());
        QVERIFY2(error.find(says.toStdString()) != std::string::npos, error.c_str());
    }

    void everyUplinkOfALeafDown()
    {
        // Two scalable units (64 servers): leaf 1's links to all 8 spines down, its NICs still
        // up: their traffic to the other unit has no way out.
        std::vector<Fault> faults;
        for (int k = 0; k < 8; ++k) {
            Fault f;
            f.target = FaultTarget::Link;
            f.linkName = "leaf 1 \xE2\x80\x94 spine " + std::to_string(k);
            faults.push_back(f);
        }
        bool threw = false;
        try {
            buildTopology(cluster(64, faults), Catalog::builtin());
        } catch (const InputError &e) {
            threw = true;
            QVERIFY2(std::string(e.what()).find("every uplink of leaf 1 is down")
                             != std::string::npos,
                     e.what());
            QVERIFY2(e.where().rfind("/cluster/faults/", 0) == 0, e.what());
        }
        QVERIFY(threw);
        // The leaf itself down too: its servers move to other rails, and the cluster runs.
        faults.push_back(down("leaf 1"));
        const Topology t = buildTopology(cluster(64, faults), Catalog::builtin());
        QVERIFY(t.deviceDown(t.leafDevice(1)));
    }

    void leafDownRaisesUplinks()
    {
        // Rail-optimized, two scalable units of 32 HGX servers, 8 spines. Leaf 0 (unit 0, rail
        // 0) down: GPU 0 of each of its 32 servers moves to NIC 1 under the same PCIe switch.
        const Topology healthy = buildTopology(cluster(64), Catalog::builtin());
        const Topology faulted = withFaults(healthy, {down("leaf 0")});
        QCOMPARE(healthy.shape().spines, 8);
        QCOMPARE(faulted.gpuNics(0)[0], faulted.nicDevice(1));
        QCOMPARE(faulted.gpuNetPath(0), NetPath::Direct); // PCIe switch 0 holds NIC 1 too
        QCOMPARE(faulted.gpuNics(32 * 8)[0], faulted.nicDevice(32 * 8)); // unit 1 untouched
        LinkTraffic a(healthy), b(faulted);
        const double S = 1e9;
        dpRingPhase(a, healthy, S);
        dpRingPhase(b, faulted, S);
        // Rail 1's NICs in unit 0 carry their own GPU's ring and GPU 0's: twice the bytes.
        for (int n : {0, 5, 31}) {
            const int up = healthy.nicUplink(n * 8 + 1);
            QVERIFY(bytesOn(a, up) > 0);
            RAILYARD_COMPARE_NEAR(bytesOn(b, up), 2 * bytesOn(a, up), 1e-6);
            QCOMPARE(bytesOn(b, healthy.nicUplink(n * 8)), 0.0); // leaf 0's links carry nothing
        }
        // Leaf 1's uplinks to the spines: rail 1's ring leaves the unit, and now rail 0's too.
        for (int l : healthy.leafUplinks(1)) {
            QVERIFY(bytesOn(a, l) > 0);
            RAILYARD_COMPARE_NEAR(bytesOn(b, l), 2 * bytesOn(a, l), 1e-6);
        }
        for (int l : healthy.leafUplinks(0))
            QCOMPARE(bytesOn(b, l), 0.0);
        // The other unit's rail-0 leaf still meets the same bytes (now from rail 1's leaf).
        for (int l : healthy.leafUplinks(8))
            RAILYARD_COMPARE_NEAR(bytesOn(b, l), bytesOn(a, l), 1e-6);
    }

    void spineDownSpreadsOverTheRest()
    {
        // One spine of 8 down: each leaf's uplink traffic spreads over 7, 8/7 as much on each.
        const Topology healthy = buildTopology(cluster(64), Catalog::builtin());
        const Topology faulted = withFaults(healthy, {down("spine 0")});
        LinkTraffic a(healthy), b(faulted);
        dpRingPhase(a, healthy, 1e9);
        dpRingPhase(b, faulted, 1e9);
        for (int leaf : {0, 3, 9}) {
            const auto ups = healthy.leafUplinks(leaf);
            QCOMPARE(bytesOn(b, ups[0]), 0.0);
            for (std::size_t k = 1; k < ups.size(); ++k)
                RAILYARD_COMPARE_NEAR(bytesOn(b, ups[k]), bytesOn(a, ups[k]) * 8.0 / 7.0, 1e-6);
        }
    }

    void nicDownGoesThroughPxn()
    {
        // Two HGX H100 servers; both NICs of server 0's first PCIe switch down: GPUs 0 and 1
        // have no NIC under their switch, so NCCL's PXN sends their traffic over NVLink to the
        // GPU beside a working NIC, which reads it out through its own PCIe link.
        const Topology healthy = buildTopology(cluster(2), Catalog::builtin());
        const Topology faulted = withFaults(healthy, {down("NIC 0.0"), down("NIC 0.1")});
        QCOMPARE(faulted.gpuNetPath(0), NetPath::Pxn);
        QCOMPARE(faulted.gpuNetProxy(0), 2); // the least used NIC first: NIC 0.2, GPU 2's
        QCOMPARE(faulted.gpuNics(0)[0], faulted.nicDevice(2));
        QCOMPARE(faulted.gpuNetProxy(1), 3);
        QCOMPARE(faulted.gpuNetPath(2), NetPath::Direct);
        QVERIFY(!faulted.faultNotes().empty());

        // By hand: the DP all-reduce of S across the two servers, every GPU pair {k, 8 + k} at
        // once, ring over 2 ranks: each GPU sends S to its peer and receives S. Healthy, each
        // NIC carries S each way at 400 Gb/s x 0.96 (CX7) = 48 GB/s: S / 48 GB/s. With PXN,
        // NIC 0.2 carries GPU 2's S and GPU 0's: 2 S / 48 GB/s. GPU 2's PCIe link (Gen5,
        // 64 GB/s x 0.8 = 51.2 GB/s) carries 2 S too, less than the NIC's time; GPU 0's NVLink
        // port carries S at ~20x the NIC's rate.
        const double S = 4.8e9;
        const double nic = 400 / 8.0 * 0.96 * 1e9;
        LinkTraffic a(healthy), b(faulted);
        RAILYARD_COMPARE_NEAR(dpRingPhase(a, healthy, S), S / nic, 1e-6);
        RAILYARD_COMPARE_NEAR(dpRingPhase(b, faulted, S), 2 * S / nic, 1e-6);
        const int bottleneck = b.phaseBottleneck();
        QVERIFY(bottleneck == healthy.nicUplink(2) || bottleneck == healthy.nicUplink(3));
        RAILYARD_COMPARE_NEAR(b.phaseUp(healthy.gpuHostLink(2)), 2 * S, 1e-6);
        QCOMPARE(bytesOn(b, healthy.gpuHostLink(0)), 0.0); // GPU 0's PCIe link is bypassed
        QCOMPARE(bytesOn(b, healthy.nicUplink(0)), 0.0);

        // The step: TP8 in each server, DP2 across them, DP not overlapped, so its collectives
        // add to the step as they are. Only the DP collectives change: their link-bound time
        // doubles (the same 2x), their latency stays.
        const Layout l = layoutOf(hgx(2),
                                  R"([{"device": "NIC 0.0"}, {"device": "NIC 0.1"}])",
                                  kModel,
                                  R"({"global_batch": 16, "overlap": {"dp": false}})",
                                  R"({"tp": 8, "dp": 2})");
        Layout h = l;
        h.cluster.faults.clear();
        const Evaluation eh = evaluate(h, healthy);
        const Evaluation ef = evaluate(l, faulted);
        QVERIFY2(eh.ok && ef.ok, (eh.error + ef.error).c_str());
        RAILYARD_COMPARE_NEAR(ef.exposed.compute, eh.exposed.compute, 1e-12);
        RAILYARD_COMPARE_NEAR(ef.exposed.tp, eh.exposed.tp, 1e-9);
        RAILYARD_COMPARE_NEAR(ef.stepTimeS - eh.stepTimeS, ef.exposed.dp - eh.exposed.dp, 1e-9);
        qInfo("NIC down (PXN): DP %.4f s -> %.4f s (x%.3f), step %.4f s -> %.4f s",
              eh.exposed.dp,
              ef.exposed.dp,
              ef.exposed.dp / eh.exposed.dp,
              eh.stepTimeS,
              ef.stepTimeS);
        // The gradients (1 B parameters per GPU: 8 B / TP 8, BF16) reduce-scattered and the
        // parameters gathered back over 2 ranks move 1e9 x 2 B / 2 each way per GPU: ~42 ms
        // per collective at 48 GB/s healthy, twice that with the shared NIC; latency (tens of
        // microseconds per bucket) is all that keeps the ratio below 2.
        QVERIFY(ef.exposed.dp / eh.exposed.dp > 1.95);
        QVERIFY(ef.exposed.dp / eh.exposed.dp <= 2.0 + 1e-9);
    }

    void stragglerPacesItsTpGroup()
    {
        // One HGX server, TP8: GPU 3 runs 10% slower. Its TP group waits for it at every
        // collective, so every layer's compute takes 1.1x as long; the TP collectives themselves
        // move the same bytes; the optimizer step (memory bound) waits for it too.
        const std::string training = R"({"global_batch": 8})";
        const Layout l = layoutOf(hgx(1),
                                  R"([{"device": "GPU 3", "slowdown": 1.1}])",
                                  kModel,
                                  training,
                                  R"({"tp": 8})");
        Layout h = l;
        h.cluster.faults.clear();
        const Evaluation eh = evaluate(h, build(h));
        const Evaluation ef = evaluate(l, build(l));
        QVERIFY2(eh.ok && ef.ok, (eh.error + ef.error).c_str());
        RAILYARD_COMPARE_NEAR(ef.exposed.compute, 1.1 * eh.exposed.compute, 1e-12);
        RAILYARD_COMPARE_NEAR(ef.exposed.tp, eh.exposed.tp, 1e-12);
        RAILYARD_COMPARE_NEAR(ef.exposed.optimizer, 1.1 * eh.exposed.optimizer, 1e-12);
        // By hand: step = 1.1 x compute + TP + 1.1 x optimizer (no PP, no DP here).
        RAILYARD_COMPARE_NEAR(ef.stepTimeS,
                              1.1 * eh.exposed.compute + eh.exposed.tp + 1.1 * eh.exposed.optimizer,
                              1e-12);
        bool warned = false;
        for (const Warning &w : ef.warnings)
            if (w.code == "straggler") {
                warned = true;
                QVERIFY2(w.message.find("TP group 0 waits for it at every collective")
                                 != std::string::npos,
                         w.message.c_str());
                RAILYARD_COMPARE_NEAR(w.costS, ef.stepTimeS - eh.stepTimeS, 1e-9);
                QCOMPARE(w.gpus.size(), std::size_t(8));
            }
        QVERIFY(warned);
        qInfo("10%% straggler in TP8: step %.4f s -> %.4f s", eh.stepTimeS, ef.stepTimeS);
    }

    void stragglerGrowsTheBubble()
    {
        // Two stages (one server each), 8 micro-batches; the straggler in the last stage (which
        // is already the slowest: it runs the output layer). By hand: that stage's compute per
        // micro-batch c becomes 1.1 c; the bubble, (p - 1) / v stages of the average stage,
        // grows by 0.1 c / 2.
        const Layout l = layoutOf(hgx(2),
                                  R"([{"device": "GPU 11", "slowdown": 1.1}])",
                                  kModel,
                                  R"({"global_batch": 8})",
                                  R"({"tp": 8, "pp": 2, "dp": 1})");
        Layout h = l;
        h.cluster.faults.clear();
        const Evaluation eh = evaluate(h, build(h));
        const Evaluation ef = evaluate(l, build(l));
        QVERIFY2(eh.ok && ef.ok, (eh.error + ef.error).c_str());
        const double c = eh.exposed.compute / 8;
        RAILYARD_COMPARE_NEAR(ef.exposed.compute, 1.1 * eh.exposed.compute, 1e-12);
        RAILYARD_COMPARE_NEAR(ef.exposed.ppBubble - eh.exposed.ppBubble, 0.1 * c / 2, 1e-9);
    }

    void gpuOutShrinksDataParallel()
    {
        // Four servers, TP8 DP4; GPU 9 (replica 1) out, no spare: the elastic restart runs DP 3,
        // the global batch of 32 rounded up to 33 (11 micro-batches per replica).
        const Layout l = layoutOf(hgx(4),
                                  R"([{"device": "GPU 9", "state": "down"}])",
                                  kModel,
                                  R"({"global_batch": 32})",
                                  R"({"tp": 8})");
        const Evaluation e = evaluate(l, build(l));
        QVERIFY2(e.ok, e.error.c_str());
        QVERIFY(!e.warnings.empty());
        QCOMPARE(e.warnings.front().code, std::string("gpu-out"));
        QVERIFY2(e.warnings.front().message.find("DP 4 -> 3") != std::string::npos,
                 e.warnings.front().message.c_str());
        QVERIFY2(e.warnings.front().message.find("up to 33") != std::string::npos,
                 e.warnings.front().message.c_str());
        RAILYARD_COMPARE_NEAR(e.tokensPerStep, 33.0 * 4096, 1e-12);
        RAILYARD_COMPARE_NEAR(e.tokensPerSPerGpu, e.tokensPerS / 24, 1e-12);
        // The whole server is out of the job (the replica's other 7 GPUs idle): the cost
        // still counts all 32 GPUs.
        const double price = Catalog::builtin().gpu("H100-SXM")->pricePerGpuHour;
        QVERIFY(price > 0);
        RAILYARD_COMPARE_NEAR(e.costPerStep, price * 32 * e.stepTimeS / 3600, 1e-9);
    }

    void gpuOutNeedsASpare()
    {
        // DP 1: nothing to shrink, no spare: the job cannot run, and says so.
        const Layout l = layoutOf(hgx(1),
                                  R"([{"device": "GPU 2"}])",
                                  kModel,
                                  R"({"global_batch": 8})",
                                  R"({"tp": 8})");
        const Evaluation e = evaluate(l, build(l));
        QVERIFY(!e.ok);
        QVERIFY2(e.error.find("needs 1 spare GPU") != std::string::npos, e.error.c_str());
        // With a spare server the restarted job takes the nearest spare GPU instead.
        Layout spare = layoutOf(hgx(2),
                                R"([{"device": "GPU 2"}])",
                                kModel,
                                R"({"global_batch": 8})",
                                R"({"tp": 8, "dp": 1})");
        for (int g = 0; g < 8; ++g)
            spare.mapping.push_back(g);
        const Evaluation s = evaluate(spare, build(spare));
        QVERIFY2(s.ok, s.error.c_str());
        QVERIFY2(s.warnings.front().message.find("rank 2 to GPU 8") != std::string::npos,
                 s.warnings.front().message.c_str());
    }

    void degradedRates()
    {
        const Topology healthy = buildTopology(cluster(2), Catalog::builtin());
        Fault nic;
        nic.target = FaultTarget::Link;
        nic.linkName = "NIC 0.0 \xE2\x80\x94 leaf 0";
        nic.state = FaultState::Degraded;
        nic.rate = 0.5;
        Fault bundle;
        bundle.target = FaultTarget::Link;
        bundle.linkName = "GPU 1 - NVSwitch 0.0";
        bundle.state = FaultState::Degraded;
        bundle.lanesDown = 2;
        const Topology t = withFaults(healthy, {nic, bundle});
        const int up = t.nicUplink(0);
        RAILYARD_COMPARE_NEAR(t.links()[std::size_t(up)].effectiveGbPerS(),
                              0.5 * healthy.links()[std::size_t(up)].effectiveGbPerS(),
                              1e-12);
        RAILYARD_COMPARE_NEAR(t.nicRate(0), 0.5 * healthy.nicRate(0), 1e-12);
        RAILYARD_COMPARE_NEAR(t.gpuNetRate(0), 0.5 * healthy.gpuNetRate(0), 1e-12);
        // GPU 1's first NVLink bundle has 5 of its 18 lanes; 2 missing leave 16 of 18.
        QCOMPARE(healthy.links()[std::size_t(healthy.gpuNvlinks(1)[0])].lanes, 5.0);
        RAILYARD_COMPARE_NEAR(t.gpuNvlinkRate(1), healthy.gpuNvlinkRate(1) * 16 / 18, 1e-12);
        RAILYARD_COMPARE_NEAR(t.gpuNvlinkRate(2), healthy.gpuNvlinkRate(2), 1e-15);
    }

    void noBytesOnDownLinks_data()
    {
        QTest::addColumn<QString>("faults");
        QTest::newRow("leaf") << R"([{"device": "leaf 2"}])";
        QTest::newRow("rail") << R"([{"rail": 5}])";
        QTest::newRow("NIC, PXN") << R"([{"device": "NIC 1.6"}, {"device": "NIC 1.7"}])";
        QTest::newRow("NVSwitch") << R"([{"device": "NVSwitch 1.2"}])";
        QTest::newRow("GPU PCIe link") << R"([{"link": "GPU 4 - PCIe switch 0.2"}])";
        QTest::newRow("PCIe switch") << R"([{"device": "PCIe switch 0.3"}])";
    }

    void noBytesOnDownLinks()
    {
        // Wherever the traffic goes, it never crosses a link that is down.
        QFETCH(QString, faults);
        const Layout l = layoutOf(hgx(4),
                                  faults.toStdString(),
                                  kModel,
                                  R"({"global_batch": 32})",
                                  R"({"tp": 4, "pp": 2})");
        const Topology t = build(l);
        const Evaluation e = evaluate(l, t);
        QVERIFY2(e.ok, e.error.c_str());
        int down = 0;
        for (int i = 0; i < t.linkCount(); ++i)
            if (t.links()[std::size_t(i)].down()) {
                ++down;
                QCOMPARE(double(e.links->bytesUp[std::size_t(i)])
                                 + e.links->bytesDown[std::size_t(i)],
                         0.0);
            }
        QVERIFY(down > 0);
    }

    void emptyFaultsChangeNothing()
    {
        // A straggler at slowdown 1 is no straggler: the numbers are the healthy ones exactly.
        const Layout l = layoutOf(hgx(2),
                                  R"([{"device": "GPU 3", "slowdown": 1}])",
                                  kModel,
                                  R"({"global_batch": 16})",
                                  R"({"tp": 8})");
        Layout h = l;
        h.cluster.faults.clear();
        const Evaluation a = evaluate(h, build(h));
        const Evaluation b = evaluate(l, build(l));
        QVERIFY(a.ok && b.ok);
        QCOMPARE(b.stepTimeS, a.stepTimeS);
        QCOMPARE(b.links->bytesUp, a.links->bytesUp);
    }
};

QTEST_GUILESS_MAIN(TestFaults)
#include "tst_faults.moc"
