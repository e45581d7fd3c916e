// "What should I buy": the cheapest cluster, among the catalog's priced GPUs, that trains the
// layout's model on a token budget by a deadline.
#include "planner/plannerbuy.h"

#include "base/units.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace railyard::engine {

namespace {

// A cluster of `gpus` of `gpu` as Railyard's generators build it: HGX servers of 8 (NVL72 racks
// of 18 x 4 for the rack-scale parts), one NIC of the GPU's default model per GPU, a
// non-blocking rail-optimized fabric.
std::optional<ClusterConfig> clusterOf(const GpuSpec &gpu, const Catalog &catalog, int gpus)
{
    ClusterConfig c;
    c.gpu = gpu.id;
    const bool rack = gpu.id.rfind("GB", 0) == 0;
    c.gpusPerNode = rack ? 4 : 8;
    c.nvlinkDomain = rack ? 72 : 8;
    if (gpus % c.nvlinkDomain != 0)
        return std::nullopt;
    c.nodes = gpus / c.gpusPerNode;
    const NicModel *nic = catalog.nic(gpu.defaultNic);
    c.nic.gbitPerS = nic ? nic->gbitPerS : 400;
    c.nic.model = nic ? nic->id : std::string();
    c.nic.perGpu = 1;
    c.fabric.kind = c.nodes > 1 ? FabricKind::RailOptimized : FabricKind::SingleSwitch;
    c.fabric.oversubscription = 1;
    c.pricePerGpuHour = gpu.pricePerGpuHour;
    return c;
}

} // namespace

BuyAnswer planPurchase(const Layout &layout, const BuyOptions &options)
{
    const auto start = std::chrono::steady_clock::now();
    BuyAnswer out;
    if (layout.isServing()) {
        out.error = "the layout describes a serving workload (\"serving\"): --buy sizes a "
                    "training run (tokens by a deadline)";
        return out;
    }
    const Catalog &catalog = options.catalog ? *options.catalog : Catalog::builtin();
    const double seconds = options.deadlineDays * 86400.0;
    for (const GpuSpec &gpu : catalog.gpus()) {
        if (gpu.pricePerGpuHour <= 0) {
            out.skipped.push_back(gpu.id);
            continue;
        }
        // Cluster sizes: NVLink domains (or servers) times powers of two.
        const bool rack = gpu.id.rfind("GB", 0) == 0;
        int pastDeadline = -1; // doublings since the deadline was first met
        for (int gpus = rack ? 72 : 8; gpus <= options.maxGpus; gpus *= 2) {
            if (options.cancel && options.cancel->load())
                return out;
            const auto cluster = clusterOf(gpu, catalog, gpus);
            if (!cluster)
                continue;
            Layout l = layout;
            l.cluster = *cluster;
            l.mapping.clear();
            const Topology topology = buildTopology(l.cluster, catalog);
            PlanOptions po;
            po.top = 1;
            po.objective = PlanObjective::StepTime;
            po.cancel = options.cancel;
            const PlanSearch s = searchPlans(l, topology, po);
            out.evaluated += s.evaluated;
            if (!s.ok) {
                out.error = s.error;
                return out;
            }
            BuyOption o;
            o.cluster = *cluster;
            o.gpus = gpus;
            if (s.plans.empty()) {
                if (options.keepAll)
                    out.considered.push_back(o);
                continue;
            }
            o.fits = true;
            o.plan = s.plans.front();
            o.days = options.tokens / o.plan.price.tokensPerS / 86400.0;
            o.cost = gpu.pricePerGpuHour * gpus * o.days * 24.0;
            o.meetsDeadline = o.days * 86400.0 <= seconds;
            if (options.keepAll)
                out.considered.push_back(o);
            if (o.meetsDeadline && (!out.best || o.cost < out.best->cost))
                out.best = o;
            // Doubling the GPUs at best halves the time at the same cost; it can do better
            // where memory frees up (less recomputation, larger micro-batches), so look two
            // doublings past the first cluster that meets the deadline.
            if (pastDeadline >= 0 || o.meetsDeadline)
                if (++pastDeadline > 2)
                    break;
        }
    }
    out.elapsedS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.assumptions = {
            "GPUs and prices per GPU-hour from the catalog (GPUs without a price are skipped)",
            "HGX servers of 8 GPUs (GB200/GB300: NVL72 racks of 18 x 4), one NIC of the GPU's "
            "default model per GPU, a non-blocking rail-optimized fabric, SHARP off",
            "cluster sizes: NVLink domains times powers of two, up to "
                    + std::to_string(options.maxGpus)
                    + " GPUs, stopping two doublings past the first that meets the deadline",
            "each cluster runs the planner's fastest plan for the layout's model and training "
            "settings; time = tokens / tokens per second, steady state (no start-up, "
            "checkpoints, failures or restarts)",
            "cost = price per GPU-hour x GPUs x hours: rented by the hour, nothing for storage or "
            "networking beyond the GPUs",
    };
    return out;
}

} // namespace railyard::engine
