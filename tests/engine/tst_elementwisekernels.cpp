// Issue 19, point 1 (memory-bound and fixed costs): norms, the optimizer's update and the
// layer's element-wise work against published kernel benchmarks (tests/data/kernels/norms.csv,
// optimizer.csv) and the code of the stacks that run them. GEMMs and clocks: tst_kernels.
#include "layout/catalog.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"
#include "step/compute.h"
#include "step/stepcost.h"

#include "comparenear.h"
#include "kernels/kernelrows.h"
#include "throughput/publishedruns.h"

#include <QFile>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

using namespace railyard::engine;

using namespace railyard::engine;
using namespace railyard::kerneltest;

class TestElementwiseKernels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Memory-bound kernels: RMSNorm / LayerNorm at the catalog's HBM efficiency plus one launch
    // (cuDNN's fused kernels), and PyTorch's own at the element-wise factors of the stacks that
    // run them (torchtitan: ComputeModel::elementwiseForward / Backward).
    void memoryBound()
    {
        const QList<QStringList> rows = readCsv(QStringLiteral("norms.csv"), 7);
        QCOMPARE(int(rows.size()), 168); // the rows of tests/data/kernels/norms.csv
        const StackProfile *titan = findStack("torchtitan");
        QVERIFY(titan);
        std::map<QString, std::vector<double>> errors;
        for (const QStringList &c : rows) {
            const GpuSpec &gpu = gpuOf(c[0]);
            const bool pytorch = c[1] == QLatin1String("pytorch");
            const bool fwd = c[5] == QLatin1String("fwd");
            KernelChoice k;
            if (pytorch) {
                k.elementwiseForward = titan->elementwiseForward;
                k.elementwiseBackward = titan->elementwiseBackward;
            }
            const ComputeModel m(gpu, Precision::Bf16, k);
            const double bytes = (fwd ? 4.0 : 6.0) * c[3].toDouble() * c[4].toDouble();
            const double s = (fwd ? m.elementwiseForward(bytes) : m.normBackward(bytes))
                             + ComputeModel::kKernelLaunchS;
            const double predicted = bytes / s / 1e9;
            const double error = predicted / c[6].toDouble() - 1.0;
            // Bounded: the training-scale tensors (64 MB or more moved). Below, one kernel is
            // latency bound (a few us of launch, grid sync and, backward, the weight-gradient
            // reduction) and the model's single launch term prices it fast: printed, not bounded.
            const QString size = bytes >= 64e6 ? QString() : QStringLiteral(" small");
            errors[c[0] + QLatin1Char('/') + c[1] + QLatin1Char(' ') + c[5] + size].push_back(error);
            qInfo("%-9s %-8s %-10s %7s x %6s %s: engine %7.0f GB/s, measured %7.0f, %+6.1f%%",
                  qPrintable(c[0]),
                  qPrintable(c[1]),
                  qPrintable(c[2]),
                  qPrintable(c[3]),
                  qPrintable(c[4]),
                  qPrintable(c[5]),
                  predicted,
                  c[6].toDouble(),
                  100 * error);
        }
        // The catalog's backward HBM efficiency is the median of cuDNN's norm backward at 64 MB
        // or more moved, launch removed (to 0.005): H200's for Hopper, GB200's for GB200 and
        // B200, GB300's for GB300.
        std::map<QString, std::vector<double>> backward;
        for (const QStringList &c : rows) {
            const double bytes = 6.0 * c[3].toDouble() * c[4].toDouble();
            if (c[1] != QLatin1String("cudnn") || c[5] != QLatin1String("bwd") || bytes < 64e6)
                continue;
            const double s = bytes / (c[6].toDouble() * 1e9) - ComputeModel::kKernelLaunchS;
            backward[c[0]].push_back(bytes / s / (gpuOf(c[0]).hbmTBPerS * 1e12));
        }
        const auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            const size_t n = v.size();
            return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        };
        for (const auto &[measured, gpus] :
             {std::pair{QStringLiteral("H200-SXM"), QStringList{"H100-SXM", "H800-SXM", "H200-SXM"}},
              std::pair{QStringLiteral("GB200"), QStringList{"GB200", "B200"}},
              std::pair{QStringLiteral("GB300"), QStringList{"GB300"}}}) {
            const double m = median(backward[measured]);
            qInfo("%s cuDNN norm backward: %.4f of HBM (median of %zu rows)",
                  qPrintable(measured),
                  m,
                  backward[measured].size());
            for (const QString &g : gpus)
                QVERIFY2(std::abs(gpuOf(g).memoryEfficiencyBackward - m) <= 0.0051,
                         qPrintable(g + QStringLiteral(": memory_efficiency_backward ")
                                    + QString::number(gpuOf(g).memoryEfficiencyBackward)
                                    + QStringLiteral(", norms.csv gives ")
                                    + QString::number(m, 'f', 4)));
        }
        // Today's medians plus 3 points (large tensors) or 10 (small ones). PyTorch's backward
        // runs at the stacks' 0.45 factor of the backward's bandwidth.
        const auto b = [](double today, bool small) { return today + (small ? 0.10 : 0.03); };
        checkGroups(errors,
                    {{QStringLiteral("H200-SXM/cudnn fwd"), b(0.025, false)},
                     {QStringLiteral("H200-SXM/cudnn bwd"), b(0.074, false)},
                     {QStringLiteral("H200-SXM/pytorch fwd"), b(0.077, false)},
                     {QStringLiteral("H200-SXM/pytorch bwd"), b(0.051, false)},
                     {QStringLiteral("GB200/cudnn fwd"), b(0.017, false)},
                     {QStringLiteral("GB200/cudnn bwd"), b(0.131, false)},
                     {QStringLiteral("GB200/pytorch fwd"), b(0.083, false)},
                     {QStringLiteral("GB200/pytorch bwd"), b(0.113, false)},
                     {QStringLiteral("GB300/cudnn fwd"), b(0.018, false)},
                     {QStringLiteral("GB300/cudnn bwd"), b(0.115, false)},
                     {QStringLiteral("GB300/pytorch fwd"), b(0.074, false)},
                     {QStringLiteral("GB300/pytorch bwd"), b(0.093, false)},
                     {QStringLiteral("H200-SXM/cudnn fwd small"), b(0.068, true)},
                     {QStringLiteral("H200-SXM/cudnn bwd small"), b(0.706, true)},
                     {QStringLiteral("H200-SXM/pytorch fwd small"), b(0.712, true)},
                     {QStringLiteral("H200-SXM/pytorch bwd small"), b(2.014, true)},
                     {QStringLiteral("GB200/cudnn fwd small"), b(0.430, true)},
                     {QStringLiteral("GB200/cudnn bwd small"), b(0.994, true)},
                     {QStringLiteral("GB200/pytorch fwd small"), b(1.745, true)},
                     {QStringLiteral("GB200/pytorch bwd small"), b(2.991, true)},
                     {QStringLiteral("GB300/cudnn fwd small"), b(0.423, true)},
                     {QStringLiteral("GB300/cudnn bwd small"), b(0.915, true)},
                     {QStringLiteral("GB300/pytorch fwd small"), b(1.643, true)},
                     {QStringLiteral("GB300/pytorch bwd small"), b(2.933, true)}});
    }

    // The optimizer's update on its own: a fused Adam (torch `fused=True`) over one 128-way shard
    // of Llama 2 70B (tests/data/kernels/optimizer.csv), priced as the engine prices the step's
    // update (adamUpdateBytes at the catalog's HBM efficiency, one launch). The kernel reaches
    // 0.56-0.63 of the H100 SXM's 3.35 TB/s where the norms reach 0.78-0.80 (norms.csv), so the
    // engine prices it 21-29% fast; not adopted (the PR's H100 is a 500 W HBM2e part of unstated
    // bandwidth, and the whole step is at most 1.5% of a published run's step): the bound is today's
    // median plus 3 points, and the rows fix the sign.
    void optimizerUpdate()
    {
        const QList<QStringList> rows = readCsv(QStringLiteral("optimizer.csv"), 7);
        QCOMPARE(int(rows.size()), 4); // the rows of tests/data/kernels/optimizer.csv
        std::map<QString, std::vector<double>> errors;
        for (const QStringList &c : rows) {
            const ComputeModel m(gpuOf(c[0]), Precision::Bf16);
            const double bytes = c[2].toDouble()
                                 * adamUpdateBytes(c[3].toDouble(),
                                                   c[4].toDouble(),
                                                   c[5].toDouble());
            const double s = m.memory(bytes) + ComputeModel::kKernelLaunchS;
            const double measured = c[6].toDouble() * 1e-3;
            const double error = s / measured - 1.0; // in time: negative where the engine is fast
            errors[c[0] + QStringLiteral(" fused Adam")].push_back(error);
            qInfo("%-9s %-26s %.0f B/param: engine %.3f ms, measured %.3f ms (%.2f TB/s), "
                  "%+6.1f%%",
                  qPrintable(c[0]),
                  qPrintable(c[1]),
                  bytes / c[2].toDouble(),
                  1e3 * s,
                  1e3 * measured,
                  bytes / measured / 1e12,
                  100 * error);
            QVERIFY2(s < measured, "the engine prices the fused update fast on every row");
        }
        checkGroups(errors, {{QStringLiteral("H100-SXM fused Adam"), 0.246 + 0.03}});
        // The step's traffic by Megatron-Core's parts: the distributed optimizer shards all but
        // the zeroing of the full FP32 gradient buffer; ZeRO-2/3 keep only the shard.
        const double p = 1e9;
        const OptimizerTraffic dist = optimizerTraffic(p, 48, 4, 12, true);
        QCOMPARE(dist.zeroGrads, 4 * p);
        QCOMPARE(dist.castGrads, 0.0);
        RAILYARD_COMPARE_NEAR(dist.total(), 4 * p + (4 + 28 + 6) * p / 48, 1e-9);
        const OptimizerTraffic ddp = optimizerTraffic(p, 1, 4, 12, true);
        RAILYARD_COMPARE_NEAR(ddp.total(), (4 + 4 + 28 + 6) * p, 1e-9);
        // NeMo: BF16 gradients cast to FP32 on the shard, BF16 moments (8 bytes of state).
        const OptimizerTraffic nemo = optimizerTraffic(p, 8, 2, 8, true);
        RAILYARD_COMPARE_NEAR(nemo.total(), 2 * p + (6 + 4 + 20 + 6) * p / 8, 1e-9);
        const OptimizerTraffic zero3 = optimizerTraffic(p, 8, 2, 12, false);
        QCOMPARE(zero3.zeroGrads, 2 * p / 8);
    }

    // Megatron-Core runs gpt-oss's operations beyond Llama's as kernels of their own: the
    // GLU's clamp (16 bytes per activation element forward, 30 backward), the experts' second
    // bias added expert by expert (12 per output element each way) and YaRN's unfused rotary
    // embedding (20 per query and key element forward, 40 backward), and the attention
    // output's bias (4 per hidden element); priced at the GPU's memory rate with a launch per
    // kernel. A stack that fuses them (torchtitan here) pays nothing extra.
    void unfusedModelExtras()
    {
        QVERIFY(findStack("megatron-core")->unfusedModelExtras);
        QVERIFY(findStack("nemo")->unfusedModelExtras);
        QVERIFY(!findStack("torchtitan")->unfusedModelExtras);
        const GpuSpec &gb300 = gpuOf(QStringLiteral("GB300"));
        KernelChoice k = kernelChoice(*findStack("megatron-core"), AttentionKernel::Flash, gb300);
        const ComputeModel fused(gb300, Precision::Bf16, [k]() mutable {
            k.unfusedModelExtras = false;
            return k;
        }());
        const ComputeModel megatron(gb300, Precision::Bf16, k);
        const ModelDims oss = *findModelPreset("gpt-oss-120b");
        LayerShard s;
        s.tp = 1;
        s.sequenceParallel = false;
        s.microBatch = 2;
        s.seqLen = 8192;
        s.ep = 64;
        s.recompute = Recompute::None;
        const LayerTimes a = layerTimes(oss, true, s, fused);
        const LayerTimes b = layerTimes(oss, true, s, megatron);
        const double T = 2 * 8192.0, h = 2880, w = 2880;
        const double copies = T * 4; // top-4, balanced
        const double qk = (64 + 8) * 64.0;
        const double forwardBytes = copies * w * 16 + copies * h * 12 + T * qk * 20 + T * h * 4;
        const double backwardBytes = copies * w * 30 + copies * h * 12 + T * qk * 40 + T * h * 4;
        const int forwardKernels = 3 + (2 * 2 + 1) + 12 + 1, backwardKernels = 7 + 5 + 12 + 1;
        RAILYARD_COMPARE_NEAR(b.forward - a.forward,
                              megatron.memory(forwardBytes)
                                      + forwardKernels * ComputeModel::kKernelLaunchS,
                              1e-9);
        RAILYARD_COMPARE_NEAR(b.backward - a.backward,
                              megatron.memory(backwardBytes)
                                      + backwardKernels * ComputeModel::kKernelLaunchS,
                              1e-9);
        qInfo("gpt-oss-120b MoE layer on GB300 (2 x 8192 tokens, 2 experts a GPU): %.2f ms "
              "forward and backward as fused, %.2f ms as Megatron-Core runs it",
              1e3 * (a.forward + a.backward),
              1e3 * (b.forward + b.backward));
        // A Llama-style model has none of them.
        const ModelDims qwen = *findModelPreset("qwen3-30b-a3b");
        RAILYARD_COMPARE_NEAR(layerTimes(qwen, true, s, megatron).forward,
                              layerTimes(qwen, true, s, fused).forward,
                              1e-12);
    }

    // PyTorch's async TP (torchtitan) ends each forward reduce-scatter with a torch.sum of the
    // TP ranks' BF16 partials, a kernel of its own at 33% of HBM's peak (pytorch/pytorch#191803:
    // 23-43%): the attention output's and the FFN's second projection's, each reading the m x h
    // partials and writing the 1/tp shard. Without TP overlap, or where the collective reduces
    // as it moves (Transformer Engine), there is none; backward is unchanged.
    void asyncTpSeparateReduce()
    {
        QVERIFY(findStack("torchtitan")->tpOverlapSeparateReduce);
        QVERIFY(!findStack("megatron-core")->tpOverlapSeparateReduce);
        const GpuSpec &h100 = gpuOf(QStringLiteral("H100-SXM"));
        const ComputeModel c(h100,
                             Precision::Bf16,
                             kernelChoice(*findStack("torchtitan"), AttentionKernel::Flash, h100));
        const ModelDims llama = *findModelPreset("llama3-70b");
        LayerShard s;
        s.tp = 8;
        s.microBatch = 2;
        s.seqLen = 8192;
        s.recompute = Recompute::None;
        s.tpOverlap = true;
        const LayerTimes fused = layerTimes(llama, false, s, c);
        s.tpOverlapSeparateReduce = true;
        const LayerTimes separate = layerTimes(llama, false, s, c);
        const double T = 2 * 8192.0, h = 8192;
        const double bytes = 2 * T * h * 2 * (1 + 1.0 / 8);
        const double expected = bytes / (h100.hbmTBPerS * 1e12 * 0.33)
                                + 2 * ComputeModel::kKernelLaunchS;
        RAILYARD_COMPARE_NEAR(separate.forward - fused.forward, expected, 1e-9);
        RAILYARD_COMPARE_NEAR(separate.backward, fused.backward, 1e-12);
        qInfo("llama3-70b layer, TP 8, 2 x 8192 tokens on H100: the two reductions %.2f ms of a "
              "%.2f ms forward",
              1e3 * expected,
              1e3 * separate.forward);
        // Without TP overlap the reduce-scatters are NCCL's, which reduce as they move.
        s.tpOverlap = false;
        const LayerTimes nccl = layerTimes(llama, false, s, c);
        s.tpOverlapSeparateReduce = false;
        RAILYARD_COMPARE_NEAR(nccl.forward, layerTimes(llama, false, s, c).forward, 1e-12);
    }

    // What an eager stack's element-wise kernels cost follows the model: Llama's RMSNorm is
    // seven PyTorch operations (36 bytes an element) and its rotary embedding three more on the
    // queries and keys; a GPT-style model's LayerNorm is F.layer_norm, one kernel (4 bytes),
    // with positions added once at the embedding (MPT, GPT-3, OPT). And llm-foundry's loss is
    // flash-attn's fused cross-entropy over the BF16 logits: 2 bytes a logit forward, 4
    // backward, at HBM's rate, where the FP32 path moves 12 and 24 at the element-wise rate.
    void eagerNormsPositionsAndLoss()
    {
        const GpuSpec &h100 = gpuOf(QStringLiteral("H100-SXM"));
        const StackProfile &composer = *findStack("composer");
        QVERIFY(composer.eagerElementwise && composer.fusedCrossEntropy);
        QVERIFY(!findStack("torchtitan")->fusedCrossEntropy);
        const ComputeModel eager(h100,
                                 Precision::Bf16,
                                 kernelChoice(composer, AttentionKernel::Flash, h100, false));
        QVERIFY(eager.kernels().eagerElementwise);
        ModelDims mpt = *findModelPreset("gpt3-5b"); // GPT-style: LayerNorm, learned positions
        QVERIFY(mpt.layerNorm && !mpt.rotary);
        ModelDims rms = mpt;
        rms.layerNorm = false;
        rms.rotary = true;
        const LayerShard s{.tp = 1,
                           .sequenceParallel = false,
                           .microBatch = 4,
                           .seqLen = 2048,
                           .recompute = Recompute::None};
        const double T = 4 * 2048.0, h = mpt.hidden, qk = 2.0 * mpt.heads * mpt.headDim;
        // Two norms (36 - 4 bytes each) and RoPE's 20 on the queries and keys; 4 + 2 + 4
        // kernels more (each RMSNorm 4, RoPE 2; the MLP is GeLU in both).
        const double forwardBytes = 2 * T * h * 32 + T * qk * 20;
        const LayerTimes a = layerTimes(mpt, false, s, eager), b = layerTimes(rms, false, s, eager);
        RAILYARD_COMPARE_NEAR(b.forward - a.forward,
                              eager.memory(forwardBytes) + 10 * ComputeModel::kKernelLaunchS,
                              1e-9);
        RAILYARD_COMPARE_NEAR(b.backward - a.backward,
                              eager.memory(2 * forwardBytes) + 20 * ComputeModel::kKernelLaunchS,
                              1e-9);
        // The loss: the same output layer with and without the fused kernel.
        LayerShard fusedLoss = s;
        fusedLoss.fusedCrossEntropy = true;
        const LayerTimes fp32 = outputLayerTimes(mpt, s, eager);
        const LayerTimes fused = outputLayerTimes(mpt, fusedLoss, eager);
        const double logits = T * mpt.vocab;
        RAILYARD_COMPARE_NEAR(fp32.forward - fused.forward,
                              eager.elementwiseForward(logits * 12) - eager.memory(logits * 2),
                              1e-9);
        RAILYARD_COMPARE_NEAR(fp32.backward - fused.backward,
                              eager.elementwiseBackward(logits * 24) - eager.memory(logits * 4),
                              1e-9);
        qInfo("GPT 5B output layer and loss on H100 (4 x 2048 tokens, vocab %d): %.2f ms "
              "forward and backward in FP32 kernels, %.2f ms fused",
              mpt.vocab,
              1e3 * (fp32.forward + fp32.backward),
              1e3 * (fused.forward + fused.backward));
        QVERIFY(fused.forward + fused.backward < 0.9 * (fp32.forward + fp32.backward));
    }
};

QTEST_APPLESS_MAIN(TestElementwiseKernels)
#include "tst_elementwisekernels.moc"
