#include "evaluate.h"

#include "compute.h"
#include "inputerror.h"
#include "traffic.h"
#include "units.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

namespace railyard::engine {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string pct(double x)
{
    return (x >= 0 ? "+" : "") + formatNumber(100 * x, 2) + "%";
}

// A collective that every group of one kind runs at the same time, `perStep` times a step.
struct CommSpec
{
    std::string name; // "TP all-gather"
    Dim dim = Dim::TP;
    CollectiveOp op = CollectiveOp::AllGather;
    double bytes = 0;   // nccl-tests size
    double perStep = 0; // how many times each group runs it per step
};

struct DimPrice
{
    double latencyS = 0;
    double bwTimeS = 0;
    double bytes = 0;
    std::vector<int> groupDomains;  // NVLink domains each group spans
    double timeS = 0;               // one instance, all groups at once
    std::vector<double> groupTimeS; // each group alone
    std::vector<int> groupAlgo;     // chosen algorithm per group (as int)
    std::vector<int> sampleLinks;   // links one group loads (for the timeline)
    double bestGroupS = 0;
    Algorithm algorithm = Algorithm::Ring;
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

class StepModel
{
public:
    StepModel(const Layout &l, const Topology &t, EvaluationWorkspace &w, const EvaluateOptions &o)
        : layout(l)
        , topo(t)
        , options(o)
        , workspace(w)
        , traffic(w.traffic())
        , planning(w.planning())
    {}

    Evaluation run();

private:
    bool validate();
    void buildGroups();
    DimPrice price(const Groups &groups, CollectiveOp op, double bytes, double perStep);
    DimPrice priceSamePattern(const DimPrice &like, double bytes, double perStep);
    void warnPlacement(const Groups &groups,
                       const DimPrice &p,
                       Dim dim,
                       CollectiveOp op,
                       double bytes,
                       double perStep);
    void memory();
    void fillLinks();
    void warn(Severity s,
              std::string code,
              std::string message,
              std::vector<int> gpus = {},
              double cost = 0)
    {
        e.warnings.push_back({s, std::move(code), std::move(message), std::move(gpus), cost});
    }

