// A collective lesson as a whole: what may run where (with the reason when it may not), the
// estimate's plan, the steps' durations (their share of the estimate's bandwidth time), the
// formula with its numbers, and what each GPU holds after a number of steps.
#include "lesson/collectivelesson.h"
#include "lesson/collectivelesson_p.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "collectives/traffic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace railyard::engine {

namespace {

std::string opText(CollectiveOp op)
{
    switch (op) {
    case CollectiveOp::AllReduce: return "all-reduce";
    case CollectiveOp::AllGather: return "all-gather";
    case CollectiveOp::ReduceScatter: return "reduce-scatter";
    case CollectiveOp::Broadcast: return "broadcast";
    default: return toString(op);
    }
}

std::string algoText(Algorithm a)
{
    switch (a) {
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::Nvls: return "NVLS";
    case Algorithm::NvlsTree: return "NVLS-tree";
    case Algorithm::Sharp: return "SHARP";
    case Algorithm::Hierarchical: return "hierarchical";
    default: return toString(a);
    }
}

std::string architectureText(const std::string &arch)
{
    if (arch.empty())
        return arch;
    std::string s = arch;
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
}

// The reasons an algorithm cannot run on a group, said for a student (the planner's own
// checks follow and catch anything left).
void checkAlgorithm(const Topology &t, const GroupShape &g, CollectiveOp op, Algorithm a)
{
    const bool ar = op == CollectiveOp::AllReduce;
    const std::string name = algoText(a);
    if (op != CollectiveOp::AllReduce && op != CollectiveOp::AllGather
        && op != CollectiveOp::ReduceScatter && op != CollectiveOp::Broadcast)
        throw InputError("the lesson steps through all-reduce, all-gather, reduce-scatter and "
                         "broadcast, not "
                         + std::string(toString(op)));
    if ((a == Algorithm::Tree || a == Algorithm::Nvls || a == Algorithm::Sharp) && !ar)
        throw InputError(name + " runs all-reduce only; choose Ring or Hierarchical for "
                         + opText(op));
    switch (a) {
    case Algorithm::Nvls:
        if (!t.gpuSpec().nvls)
            throw InputError("NVLS needs NVLink SHARP (NVSwitch gen 3+: Hopper and later); this "
                             "cluster's GPUs are "
                             + t.gpuSpec().id + " (" + architectureText(t.gpuSpec().architecture)
                             + "), whose NVLink cannot reduce in the switch");
        if (t.shape().pcieOnly || t.shape().directNvlink)
            throw InputError("NVLS needs NVSwitches; this cluster's GPUs are linked "
                             + std::string(t.shape().pcieOnly ? "over PCIe" : "directly")
                             + ", with no NVSwitch to reduce in");
        if (!t.shape().nvlsEnabled)
            throw InputError("NVLS is switched off in this layout (cluster.tuning.nvls is false)");
        if (g.ppn < 2 || g.pcieOnly)
            throw InputError("NVLS reduces inside an NVLink domain, and each domain holds only "
                             "one GPU of this group");
        break;
    case Algorithm::Sharp:
        if (!t.shape().sharp)
            throw InputError("SHARP needs a fabric whose switches reduce (cluster.fabric.sharp, "
                             "on SHARP-capable switches); this cluster's fabric has none");
        if (g.domains < 2)
            throw InputError("SHARP reduces in the network switches: choose GPUs on at least two "
                             "servers (this group is inside one NVLink domain)");
        break;
    case Algorithm::Tree:
        if (g.domains < 2)
            throw InputError("NCCL's tree runs across NVLink domains: this group is inside one, "
                             "where NCCL uses ring or NVLS; choose GPUs on at least two servers");
        break;
    case Algorithm::Hierarchical:
        if (op == CollectiveOp::Broadcast)
            throw InputError("hierarchical runs all-reduce, all-gather and reduce-scatter; "
                             "choose Ring for broadcast");
        break;
    case Algorithm::FlatRing:
        throw InputError("flat-ring is the textbook estimate, with no schedule of its own; "
                         "choose Ring to step through a ring");
    default: break;
    }
}

std::string protocolReason(Algorithm a, Protocol p)
{
    switch (p) {
    case Protocol::LL128: return "LL128: 120 data bytes in every 128";
    case Protocol::LL: return "LL: every 8-byte word carries 4 bytes of data and a flag";
    case Protocol::Simple:
        return a == Algorithm::Sharp ? "Simple on CollNet" : "Simple on NCCL's tree";
    }
    return {};
}

// "2(n-1)/n" with its value for the NVLink stage of each algorithm, as the traffic model
// counts a member's bytes.
struct Factor
{
    std::string text;
    std::string numbers;
    double value = 0;
};

Factor nvlinkFactor(CollectiveOp op, Algorithm a, const GroupShape &g)
{
    const int n = g.n, m = g.ppn;
    const std::string sn = std::to_string(n), sm = std::to_string(m);
    const bool ar = op == CollectiveOp::AllReduce;
    switch (a) {
    case Algorithm::Ring:
        if (op == CollectiveOp::Broadcast)
            return {"1", "1", 1.0};
        if (g.domains == 1)
            return ar ? Factor{"2(n-1)/n",
                               "2x" + std::to_string(n - 1) + "/" + sn,
                               2.0 * (n - 1) / n}
                      : Factor{"(n-1)/n", std::to_string(n - 1) + "/" + sn, double(n - 1) / n};
        return ar ? Factor{"2(n-1)/n x (m-1)/m",
                           "2x" + std::to_string(n - 1) + "/" + sn + " x " + std::to_string(m - 1)
                                   + "/" + sm,
                           2.0 * (n - 1) / n * (m - 1) / m}
                  : Factor{"(n-1)/n x (m-1)/m",
                           std::to_string(n - 1) + "/" + sn + " x " + std::to_string(m - 1) + "/"
                                   + sm,
                           double(n - 1) / n * (m - 1) / m};
    case Algorithm::Hierarchical:
        if (!ar)
            return {"(m-1)/m", std::to_string(m - 1) + "/" + sm, double(m - 1) / m};
        [[fallthrough]];
    case Algorithm::Tree:
    case Algorithm::Sharp:
        return {"2(m-1)/m", "2x" + std::to_string(m - 1) + "/" + sm, 2.0 * (m - 1) / m};
    case Algorithm::Nvls:
    case Algorithm::NvlsTree:
        return {"(m+1)/m", std::to_string(m + 1) + "/" + sm, double(m + 1) / m};
    default: return {"1", "1", 1.0};
    }
}

void writeFormula(CollectiveLesson &L,
                  const Topology &t,
                  const GroupShape &g,
                  LinkTraffic &traffic,
                  const CollectivePlan &plan)
{
    // The whole collective as the estimate prices it: its NVLink and network stages.
    traffic.beginPhase(1.0);
    traffic.setKindScale(LinkKind::NvLink, plan.nvlinkScale);
    addCollectiveTraffic(traffic, t, g, L.op, L.algorithm, L.bytes);
    traffic.phaseTime();
    const double nv = traffic.phaseNvlinkTime(), net = traffic.phaseOtherTime();
    const double linkS = stageTime(nv, net, L.algorithm, g.domains);
    const std::string S = formatBytes(L.bytes);
    std::vector<std::string> &f = L.formula;
    f.push_back("n = " + std::to_string(g.n) + " GPUs"
                + (g.domains > 1 ? ", N = " + std::to_string(g.domains) + " servers (NVLink domains)"
                                 : "")
                + ", m = " + std::to_string(g.ppn) + " per server, S = " + S);
    if (nv > 0) {
        const Factor k = nvlinkFactor(L.op, L.algorithm, g);
        const double B = k.value * L.bytes / nv / 1e9;
        std::string rate = formatNumber(B) + " GB/s";
        if (plan.nvlinkScale != 1)
            rate += " (NVLink x " + formatNumber(plan.nvlinkScale) + " NVLS efficiency)";
        f.push_back("t_NVLink = " + k.text + " x S / B_NVLink = " + k.numbers + " x " + S + " / "
                    + rate + " = " + formatSeconds(nv) + "  (B_NVLink: a GPU's NVLink, achieved)");
    }
    if (net > 0) {
        // The busiest network link: its bytes over its achieved rate.
        int busiest = -1;
        double worst = 0, bytes = 0;
        for (int l : traffic.phaseLinks()) {
            const Link &link = t.links()[static_cast<std::size_t>(l)];
            if (link.kind == LinkKind::NvLink || link.effectiveGbPerS() <= 0)
                continue;
            const double b = std::max(traffic.phaseUp(l), traffic.phaseDown(l));
            if (b / link.effectiveGbPerS() > worst) {
                worst = b / link.effectiveGbPerS();
                busiest = l;
                bytes = b;
            }
        }
        // Where each NIC's bytes follow from a formula (one ring per rail; SHARP's shards),
        // say it; else the busiest link's bytes as they are.
        const int N = g.domains, m = g.ppn;
        const bool ar = L.op == CollectiveOp::AllReduce;
        Factor k;
        if (L.algorithm == Algorithm::Hierarchical && N > 1 && g.ppn == g.ppnMin)
            k = ar ? Factor{"2(N-1)/N x S/m",
                            "2x" + std::to_string(N - 1) + "/" + std::to_string(N) + " x "
                                    + formatBytes(L.bytes / m),
                            2.0 * (N - 1) / N / m}
                   : Factor{"(N-1)/N x S/m",
                            std::to_string(N - 1) + "/" + std::to_string(N) + " x "
                                    + formatBytes(L.bytes / m),
                            double(N - 1) / N / m};
        else if (L.algorithm == Algorithm::Sharp && g.ppn == g.ppnMin)
            k = {"S/m", formatBytes(L.bytes / m), 1.0 / m};
        if (busiest >= 0 && k.value > 0 && std::abs(k.value * L.bytes / bytes - 1) < 0.01)
            f.push_back("t_network = " + k.text + " / B_NIC = " + k.numbers + " / "
                        + formatNumber(k.value * L.bytes / net / 1e9)
                        + " GB/s = " + formatSeconds(net) + "  (B_NIC: each GPU's NIC, achieved; "
                        + (L.algorithm == Algorithm::Sharp ? "the switches add the shards"
                                                           : "one ring per rail")
                        + ")");
        else if (busiest >= 0)
            f.push_back("t_network = busiest link's bytes / its rate = " + formatBytes(bytes)
                        + " on " + t.linkName(busiest) + " / " + formatNumber(bytes / net / 1e9)
                        + " GB/s = " + formatSeconds(net));
    }
    const bool staged = linkS > std::max(nv, net) * (1 + 1e-9);
    if (nv > 0 && net > 0)
        f.push_back(staged ? "t_links = max(t_NVLink, t_network) + 0.15 x min(...) = "
                                     + formatSeconds(linkS)
                                     + " (NCCL pipelines the two stages, not perfectly)"
                           : "t_links = max(t_NVLink, t_network) = " + formatSeconds(linkS));
    const int steps = static_cast<int>(L.steps.size());
    if (L.stepsAloneS > 0 && std::abs(L.stepsAloneS / linkS - 1) > 0.005)
        f.push_back("the " + std::to_string(steps) + " steps one after another would take "
                    + formatSeconds(L.stepsAloneS)
                    + "; NCCL pipelines chunks through them, so each step shows its share of "
                    + formatSeconds(linkS));
    double bw = linkS;
    if (plan.efficiency != 1) {
        bw = linkS / plan.efficiency;
        f.push_back("t_bw = t_links / " + formatNumber(plan.efficiency) + " = " + formatSeconds(bw)
                    + " (" + protocolReason(L.algorithm, L.protocol) + ")");
    }
    if (plan.bwTimeS > bw * (1 + 1e-6) && plan.capBusGBps > 0)
        f.push_back("NCCL's per-channel ceiling: bus bandwidth at most "
                    + formatNumber(plan.capBusGBps) + " GB/s, so t_bw = "
                    + formatNumber(busBandwidthFactor(L.op, g.n)) + " x " + S + " / "
                    + formatNumber(plan.capBusGBps) + " GB/s = " + formatSeconds(plan.bwTimeS));
    f.push_back("+ latency " + formatSeconds(plan.latencyS) + " (kernel launch and NCCL's "
                + algoText(L.algorithm) + "/" + toString(L.protocol) + " latency per step)");
    f.push_back("t = " + formatSeconds(L.totalS) + " (the estimate: " + formatSeconds(L.estimateS)
                + ")");
}

} // namespace

