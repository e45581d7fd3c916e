// The planner's search: every valid configuration, memory first, the fitting ones priced and
// the best kept.
#include "planner/planner.h"

#include "base/units.h"
#include "layout/softwarestack.h"
#include "layout/transformer.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

namespace railyard::engine {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kRoundingMargin = 1e-9;

std::vector<int> divisorsOf(int n)
{
    std::vector<int> out;
    for (int i = 1; i <= n; ++i)
        if (n % i == 0)
            out.push_back(i);
    return out;
}

// The best `top` plans, the worst on top of a heap (no allocation once reserved).
class TopPlans
{
    struct Worse // heap order: the worst plan on top
    {
        PlanObjective objective;
        bool operator()(const Plan &a, const Plan &b) const
        {
            return planBefore(a.price, b.price, objective);
        }
    };
    Worse cmp() const { return {m_objective}; }

public:
    TopPlans(int top, PlanObjective objective)
        : m_top(std::max(1, top))
        , m_objective(objective)
    {
        m_heap.reserve(static_cast<std::size_t>(m_top) + 1);
    }
    // Whether offer() would keep a plan priced `p` (for now).
    bool wouldTake(const PlanPrice &p) const
    {
        return static_cast<int>(m_heap.size()) < m_top
               || planBefore(p, m_heap.front().price, m_objective);
    }
    // A step time past which offer() refuses any plan (for now): the worst plan's, and a
    // hair more (cost and tokens per dollar follow step time up to their rounding).
    double refusesAbove() const
    {
        return static_cast<int>(m_heap.size()) < m_top
                       ? kInf
                       : m_heap.front().price.stepTimeS * (1 + kRoundingMargin);
    }
    void offer(const PlanChoice &c, const PlanPrice &p)
    {
        if (!wouldTake(p))
            return;
        m_heap.push_back({c, p});
        std::push_heap(m_heap.begin(), m_heap.end(), cmp());
        if (static_cast<int>(m_heap.size()) > m_top) {
            std::pop_heap(m_heap.begin(), m_heap.end(), cmp());
            m_heap.pop_back();
        }
    }
    std::vector<Plan> sorted() &&
    {
        std::sort_heap(m_heap.begin(), m_heap.end(), cmp());
        return std::move(m_heap);
    }

private:
    int m_top;
    PlanObjective m_objective;
    std::vector<Plan> m_heap;
};

} // namespace

// The plans no other beats on both memory per GPU and step time, least memory first: along it
// the step time falls strictly. A dominated offer costs a binary search and no allocation.
class ParetoFront
{
    using Iterator = std::vector<Plan>::iterator;
    using ConstIterator = std::vector<Plan>::const_iterator;
    // The first plan with more memory than p, or as much, when p is not dominated.
    template<class It>
    static std::optional<It> place(It begin, It end, const PlanPrice &p)
    {
        const auto byMemory = [](const Plan &a, double memory) {
            return a.price.memoryGiB < memory;
        };
        It at = std::lower_bound(begin, end, p.memoryGiB, byMemory);
        // Dominated by one with no more memory and no longer step (the one just before has
        // the shortest step of those with less memory; one with equal memory sits at `at`).
        if (at != begin && std::prev(at)->price.stepTimeS <= p.stepTimeS)
            return std::nullopt;
        if (at != end && at->price.memoryGiB == p.memoryGiB && at->price.stepTimeS <= p.stepTimeS)
            return std::nullopt;
        return at;
    }

public:
    // Whether offer() would keep a plan priced `p` (for now).
    bool wouldTake(const PlanPrice &p) const
    {
        return place<ConstIterator>(m_front.begin(), m_front.end(), p).has_value();
    }
    // A step time past which offer() refuses any plan of `memoryGiB` (for now): the shortest
    // step of the plans with no more memory.
    double refusesAbove(double memoryGiB) const
    {
        const auto byMemory = [](double memory, const Plan &a) {
            return memory < a.price.memoryGiB;
        };
        // The first plan with more memory; the one before has the shortest step of the rest.
        auto after = std::upper_bound(m_front.begin(), m_front.end(), memoryGiB, byMemory);
        return after == m_front.begin() ? kInf : std::prev(after)->price.stepTimeS;
    }
    void offer(const PlanChoice &c, const PlanPrice &p)
    {
        const std::optional<Iterator> found = place<Iterator>(m_front.begin(), m_front.end(), p);
        if (!found)
            return;
        auto at = *found;
        // p beats the plans after it whose step is no shorter.
        auto end = at;
        while (end != m_front.end() && end->price.stepTimeS >= p.stepTimeS)
            ++end;
        at = m_front.erase(at, end);
        m_front.insert(at, Plan{c, p});
    }
    std::vector<Plan> take() && { return std::move(m_front); }

private:
    std::vector<Plan> m_front;
};

