#include "comparenear.h"
#include "evaluatetext.h"
#include "layout/catalog.h"
#include "layout/layout.h"
#include "layout/softwarestack.h"
#include "step/evaluate.h"
#include "step/hostlaunch.h"
#include "topology/topology.h"

#include <QTest>

#include <algorithm>
#include <string>

using namespace railyard::engine;
using railyard::test::evaluateText;
using railyard::test::mentions;

namespace {

// Qwen3 30B-A3B (128 experts, 8 routed) on one 8-GPU server, every GPU an expert-parallel
// rank: 16 experts per GPU, as Megatron-Bridge ran it on DGX B200 (tests/data/throughput,
// run W21).
std::string qwenLayout(const std::string &gpu,
                       int nodes,
                       int gpusPerNode,
                       int domain,
                       int ep,
                       int microBatch,
                       const std::string &stack)
{
    const int gpus = nodes * gpusPerNode;
    return R"({"format": "railyard-layout", "version": 1,
      "cluster": {"gpu": ")"
           + gpu + R"(", "nodes": )" + std::to_string(nodes) + R"(, "gpus_per_node": )"
           + std::to_string(gpusPerNode) + R"(, "nvlink_domain": )" + std::to_string(domain) + R"(,
                  "nic": {"gbps": 400, "per_gpu": 1}, "fabric": {"kind": "rail-optimized"}},
      "model": {"preset": "qwen3-30b-a3b"},
      "training": {"seq_len": 4096, "global_batch": )"
           + std::to_string(64 * gpus) + R"(, "micro_batch": )" + std::to_string(microBatch) + R"(,
                   "precision": "fp8", "recompute": "none", "moe_force_balance": true)"
           + (stack.empty() ? std::string() : R"(, "stack": ")" + stack + "\"") + R"(},
      "parallel": {"tp": 1, "cp": 1, "ep": )"
           + std::to_string(ep) + R"(, "pp": 1, "vp": 1, "dp": )" + std::to_string(gpus) + R"(}})";
}

} // namespace