CollectiveLesson buildCollectiveLesson(const Topology &t, const CollectiveRequest &req)
{
    std::vector<int> gpus = req.gpus;
    if (gpus.empty()) {
        gpus.resize(static_cast<std::size_t>(t.gpuCount()));
        std::iota(gpus.begin(), gpus.end(), 0);
    }
    if (!(req.bytes > 0))
        throw InputError("the message size must be positive");
    if (gpus.size() < 2)
        throw InputError("a collective needs at least two GPUs, got " + std::to_string(gpus.size()));
    if (gpus.size() > static_cast<std::size_t>(kLessonMaxRanks))
        throw InputError("the lesson lists every transfer of every step, for groups of up to "
                         + std::to_string(kLessonMaxRanks) + " GPUs; this one has "
                         + std::to_string(gpus.size()));
    for (int gpu : gpus)
        if (gpu < 0 || gpu >= t.gpuCount())
            throw InputError("GPU " + std::to_string(gpu) + " is not in this cluster (it has "
                             + std::to_string(t.gpuCount()) + ")");
    const GroupShape g = analyzeGroup(t, gpus);
    checkAlgorithm(t, g, req.op, req.algorithm);
    LinkTraffic traffic(t);
    const CollectivePlan plan = planCollective(t, g, req.op, req.bytes, req.algorithm, traffic);
    if (plan.algorithm != Algorithm::Ring && plan.algorithm != Algorithm::Hierarchical)
        checkAlgorithm(t,
                       g,
                       req.op,
                       plan.algorithm == Algorithm::NvlsTree ? Algorithm::Nvls : plan.algorithm);

    CollectiveLesson L;
    L.op = req.op;
    L.algorithm = plan.algorithm;
    L.protocol = plan.protocol;
    L.bytes = req.bytes;
    L.ranks = g.n;
    L.domains = g.domains;
    L.gpus = g.gpus;
    L.nvlinkScale = plan.nvlinkScale;
    {
        detail::LessonBuilder b(t, g, L, plan.nvlinkScale);
        detail::buildSchedule(b, req.op, plan.algorithm, req.bytes);
    }
    for (const LessonStep &s : L.steps)
        L.stepsAloneS += s.linkS;
    L.bandwidthS = plan.bwTimeS;
    L.latencyS = plan.latencyS;
    L.totalS = plan.timeS;
    const double scale = L.stepsAloneS > 0 ? L.bandwidthS / L.stepsAloneS : 0;
    const std::size_t count = L.steps.size();
    double at = 0;
    for (std::size_t i = 0; i < count; ++i) {
        LessonStep &s = L.steps[i];
        s.timeS = s.linkS * scale;
        s.startS = at;
        at += s.timeS;
        s.text = "Step " + std::to_string(i + 1) + " of " + std::to_string(count) + " - " + s.phase
                 + ": " + s.text;
    }
    CollectiveRequest same = req;
    same.gpus = gpus;
    same.wantLinks = false;
    L.estimateS = estimateCollective(t, same).timeS;
    L.textbookEfficiency = req.efficiency.value_or(kSeedFlatRingEfficiency);
    L.textbook = flatRing(t, req.op, req.bytes, g.gpus, L.textbookEfficiency);
    L.title = algoText(L.algorithm) + " " + opText(L.op) + " of " + formatBytes(L.bytes) + " on "
              + std::to_string(g.n) + " GPUs (" + std::to_string(g.domains) + " NVLink domain"
              + (g.domains == 1 ? "" : "s") + "), " + toString(L.protocol) + " protocol";
    if (req.algorithm == Algorithm::Auto)
        L.notes.push_back("auto: NCCL would pick " + algoText(L.algorithm) + " with "
                          + toString(L.protocol) + " for this size and group");
    if (g.domains > 1)
        L.notes.push_back("the GPUs are taken server by server, as NCCL builds its rings and "
                          "trees whatever the rank order");
    if (L.algorithm == Algorithm::Ring && g.domains > 1)
        L.notes.push_back("NCCL runs one ring per channel, each entering and leaving a server at "
                          "another GPU, so the bytes between servers spread over every NIC");
    if (req.op == CollectiveOp::Broadcast)
        L.notes.push_back("broadcast: the root's data goes down the chain in chunks; the model "
                          "counts the pipeline's steady state");
    writeFormula(L, t, g, traffic, plan);
    return L;
}

