#pragma once

// The step model's internals, shared by the files that implement it (evaluate.cpp: the
// orchestration; stepchecks.cpp: configuration checks and placement warnings; stepcomm.cpp:
// groups and collectives; stepcompose.cpp: the step from its parts; steptimeline.cpp: the
// timeline). Not part of the engine's interface.

#include "collectives/collective.h"
#include "collectives/traffic.h"
#include "layout/parallel.h"
#include "layout/softwarestack.h"
#include "step/compute.h"
#include "step/evaluate.h"
#include "step/hostlaunch.h"
#include "step/memory.h"
#include "step/stepcost.h"
#include "step/stepschedule.h"

#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace railyard::engine::detail {

// What one kind of collective costs: every group of that kind running it at the same time,
// with what the warnings and the timeline need about its groups.
struct DimPrice : CollectiveCost
{
    std::vector<int> groupDomains;  // NVLink domains each group spans
    std::vector<double> groupTimeS; // each group alone
    // For the timeline: the bytes one instance puts on each link, per pipeline stage (the
    // stage's groups; one entry for the pipeline's own send/recv), and instances per step.
    std::vector<std::vector<LinkShare>> stageBytes;
    double perStep = 0;
    double bestGroupS = 0;
};

// All groups of one kind, flat: group i is gpus[i * size, (i + 1) * size).
struct Groups
{
    int size = 0;
    std::vector<int> gpus;
    std::size_t count() const
    {
        return size > 0 ? gpus.size() / static_cast<std::size_t>(size) : 0;
    }
    bool empty() const { return gpus.empty(); }
    std::span<const int> operator[](std::size_t i) const
    {
        return {gpus.data() + i * static_cast<std::size_t>(size), static_cast<std::size_t>(size)};
    }
    std::span<const int> front() const { return (*this)[0]; }
};

// The collectives of one step, priced (the shared formulas' StepComm, with each collective's
// groups for the warnings and the timeline).
struct PricedComm : StepComm
{
    DimPrice tpAg, tpRs, tpAr;    // TP: all-gather + reduce-scatter (SP) or all-reduce
    DimPrice cpRing;              // CP: ring-attention send/recv
    DimPrice cpAg;                // CP: PyTorch's all-gather of the keys and values
    DimPrice epA2a;               // EP: dispatch / combine all-to-all
    DimPrice ppP2p;               // PP: activations and gradients between stages
    DimPrice ppGather;            // PP: a split send's all-gather over TP on arrival
    DimPrice dpRs, dpAg, dpAr;    // DP: gradients and parameters of the dense weights
    DimPrice edpRs, edpAg, edpAr; // the same for expert weights
    DimPrice &operator[](CommSlot s)
    {
        DimPrice *all[] = {&tpAg,
                           &tpRs,
                           &tpAr,
                           &cpRing,
                           &cpAg,
                           &epA2a,
                           &ppP2p,
                           &ppGather,
                           &dpRs,
                           &dpAg,
                           &dpAr,
                           &edpRs,
                           &edpAg,
                           &edpAr};
        return *all[static_cast<int>(s)];
    }
};

class StepModel
{
public:
    StepModel(const Layout &l, const Topology &t, EvaluationWorkspace &w, const EvaluateOptions &o);

    Evaluation run();

private:
    // stepchecks.cpp
    bool validate();
    void warnPlacement(const Groups &groups,
                       const DimPrice &p,
                       Dim dim,
                       CollectiveOp op,
                       double bytes,
                       double perStep);
    void warnPlacements();
    void warnHostBound(const MoeHostTime &host);
    void warnStragglers();
    // The fewest NVLink domains a group of `n` GPUs of `dim` can span, and how far apart its
    // members sit inside one, when the groups placed inside it first stay whole (stepchecks.cpp).
    struct BestSpan
    {
        int domains = 1;
        int stride = 1;
    };
    BestSpan bestSpan(Dim dim, int n) const;
    // stepcomm.cpp
    void buildGroups();
    DimPrice price(const Groups &groups, CollectiveOp op, double bytes, double perStep);
    void recordStages(
            const Groups &groups, CollectiveOp op, double bytes, bool wholePipeline, DimPrice &out);
    DimPrice priceSamePattern(const DimPrice &like, double bytes, double perStep);
    void priceCommunication();
    // stepcompose.cpp
    void composeStep();
    void throughput();
    void memory();
    // What one GPU of each stage holds, as the memory model takes it.
    MemoryShape memoryShape() const;
    // Activation offload's layers, bytes and copy rates into m_setting (step/offload.h).
    void setOffload();
    // What activation offload moves and what the step waits for it (evaluate.cpp).
    void describeOffload();
    double offloadBytesPerStep() const;
    // steptimeline.cpp
    void buildTimeline();
    int addPattern(PhaseKind kind, int stage, std::initializer_list<const DimPrice *> parts);
    std::vector<int> addPipelinePatterns();
    // evaluate.cpp
    void fillLinks();

    void warn(Severity s,
              std::string code,
              std::string message,
              std::vector<int> gpus = {},
              double cost = 0)
    {
        m_result.warnings.push_back({s, std::move(code), std::move(message), std::move(gpus), cost});
    }

    const Layout &m_layout;
    const Topology &m_topo;
    const EvaluateOptions &m_options;
    EvaluationWorkspace &m_workspace;
    LinkTraffic &m_traffic;  // the step's phases
    LinkTraffic &m_planning; // scratch for choosing algorithms
    Evaluation m_result;
    ModelDims m_dims;
    const StackProfile *m_stack = nullptr;
    std::unique_ptr<RankLayout> m_ranks;
    std::unique_ptr<ComputeModel> m_compute;
    int m_tp = 1, m_cp = 1, m_pp = 1, m_vp = 1, m_dp = 1, m_ep = 1, m_etp = 1, m_micro = 1;
    bool m_sp = false;
    Groups m_tpGroups, m_cpGroups, m_epGroups, m_ppGroups, m_dpGroups, m_edpGroups;
    // Hybrid sharding (OptimizerConfig::shardGroup): each DP group cut into shard groups of
    // consecutive members, and the replica groups of the members at one place in them.
    Groups m_dpShardGroups, m_dpReplicaGroups;
    std::vector<int> m_stageDense, m_stageMoe;
    LayerTimes m_dense, m_moe, m_out; // one micro-batch of one layer
    PricedComm m_comm;
    StepSetting m_setting;        // the sizes, for the shared formulas (stepcost.h)
    std::vector<StageRun> m_runs; // one per stage
    StepScheduler m_scheduler;
    StepSchedule m_schedule;    // the step as it runs (the timeline's phases when asked for)
    double m_stageCompute = 0;  // the slowest stage, one micro-batch
    double m_offloadStallS = 0; // per micro-batch: the waits for activation copies
    double m_overlapLossS = 0;  // StepTimes::overlapLossS()
    struct PlanKey
    {
        CollectiveOp op;
        double bytes, scale;
        int n, domains, ppn, ppnMin, nics;
        double intra, net;
        bool operator==(const PlanKey &) const = default;
    };
    std::vector<std::pair<PlanKey, CollectivePlan>> m_planCache;
    GroupShape m_shape;            // reused for every group
    std::vector<int> m_groupPlan;  // per group of the collective being priced: its plan
    std::vector<int> m_stageOfGpu; // pipeline stage of each GPU (-1: no rank)
    double m_dispatchScale = 1.0;  // inter-node share of an all-to-all (DeepEP)
};

std::string pct(double x); // "+41%"

} // namespace railyard::engine::detail
