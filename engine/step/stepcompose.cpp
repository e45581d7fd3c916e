#include "base/units.h"
#include "step/stepmodel_p.h"

#include <algorithm>
#include <cmath>

namespace railyard::engine::detail {

void StepModel::composeStep()
{
    const StepTimes st = engine::composeStep(m_setting,
                                             m_runs.data(),
                                             static_cast<int>(m_runs.size()),
                                             m_dense,
                                             m_moe,
                                             m_out,
                                             m_comm,
                                             *m_compute);
    // The collectives that run at once share the links (stepschedule.h).
    m_scheduler.run(m_setting, m_comm, st, m_schedule, m_options.timeline, m_options.shareLinks);
    m_result.exposed = m_schedule.exposed;
    m_result.total = st.total;
    m_result.stepTimeS = m_schedule.stepS;
    m_stageCompute = st.stageCompute;
    m_offloadStallS = st.offloadStallS;
    m_overlapLossS = st.overlapLossS();
}

void StepModel::throughput()
{
    const TrainingConfig &t = m_layout.training;
    const GpuSpec &gpu = m_topo.gpuSpec();
    // The job's GPUs: fewer than the cluster's when GPUs are out (cluster.faults) and the
    // re-formed job leaves some idle.
    const int gpus = m_ranks->worldSize();
    m_result.tokensPerStep = double(t.globalBatch) * t.seqLen;
    const double price = m_layout.cluster.pricePerGpuHour.value_or(gpu.pricePerGpuHour);
    const StepThroughput rate = stepThroughput(m_result.tokensPerStep,
                                               modelFlopsPerStep(m_dims,
                                                                 m_result.tokensPerStep,
                                                                 t.seqLen),
                                               m_result.stepTimeS,
                                               gpus,
                                               m_compute->bf16Peak(),
                                               price);
    m_result.tokensPerS = rate.tokensPerS;
    m_result.tokensPerSPerGpu = rate.tokensPerSPerGpu;
    m_result.modelTflopsPerGpu = rate.modelTflopsPerGpu;
    m_result.mfu = rate.mfu;
    m_result.flopConvention = "model FLOPs as Megatron/NeMo (<= 25.07) count them: 6 x active "
                              "parameters x tokens plus full s^2 attention (not halved for causal "
                              "masks), no recomputation; MFU against the dense BF16 peak ("
                              + formatNumber(gpu.bf16Tflops) + " TFLOP/s)";
    if (t.precision != Precision::Bf16 && gpu.fp8Tflops > 0) {
        m_result.mfuOfFp8Peak = rate.modelTflopsPerGpu / gpu.fp8Tflops;
        m_result.flopConvention += ", FP8 runs too, as Llama 3 and NVIDIA's tables count them "
                                   "(they can pass 100%); "
                                   + formatNumber(100 * m_result.mfuOfFp8Peak, 3)
                                   + "% of the dense FP8 peak (" + formatNumber(gpu.fp8Tflops)
                                   + " TFLOP/s)";
    }
    m_result.costPerStep = rate.costPerStep;
    m_result.costPerMillionTokens = rate.costPerMillionTokens;
    if (gpus < m_topo.gpuCount() && rate.costPerStep > 0) {
        // Idle GPUs of the allocation are paid for all the same.
        m_result.costPerStep = stepCost(price, m_topo.gpuCount(), m_result.stepTimeS);
        m_result.costPerMillionTokens = m_result.costPerStep / m_result.tokensPerStep * 1e6;
        m_result.assumptions.push_back(
                std::to_string(m_topo.gpuCount() - gpus)
                + " GPUs of the cluster run no rank; the cost counts them (an allocation pays "
                  "for its idle GPUs), tokens/s per GPU and MFU do not");
    }
}

MemoryShape StepModel::memoryShape() const
{
    MemoryShape shape;
    shape.tp = m_tp;
    shape.cp = m_cp;
    shape.pp = m_pp;
    shape.vp = m_vp;
    shape.dp = m_dp;
    shape.ep = m_ep;
    shape.etp = m_etp;
    shape.sequenceParallel = m_sp;
    shape.microBatches = m_micro;
    shape.stageDense = m_stageDense;
    shape.stageMoe = m_stageMoe;
    setStackMemory(shape, *m_stack, m_layout.training, m_topo.gpuSpec());
    shape.offloadLayers = m_setting.offloadLayers;
    return shape;
}

void StepModel::memory()
{
    const std::vector<MemoryBreakdown> stages = stageMemory(m_dims,
                                                            m_layout.training,
                                                            memoryShape());
    double worst = 0;
    m_result.memoryGiBPerStage.assign(stages.size(), 0);
    for (std::size_t s = 0; s < stages.size(); ++s) {
        m_result.memoryGiBPerStage[s] = stages[s].totalGiB();
        if (stages[s].totalGiB() > worst) {
            worst = stages[s].totalGiB();
            m_result.memory = stages[s];
        }
    }
    m_result.hbmGiB = usableHbmGiB(m_topo.gpuSpec());
    for (int s = 0; s < m_pp; ++s) {
        const double used = m_result.memoryGiBPerStage[static_cast<std::size_t>(s)];
        if (used > m_result.hbmGiB) {
            std::vector<int> gpus;
            for (int r = 0; r < m_ranks->worldSize(); ++r)
                if (m_ranks->coord(r, Dim::PP) == s)
                    gpus.push_back(m_ranks->gpuOfRank(r));
            warn(Severity::Error,
                 "out-of-memory",
                 (m_pp > 1 ? "stage " + std::to_string(s) : std::string("every GPU"))
                         + " is out of memory: " + formatNumber(used, 3) + " GiB needed, "
                         + formatNumber(m_result.hbmGiB, 3) + " GiB of HBM",
                 gpus);
        }
    }
}

} // namespace railyard::engine::detail
