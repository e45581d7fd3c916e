#pragma once

// The serving evaluation's internals, shared by the files that implement it
// (servingevaluate.cpp: the orchestration, memory and throughput; servingwarnings.cpp: the
// warnings with their cost; servinglinks.cpp: per-link loads and the timelines). Not part of
// the engine's interface.

#include "serving/forwardcost.h"
#include "serving/kvtransfer.h"
#include "serving/servingcache.h"
#include "serving/servingevaluate.h"
#include "serving/servingmemory.h"
#include "serving/servingsetup.h"
#include "serving/servingthroughput.h"
#include "step/compute.h"

#include <memory>
#include <utility>
#include <vector>

namespace railyard::engine::detail {

class ServingModel
{
public:
    ServingModel(const Layout &l,
                 const Topology &t,
                 EvaluationWorkspace &w,
                 const ServingOptions &o);
    ServingEvaluation run();

private:
    // servingevaluate.cpp
    bool prepare();
    // The pool's groups and collectives, from the plan's cache when there is one.
    PricedPool *pricePool(const ServingPoolShape &pool, PoolGroups &groups, PoolComm &comm);
    bool checkMemory();
    // The decode step's time at `batch` requests per replica, interpolated on a grid of priced
    // steps (the throughput solver asks for many batches).
    double decodeTimeAt(double batch) const;
    void solve();
    void fillResult();
    // servingwarnings.cpp
    void warnPlacement();
    void warnLoad();
    // servinglinks.cpp
    void fillLinks();
    void buildTimelines();

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
    EvaluationWorkspace &m_workspace;
    const ServingOptions &m_options;
    ServingEvaluation m_result;
    ServingSetup m_setup;
    std::unique_ptr<ComputeModel> m_compute;
    PricedPool *m_decodePool = nullptr; // in the plan's cache, when there is one
    PoolGroups m_decodeGroups, m_prefillGroups;
    PoolComm m_decodeComm, m_prefillComm;
    ServingMemory m_decodeMemory, m_prefillMemory;
    PassCost m_prefill;
    KvTransfer m_kv;
    double m_context = 0; // cached tokens a decode step reads per request, on average
    double m_accepted = 1;
    std::vector<double> m_gridBatch, m_gridTime; // priced decode steps, ascending batch
    ThroughputResult m_throughput;
    PassCost m_step; // the decode step at the served batch
    // Link bytes by kind: one decode step's (every replica), one request's (prefill
    // collectives; stage -2: the KV transfer).
    std::vector<TrafficPattern> m_decodePatterns, m_requestPatterns;
};

} // namespace railyard::engine::detail
