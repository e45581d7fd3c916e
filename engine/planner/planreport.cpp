#include "planner/planreport.h"

#include "report/reportformat.h"

namespace railyard::engine {

using reportformat::breakdownJson;
using reportformat::memoryBreakdownJson;

namespace {

int zeroStage(Sharding s)
{
    switch (s) {
    case Sharding::Zero0: return 0;
    case Sharding::Zero1: return 1;
    case Sharding::Zero2: return 2;
    case Sharding::Zero3:
    case Sharding::Fsdp: return 3;
    }
    return 0;
}

Json buyOptionJson(const BuyOption &o)
{
    Json j{{"gpu", o.cluster.gpu},
           {"gpus", o.gpus},
           {"nodes", o.cluster.nodes},
           {"gpus_per_node", o.cluster.gpusPerNode},
           {"nvlink_domain", o.cluster.nvlinkDomain},
           {"nic_gbit_per_s", o.cluster.nic.gbitPerS},
           {"fabric", toString(o.cluster.fabric.kind)},
           {"price_per_gpu_hour", o.cluster.pricePerGpuHour.value_or(0)},
           {"fits", o.fits}};
    if (o.fits) {
        j["days"] = o.days;
        j["cost"] = o.cost;
        j["meets_deadline"] = o.meetsDeadline;
        j["plan"] = planJson(o.plan, 0);
    }
    return j;
}

} // namespace

Json planJson(const Plan &p, int rank, const std::vector<std::string> *bases)
{
    const PlanChoice &c = p.choice;
    const PlanPrice &x = p.price;
    Json j;
    if (rank > 0)
        j["rank"] = rank;
    j["parallel"] = Json{{"tp", c.tp},
                         {"cp", c.cp},
                         {"ep", c.ep},
                         {"pp", c.pp},
                         {"vp", c.vp},
                         {"dp", c.dp},
                         {"order", toString(c.order)}};
    j["training"] = Json{{"micro_batch", c.microBatch},
                         {"micro_batches", x.microBatches},
                         {"recompute", toString(c.recompute)},
                         {"cpu_offload_layers", c.offloadLayers},
                         {"sharding", toString(c.sharding)},
                         {"optimizer",
                          Json{{"distributed", c.sharding != Sharding::Zero0},
                               {"zero_stage", zeroStage(c.sharding)},
                               {"fsdp", c.sharding == Sharding::Fsdp},
                               {"shard_group", x.shardGroup}}}};
    j["fits"] = x.fits;
    j["step_time_s"] = x.stepTimeS;
    if (x.stepTimeS > 0) {
        // As `railyard evaluate` gives it: how sure the model is in this plan's regime.
        j["step_time_band_s"] = Json::array(
                {x.stepTimeS * (1 - x.bandFraction), x.stepTimeS * (1 + x.bandFraction)});
        if (bases && x.bandBasis >= 0 && x.bandBasis < int(bases->size()))
            j["step_time_band_basis"] = (*bases)[std::size_t(x.bandBasis)];
    }
    j["tokens_per_s"] = x.tokensPerS;
    j["mfu"] = x.mfu;
    j["memory_gib_per_gpu"] = x.memoryGiB;
    j["memory_breakdown_gib"] = memoryBreakdownJson(x.memory);
    j["breakdown_s"] = breakdownJson(x.exposed);
    j["cost_per_step"] = x.costPerStep;
    j["cost_per_million_tokens"] = x.costPerMillionTokens;
    j["tokens_per_dollar"] = x.tokensPerDollar;
    return j;
}

Json planSearchJson(const PlanSearch &s, const PlanReportSource &source)
{
    Json j;
    j["file"] = source.file;
    j["title"] = source.title;
    j["gpu"] = source.gpu;
    j["gpus"] = s.gpus;
    j["hbm_gib"] = s.hbmGiB;
    j["price_per_gpu_hour"] = s.pricePerGpuHour;
    j["objective"] = toString(s.objective);
    j["evaluated"] = s.evaluated;
    j["fitting"] = s.fitting;
    j["elapsed_s"] = s.elapsedS;
    Json plans = Json::array();
    int rank = 0;
    for (const Plan &p : s.plans)
        plans.push_back(planJson(p, ++rank, &s.bandBases));
    j["plans"] = std::move(plans);
    if (s.plans.empty()) {
        Json none{{"message", s.noFit}};
        if (s.leastMemory)
            none["least_memory"] = planJson(*s.leastMemory, 0);
        j["no_fit"] = std::move(none);
    }
    j["assumptions"] = s.assumptions;
    return j;
}

Json purchaseJson(const BuyAnswer &b, const BuyOptions &options, const std::string &file)
{
    Json j;
    j["file"] = file;
    j["tokens"] = options.tokens;
    j["deadline_days"] = options.deadlineDays;
    j["best"] = b.best ? buyOptionJson(*b.best) : Json();
    Json all = Json::array();
    for (const BuyOption &o : b.considered)
        all.push_back(buyOptionJson(o));
    j["considered"] = std::move(all);
    j["skipped_gpus"] = b.skipped;
    j["evaluated"] = b.evaluated;
    j["elapsed_s"] = b.elapsedS;
    j["assumptions"] = b.assumptions;
    return j;
}

} // namespace railyard::engine
