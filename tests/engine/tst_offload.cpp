#include "evaluatetext.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "step/evaluate.h"
#include "step/offload.h"
#include "topology/topology.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <string>

using namespace railyard::engine;
using railyard::test::evaluateText;
using railyard::test::findWarning;
using railyard::test::mentions;

namespace {

// Llama 3 70B under Megatron-FSDP on 64 GPUs at two sequences of 8k per micro-batch, as
// Megatron-Bridge 0.2.1 runs it on GB200 with cpu_offloading_num_layers 40
// (tests/data/throughput, run W10).
std::string fsdpLayout(const std::string &cluster,
                       int offload,
                       int pp = 1,
                       const std::string &recompute = "none",
                       int microBatch = 2)
{
    return R"({"format": "railyard-layout", "version": 1, "cluster": )" + cluster + R"(,
      "model": {"preset": "llama3-70b"},
      "training": {"stack": "nemo", "seq_len": 8192, "global_batch": 128, "micro_batch": )"
           + std::to_string(microBatch) + R"(, "precision": "fp8", "recompute": ")" + recompute
           + R"(", "cpu_offload_layers": )" + std::to_string(offload) + R"(,
                   "optimizer": {"distributed": true, "fsdp": true}},
      "parallel": {"tp": 1, "cp": 1, "ep": 1, "pp": )"
           + std::to_string(pp) + R"(, "vp": 1, "dp": )" + std::to_string(64 / pp) + R"(}})";
}

const std::string kGb200 = R"({"gpu": "GB200", "nodes": 16, "gpus_per_node": 4, "nvlink_domain": 64,
              "nic": {"gbps": 400, "per_gpu": 1}, "fabric": {"kind": "rail-optimized"}})";
const std::string kH100 = R"({"gpu": "H100-SXM", "nodes": 8, "gpus_per_node": 8,
              "nic": {"gbps": 400, "per_gpu": 1}, "fabric": {"kind": "rail-optimized"}})";

} // namespace