std::vector<LessonLinkLoad> lessonStepLoads(const Topology &t, const CollectiveLesson &L, int step)
{
    std::vector<LessonLinkLoad> out;
    if (step < 0 || step >= static_cast<int>(L.steps.size()))
        return out;
    const double linkS = L.steps[static_cast<std::size_t>(step)].linkS;
    for (const LinkBytes &lb : L.stepLinks(step)) {
        const Link &link = t.links()[static_cast<std::size_t>(lb.link)];
        double rate = link.effectiveGbPerS() * 1e9;
        if (link.kind == LinkKind::NvLink)
            rate *= L.nvlinkScale;
        const double bytes = std::max(lb.up, lb.down);
        const double load = rate > 0 && linkS > 0 ? bytes / rate / linkS : 0;
        out.push_back({lb.link, bytes, std::clamp(load, 0.0, 1.0), lb.down > lb.up});
    }
    return out;
}

double LessonProgress::done(int rank, CollectiveOp op) const
{
    if (chunks <= 0 || contributors <= 0)
        return 0;
    double sum = 0, best = 0;
    for (int c = 0; c < chunks; ++c) {
        const double v = std::min(at(rank, c), contributors) / double(contributors);
        sum += v;
        best = std::max(best, v);
    }
    if (op == CollectiveOp::ReduceScatter)
        return best;
    return sum / chunks;
}

