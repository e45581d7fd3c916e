#include "base/units.h"
#include "step/stepmodel_p.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine::detail {

void StepModel::composeStep()
{
    const StepTimes st = engine::composeStep(setting,
                                             runs.data(),
                                             static_cast<int>(runs.size()),
                                             dense,
                                             moe,
                                             out,
                                             c,
                                             *cm);
    e.exposed = st.exposed;
    e.total = st.total;
    e.stepTimeS = st.exposed.sum();
    stageCompute = st.stageCompute;
}

void StepModel::throughput()
{
    const TrainingConfig &t = layout.training;
    const GpuSpec &gpu = topo.gpuSpec();
    const int gpus = topo.gpuCount();
    e.tokensPerStep = double(t.globalBatch) * t.seqLen;
    const double price = layout.cluster.pricePerGpuHour.value_or(gpu.pricePerGpuHour);
    const StepThroughput rate = stepThroughput(e.tokensPerStep,
                                               modelFlopsPerStep(m, e.tokensPerStep, t.seqLen),
                                               e.stepTimeS,
                                               gpus,
                                               cm->bf16Peak(),
                                               price);
    e.tokensPerS = rate.tokensPerS;
    e.tokensPerSPerGpu = rate.tokensPerSPerGpu;
    e.modelTflopsPerGpu = rate.modelTflopsPerGpu;
    e.mfu = rate.mfu;
    e.flopConvention = "model FLOPs as Megatron/NeMo (<= 25.07) count them: 6 x active "
                       "parameters x tokens plus full s^2 attention (not halved for causal "
                       "masks), no recomputation; MFU against the dense BF16 peak ("
                       + formatNumber(gpu.bf16Tflops) + " TFLOP/s)";
    e.costPerStep = rate.costPerStep;
    e.costPerMillionTokens = rate.costPerMillionTokens;
}

void StepModel::memory()
{
    MemoryShape shape;
    shape.tp = tp;
    shape.cp = cp;
    shape.pp = pp;
    shape.vp = vp;
    shape.dp = dp;
    shape.ep = ep;
    shape.etp = etp;
    shape.sequenceParallel = sp;
    shape.microBatches = micro;
    shape.stageDense = stageDense;
    shape.stageMoe = stageMoe;
    shape.optimizerBytesPerParam = stack->optimizerBytesPerParam;
    const std::vector<MemoryBreakdown> stages = stageMemory(m, layout.training, shape);
    double worst = 0;
    e.memoryGiBPerStage.assign(stages.size(), 0);
    for (std::size_t s = 0; s < stages.size(); ++s) {
        e.memoryGiBPerStage[s] = stages[s].totalGiB();
        if (stages[s].totalGiB() > worst) {
            worst = stages[s].totalGiB();
            e.memory = stages[s];
        }
    }
    e.hbmGiB = usableHbmGiB(topo.gpuSpec());
    for (int s = 0; s < pp; ++s) {
        const double used = e.memoryGiBPerStage[static_cast<std::size_t>(s)];
        if (used > e.hbmGiB) {
            std::vector<int> gpus;
            for (int r = 0; r < ranks->worldSize(); ++r)
                if (ranks->coord(r, Dim::PP) == s)
                    gpus.push_back(ranks->gpuOfRank(r));
            warn(Severity::Error,
                 "out-of-memory",
                 (pp > 1 ? "stage " + std::to_string(s) : std::string("every GPU"))
                         + " is out of memory: " + formatNumber(used, 3) + " GiB needed, "
                         + formatNumber(e.hbmGiB, 3) + " GiB of HBM",
                 gpus);
        }
    }
}

} // namespace railyard::engine::detail
