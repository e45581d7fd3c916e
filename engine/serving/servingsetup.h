#pragma once

// A serving layout resolved for the formulas: the model, the stack, the precisions and the
// pools of identical instances, and each pool's GPU groups on the cluster.

#include "layout/layout.h"
#include "layout/servingstack.h"
#include "layout/transformer.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace railyard::engine {

// One pool of identical serving instances (replicas): the only pool of an aggregated
// deployment, or the prefill or the decode pool of a disaggregated one. An instance is TP x PP
// GPUs; attention runs at TP / attention DP on each attention-DP rank group's own requests;
// experts are split EP x expert-TP = TP ways inside each stage; dense MLPs run at the
// attention's TP when attention is data-parallel (replicated, as SGLang's moe_dense_tp_size 1),
// else at TP.
struct ServingPoolShape
{
    const char *role = "serving"; // "serving", "prefill", "decode"
    int tp = 1, ep = 1, pp = 1, replicas = 1;
    int attentionDp = 1;
    int firstRank = 0; // the pool's first rank among the layout's ranks
    int etp() const { return tp / ep; }
    int attentionTp() const { return tp / attentionDp; }
    int mlpTp() const { return attentionDp > 1 ? attentionTp() : tp; }
    int gpusPerReplica() const { return tp * pp; }
    int gpus() const { return tp * pp * replicas; }
};

struct ServingSetup
{
    ModelDims model;
    std::optional<ModelDims> draftModel; // speculative decoding with a draft model
    ServingConfig config;
    const ServingStackProfile *stack = nullptr;
    bool cudaGraphs = true;
    MoeDispatcher dispatcher = MoeDispatcher::AllToAll;
    Precision precision = Precision::Bf16;
    Precision kvPrecision = Precision::Bf16;
    bool disaggregated = false;
    ServingPoolShape prefill; // the same as `decode` when aggregated
    ServingPoolShape decode;
    int gpus = 0;        // the GPUs the pools use
    int clusterGpus = 0; // the cluster's
};

// Resolves `layout` (which has `serving`). Returns an error text that names the key, or empty.
std::string resolveServing(const Layout &layout, int clusterGpus, ServingSetup &out);

// The ranks of a pool as GPU indices, flat: group i is gpus[i * size, (i + 1) * size).
struct GroupList
{
    int size = 0;
    std::vector<int> gpus;
    std::size_t count() const
    {
        return size > 0 ? gpus.size() / static_cast<std::size_t>(size) : 0;
    }
    bool empty() const { return gpus.empty() || size < 2; }
    std::span<const int> operator[](std::size_t i) const
    {
        return {gpus.data() + i * static_cast<std::size_t>(size), static_cast<std::size_t>(size)};
    }
};

// A pool's groups. Ranks: TP fastest, then pipeline stage, then replica, from the pool's first
// rank; the layout's mapping places rank r on GPU mapping[r] (absent: GPU r).
struct PoolGroups
{
    GroupList tp;        // each replica's TP group per stage
    GroupList attention; // attention-TP groups (TP / attention DP ranks)
    GroupList ep;        // expert-parallel groups (one per expert-TP rank, per stage)
    GroupList pipeline;  // one GPU per stage, per replica and TP rank
    GroupList replicas;  // each replica's GPUs, stage by stage
};
PoolGroups poolGroups(const Layout &layout, const ServingPoolShape &pool);

// Layers of pipeline stage `stage` of `pp`: [first, first + count); the first
// model.denseLayers() layers of the model are dense.
struct StageLayers
{
    int first = 0, count = 0;
    int dense = 0, moe = 0;
    int sliding = 0; // of them, sliding-window layers (spread evenly over the model)
};
StageLayers stageLayers(const ModelDims &model, int pp, int stage);

} // namespace railyard::engine