    const Layout &layout;
    const Topology &topo;
    const EvaluateOptions &options;
    EvaluationWorkspace &workspace;
    LinkTraffic &traffic;  // the step's phases
    LinkTraffic &planning; // scratch for choosing algorithms
    Evaluation e;
    ModelDims m;
    std::unique_ptr<RankLayout> ranks;
    int tp = 1, cp = 1, pp = 1, vp = 1, dp = 1, ep = 1, etp = 1, micro = 1;
    bool sp = false;
    Groups tpGroups, cpGroups, epGroups, ppGroups, dpGroups, edpGroups;
    std::vector<int> stageDense, stageMoe;
    struct PlanKey
    {
        CollectiveOp op;
        double bytes, scale;
        int n, domains, ppn, ppnMin, nics;
        double intra, net;
        bool operator==(const PlanKey &) const = default;
    };
    std::vector<std::pair<PlanKey, CollectivePlan>> planCache;
    GroupShape m_shape;           // reused for every group
    double m_dispatchScale = 1.0; // inter-node share of an all-to-all (DeepEP), see run()
};

bool StepModel::validate()
{
    if (!layout.model) {
        e.error = "the layout has no model: add \"model\": {\"preset\": ...} to price a step";
        return false;
    }
    const ResolvedModel r = resolveModel(*layout.model);
    if (!r.error.empty()) {
        e.error = r.error;
        return false;
    }
    m = r.dims;
    const ParallelConfig &p = layout.parallel;
    tp = p.tp;
    cp = p.cp;
    pp = p.pp;
    vp = p.vp;
    ep = p.ep;
    etp = p.etp.value_or(1);
    dp = layout.dataParallel();
    sp = layout.sequenceParallelOn() && tp > 1;
    try {
        ranks = std::make_unique<RankLayout>(layout);
    } catch (const InputError &err) {
        e.error = err.what();
        return false;
    }
    const TrainingConfig &t = layout.training;
    if (pp > m.layers) {
        e.error = "parallel: PP (" + std::to_string(pp) + ") is more than the model's "
                  + std::to_string(m.layers) + " layers";
        return false;
    }
    if (m.isMoe() && ep > m.experts) {
        e.error = "parallel: EP (" + std::to_string(ep) + ") is more than the model's "
                  + std::to_string(m.experts) + " experts";
        return false;
    }
    if (!m.isMoe() && ep > 1)
        warn(Severity::Warning,
             "ep-without-moe",
             "EP is " + std::to_string(ep) + " but " + m.name
                     + " has no experts: expert parallelism does nothing");
    const long long perReplica = 1LL * t.microBatch * dp;
    if (t.globalBatch < perReplica) {
        e.error = "training: global batch " + std::to_string(t.globalBatch)
                  + " is smaller than micro batch x DP = " + std::to_string(perReplica);
        return false;
    }
    micro = static_cast<int>(t.globalBatch / perReplica);
    if (t.globalBatch % perReplica != 0)
        warn(Severity::Warning,
             "batch-not-divisible",
             "global batch " + std::to_string(t.globalBatch) + " is not a multiple of micro batch "
                     + std::to_string(t.microBatch) + " x DP " + std::to_string(dp)
                     + "; priced with " + std::to_string(micro) + " micro-batches per replica");
    if (m.heads % tp != 0)
        warn(Severity::Warning,
             "tp-heads",
             "TP " + std::to_string(tp) + " does not divide the " + std::to_string(m.heads)
                     + " attention heads (Megatron refuses this); priced as if it did");
    else if (m.kvHeads % tp != 0 && tp % m.kvHeads != 0)
        warn(Severity::Warning,
             "tp-kv-heads",
             "TP " + std::to_string(tp) + " does not divide the " + std::to_string(m.kvHeads)
                     + " key/value heads; priced as if it did");
    if (m.isMoe() && m.experts % ep != 0)
        warn(Severity::Warning,
             "ep-experts",
             "EP " + std::to_string(ep) + " does not divide the " + std::to_string(m.experts)
                     + " experts; priced with uneven experts per GPU");
    if (m.layers % pp != 0)
        warn(Severity::Warning,
             "pp-layers",
             std::to_string(m.layers) + " layers do not split evenly over PP " + std::to_string(pp)
                     + "; the later stages get one layer fewer");
    if (vp > 1 && (m.layers % (pp * vp) != 0))
        warn(Severity::Warning,
             "vp-layers",
             std::to_string(m.layers) + " layers do not split evenly into PP x VP = "
                     + std::to_string(pp * vp) + " virtual stages");
    if (vp > 1 && pp == 1)
        warn(Severity::Info, "vp-without-pp", "VP has no effect without pipeline parallelism");
    if (cp > 1 && t.seqLen % (2 * cp) != 0)
        warn(Severity::Warning,
             "cp-seq",
             "sequence length " + std::to_string(t.seqLen) + " is not a multiple of 2 x CP = "
                     + std::to_string(2 * cp) + " (load-balanced ring attention needs it)");
    if (tp > topo.shape().domainSize)
        warn(Severity::Warning,
             "tp-larger-than-domain",
             "TP " + std::to_string(tp) + " is larger than the NVLink domain ("
                     + std::to_string(topo.shape().domainSize)
                     + " GPUs): every TP collective crosses the network");
    // Layers per stage: the first layers are dense, the rest MoE (DeepSeek-style).
    stageDense.assign(static_cast<std::size_t>(pp), 0);
    stageMoe.assign(static_cast<std::size_t>(pp), 0);
    const int base = m.layers / pp, extra = m.layers % pp;
    int layer = 0;
    for (int s = 0; s < pp; ++s) {
        const int count = base + (s < extra ? 1 : 0);
        for (int i = 0; i < count; ++i, ++layer) {
            if (m.isMoe() && layer >= m.denseLayers())
                ++stageMoe[static_cast<std::size_t>(s)];
            else
                ++stageDense[static_cast<std::size_t>(s)];
        }
    }
    return true;
}

void StepModel::buildGroups()
{
    const int world = ranks->worldSize();
    const auto collect = [&](Dim d, Groups &out) {
        out.size = ranks->size(d);
        out.gpus.assign(static_cast<std::size_t>(world), 0);
        for (int r = 0; r < world; ++r)
            out.gpus[static_cast<std::size_t>(ranks->groupOf(r, d)) * out.size
                     + static_cast<std::size_t>(ranks->coord(r, d))]
                    = ranks->gpuOfRank(r);
    };
    if (tp > 1)
        collect(Dim::TP, tpGroups);
    if (cp > 1)
        collect(Dim::CP, cpGroups);
    if (pp > 1)
        collect(Dim::PP, ppGroups);
    if (ep > 1 && m.isMoe())
        collect(Dim::EP, epGroups);
    // Gradients are reduced over DP x CP (the ranks that hold the same weights): one group per
    // (TP, PP) position, members in (DP, CP) order.
    if (dp * cp > 1) {
        dpGroups.size = dp * cp;
        dpGroups.gpus.assign(static_cast<std::size_t>(world), 0);
        for (int r = 0; r < world; ++r) {
            const int key = ranks->coord(r, Dim::PP) * tp + ranks->coord(r, Dim::TP);
            const int at = ranks->coord(r, Dim::DP) * cp + ranks->coord(r, Dim::CP);
            dpGroups.gpus[static_cast<std::size_t>(key) * dpGroups.size
                          + static_cast<std::size_t>(at)]
                    = ranks->gpuOfRank(r);
        }
    }
    // Expert weights are reduced over the expert-data-parallel ranks: those of one pipeline
    // stage with the same expert-TP and EP coordinates.
    const int edp = (tp * cp * dp) / std::max(1, ep * etp);
    if (m.isMoe() && edp > 1) {
        edpGroups.size = edp;
        edpGroups.gpus.assign(static_cast<std::size_t>(world), 0);
        for (int r = 0; r < world; ++r) {
            const int s = ranks->coord(r, Dim::TP)
                          + tp * (ranks->coord(r, Dim::CP) + cp * ranks->coord(r, Dim::DP));
            const int e = (s / etp) % ep;
            const int key = (ranks->coord(r, Dim::PP) * ep + e) * etp + s % etp;
            edpGroups.gpus[static_cast<std::size_t>(key) * edp
                           + static_cast<std::size_t>(s / (etp * ep))]
                    = ranks->gpuOfRank(r);
        }
    }
}

DimPrice StepModel::price(const Groups &groups, CollectiveOp op, double bytes, double perStep)
{
    DimPrice out;
    if (groups.empty() || bytes <= 0)
        return out;
    // Plan each distinct group shape once (NCCL's algorithm and protocol choice, in a scratch
    // phase that does not count toward the step), then put every group's bytes on the links
    // together: groups that share links slow each other down.
    out.groupTimeS.resize(groups.count());
    out.groupDomains.resize(groups.count());
    traffic.beginPhase(perStep);
    double nvScale = 1, worstEff = 1, worstLat = 0, cap = 0;
    out.bestGroupS = std::numeric_limits<double>::infinity();
    int firstPlan = -1;
    GroupShape &g = m_shape;
    for (std::size_t i = 0; i < groups.count(); ++i) {
        analyzeGroup(topo, groups[i], g);
        const PlanKey key{op,
                          bytes,
                          m_dispatchScale,
                          g.n,
                          g.domains,
                          g.ppn,
                          g.ppnMin,
                          g.nicsPerDomain,
                          g.intraGBps,
                          g.netPerDomainGBps};
        std::size_t k = 0;
        while (k < planCache.size() && !(planCache[k].first == key))
            ++k;
        if (k == planCache.size())
            planCache.emplace_back(
                    key,
                    planCollective(topo, g, op, bytes, Algorithm::Auto, planning, m_dispatchScale));
        const CollectivePlan &p = planCache[k].second;
        if (firstPlan < 0)
            firstPlan = static_cast<int>(k);
        out.groupTimeS[i] = p.timeS;
        out.groupDomains[i] = g.domains;
        nvScale = std::min(nvScale, p.nvlinkScale);
        worstEff = std::min(worstEff, p.efficiency);
        worstLat = std::max(worstLat, p.latencyS);
        if (p.capBusGBps > 0)
            cap = cap > 0 ? std::min(cap, p.capBusGBps) : p.capBusGBps;
        out.bestGroupS = std::min(out.bestGroupS, p.timeS);
        addCollectiveTraffic(traffic, topo, g, op, p.algorithm, bytes, m_dispatchScale);
    }
    traffic.setKindScale(LinkKind::NvLink, nvScale);
    const double bw = traffic.phaseTime();
    const int n = static_cast<int>(groups.front().size());
    out.bwTimeS = bw / worstEff;
    if (cap > 0)
        out.bwTimeS = std::max(out.bwTimeS, busBandwidthFactor(op, n) * bytes / (cap * 1e9));
    out.latencyS = worstLat;
    out.timeS = worstLat + out.bwTimeS;
    out.bytes = bytes;
    out.algorithm = planCache[static_cast<std::size_t>(firstPlan)].second.algorithm;
    if (options.timeline)
        out.sampleLinks = traffic.phaseLinks(4096); // to light up in the timeline
    return out;
}

DimPrice StepModel::priceSamePattern(const DimPrice &like, double bytes, double perStep)
{
    // A collective whose traffic has the same shape as the last one priced (a reduce-scatter
    // after an all-gather on the same groups): its bytes scale, its latency stays.
    DimPrice out = like;
    if (like.bytes <= 0)
        return out;
    const double scale = bytes / like.bytes;
    out.bytes = bytes;
    out.bwTimeS = like.bwTimeS * scale;
    out.timeS = like.latencyS + out.bwTimeS;
    for (double &t : out.groupTimeS)
        t = like.latencyS + (t - like.latencyS) * scale;
    traffic.repeatPhase(perStep * scale);
    return out;
}

void StepModel::warnPlacement(const Groups &groups,
                              const DimPrice &p,
                              Dim dim,
                              CollectiveOp op,
                              double bytes,
                              double perStep)
{
    if (groups.empty() || p.groupTimeS.empty())
        return;
    const ClusterShape &s = topo.shape();
    // The same collective on a group of the same size inside one NVLink domain: what a
    // placement that keeps this traffic on NVLink would pay.
    const int n = static_cast<int>(groups.front().size());
    double ideal = 0;
    if (n <= s.domainSize && !s.pcieOnly) {
        std::vector<int> local(static_cast<std::size_t>(n));
        std::iota(local.begin(), local.end(), 0);
        const GroupShape g = analyzeGroup(topo, local);
        ideal = planCollective(topo, g, op, bytes, Algorithm::Auto, planning).timeS;
    }
    int reported = 0;
    for (std::size_t i = 0; i < groups.count(); ++i) {
        const int domains = p.groupDomains[i];
        const double t = p.groupTimeS[i];
        std::string where;
        double extra = 0;
        if ((dim == Dim::TP || dim == Dim::EP || dim == Dim::CP) && domains > 1 && ideal > 0) {
            where = std::string(groupNoun(dim)) + " " + std::to_string(i) + " spans "
                    + std::to_string(domains) + " NVLink domains";
            extra = t / ideal - 1;
        } else if (t > p.bestGroupS * 1.05) {
            where = std::string(groupNoun(dim)) + " " + std::to_string(i)
                    + " is slower than the others";
            extra = t / p.bestGroupS - 1;
        }
        if (where.empty() || extra < 0.02)
            continue;
        if (reported++ < 8)
            warn(Severity::Warning,
                 std::string(toString(dim)) + "-placement",
                 where + " (" + pct(extra) + " " + dimLabel(dim) + " time)",
                 std::vector<int>(groups[i].begin(), groups[i].end()),
                 (t - (ideal > 0 && domains > 1 ? ideal : p.bestGroupS)) * perStep);
    }
    if (reported > 8)
        warn(Severity::Info,
             std::string(toString(dim)) + "-placement-more",
             std::to_string(reported - 8) + " more " + groupNoun(dim) + "s are placed the same way");
    // Traffic through the spine, and rings that change rail.
    if (s.hasFabric && s.fabric == FabricKind::RailOptimized && (dim == Dim::EP || dim == Dim::DP)) {
        int spineGroups = 0, railGroups = 0;
        std::vector<int> example;
        for (std::size_t gi = 0; gi < groups.count(); ++gi) {
            const auto grp = groups[gi];
            const int domains = p.groupDomains[gi];
            bool spine = false, rail = false;
            int firstLeaf = -2, firstRail = -1;
            for (int gpu : grp) {
                const auto nics = topo.gpuNics(gpu);
                if (nics.empty())
                    continue;
                const int nic = nics[0] - topo.nicDevice(0);
                const int leaf = topo.leafOfNic(nic);
                const int r = topo.devices()[static_cast<std::size_t>(nics[0])].rail;
                if (firstLeaf == -2) {
                    firstLeaf = leaf;
                    firstRail = r;
                }
                spine = spine || leaf / std::max(1, s.rails) != firstLeaf / std::max(1, s.rails);
                rail = rail || r != firstRail;
            }
            if (domains < 2)
                continue;
            if (spine) {
                ++spineGroups;
                if (example.empty())
                    example.assign(grp.begin(), grp.end());
            }
            if (rail && domains == static_cast<int>(grp.size()))
                ++railGroups;
        }
        if (dim == Dim::EP && spineGroups > 0)
            warn(Severity::Warning,
                 "ep-crosses-spine",
                 "EP all-to-all crosses the spine (" + std::to_string(spineGroups) + " of "
                         + std::to_string(groups.count()) + " EP groups span scalable units)",
                 example);
        if (dim == Dim::DP && railGroups > 0)
            warn(Severity::Warning,
                 "dp-changes-rail",
                 "DP ring changes rail in " + std::to_string(railGroups) + " of "
                         + std::to_string(groups.count())
                         + " DP groups: their GPUs sit on different NIC rails, so the traffic "
                           "crosses the spine");
    }
}

Evaluation StepModel::run()
{
    if (!validate())
        return e;
    buildGroups();
    const TrainingConfig &t = layout.training;
    const GpuSpec &gpu = topo.gpuSpec();
    const ComputeModel cm(gpu, t.precision);
    if (t.precision == Precision::Fp8 && gpu.fp8Tflops <= 0)
        warn(Severity::Warning, "no-fp8", gpu.id + " has no FP8 tensor cores; priced in BF16");

    LayerShard shard;
    shard.tp = tp;
    shard.cp = cp;
    shard.ep = ep;
    shard.etp = etp;
    shard.sequenceParallel = sp;
    shard.microBatch = t.microBatch;
    shard.seqLen = t.seqLen;
    shard.recompute = t.recompute;
    shard.attention = t.attention;
    const LayerTimes dense = layerTimes(m, false, shard, cm);
    const LayerTimes moe = m.isMoe() ? layerTimes(m, true, shard, cm) : LayerTimes{};
    const LayerTimes out = outputLayerTimes(m, shard, cm);

    // ---- Communication sizes (bytes, nccl-tests semantics) and counts per step.
    const double T = double(t.microBatch) * t.seqLen / cp; // tokens per CP rank
    const double act = T * m.hidden * 2.0;                 // one activation tensor, BF16
    const double microBatches = micro;
    const double layersPerStage = double(m.layers) / pp;
    const double moePerStage = m.isMoe() ? double(m.moeLayers) / pp : 0;
    // TP per layer and micro-batch. Without sequence parallelism: two all-reduces forward (after
    // the attention and MLP blocks) and two backward. With it: forward, an all-gather before and
    // a reduce-scatter after each block; backward, the mirror image plus an all-gather of each
    // column-parallel GEMM's input for its weight gradient, which Megatron overlaps with the
    // data-gradient GEMM. Full recomputation repeats the forward's collectives.
    DimPrice tpAg, tpRs, tpAr;
    const double recomputeTp = t.recompute == Recompute::Full ? 2.0 : 0.0;
    if (tp > 1) {
        const double per = layersPerStage * microBatches;
        if (sp) {
            tpAg = price(tpGroups, CollectiveOp::AllGather, act, (6.0 + recomputeTp) * per);
            tpRs = priceSamePattern(tpAg, act, (4.0 + recomputeTp) * per);
        } else {
            tpAr = price(tpGroups, CollectiveOp::AllReduce, act, (4.0 + recomputeTp) * per);
        }
    }
    // Exposed per layer (the weight-gradient all-gathers hide behind the data-gradient GEMMs).
    const double tpPerLayerS = sp ? tpAg.timeS * (4.0 + recomputeTp)
                                               + tpRs.timeS * (4.0 + recomputeTp)
                                  : tpAr.timeS * (4.0 + recomputeTp);
    const double tpHiddenPerLayerS = sp ? tpAg.timeS * 2.0 : 0.0;
    // CP: ring attention passes each rank's keys and values around the ring, forward; keys,
    // values and their gradients backward.
    DimPrice cpRing;
    const double cpKvBytes = T * 2.0 * m.kvHeads * m.headDim / std::max(1, tp) * 2.0;
    if (cp > 1) {
        const double kv = cpKvBytes;
        cpRing = price(cpGroups,
                       CollectiveOp::SendRecv,
                       kv,
                       3.0 * (cp - 1) * layersPerStage * microBatches);
    }
    const double cpPerLayerS = cpRing.timeS * 3.0 * (cp - 1);
    // EP: all-to-all dispatch and combine, forward and backward, per MoE layer.
    DimPrice epA2a;
    if (ep > 1 && m.isMoe()) {
        const double tokensHere = sp ? T / tp : T;
        const double a2a = tokensHere * m.topK * m.hidden * 2.0;
        if (t.moeDispatcher == MoeDispatcher::DeepEP && !epGroups.empty()) {
            // Each token crosses to a remote node once, however many of its experts live there:
            // with experts spread evenly over the N nodes of an EP group, a node holds none of
            // a token's top-k with probability C(E - E/N, k) / C(E, k).
            GroupShape g;
            analyzeGroup(topo, epGroups.front(), g);
            const int N = g.domains;
            if (N > 1) {
                const double perNode = double(m.experts) / N;
                double miss = 1;
                for (int i = 0; i < m.topK; ++i)
                    miss *= std::max(0.0, (m.experts - perNode - i) / (m.experts - i));
                const double remoteNodes = (N - 1) * (1 - miss);
                const double remoteCopies = double(m.topK) * (N - 1) / N;
                m_dispatchScale = std::min(1.0, remoteNodes / remoteCopies);
            }
        }
        epA2a = price(epGroups, CollectiveOp::AllToAll, a2a, 4.0 * moePerStage * microBatches);
        m_dispatchScale = 1.0;
    }
    const double epPerMoeLayerS = epA2a.timeS * 4.0;
    // PP: activations to the next stage forward, gradients back, per micro-batch and virtual
    // stage (scattered over TP with sequence parallelism).
    DimPrice ppP2p;
    if (pp > 1) {
        const double bytes = sp ? act / tp : act;
        ppP2p = price(ppGroups, CollectiveOp::SendRecv, bytes, 2.0 * vp * microBatches);
    }
    // DP: gradients reduce-scattered (distributed optimizer) or all-reduced, parameters
    // all-gathered back; dense and expert weights over their own groups. BF16 on the wire.
    const double attnParams = m.attentionParamsPerLayer();
    const double denseMlp = m.mlpParamsPerLayer(m.ffn);
    const double sharedMlp = m.isMoe() ? m.mlpParamsPerLayer(m.expertFfn) * m.sharedExperts
                                                 + double(m.hidden) * m.experts
                                       : 0;
    const double expertMlp = m.isMoe() ? m.mlpParamsPerLayer(m.expertFfn) * m.experts : 0;
    const double embedParams = double(m.vocab) * m.hidden;
    // The largest stage's parameters per GPU (first or last stage holds an embedding).
    double denseParamsGpu = 0, expertParamsGpu = 0;
    for (int s = 0; s < pp; ++s) {
        const double d = stageDense[static_cast<std::size_t>(s)] * (attnParams + denseMlp)
                         + stageMoe[static_cast<std::size_t>(s)] * (attnParams + sharedMlp)
                         + ((s == 0 || s == pp - 1) ? embedParams : 0);
        const double x = stageMoe[static_cast<std::size_t>(s)] * expertMlp;
        if (d / tp + x / (ep * etp) > denseParamsGpu + expertParamsGpu) {
            denseParamsGpu = d / tp;
            expertParamsGpu = x / (ep * etp);
        }
    }
    const OptimizerConfig &opt = t.optimizer;
    const bool shardedGrads = opt.distributed || opt.zeroStage >= 1 || opt.fsdp;
    const bool zero3 = opt.fsdp || opt.zeroStage >= 3;
    DimPrice dpRs, dpAg, dpAr, edpRs, edpAg, edpAr;
    // Gradients travel in their buffer's type (BF16, or FP32), parameters in BF16.
    const double gradBytes = t.optimizer.gradReduceFp32 ? 4.0 : 2.0;
    // Gradients reduce-scattered and parameters gathered (sharded optimizer), or all-reduced.
    const auto priceData =
            [&](const Groups &groups, double params, DimPrice &rs, DimPrice &ag, DimPrice &ar) {
                if (groups.empty() || params <= 0)
                    return;
                const double bytes = params * gradBytes;
                if (shardedGrads) {
                    rs = price(groups, CollectiveOp::ReduceScatter, bytes, 1);
                    ag = priceSamePattern(rs, params * 2.0, zero3 ? 2.0 * microBatches : 1.0);
                } else {
                    ar = price(groups, CollectiveOp::AllReduce, bytes, 1);
                }
            };
    priceData(dpGroups, denseParamsGpu, dpRs, dpAg, dpAr);
    priceData(edpGroups, expertParamsGpu, edpRs, edpAg, edpAr);

    // ---- One micro-batch on the slowest stage.
    double slowest = 0, sumStages = 0;
    double stageCompute = 0, stageTp = 0, stageCp = 0, stageEp = 0;
    for (int s = 0; s < pp; ++s) {
        const double nd = stageDense[static_cast<std::size_t>(s)];
        const double nm = stageMoe[static_cast<std::size_t>(s)];
        double compute = nd * (dense.forward + dense.backward) + nm * (moe.forward + moe.backward);
        if (s == pp - 1)
            compute += out.forward + out.backward;
        // Exposed communication: TP collectives overlap with the GEMMs next to them when TP
        // overlap is on; CP ring steps hide behind attention; EP behind expert compute with
        // all-to-all overlap.
        const double layers = nd + nm;
        double tpExposed = layers * tpPerLayerS;
        if (t.overlap.tp)
            tpExposed = layers
                        * std::max(0.1 * tpPerLayerS,
                                   tpPerLayerS
                                           - 3.0
                                                     * (nd * dense.tpGemmForward
                                                        + nm * moe.tpGemmForward)
                                                     / std::max(1.0, layers));
        const double attention = 3.5 * (nd * dense.attentionForward + nm * moe.attentionForward);
        const double cpExposed = std::max(layers * cpPerLayerS - attention,
                                          0.05 * layers * cpPerLayerS);
        double epExposed = nm * epPerMoeLayerS;
        if (t.overlap.ep) {
            // Megatron's combined 1F1B schedule runs one micro-batch's forward beside another's
            // backward: the forward dispatch and combine hide behind backward compute, the
            // backward ones wait on gradients and stay exposed; while they overlap, the
            // dispatcher's kernels take about 18% of the SMs from compute (DeepEP: 24 of 132).
            const double forwardA2a = 0.5 * epExposed;
            const double hidden = std::min(forwardA2a, nm * 2.0 * moe.backward / 3.0);
            epExposed = epExposed - hidden + 0.18 * hidden;
        }
        const double total = compute + tpExposed + cpExposed + epExposed;
        sumStages += total;
        if (total > slowest) {
            slowest = total;
            stageCompute = compute;
            stageTp = tpExposed;
            stageCp = cpExposed;
            stageEp = epExposed;
        }
    }
    const double avgStage = sumStages / pp;

    // ---- The step: micro-batches through the slowest stage, the pipeline bubble, P2P on the
    // critical path, then the data-parallel gradient traffic and the optimizer.
    StepBreakdown x; // exposed
    x.compute = microBatches * stageCompute;
    x.tp = microBatches * stageTp;
    x.cp = microBatches * stageCp;
    x.ep = microBatches * stageEp;
    if (pp > 1) {
        x.ppBubble = double(pp - 1) / vp * avgStage;
        const double p2p = ppP2p.timeS;
        x.ppP2p = t.overlap.pp ? 2.0 * (pp - 1) * p2p : 2.0 * vp * microBatches * p2p;
    }
    // DP: the gradient reduction overlaps with the backward pass of the last micro-batch, the
    // parameter gather with the forward of the first, when DP overlap is on.
    const double dpGrad = dpRs.timeS + dpAr.timeS + edpRs.timeS + edpAr.timeS;
    const double dpParam = zero3 ? 2.0 * microBatches * (dpAg.timeS + edpAg.timeS)
                                 : dpAg.timeS + edpAg.timeS;
    double dpExposed = dpGrad + dpParam;
    if (t.overlap.dp) {
        const double lastBackward = stageCompute * 2.0 / 3.0;
        const double firstForward = stageCompute / 3.0;
        const double window = zero3 ? microBatches * stageCompute : lastBackward + firstForward;
        // A last bucket (~1/16 of the gradients) always waits for the end of backward.
        dpExposed = std::max(dpExposed - window, dpExposed / 16.0);
    }
    x.dp = dpExposed;
    // Optimizer: Adam over this GPU's shard of FP32 master weights and moments, memory bound.
    const double paramsGpu = denseParamsGpu + expertParamsGpu;
    const int shardWays = shardedGrads ? std::max(1, dp * cp) : 1;
    // Gradient norm (read every FP32 gradient) and the Adam update of this GPU's shard (read and
    // write master weights and two moments, read the gradient, write the BF16 weights).
    x.optimizer = cm.memory(paramsGpu * 4.0 + paramsGpu / shardWays * (4 * 6 + 4 + 2));
    e.exposed = x;
    e.stepTimeS = x.sum();

    StepBreakdown tot;
    tot.compute = x.compute;
    tot.tp = microBatches * layersPerStage * (tpPerLayerS + tpHiddenPerLayerS);
    tot.cp = microBatches * layersPerStage * cpPerLayerS;
    tot.ep = microBatches * moePerStage * epPerMoeLayerS;
    tot.ppBubble = x.ppBubble;
    tot.ppP2p = pp > 1 ? 2.0 * vp * microBatches * ppP2p.timeS : 0;
    tot.dp = dpGrad + dpParam;
    tot.optimizer = x.optimizer;
    e.total = tot;

    // ---- Throughput, MFU, cost.
    const int gpus = topo.gpuCount();
    e.tokensPerStep = double(t.globalBatch) * t.seqLen;
    e.tokensPerS = e.tokensPerStep / e.stepTimeS;
    e.tokensPerSPerGpu = e.tokensPerS / gpus;
    const double flops = modelFlopsPerStep(m, e.tokensPerStep, t.seqLen);
    e.modelTflopsPerGpu = flops / e.stepTimeS / gpus / 1e12;
    e.mfu = e.modelTflopsPerGpu * 1e12 / cm.bf16Peak();
    e.flopConvention = "model FLOPs as Megatron/NeMo (<= 25.07) count them: 6 x active "
                       "parameters x tokens plus full s^2 attention (not halved for causal "
                       "masks), no recomputation; MFU against the dense BF16 peak ("
                       + formatNumber(gpu.bf16Tflops) + " TFLOP/s)";
    const double price = layout.cluster.pricePerGpuHour.value_or(gpu.pricePerGpuHour);
    if (price > 0) {
        e.costPerStep = price * gpus * e.stepTimeS / 3600.0;
        e.costPerMillionTokens = e.costPerStep / e.tokensPerStep * 1e6;
    }

    // ---- Memory, placement, links, timeline.
    memory();
    // Placement warnings, with what each costs per step: a group's extra time per collective
    // times how often the collective runs in a step.
    const double perMicroLayer = layersPerStage * microBatches;
    warnPlacement(tpGroups,
                  sp ? tpAg : tpAr,
                  Dim::TP,
                  sp ? CollectiveOp::AllGather : CollectiveOp::AllReduce,
                  act,
                  (sp ? 2.0 : 1.0) * (4.0 + recomputeTp) * perMicroLayer);
    warnPlacement(epGroups,
                  epA2a,
                  Dim::EP,
                  CollectiveOp::AllToAll,
                  (sp ? T / tp : T) * m.topK * m.hidden * 2.0,
                  4.0 * moePerStage * microBatches);
    warnPlacement(cpGroups,
                  cpRing,
                  Dim::CP,
                  CollectiveOp::SendRecv,
                  cpKvBytes,
                  3.0 * (cp - 1) * perMicroLayer);
    warnPlacement(dpGroups,
                  shardedGrads ? dpRs : dpAr,
                  Dim::DP,
                  shardedGrads ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce,
                  denseParamsGpu * gradBytes,
                  shardedGrads ? 2.0 : 1.0);
    if (options.linkLoads)
        fillLinks();
    if (options.timeline) {
        double clock = 0;
        const auto phase = [&](const std::string &name,
                               Dim d,
                               bool comm,
                               double len,
                               const std::vector<int> &links) {
            if (len <= 0)
                return;
            Phase p;
            p.name = name;
            p.dim = d;
            p.communication = comm;
            p.start = clock;
            p.end = clock + len;
            p.links = links;
            e.timeline.push_back(std::move(p));
        };
        // Compute on the critical path, with the communication that runs inside it drawn at
        // the same time.
        const double fwd = x.compute / 3.0, bwd = x.compute - fwd;
        phase("pipeline fill", Dim::PP, false, x.ppBubble / 2, {});
        clock += x.ppBubble / 2;
        phase("forward", Dim::TP, false, fwd + (x.tp + x.cp + x.ep) / 3, {});
        phase("TP collectives",
              Dim::TP,
              true,
              x.tp / 3 + (tot.tp - x.tp) / 3,
              (sp ? tpAg : tpAr).sampleLinks);
        phase("EP all-to-all", Dim::EP, true, tot.ep / 2, epA2a.sampleLinks);
        phase("CP ring attention", Dim::CP, true, tot.cp / 3, cpRing.sampleLinks);
        phase("PP send/recv", Dim::PP, true, x.ppP2p / 2, ppP2p.sampleLinks);
        clock += fwd + (x.tp + x.cp + x.ep) / 3;
        phase("backward", Dim::TP, false, bwd + 2 * (x.tp + x.cp + x.ep) / 3, {});
        phase("TP collectives", Dim::TP, true, 2 * tot.tp / 3, (sp ? tpRs : tpAr).sampleLinks);
        phase("EP all-to-all", Dim::EP, true, tot.ep / 2, epA2a.sampleLinks);
        phase("CP ring attention", Dim::CP, true, 2 * tot.cp / 3, cpRing.sampleLinks);
        phase("PP send/recv", Dim::PP, true, x.ppP2p / 2, ppP2p.sampleLinks);
        const double backEnd = clock + bwd + 2 * (x.tp + x.cp + x.ep) / 3;
        // DP gradient reduction starts under the last backward.
        const double dpStart = std::max(clock, backEnd - (dpGrad - std::min(dpGrad, x.dp)));
        clock = dpStart;
        phase("DP gradient reduce", Dim::DP, true, dpGrad, (shardedGrads ? dpRs : dpAr).sampleLinks);
        clock = std::max(backEnd, dpStart + dpGrad);
        phase("pipeline drain", Dim::PP, false, x.ppBubble / 2, {});
        clock += x.ppBubble / 2;
        phase("optimizer step", Dim::DP, false, x.optimizer, {});
        clock += x.optimizer;
        phase("DP parameter all-gather",
              Dim::DP,
              true,
              std::min(dpParam, std::max(0.0, e.stepTimeS - clock)),
              dpAg.sampleLinks);
    }
    e.assumptions.push_back("balanced MoE routing (every expert gets its share of tokens)");
    if (m.isMoe())
        e.assumptions.push_back("MoE layers: host-side overheads of the token dispatcher (count "
                                "syncs, kernel launches) are not priced; with many small "
                                "micro-batches measured steps have been 20-35% longer");
    e.assumptions.push_back("collectives below ~256 MiB per GPU: NCCL's latency model; measured "
                            "bandwidth there can be up to 30-50% lower");
    e.assumptions.push_back("pipeline stages split layers evenly; the last stage also runs the "
                            "output layer and loss");
    e.ok = true;
    return std::move(e);
}

void StepModel::memory()
{
    const TrainingConfig &t = layout.training;
    const OptimizerConfig &opt = t.optimizer;
    const double attnParams = m.attentionParamsPerLayer();
    const double denseMlp = m.mlpParamsPerLayer(m.ffn);
    const double sharedMlp = m.isMoe() ? m.mlpParamsPerLayer(m.expertFfn) * m.sharedExperts : 0;
    const double expertMlp = m.isMoe() ? m.mlpParamsPerLayer(m.expertFfn) * m.experts : 0;
    const double embed = double(m.vocab) * m.hidden;
    const double T = double(t.microBatch) * t.seqLen / cp;
    const double h = m.hidden;
    // Activations kept for backward, per layer and micro-batch, in bytes per token, after
    // Korthikanti et al. (2022), generalised to GQA and gated MLPs: attention 11h (the QKV input
    // 2h, Q and K 2(hq + hkv), V 2hkv, the projection input 2hq, a dropout mask h), MLP 19h for
    // a 4h GeLU MLP (input 2h, fc1 output, activation output, mask h), the two norms' inputs 4h.
    // With sequence parallelism everything is split over TP; without it the norms, dropouts and
    // block inputs are not. Materialised attention without recomputation keeps 5 x heads x s
    // bytes per token of scores; flash attention keeps none.
    const double hq = double(m.heads) * m.headDim, hkv = double(m.kvHeads) * m.headDim;
    const auto layerActivations = [&](bool moeLayer) {
        const double tokens = T; // per CP rank
        if (t.recompute == Recompute::Full)
            return tokens * h * 2.0 / (sp ? tp : 1); // only the layer input
        const double shard = sp ? tp : 1;
        double replicated = 0, split = 0; // bytes per token
        replicated += 2 * h + h + 4 * h;  // QKV input, attention dropout mask, norm inputs
        split += 2 * (hq + hkv) + 2 * hkv + 2 * hq;
        if (moeLayer) {
            // Each token's top-k copies: the expert input, fc1 output and activation output.
            const double w = double(m.expertFfn) / etp;
            const double up = m.gatedMlp ? 2 * w : w;
            const double copies = double(m.topK) * etp / shard; // per token on this rank
            replicated += 2 * h + h;
            split += 0;
            double moeBytes = copies * (2 * h + 2 * up + 2 * w);
            if (m.sharedExperts > 0) {
                const double sw = double(m.expertFfn) * m.sharedExperts;
                moeBytes += (2 * (m.gatedMlp ? 2 * sw : sw) + 2 * sw) / tp;
            }
            return tokens * (replicated / shard + split / tp + moeBytes);
        }
        const double up = m.gatedMlp ? 2.0 * m.ffn : double(m.ffn);
        replicated += 2 * h + h; // MLP input, MLP dropout mask
        split += 2 * up + 2 * m.ffn;
        double bytes = tokens * (replicated / shard + split / tp);
        if (t.attention == AttentionKernel::Materialized && t.recompute == Recompute::None)
            bytes += tokens * 5.0 * m.heads * t.seqLen / tp;
        return bytes;
    };
    const int dpShard = std::max(1, dp * cp);
    const bool distributed = opt.distributed || opt.zeroStage >= 1 || opt.fsdp;
    const bool zero2 = opt.zeroStage >= 2 || opt.fsdp;
    const bool zero3 = opt.zeroStage >= 3 || opt.fsdp;
    const int edp = std::max(1, (tp * cp * dp) / (ep * etp));
    double worst = 0;
    e.memoryGiBPerStage.assign(static_cast<std::size_t>(pp), 0);
    for (int s = 0; s < pp; ++s) {
        const double nd = stageDense[static_cast<std::size_t>(s)];
        const double nm = stageMoe[static_cast<std::size_t>(s)];
        const double dense = (nd * (attnParams + denseMlp) + nm * (attnParams + sharedMlp)
                              + ((s == 0 || s == pp - 1) ? embed : 0))
                             / tp;
        const double expert = nm * expertMlp / (ep * etp);
        MemoryBreakdown mb;
        // BF16 weights, gradient buffers (BF16, or FP32), FP32 master weights + Adam moments.
        mb.weightsGiB = (dense / (zero3 ? dpShard : 1) + expert / (zero3 ? edp : 1)) * 2 / kGiB;
        const double gradBytes = opt.gradReduceFp32 ? 4.0 : 2.0;
        mb.gradientsGiB = (dense / (zero2 ? dpShard : 1) + expert / (zero2 ? edp : 1)) * gradBytes
                          / kGiB;
        mb.optimizerGiB = (dense / (distributed ? dpShard : 1) + expert / (distributed ? edp : 1))
                          * 12 / kGiB;
        // In-flight micro-batches: 1F1B keeps up to PP of them on the first stage (more with
        // interleaving), fewer on later stages.
        double inFlight = std::min<double>(micro, pp - s);
        if (vp > 1)
            inFlight = std::min<double>(micro, (pp - s) + double(pp - 1) / vp);
        const double layerAct = nd * layerActivations(false) + nm * layerActivations(true);
        mb.activationsGiB = layerAct * std::max(1.0, inFlight) / kGiB;
        if (s == pp - 1) // logits in FP32 for the loss
            mb.activationsGiB += T * double(m.vocab) / tp * 4 * 2 / kGiB;
        // CUDA context, NCCL buffers, workspace and fragmentation.
        mb.otherGiB = 3.0
                      + 0.05
                                * (mb.weightsGiB + mb.gradientsGiB + mb.optimizerGiB
                                   + mb.activationsGiB);
        e.memoryGiBPerStage[static_cast<std::size_t>(s)] = mb.totalGiB();
        if (mb.totalGiB() > worst) {
            worst = mb.totalGiB();
            e.memory = mb;
        }
    }
    e.hbmGiB = topo.gpuSpec().hbmGB * 1e9 / kGiB;
    for (int s = 0; s < pp; ++s) {
        const double used = e.memoryGiBPerStage[static_cast<std::size_t>(s)];
        if (used > e.hbmGiB) {
            std::vector<int> gpus;
            for (int r = 0; r < ranks->worldSize(); ++r)
                if (ranks->coord(r, Dim::PP) == s)
                    gpus.push_back(ranks->gpuOfRank(r));
            warn(Severity::Error,
                 "out-of-memory",
                 (pp > 1 ? "stage " + std::to_string(s) : std::string("every GPU"))
                         + " is out of memory: " + formatNumber(used, 3) + " GiB needed, "
                         + formatNumber(e.hbmGiB, 3) + " GiB of HBM",
                 gpus);
        }
    }
}

void StepModel::fillLinks()
{
    std::shared_ptr<LinkLoads> loads = workspace.linkLoads();
    traffic.totals(loads->bytesUp, loads->bytesDown);
    traffic.peaks(loads->peakUtilization);
    const auto &links = topo.links();
    const std::size_t n = links.size();
    loads->utilization.resize(n);
    loads->loaded = 0;
    const double step = e.stepTimeS;
    for (std::size_t i = 0; i < n; ++i) {
        const float busiest = std::max(loads->bytesUp[i], loads->bytesDown[i]);
        if (busiest == 0) {
            loads->utilization[i] = 0;
            continue;
        }
        ++loads->loaded;
        const double rate = links[i].effectiveGbPerS() * 1e9;
        loads->utilization[i] = rate > 0 && step > 0 ? static_cast<float>(busiest / (rate * step))
                                                     : 0.0f;
    }
    e.links = loads;
}

} // namespace

Evaluation evaluate(const Layout &layout,
                    const Topology &topology,
                    EvaluationWorkspace &workspace,
                    const EvaluateOptions &options)
{
    try {
        workspace.bind(topology);
        return StepModel(layout, topology, workspace, options).run();
    } catch (const InputError &err) {
        Evaluation e;
        e.error = err.what();
        return e;
    }
}

Evaluation evaluate(const Layout &layout, const Topology &topology, const EvaluateOptions &options)
{
    EvaluationWorkspace workspace;
    return evaluate(layout, topology, workspace, options);
}

} // namespace railyard::engine