class TestOffload : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // The windows Transformer Engine spreads the copies over (cpu_offload.py, v2.9,
    // layer_window_map), for the recipes' 80 layers: K = 20 every four layers, 40 every two,
    // 30 every three and then every two, 5 every sixteen; the last always the last layer.
    void windowsMatchTransformerEngine()
    {
        const auto windows = [](int k) { return offloadWindows(80, k); };
        std::vector<int> w20, w40, w30, w5;
        for (int i = 0; i < 20; ++i)
            w20.push_back(4 * i + 3);
        for (int i = 0; i < 40; ++i)
            w40.push_back(2 * i + 1);
        for (int i = 0; i < 20; ++i)
            w30.push_back(3 * i + 2);
        for (int i = 20; i < 30; ++i)
            w30.push_back(2 * i + 21);
        w5 = {15, 31, 47, 63, 79};
        QCOMPARE(windows(20), w20);
        QCOMPARE(windows(40), w40);
        QCOMPARE(windows(30), w30);
        QCOMPARE(windows(5), w5);
        QVERIFY(windows(0).empty());
        // Megatron-Core allows fewer layers than the model's; the last window ends the forward.
        QCOMPARE(windows(79).back(), 79);
    }

    // The GPU holds the kept layers and the group whose copy is in flight (forward), or the
    // reloaded groups waiting for their backward: K = 20 of 80 keeps 61 layers' activations,
    // K = 40 keeps 41.
    void residentLayers()
    {
        QCOMPARE(offloadResidentLayers(80, 0), 80.0);
        QCOMPARE(offloadResidentLayers(80, 20), 61.0);
        QCOMPARE(offloadResidentLayers(80, 40), 41.0);
        QVERIFY(offloadResidentLayers(80, 79) < 41.0);
    }

    // Each copy hides behind its window's layers; what it takes beyond them, the compute
    // waits. K = 40 of 80 (windows of one layer, then two), copies of 3 ms against layers of
    // 1 ms forward and 2 ms backward: forward 2 + 39 x 1 = 41 ms, backward 1 ms.
    void stallBeyondTheWindows()
    {
        const OffloadStall s = offloadStall(80, 40, 3e-3, 3e-3, 1e-3, 2e-3);
        QCOMPARE(s.forwardS, 41e-3);
        QCOMPARE(s.backwardS, 1e-3);
        const OffloadStall hidden = offloadStall(80, 20, 3e-3, 3e-3, 1e-3, 2e-3);
        QCOMPARE(hidden.totalS(), 0.0);
    }

    // Megatron-Core refuses offload with pipeline parallelism or recomputation; the engine
    // applies it only without both.
    void appliesWithoutPipelineOrRecompute()
    {
        TrainingConfig t;
        t.recompute = Recompute::None;
        t.offloadLayers = 20;
        QCOMPARE(offloadedLayers(t, 1, 80), 20);
        QCOMPARE(offloadedLayers(t, 2, 80), 0);
        t.offloadLayers = 200;
        QCOMPARE(offloadedLayers(t, 1, 80), 79);
        t.recompute = Recompute::Selective;
        QCOMPARE(offloadedLayers(t, 1, 80), 0);
    }

    // W10's configuration: out of HBM without offload; with the first 40 layers' activations
    // in Grace's memory it fits, the copies (3.6 GB a layer over NVLink-C2C at 193 GB/s, 19 ms)
    // hide behind two layers of forward each, and the evaluation says what moves.
    void fsdpRecipeFitsWithOffload()
    {
        const Evaluation without = evaluateText(fsdpLayout(kGb200, 0));
        const Evaluation with = evaluateText(fsdpLayout(kGb200, 40));
        QVERIFY(without.ok && with.ok);
        qInfo("GB200, Llama 3 70B FSDP MBS 2: %.1f GiB without offload, %.1f with 40 layers "
              "offloaded (HBM %.1f); step %.3f s and %.3f s",
              without.memory.totalGiB(),
              with.memory.totalGiB(),
              with.hbmGiB,
              without.stepTimeS,
              with.stepTimeS);
        QVERIFY(findWarning(without, "out-of-memory"));
        QVERIFY(!findWarning(with, "out-of-memory"));
        QVERIFY(with.memory.activationsGiB < 0.6 * without.memory.activationsGiB);
        QVERIFY(mentions(with, "offloaded to host memory"));
        QVERIFY(mentions(with, "NVLink-C2C"));
        QVERIFY(!findWarning(with, "offload-bound"));
        QVERIFY(with.stepTimeS >= without.stepTimeS);
        QVERIFY(with.stepTimeS < 1.01 * without.stepTimeS);
    }

    // The same offload over an x86 server's PCIe (52 GB/s, a quarter of C2C) at three layers
    // in four: each copy outlasts its window, the step waits, and a warning says by how much
    // (at one layer in two the wait is just under the warning's 5% of the step).
    void pcieOffloadWaits()
    {
        const Evaluation without = evaluateText(fsdpLayout(kH100, 0, 1, "none", 1));
        const Evaluation with = evaluateText(fsdpLayout(kH100, 60, 1, "none", 1));
        QVERIFY(without.ok && with.ok);
        const Warning *w = findWarning(with, "offload-bound");
        QVERIFY(w);
        qInfo("H100, 60 of 80 layers offloaded at MBS 1: step %.3f s -> %.3f s; %s",
              without.stepTimeS,
              with.stepTimeS,
              w->message.c_str());
        QVERIFY(mentions(with, "PCIe"));
        QVERIFY(w->costS > 0);
        QVERIFY(with.stepTimeS > without.stepTimeS + 0.9 * w->costS);
    }

    // The copies load each GPU's own host link (NVLink-C2C on GB200), the same bytes each way:
    // Link Load shows them.
    void copiesLoadTheHostLinks()
    {
        Layout l = parseLayout(fsdpLayout(kGb200, 40), "offload.railyard.json");
        const Topology topo = buildTopology(l.cluster, Catalog::builtin());
        EvaluateOptions o;
        o.timeline = false;
        const Evaluation with = evaluate(l, topo, o);
        l.training.offloadLayers = 0;
        const Evaluation without = evaluate(l, topo, o);
        QVERIFY(with.ok && without.ok && with.links && without.links);
        int loaded = 0;
        for (int g = 0; g < topo.gpuCount(); ++g) {
            const auto i = static_cast<std::size_t>(topo.gpuHostLink(g));
            QCOMPARE(topo.links()[i].kind, LinkKind::C2C);
            const double up = with.links->bytesUp[i] - without.links->bytesUp[i];
            const double down = with.links->bytesDown[i] - without.links->bytesDown[i];
            QVERIFY(std::abs(up - down) < 1e-3 * up);
            // 40 layers of 3.6 GB (two sequences of 8k in FP8), one micro-batch a step.
            QVERIFY2(up > 100e9 && up < 200e9, qPrintable(QString::number(up)));
            ++loaded;
        }
        QCOMPARE(loaded, 64);
    }

    // Asked for where it cannot apply: said, and not priced.
    void notAppliedIsSaid()
    {
        const Evaluation pp = evaluateText(fsdpLayout(kGb200, 20, 2));
        const Evaluation full = evaluateText(fsdpLayout(kGb200, 20, 1, "full"));
        const Evaluation plain = evaluateText(fsdpLayout(kGb200, 0, 1, "full"));
        QVERIFY(pp.ok && full.ok && plain.ok);
        QVERIFY(findWarning(pp, "offload-not-applied"));
        QVERIFY(findWarning(full, "offload-not-applied"));
        QVERIFY(!mentions(full, "offloaded to host memory"));
        QCOMPARE(full.stepTimeS, plain.stepTimeS);
        QCOMPARE(full.memory.totalGiB(), plain.memory.totalGiB());
    }

    // The host copy rates: measured where the catalog has them, the PCIe generation's
    // otherwise (A100: Gen4 x16 at the catalog's efficiency).
    void hostCopyRates()
    {
        const Catalog &c = Catalog::builtin();
        QCOMPARE(c.gpu("GB200")->hostCopyD2hGBs, 193.0);
        QCOMPARE(c.gpu("GB200")->hostCopyH2dGBs, 201.0);
        QCOMPARE(c.gpu("GB300")->hostCopyD2hGBs, c.gpu("GB200")->hostCopyD2hGBs);
        QCOMPARE(c.gpu("H100-SXM")->hostCopyD2hGBs, 52.0);
        const PcieSpec *gen4 = c.pcie(4);
        QVERIFY(gen4);
        QCOMPARE(c.gpu("A100-SXM-80GB")->hostCopyD2hGBs, gen4->gbPerS * gen4->efficiency);
        const PcieSpec *gen5 = c.pcie(5);
        QVERIFY(gen5);
        QCOMPARE(c.gpu("B200")->hostCopyH2dGBs, gen5->gbPerS * gen5->efficiency);
    }
};

QTEST_APPLESS_MAIN(TestOffload)
#include "tst_offload.moc"
