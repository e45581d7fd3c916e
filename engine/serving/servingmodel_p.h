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
    // The pools' groups and collectives, the prefill and the KV transfer.
    void pricePools();
    // The pool's groups and collectives, from the plan's cache when there is one.
    PricedPool *pricePool(const ServingPoolShape &pool, PoolGroups &groups, PoolComm &comm);
    bool checkMemory();
    void solve();
    void fillResult();
    // servingfaults.cpp (cluster.faults: links and switches down or degraded are routed around
    // by the topology itself; these are the GPUs)
    // Takes the replicas with a GPU out (down) out of service: the pools keep the others,
    // which serve the same load. False (with the error) when a pool has none left.
    bool takeOutOfService();
    // The pool's groups without its replicas out of service.
    PoolGroups servingGroups(const ServingPoolShape &pool) const;
    // Per pipeline stage of replica `replica` of `groups`: the slowest GPU's slowdown; empty
    // when every GPU of the replica runs at its rate.
    std::vector<double> stageSlowdown(const PoolGroups &groups,
                                      const ServingPoolShape &pool,
                                      int replica) const;
    // Per replica of `pool` in service, its collectives timed on the links its own traffic
    // crosses (priceCollectiveBySet) while every replica's loads them; empty when no fault
    // touches a link (every replica then runs at the pool's price).
    std::vector<PoolComm> replicaComm(const PoolGroups &groups,
                                      const ServingPoolShape &pool,
                                      const PoolComm &comm) const;
    // The decode replicas in classes by their stages' slowdown and their collectives' price
    // (one class on a healthy cluster), each class's prefill priced (aggregated: on its own
    // replicas; disaggregated: the prefill pool's replicas in classes by pace, m_prefillPace).
    void formClasses();
    // The throughput of every class, combined (rates summed, latencies weighted by requests).
    ThroughputResult combineClasses() const;
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
    KvTransfer m_ownKv;                // disaggregated: the split's KV transfer, without a cache
    const KvTransfer *m_kv = &m_ownKv; // m_ownKv or the plan's cache's
    double m_context = 0;              // cached tokens a decode step reads per request, on average
    double m_accepted = 1;
    std::vector<double> m_gridBatch; // the batches decode steps are priced at, ascending
    // Decode replicas that run alike: all of them, or without stragglers the healthy ones and
    // each straggler's replica (classes by the slowdown of their stages).
    struct ReplicaClass
    {
        std::vector<double> slowdown; // per stage; empty: healthy
        PoolComm comm;                // its collectives, on its own links
        std::vector<int> replicas;    // decode replica indices (among those in service)
        PassCost prefill;             // one request's prefill for this class's requests
        std::vector<double> gridTime; // decode steps at m_gridBatch (NaN: not priced yet)
        ThroughputResult throughput;
    };
    std::vector<ReplicaClass> m_classes;
    // Disaggregated: the prefill replicas by pace when they differ (each class's share of the
    // replicas and one request's prefill there), and the slowest one's prefill.
    std::vector<ThroughputInputs::PrefillClass> m_prefillPace;
    PassCost m_slowPrefill;
    // The decode step's time at `batch` requests per replica of class `k`, interpolated on its
    // grid of steps (at m_gridBatch: the throughput solver asks for many batches), each grid
    // step priced when first needed.
    double decodeTimeAt(ReplicaClass &k, double batch);
    double gridTime(ReplicaClass &k, std::size_t i);
    std::size_t m_slowestClass = 0; // the class with the longest TPOT
    // The pools as the layout holds them (m_setup's keep the replicas in service).
    ServingPoolShape m_heldPrefill, m_heldDecode;
    int m_heldGpus = 0;
    std::vector<int> m_outPrefill, m_outDecode; // replicas out of service (the layout's indices)
    double m_loadScale = 1; // closed loop: in flight per replica, for the same load
    ThroughputResult m_throughput;
    PassCost m_step; // the decode step at the served batch
    // Link bytes by kind: one decode step's (every replica), one request's (prefill
    // collectives; stage -2: the KV transfer).
    std::vector<TrafficPattern> m_decodePatterns, m_requestPatterns;
};

} // namespace railyard::engine::detail
