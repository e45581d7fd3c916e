#include "serving/servingcache.h"

#include <limits>

namespace railyard::engine {

namespace {

// Field by field. A field added to these types must join the comparison: the sizes asserted
// (x86-64, those of the fields listed) change when one is added.
bool same(const CollectiveCandidate &a, const CollectiveCandidate &b)
{
    static_assert(sizeof(CollectiveCandidate) == 64);
    return a.algorithm == b.algorithm && a.protocol == b.protocol && a.bwIndex == b.bwIndex
           && a.efficiency == b.efficiency && a.capBusGBps == b.capBusGBps
           && a.chooseCapBusGBps == b.chooseCapBusGBps && a.latencyS == b.latencyS
           && a.plateauLatencyS == b.plateauLatencyS && a.nvlinkScale == b.nvlinkScale;
}

bool same(const CollectiveCurve &a, const CollectiveCurve &b)
{
    static_assert(sizeof(CollectiveCurve) == 1240);
    if (a.op != b.op || a.n != b.n || a.busFactor != b.busFactor || a.plateauBytes != b.plateauBytes
        || a.algorithm != b.algorithm || a.bwPerByte != b.bwPerByte
        || a.nvlinkPerByte != b.nvlinkPerByte || a.networkPerByte != b.networkPerByte
        || a.algorithms != b.algorithms || a.candidates != b.candidates || a.p2pRanks != b.p2pRanks
        || a.p2pChannelGBps != b.p2pChannelGBps)
        return false;
    for (std::size_t i = 0; i < a.candidate.size(); ++i)
        if (!same(a.candidate[i], b.candidate[i]))
            return false;
    return true;
}

bool same(const CollectivePricer &a, const CollectivePricer &b)
{
    static_assert(sizeof(CollectivePricer) == 1320);
    return a.op == b.op && a.n == b.n && a.domains == b.domains && a.groups == b.groups
           && same(a.curve, b.curve) && a.launchCutS == b.launchCutS && a.oneShot == b.oneShot
           && a.oneShotMaxBytes == b.oneShotMaxBytes && a.oneShotPerByteS == b.oneShotPerByteS
           && a.twoShotPerByteS == b.twoShotPerByteS && a.deepEp == b.deepEp
           && a.deepEpLatencyS == b.deepEpLatencyS && a.directIndex == b.directIndex;
}

bool same(const PoolComm &a, const PoolComm &b)
{
    static_assert(sizeof(PoolComm) == 4 * sizeof(CollectivePricer));
    return same(a.attentionAr, b.attentionAr) && same(a.tpAr, b.tpAr)
           && same(a.dispatch, b.dispatch) && same(a.pipeline, b.pipeline);
}

} // namespace

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
    // The pools of this shape (the key orders the first rank last): one whose collectives
    // price the same lends its decode steps.
    ServingPoolKey first = servingPoolKey(pool);
    first.firstRank = std::numeric_limits<int>::min();
    for (auto it = m_pools.lower_bound(first); it != m_pools.end(); ++it) {
        const ServingPoolKey &k = it->first;
        if (k.tp != first.tp || k.ep != first.ep || k.pp != first.pp || k.replicas != first.replicas
            || k.attentionDp != first.attentionDp)
            break;
        if (same(it->second->comm, priced.comm)) {
            priced.decodeStepS = it->second->decodeStepS;
            break;
        }
    }
    if (!priced.decodeStepS)
        priced.decodeStepS = std::make_shared<std::unordered_map<double, double>>();
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