PlanSearch searchPlans(const Layout &layout, const Topology &topology, const PlanOptions &options)
{
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    PlanSearch out;
    out.objective = options.objective;
    if (layout.isServing()) {
        out.error = "the layout describes a serving workload (\"serving\"): the training planner "
                    "does not plan it";
        return out;
    }
    PlanPricer pricer(layout, topology);
    out.hbmGiB = pricer.hbmGiB();
    out.pricePerGpuHour = pricer.pricePerGpuHour();
    out.gpus = pricer.gpus();
    if (!pricer.ok()) {
        out.error = pricer.error();
        return out;
    }
    const ModelDims m = resolveModel(*layout.model).dims;
    const TrainingConfig &t = layout.training;
    const int gpus = topology.gpuCount();
    const StackProfile *stack = findStack(t.stack);
    const Sharding zero3 = stack && stack->id == "deepspeed-zero3" ? Sharding::Zero3
                                                                   : Sharding::Fsdp;

    // The outer loop: (TP, CP, PP), DP following from the GPU count.
    struct Outer
    {
        int tp, cp, pp, dp;
    };
    std::vector<Outer> outer;
    for (int tp : divisorsOf(gpus)) {
        if (m.heads % tp != 0 || (m.kvHeads % tp != 0 && tp % m.kvHeads != 0))
            continue;
        for (int cp : divisorsOf(gpus / tp)) {
            if (cp > 1 && t.seqLen % (2 * cp) != 0)
                continue;
            for (int pp : divisorsOf(gpus / (tp * cp))) {
                if (pp > m.layers)
                    continue;
                const int dp = gpus / (tp * cp * pp);
                if (t.globalBatch % dp != 0)
                    continue;
                outer.push_back({tp, cp, pp, dp});
            }
        }
    }

    TopPlans top(options.top, options.objective);
    ParetoFront front;
    std::optional<Plan> leastMemory;
    auto lastReport = start;
    constexpr Recompute kRecompute[] = {Recompute::None, Recompute::Selective, Recompute::Full};
    std::vector<int> eps, mbs, vps;
    std::int64_t sinceCheck = 0;
    for (std::size_t oi = 0; oi < outer.size() && !out.cancelled; ++oi) {
        const Outer &o = outer[oi];
        eps.clear();
        if (m.isMoe()) {
            for (int ep : divisorsOf(m.experts))
                if ((o.tp * o.cp * o.dp) % ep == 0)
                    eps.push_back(ep);
        } else {
            eps.push_back(1);
        }
        mbs = divisorsOf(t.globalBatch / o.dp);
        vps.assign(1, 1);
        if (o.pp > 1)
            for (int vp = 2; o.pp * vp <= m.layers; ++vp)
                if (m.layers % (o.pp * vp) == 0)
                    vps.push_back(vp);
        Sharding shardings[4] = {Sharding::Zero0, Sharding::Zero1, Sharding::Zero2, zero3};
        const int nShardings = o.dp * o.cp > 1 ? 4 : 1;
        PlanChoice c;
        c.tp = o.tp;
        c.cp = o.cp;
        c.pp = o.pp;
        c.dp = o.dp;
        for (int ep : eps) {
            c.ep = ep;
            const int nOrders = pipelineInnerApplies(c, m.isMoe()) ? 2 : 1;
            for (int mb : mbs) {
                c.microBatch = mb;
                for (Recompute r : kRecompute) {
                    c.recompute = r;
                    for (int vp : vps) {
                        c.vp = vp;
                        for (int si = 0; si < nShardings * nOrders; ++si) {
                            c.sharding = shardings[si % nShardings];
                            c.order = si < nShardings ? PlanOrder::Megatron
                                                      : PlanOrder::PipelineInner;
                            // With every collective alone first: a lower bound of the step
                            // (and of its cost). Where even that would not be kept, the shared
                            // step would not be either (top and front only take a plan that
                            // beats one they hold); elsewhere the links are shared.
                            c.offloadLayers = 0;
                            PlanPrice p = options.boundFirst ? pricer.priceAlone(c)
                                                             : pricer.price(c);
                            ++out.evaluated;
                            // Too big to keep every layer's activations: the fewest layers
                            // offloaded to host memory that make it fit, where offload applies.
                            if (!p.fits) {
                                if (const int k = pricer.offloadToFit(c); k > 0) {
                                    c.offloadLayers = k;
                                    p = options.boundFirst ? pricer.priceAlone(c) : pricer.price(c);
                                    ++out.evaluated;
                                }
                            }
                            if (p.fits) {
                                ++out.fitting;
                                if (options.boundFirst) {
                                    if (!top.wouldTake(p) && !(options.pareto && front.wouldTake(p)))
                                        continue;
                                    // Given up as soon as a stage shows neither would.
                                    ++out.scheduled;
                                    double above = top.refusesAbove();
                                    if (options.pareto)
                                        above = std::max(above, front.refusesAbove(p.memoryGiB));
                                    const std::optional<PlanPrice> shared = pricer.shareLinks(p,
                                                                                              above);
                                    if (!shared)
                                        continue;
                                    p = *shared;
                                } else {
                                    ++out.scheduled;
                                }
                                top.offer(c, p);
                                if (options.pareto)
                                    front.offer(c, p);
                            } else if (out.fitting == 0) {
                                // What comes closest, with as much offloaded as it can take.
                                PlanChoice closest = c;
                                PlanPrice least = p;
                                if (const int most = pricer.mostOffload(c); most > c.offloadLayers) {
                                    closest.offloadLayers = most;
                                    least = pricer.price(closest);
                                }
                                if (!leastMemory || least.memoryGiB < leastMemory->price.memoryGiB)
                                    leastMemory = Plan{closest, least};
                            }
                        }
                    }
                }
                // Progress and cancellation, every few thousand configurations.
                if ((sinceCheck += vps.size() * 3 * nShardings * nOrders) < 4096)
                    continue;
                sinceCheck = 0;
                if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
                    out.cancelled = true;
                    break;
                }
                const auto now = Clock::now();
                if (options.progress
                    && std::chrono::duration<double>(now - lastReport).count()
                               >= options.progressIntervalS) {
                    lastReport = now;
                    options.progress({out.evaluated,
                                      double(oi) / std::max<std::size_t>(1, outer.size()),
                                      std::chrono::duration<double>(now - start).count()});
                }
            }
            if (out.cancelled)
                break;
        }
    }
    out.plans = std::move(top).sorted();
    out.pareto = std::move(front).take();
    out.ok = true;
    if (out.fitting == 0 && leastMemory) {
        // Price the closest one anyway, to say what it would need.
        leastMemory->price = pricer.price(leastMemory->choice, true);
        out.leastMemory = leastMemory;
        out.noFit = m.name + " does not fit in the " + formatNumber(out.hbmGiB, 3)
                    + " GiB of usable HBM of " + std::to_string(gpus) + " " + topology.gpuSpec().id
                    + " GPUs in any of the " + std::to_string(out.evaluated)
                    + " configurations tried: the smallest needs "
                    + formatNumber(leastMemory->price.memoryGiB, 3) + " GiB per GPU"
                    + (leastMemory->choice.offloadLayers > 0
                               ? " with " + std::to_string(leastMemory->choice.offloadLayers)
                                         + " layers' activations offloaded to host memory"
                               : std::string())
                    + "; add GPUs, use GPUs with more memory, or shorten the sequence";
    } else if (out.evaluated == 0 && !out.cancelled) {
        out.noFit = "no parallel configuration divides " + std::to_string(gpus) + " GPUs for "
                    + m.name + " with a global batch of " + std::to_string(t.globalBatch)
                    + " (DP must divide the global batch)";
    }
    out.patternBuildS = pricer.patternBuildSeconds();
    out.bandBases = pricer.bandBases();
    out.elapsedS = std::chrono::duration<double>(Clock::now() - start).count();
    out.assumptions = {
            "default placement, rank r on GPU r: ranks in Megatron's order tp-cp-ep-dp-pp, and "
            "also with pipeline stages inside replicas (tp-cp-ep-pp-dp, as Llama 3 trained) "
            "where PP and DP are both above 1, CP is 1 and every group keeps a regular stride",
            "expert tensor parallelism 1; sequence parallelism on with TP",
            "the layout's global batch, sequence length, precision, stack and overlap settings",
            "each plan priced by the evaluation's formulas with one representative group per "
            "dimension (agrees with `railyard evaluate` on the applied plan within 0.5%)",
    };
    out.assumptions.push_back(
            "each step time carries the evaluation's uncertainty band for its regime (from the "
            "published runs it was validated on); plans whose steps differ by less than their "
            "bands are not told apart by the model; regimes without such runs (ZeRO-3 or FSDP on "
            "Hopper, say) have wider bands, and no published run had TP across NVLink domains");
    if (stack && stack->activationOffload)
        out.assumptions.push_back(
                "activation offload to host memory (Transformer Engine's, as the " + stack->id
                + " stack offers it): a configuration without PP or recomputation that does not "
                  "fit is tried again with the fewest layers offloaded that make it fit "
                  "(recompute \"none+K\"); the copies' waits on the host link are priced");
    if (out.pricePerGpuHour > 0)
        out.assumptions.push_back(
                "on one cluster, cost per step and tokens per dollar follow step time: the "
                "objectives rank alike (they differ when buying: --buy)");
    return out;
}

} // namespace railyard::engine