LessonProgress lessonProgress(const CollectiveLesson &L, int stepsDone)
{
    LessonProgress P;
    P.ranks = L.ranks;
    P.chunks = L.chunks;
    const bool reduction = L.op == CollectiveOp::AllReduce || L.op == CollectiveOp::ReduceScatter;
    P.contributors = reduction ? L.ranks : 1;
    const std::size_t C = static_cast<std::size_t>(std::max(0, L.chunks));
    P.count.assign(static_cast<std::size_t>(L.ranks) * C, reduction ? 1 : 0);
    if (!reduction)
        for (std::size_t r = 0; r < L.initialChunk.size() && r < static_cast<std::size_t>(L.ranks);
             ++r) {
            const int c = L.initialChunk[r];
            if (c == -1)
                std::fill_n(P.count.begin() + static_cast<std::ptrdiff_t>(r * C), C, 1);
            else if (c >= 0 && static_cast<std::size_t>(c) < C)
                P.count[r * C + static_cast<std::size_t>(c)] = 1;
        }
    // Switches hold what is reduced into them (NVLS, SHARP), by device.
    std::map<int, std::vector<int>> switches;
    struct Pending
    {
        std::size_t at;
        int value;
        bool reduce;
    };
    std::vector<Pending> pending;
    const int last = std::clamp(stepsDone, 0, static_cast<int>(L.steps.size()));
    for (int s = 0; s < last; ++s) {
        pending.clear();
        for (const LessonTransfer &tr : L.steps[static_cast<std::size_t>(s)].transfers) {
            std::vector<int> *sw = nullptr;
            if (tr.toRank < 0) {
                sw = &switches[tr.to];
                sw->resize(C, 0);
            }
            const std::vector<int> *from = nullptr;
            if (tr.fromRank < 0) {
                auto it = switches.find(tr.from);
                if (it == switches.end())
                    continue;
                from = &it->second;
            }
            for (int k = 0; k < tr.chunks; ++k) {
                const std::size_t c = static_cast<std::size_t>(tr.chunk + k);
                if (c >= C)
                    break;
                const int value = from ? (*from)[c]
                                       : P.count[static_cast<std::size_t>(tr.fromRank) * C + c];
                if (sw) {
                    int &v = (*sw)[c];
                    v = tr.reduce ? v + value : value;
                } else {
                    pending.push_back(
                            {static_cast<std::size_t>(tr.toRank) * C + c, value, tr.reduce});
                }
            }
        }
        // GPUs change at the end of the step: what they send in it is what they held before.
        for (const Pending &p : pending) {
            int &v = P.count[p.at];
            v = p.reduce ? v + p.value : std::max(v, p.value);
        }
    }
    return P;
}

} // namespace railyard::engine
