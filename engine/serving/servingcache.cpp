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

} // namespace railyard::engine
