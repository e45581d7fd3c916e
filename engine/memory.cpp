#include "memory.h"

#include <algorithm>

namespace railyard::engine {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
} // namespace

double usableHbmGiB(const GpuSpec &gpu)
{
    return gpu.hbmGB * 1e9 / kGiB;
}

std::vector<MemoryBreakdown> stageMemory(const ModelDims &m,
                                         const TrainingConfig &t,
                                         const MemoryShape &s)
{
    const OptimizerConfig &opt = t.optimizer;
    const int tp = s.tp, cp = s.cp, pp = s.pp, vp = s.vp, dp = s.dp, ep = s.ep, etp = s.etp;
    const bool sp = s.sequenceParallel;
    const int micro = s.microBatches;
    const double attnParams = m.attentionParamsPerLayer();
    const double denseMlp = m.mlpParamsPerLayer(m.ffn);
    const double sharedMlp = m.isMoe() ? m.mlpParamsPerLayer(m.expertFfn) * m.sharedExperts : 0;
    const double expertMlp = m.isMoe() ? m.mlpParamsPerLayer(m.expertFfn) * m.experts : 0;
    const double embed = double(m.vocab) * m.hidden;
    const double T = double(t.microBatch) * t.seqLen / cp;
    const double h = m.hidden;
    // Activations kept for backward, per layer and micro-batch, in bytes per token, after
    // Korthikanti et al. (2022), generalised to GQA and gated MLPs: attention 11h (the QKV input
    // 2h, Q and K 2(hq + hkv), V 2hkv, the projection input 2hq, a dropout mask h), MLP 19h for
    // a 4h GeLU MLP (input 2h, fc1 output, activation output, mask h), the two norms' inputs 4h.
    // With sequence parallelism everything is split over TP; without it the norms, dropouts and
    // block inputs are not. Materialised attention without recomputation keeps 5 x heads x s
    // bytes per token of scores; flash attention keeps none.
    const double hq = double(m.heads) * m.headDim, hkv = double(m.kvHeads) * m.headDim;
    const auto layerActivations = [&](bool moeLayer) {
        const double tokens = T; // per CP rank
        if (t.recompute == Recompute::Full)
            return tokens * h * 2.0 / (sp ? tp : 1); // only the layer input
        const double shard = sp ? tp : 1;
        double replicated = 0, split = 0; // bytes per token
        replicated += 2 * h + h + 4 * h;  // QKV input, attention dropout mask, norm inputs
        split += 2 * (hq + hkv) + 2 * hkv + 2 * hq;
        if (moeLayer) {
            // Each token's top-k copies: the expert input, fc1 output and activation output.
            const double w = double(m.expertFfn) / etp;
            const double up = m.gatedMlp ? 2 * w : w;
            const double copies = double(m.topK) * etp / shard; // per token on this rank
            replicated += 2 * h + h;
            double moeBytes = copies * (2 * h + 2 * up + 2 * w);
            if (m.sharedExperts > 0) {
                const double sw = double(m.expertFfn) * m.sharedExperts;
                moeBytes += (2 * (m.gatedMlp ? 2 * sw : sw) + 2 * sw) / tp;
            }
            return tokens * (replicated / shard + split / tp + moeBytes);
        }
        const double up = m.gatedMlp ? 2.0 * m.ffn : double(m.ffn);
        replicated += 2 * h + h; // MLP input, MLP dropout mask
        split += 2 * up + 2 * m.ffn;
        double bytes = tokens * (replicated / shard + split / tp);
        if (t.attention == AttentionKernel::Materialized && t.recompute == Recompute::None)
            bytes += tokens * 5.0 * m.heads * t.seqLen / tp;
        return bytes;
    };
    const int dpShard = std::max(1, dp * cp);
    const bool distributed = opt.distributed || opt.zeroStage >= 1 || opt.fsdp;
    const bool zero2 = opt.zeroStage >= 2 || opt.fsdp;
    const bool zero3 = opt.zeroStage >= 3 || opt.fsdp;
    const int edp = std::max(1, (tp * cp * dp) / (ep * etp));
    std::vector<MemoryBreakdown> out(static_cast<std::size_t>(pp));
    for (int st = 0; st < pp; ++st) {
        const double nd = s.stageDense[static_cast<std::size_t>(st)];
        const double nm = s.stageMoe[static_cast<std::size_t>(st)];
        const double dense = (nd * (attnParams + denseMlp) + nm * (attnParams + sharedMlp)
                              + ((st == 0 || st == pp - 1) ? embed : 0))
                             / tp;
        const double expert = nm * expertMlp / (ep * etp);
        MemoryBreakdown &mb = out[static_cast<std::size_t>(st)];
        // BF16 weights, gradient buffers (BF16, or FP32), FP32 master weights + Adam moments.
        mb.weightsGiB = (dense / (zero3 ? dpShard : 1) + expert / (zero3 ? edp : 1)) * 2 / kGiB;
        const double gradBytes = opt.gradReduceFp32 ? 4.0 : 2.0;
        mb.gradientsGiB = (dense / (zero2 ? dpShard : 1) + expert / (zero2 ? edp : 1)) * gradBytes
                          / kGiB;
        mb.optimizerGiB = (dense / (distributed ? dpShard : 1) + expert / (distributed ? edp : 1))
                          * 12 / kGiB;
        // In-flight micro-batches: 1F1B keeps up to PP of them on the first stage (more with
        // interleaving), fewer on later stages.
        double inFlight = std::min<double>(micro, pp - st);
        if (vp > 1)
            inFlight = std::min<double>(micro, (pp - st) + double(pp - 1) / vp);
        const double layerAct = nd * layerActivations(false) + nm * layerActivations(true);
        mb.activationsGiB = layerAct * std::max(1.0, inFlight) / kGiB;
        if (st == pp - 1) // logits in FP32 for the loss
            mb.activationsGiB += T * double(m.vocab) / tp * 4 * 2 / kGiB;
        // CUDA context, NCCL buffers, workspace and fragmentation.
        mb.otherGiB = 3.0
                      + 0.05
                                * (mb.weightsGiB + mb.gradientsGiB + mb.optimizerGiB
                                   + mb.activationsGiB);
    }
    return out;
}

} // namespace railyard::engine
