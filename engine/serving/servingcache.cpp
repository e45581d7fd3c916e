#include "serving/servingcache.h"

namespace railyard::engine {

ServingPoolKey servingPoolKey(const ServingPoolShape &p)
{
    return {p.tp, p.ep, p.pp, p.replicas, p.attentionDp, p.firstRank};
}

PricedPool *ServingCache::find(const ServingPoolShape &pool)
{
    const auto it = m_pools.find(servingPoolKey(pool));
    return it == m_pools.end() ? nullptr : it->second.get();
}

PricedPool &ServingCache::insert(const ServingPoolShape &pool, PricedPool priced)
{
    std::unique_ptr<PricedPool> &slot = m_pools[servingPoolKey(pool)];
    slot = std::make_unique<PricedPool>(std::move(priced));
    return *slot;
}

const KvTransfer *ServingCache::findKv(const ServingPoolShape &prefill,
                                       const ServingPoolShape &decode,
                                       double inputTokens) const
{
    const auto it = m_kv.find({servingPoolKey(prefill), servingPoolKey(decode)});
    return it == m_kv.end() || it->second->inputTokens != inputTokens ? nullptr : &it->second->kv;
}

const KvTransfer &ServingCache::insertKv(const ServingPoolShape &prefill,
                                         const ServingPoolShape &decode,
                                         double inputTokens,
                                         KvTransfer kv)
{
    std::unique_ptr<PricedKv> &slot = m_kv[{servingPoolKey(prefill), servingPoolKey(decode)}];
    slot = std::make_unique<PricedKv>(PricedKv{inputTokens, std::move(kv)});
    return slot->kv;
}

} // namespace railyard::engine
