#pragma once

// What the configurations of one serving plan share, priced once: a pool's groups and their
// collectives (they depend on the pool's shape and where it starts on the cluster, not on the
// concurrency or on the other pool of a disaggregated split), a prefill pool's request, and a
// decode pool's step at each batch the throughput solver asks for. The planner passes one cache
// to every evaluation of a plan (ServingOptions::cache), so a configuration that differs from an
// earlier one only in its concurrency, or a split that reuses a pool, is arithmetic on what is
// already priced; a disaggregated split's KV transfer is routed once for all its concurrencies.
// The numbers are the ones an evaluation without the cache computes, bit for bit
// (the same functions on the same inputs, only not repeated).
//
// One cache belongs to one plan: the same cluster, model and serving section but for the
// parallel shape, the disaggregated split and the concurrency.

#include "serving/forwardcost.h"
#include "serving/kvtransfer.h"

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

namespace railyard::engine {

// A pool's shape and its first rank: what its groups and their prices depend on.
struct ServingPoolKey
{
    int tp = 1, ep = 1, pp = 1, replicas = 1, attentionDp = 1, firstRank = 0;
    auto operator<=>(const ServingPoolKey &) const = default;
};
ServingPoolKey servingPoolKey(const ServingPoolShape &pool);

// One pool, priced.
struct PricedPool
{
    PoolGroups groups;
    PoolComm comm;
    std::optional<PassCost> prefill; // one request's prefill on this pool (as a prefill pool)
    double prefillTokens = 0;        // the input tokens it was priced at
    // Decode-step seconds by batch per replica (at the plan's mean context). A decode step
    // depends on the pool's shape and its collectives' prices, not on where it starts: pools
    // of one shape whose collectives price the same (the same links, as every server of a
    // uniform cluster) share one table.
    std::shared_ptr<std::unordered_map<double, double>> decodeStepS;
};

class ServingCache
{
public:
    // The pool's entry, or nullptr.
    PricedPool *find(const ServingPoolShape &pool);
    PricedPool &insert(const ServingPoolShape &pool, PricedPool priced);
    long long pools() const { return static_cast<long long>(m_pools.size()); }
    // The KV transfer of a request of `inputTokens` from `prefill` to `decode`, or nullptr.
    const KvTransfer *findKv(const ServingPoolShape &prefill,
                             const ServingPoolShape &decode,
                             double inputTokens) const;
    const KvTransfer &insertKv(const ServingPoolShape &prefill,
                               const ServingPoolShape &decode,
                               double inputTokens,
                               KvTransfer kv);

private:
    using SplitKey = std::pair<ServingPoolKey, ServingPoolKey>;
    struct PricedKv
    {
        double inputTokens = 0;
        KvTransfer kv;
    };
    std::map<ServingPoolKey, std::unique_ptr<PricedPool>> m_pools;
    std::map<SplitKey, std::unique_ptr<PricedKv>> m_kv;
};

} // namespace railyard::engine