// The host's side of eager MoE layers (step/hostlaunch.h): the dispatcher's wait once per
// layer forward, and one GEMM launch per local expert.
class TestHostLaunch : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Each host's cost per framework operation is TransformerEngine#2053's measurement of a
    // PyTorch Linear forward's CPU time: 13.48 us on a DGX H100's Xeon 8480C, 37.08 us on
    // GB200's Grace (and 33.17 on GH200's). x86 servers share the first, Grace the second.
    void hostCostPerOperationIsMeasured()
    {
        const Catalog &c = Catalog::builtin();
        for (const char *id : {"H100-SXM", "H800-SXM", "H200-SXM", "B200"})
            RAILYARD_COMPARE_NEAR(c.gpu(id)->hostOpS, 13.48e-6, 0.01);
        for (const char *id : {"GB200", "GB300"})
            RAILYARD_COMPARE_NEAR(c.gpu(id)->hostOpS, 37.08e-6, 0.01);
        // A100 servers (AMD EPYC Rome in DGX A100): not measured, not priced.
        QCOMPARE(c.gpu("A100-SXM-80GB")->hostOpS, 0.0);
    }

    // The counts: per layer and micro-batch, a constant part and the experts' GEMMs (two
    // forward, four backward per expert), with their activations quantized per expert in FP8.
    void countsPerExpert()
    {
        const StackProfile &mcore = *findStack("megatron-core");
        GpuSpec gpu;
        gpu.hostOpS = 10e-6;
        const MoeHostTime bf16 = moeHostTime(mcore, gpu, 16, false, false);
        const MoeHostTime fp8 = moeHostTime(mcore, gpu, 16, true, false);
        RAILYARD_COMPARE_NEAR(bf16.beforeWaitS, 20 * 10e-6, 1e-9);
        RAILYARD_COMPARE_NEAR(bf16.afterWaitS, (20 + 16 * 2) * 10e-6, 1e-9);
        RAILYARD_COMPARE_NEAR(bf16.backwardS, (50 + 16 * 4) * 10e-6, 1e-9);
        RAILYARD_COMPARE_NEAR(fp8.afterWaitS - bf16.afterWaitS, 16 * 2 * 10e-6, 1e-9);
        RAILYARD_COMPARE_NEAR(fp8.backwardS - bf16.backwardS, 16 * 2 * 10e-6, 1e-9);
        // Twice the experts per GPU: twice the per-expert launches.
        const MoeHostTime twice = moeHostTime(mcore, gpu, 32, true, 0.0);
        RAILYARD_COMPARE_NEAR(twice.afterWaitS - fp8.afterWaitS, 16 * 4 * 10e-6, 1e-9);
        // Full recomputation runs the forward again in the backward, its wait included.
        const MoeHostTime again = moeHostTime(mcore, gpu, 16, true, 1.0);
        RAILYARD_COMPARE_NEAR(again.backwardS - fp8.backwardS,
                              fp8.beforeWaitS + fp8.afterWaitS,
                              1e-9);
        // Stacks whose launches were not counted, and hosts not measured, price nothing.
        QVERIFY(!moeHostTime(*findStack("torchtitan"), gpu, 16, true, 0.0).priced());
        QVERIFY(!moeHostTime(mcore, GpuSpec{}, 16, true, 0.0).priced());
    }

    // The layer runs at the slower of GPU and host on each side of the wait; where the GPU is
    // slower nothing changes.
    void layerAtTheHostsPace()
    {
        LayerTimes t;
        t.forward = 3e-3;
        t.expertForward = 1e-3;
        t.backward = 6e-3;
        MoeHostTime h;
        h.beforeWaitS = 1e-3;  // under the 2 ms before the wait
        h.afterWaitS = 2.5e-3; // over the experts' 1 ms
        h.backwardS = 5e-3;    // under the backward's 6 ms
        LayerTimes host = t;
        applyMoeHostTime(host, h);
        RAILYARD_COMPARE_NEAR(host.forward, 2e-3 + 2.5e-3, 1e-12);
        RAILYARD_COMPARE_NEAR(host.hostWaitForward, 1.5e-3, 1e-12);
        QCOMPARE(host.backward, t.backward);
        QCOMPARE(host.hostWaitBackward, 0.0);
        h.backwardS = 8e-3;
        applyMoeHostTime(host = t, h);
        RAILYARD_COMPARE_NEAR(host.backward, 8e-3, 1e-12);
        RAILYARD_COMPARE_NEAR(host.hostWaitBackward, 2e-3, 1e-12);
    }

    // End to end: Qwen3 30B-A3B at one micro-batch on 8 B200 with Megatron-Core is host-bound
    // (16 experts per GPU, each a few microseconds of GPU work per GEMM), and the evaluation
    // says so; the generic stack (launches not counted) is not. Larger micro-batches give the
    // GPU more work per launch, so the host costs a smaller share of the step.
    void qwenOnB200IsHostBoundAtOneMicroBatch()
    {
        const Evaluation mcore = evaluateText(qwenLayout("B200", 1, 8, 8, 8, 1, "megatron-core"));
        const Evaluation plain = evaluateText(qwenLayout("B200", 1, 8, 8, 8, 1, ""));
        QVERIFY2(mcore.ok && plain.ok, mcore.error.c_str());
        QVERIFY(mentions(mcore, "the dispatcher waits on the GPU once per layer forward"));
        QVERIFY(mentions(plain, "is not priced for this stack"));
        // ... and warns, with the wait as the warning's cost and what hides it.
        const auto hostBound = [](const Evaluation &e) {
            return std::find_if(e.warnings.begin(), e.warnings.end(), [](const Warning &w) {
                return w.code == "moe-host-bound";
            });
        };
        const auto w = hostBound(mcore);
        QVERIFY(w != mcore.warnings.end());
        QVERIFY(w->costS > 0.1 * mcore.stepTimeS && w->costS < mcore.stepTimeS);
        QVERIFY(w->message.find("16 experts per GPU") != std::string::npos);
        QVERIFY(w->message.find("Larger micro-batches") != std::string::npos);
        QVERIFY(hostBound(plain) == plain.warnings.end());
        const double share1 = mcore.stepTimeS / plain.stepTimeS - 1;
        QVERIFY2(share1 > 0.3, qPrintable(QString::number(share1)));
        const Evaluation mcore8 = evaluateText(qwenLayout("B200", 1, 8, 8, 8, 8, "megatron-core"));
        const Evaluation plain8 = evaluateText(qwenLayout("B200", 1, 8, 8, 8, 8, ""));
        const double share8 = mcore8.stepTimeS / plain8.stepTimeS - 1;
        QVERIFY2(share8 < share1 / 2, qPrintable(QString::number(share8)));
        QVERIFY(hostBound(mcore8) == mcore8.warnings.end()
                || hostBound(mcore8)->costS
                           < hostBound(mcore)->costS * mcore8.stepTimeS / mcore.stepTimeS);
        // Grace launches each operation 2.75x slower than the Xeon: the same job on GB200
        // waits longer on its host.
        const Evaluation grace = evaluateText(qwenLayout("GB200", 2, 4, 8, 8, 1, "megatron-core"));
        const Evaluation gracePlain = evaluateText(qwenLayout("GB200", 2, 4, 8, 8, 1, ""));
        QVERIFY(grace.stepTimeS / gracePlain.stepTimeS - 1 > share1);
    }
};

QTEST_APPLESS_MAIN(TestHostLaunch)
#include "tst_hostlaunch.moc"
