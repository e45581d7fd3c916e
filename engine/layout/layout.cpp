#include "layout/layout.h"

#include "base/jsoncursor.h"

#include <algorithm>

namespace railyard::engine {

const char *toString(FabricKind kind)
{
    switch (kind) {
    case FabricKind::RailOptimized: return "rail-optimized";
    case FabricKind::SingleSwitch: return "single-switch";
    case FabricKind::ThreeTier: return "three-tier";
    }
    return "rail-optimized";
}

const char *toString(Precision p)
{
    switch (p) {
    case Precision::Bf16: return "bf16";
    case Precision::Fp8: return "fp8";
    case Precision::Fp4: return "fp4";
    }
    return "bf16";
}

double bytesPerValue(Precision p)
{
    switch (p) {
    case Precision::Bf16: return 2.0;
    case Precision::Fp8: return 1.0;
    case Precision::Fp4: return 0.5 + 1.0 / 16.0;
    }
    return 2.0;
}

std::optional<Precision> precisionFromString(const std::string &s)
{
    for (Precision p : {Precision::Bf16, Precision::Fp8, Precision::Fp4})
        if (s == toString(p))
            return p;
    return std::nullopt;
}

const char *toString(ServingPhase p)
{
    switch (p) {
    case ServingPhase::Both: return "both";
    case ServingPhase::Prefill: return "prefill";
    case ServingPhase::Decode: return "decode";
    }
    return "both";
}

const char *toString(SpeculativeMethod m)
{
    switch (m) {
    case SpeculativeMethod::Mtp: return "mtp";
    case SpeculativeMethod::Eagle: return "eagle";
    case SpeculativeMethod::Draft: return "draft";
    }
    return "mtp";
}

const std::vector<std::pair<std::string, unsigned>> &recomputeModuleNames()
{
    static const std::vector<std::pair<std::string, unsigned>> names = {
            {"core_attn", kRecomputeCoreAttn},
            {"layernorm", kRecomputeLayernorm},
            {"moe_act", kRecomputeMoeAct},
            {"moe", kRecomputeMoe},
            {"mlp", kRecomputeMlp},
            {"mla_up_proj", kRecomputeMlaUpProj},
            {"shared_experts", kRecomputeSharedExperts},
    };
    return names;
}

std::string recomputeModulesText(unsigned modules)
{
    std::string text;
    for (const auto &[name, bit] : recomputeModuleNames())
        if (modules & bit)
            text += (text.empty() ? "" : "+") + name;
    return text;
}

std::string nonDefaultRecomputeModules(const TrainingConfig &t)
{
    if (t.recompute != Recompute::Selective || t.recomputeModules == kDefaultRecomputeModules)
        return {};
    return t.recomputeModules ? recomputeModulesText(t.recomputeModules) : "nothing";
}

const char *toString(Recompute r)
{
    switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    }
    return "selective";
}

double fullRecomputeShare(const TrainingConfig &t, int layers, int pp)
{
    if (t.recompute != Recompute::Full)
        return 0.0;
    const double perStage = double(layers) / std::max(1, pp);
    return t.recomputeLayers <= 0 || perStage <= 0 ? 1.0
                                                   : std::min(1.0, t.recomputeLayers / perStage);
}

int zeroShardRanks(const OptimizerConfig &o, int dataRanks)
{
    return o.shardGroup > 0 && dataRanks % o.shardGroup == 0 ? o.shardGroup : dataRanks;
}

const char *toString(AttentionKernel a)
{
    switch (a) {
    case AttentionKernel::Flash: return "flash";
    case AttentionKernel::Materialized: return "materialized";
    case AttentionKernel::FlashAttention1: return "fa1";
    case AttentionKernel::FlashAttentionTriton: return "triton";
    case AttentionKernel::FlashAttention2: return "fa2";
    case AttentionKernel::FlashAttention3: return "fa3";
    case AttentionKernel::Cudnn: return "cudnn";
    }
    return "flash";
}

bool attentionKernelFromString(const std::string &name, AttentionKernel &out)
{
    for (AttentionKernel a : {AttentionKernel::Flash,
                              AttentionKernel::Materialized,
                              AttentionKernel::FlashAttention1,
                              AttentionKernel::FlashAttentionTriton,
                              AttentionKernel::FlashAttention2,
                              AttentionKernel::FlashAttention3,
                              AttentionKernel::Cudnn})
        if (name == toString(a)) {
            out = a;
            return true;
        }
    return false;
}

const char *toString(MoeDispatcher d)
{
    return d == MoeDispatcher::DeepEP ? "deepep" : "alltoall";
}

int ClusterConfig::effectiveServersPerRack() const
{
    if (serversPerRack)
        return *serversPerRack;
    // A rack-scale NVLink domain (NVL72) is its own rack; HGX servers go four to a rack.
    return nvlinkDomain > gpusPerNode ? nodesPerDomain() : 4;
}

int ClusterConfig::nicsPerNode() const
{
    return static_cast<int>(std::lround(nic.perGpu * gpusPerNode));
}

int Layout::dataParallel() const
{
    if (parallel.dp)
        return *parallel.dp;
    const std::int64_t denom = sizeProduct({parallel.tp, parallel.cp, parallel.pp});
    const std::int64_t gpus = cluster.gpuCount();
    return denom > 0 && gpus >= denom ? static_cast<int>(gpus / denom) : 1;
}

int Layout::attentionDataParallel() const
{
    if (!parallel.attentionDp)
        return 1;
    return *parallel.attentionDp == 0 ? parallel.tp : *parallel.attentionDp;
}

bool Layout::sameContent(const Layout &o) const
{
    return title == o.title && notes == o.notes && cluster == o.cluster && model == o.model
           && training == o.training && serving == o.serving && parallel == o.parallel
           && mapping == o.mapping && view == o.view;
}

} // namespace railyard::engine
