#include "layout/layout.h"

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
    return p == Precision::Fp8 ? "fp8" : "bf16";
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

const char *toString(AttentionKernel a)
{
    switch (a) {
    case AttentionKernel::Flash: return "flash";
    case AttentionKernel::Materialized: return "materialized";
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

bool Layout::sameContent(const Layout &o) const
{
    return title == o.title && notes == o.notes && cluster == o.cluster && model == o.model
           && training == o.training && parallel == o.parallel && mapping == o.mapping
           && view == o.view;
}

} // namespace railyard::engine
