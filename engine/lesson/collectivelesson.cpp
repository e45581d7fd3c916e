// The schedules of a collective lesson: ring, NCCL's tree, NVLS (and NVLS-tree), SHARP and
// hierarchical, step by step. Each step's bytes are put on the links with the traffic model's
// own routing (collectivetraffic.cpp's pieces, LinkTraffic's NVLink ports and PCIe paths), so
// the steps of a collective carry, link by link, what the estimate puts there. The formula, the
// checks and the progress view are in collectivelessonformula.cpp.
#include "lesson/collectivelesson.h"
#include "lesson/collectivelesson_p.h"

#include "base/inputerror.h"
#include "base/units.h"
#include "collectives/collective_p.h"
#include "collectives/traffic.h"

#include <algorithm>
#include <string>

namespace railyard::engine {

double CollectiveLesson::busbwGBps() const
{
    return totalS > 0 ? bytes * busBandwidthFactor(op, ranks) / totalS / 1e9 : 0.0;
}

const std::vector<LinkBytes> &CollectiveLesson::stepLinks(int step) const
{
    static const std::vector<LinkBytes> none;
    if (step < 0 || step >= static_cast<int>(steps.size()))
        return none;
    const int set = steps[static_cast<std::size_t>(step)].linkSet;
    return set < 0 ? none : linkSets[static_cast<std::size_t>(set)];
}

namespace detail {

LessonBuilder::LessonBuilder(const Topology &t,
                             const GroupShape &g,
                             CollectiveLesson &out,
                             double nvlinkScale)
    : m_t(t)
    , m_g(g)
    , m_out(out)
    , m_traffic(t)
    , m_nvScale(nvlinkScale)
{
    if (t.shape().directNvlink)
        for (int d = 0; d < g.domains; ++d) {
            const std::uint64_t mask = localMask(t, g, d);
            for (int k = 0; k < g.members(d); ++k)
                m_traffic.setNvlinkPeers(g.member(d, k), mask);
        }
}

int LessonBuilder::measure(const std::function<void(LinkTraffic &)> &add)
{
    m_traffic.beginPhase(1.0);
    m_traffic.setKindScale(LinkKind::NvLink, m_nvScale);
    add(m_traffic);
    Pattern p;
    p.linkS = m_traffic.phaseTime();
    p.bottleneck = m_traffic.phaseBottleneck();
    m_shares.clear();
    m_traffic.phaseBytes(m_shares);
    std::sort(m_shares.begin(), m_shares.end(), [](const LinkShare &a, const LinkShare &b) {
        return a.link < b.link;
    });
    std::vector<LinkBytes> set;
    for (const LinkShare &s : m_shares) {
        if (s.up == 0 && s.down == 0)
            continue;
        if (!set.empty() && set.back().link == s.link) {
            set.back().up += s.up;
            set.back().down += s.down;
        } else {
            set.push_back({s.link, s.up, s.down});
        }
    }
    p.linkSet = static_cast<int>(m_out.linkSets.size());
    m_out.linkSets.push_back(std::move(set));
    m_patterns.push_back(p);
    return static_cast<int>(m_patterns.size()) - 1;
}

LessonStep &LessonBuilder::step(int pattern, std::string phase, std::string text, bool network)
{
    const Pattern &p = m_patterns[static_cast<std::size_t>(pattern)];
    LessonStep s;
    s.phase = std::move(phase);
    s.text = std::move(text);
    s.network = network;
    s.linkSet = p.linkSet;
    s.bottleneckLink = p.bottleneck;
    s.linkS = p.linkS;
    m_out.steps.push_back(std::move(s));
    return m_out.steps.back();
}

void LessonBuilder::send(
        LessonStep &s, int fromRank, int toRank, int chunk, int chunks, double bytes, bool reduce)
{
    sendDevice(s,
               fromRank,
               gpuDevice(fromRank),
               toRank,
               gpuDevice(toRank),
               chunk,
               chunks,
               bytes,
               reduce);
}

void LessonBuilder::sendDevice(LessonStep &s,
                               int fromRank,
                               int fromDevice,
                               int toRank,
                               int toDevice,
                               int chunk,
                               int chunks,
                               double bytes,
                               bool reduce)
{
    LessonTransfer tr;
    tr.from = fromDevice;
    tr.to = toDevice;
    tr.fromRank = fromRank;
    tr.toRank = toRank;
    tr.chunk = chunk;
    tr.chunks = chunks;
    tr.bytes = bytes;
    tr.reduce = reduce;
    s.transfers.push_back(tr);
}

int LessonBuilder::gpuDevice(int rank) const
{
    return m_t.gpuDevice(m_g.gpus[static_cast<std::size_t>(rank)]);
}

int LessonBuilder::rank(int d, int k) const
{
    return m_g.domainStart[static_cast<std::size_t>(d)] + k;
}

std::vector<std::pair<int, double>> LessonBuilder::nvswitchesOf(int d) const
{
    // Every member reaches the same switches with the same lanes: read them off the first.
    const int gpu = m_g.member(d, 0);
    std::vector<std::pair<int, double>> out;
    double lanes = 0;
    for (int l : m_t.gpuNvlinks(gpu)) {
        const int sw = m_t.otherEnd(l, m_t.gpuDevice(gpu));
        const double n = m_t.links()[static_cast<std::size_t>(l)].workingLanes();
        lanes += n;
        auto it = std::find_if(out.begin(), out.end(), [&](const auto &e) { return e.first == sw; });
        if (it == out.end())
            out.emplace_back(sw, n);
        else
            it->second += n;
    }
    for (auto &e : out)
        e.second = lanes > 0 ? e.second / lanes : 0;
    return out;
}

void LessonBuilder::intraNvlink(LinkTraffic &tr,
                                double egressPerMember,
                                double ingressPerMember,
                                int activeStep) const
{
    for (int d = 0; d < m_g.domains; ++d) {
        const int m = m_g.members(d);
        if (m < 2 || (activeStep >= 0 && activeStep >= m - 1))
            continue;
        for (int k = 0; k < m; ++k)
            tr.addNvlink(m_g.member(d, k), egressPerMember / m, ingressPerMember / m);
    }
}

void LessonBuilder::ringEdge(LinkTraffic &tr, int a, int b, double bytes) const
{
    const int ga = m_g.gpus[static_cast<std::size_t>(a)];
    const int gb = m_g.gpus[static_cast<std::size_t>(b)];
    if (m_t.localDomainOfGpu(ga) != m_t.localDomainOfGpu(gb)) {
        addNetworkFlow(tr, m_t, ga, gb, bytes, 0, m_g.channelsPerNic);
    } else if (m_g.pcieOnly) {
        tr.addPciePeer(ga, gb, bytes);
    } else {
        tr.addNvlink(ga, bytes, 0);
        tr.addNvlink(gb, 0, bytes);
    }
}

} // namespace detail

namespace {

using detail::LessonBuilder;

int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

std::string chunkName(double bytes)
{
    return formatBytes(bytes);
}

// ---- Ring: every rank sends one chunk to the next, n-1 steps per half.
void ringSchedule(LessonBuilder &b, CollectiveOp op, double S)
{
    const GroupShape &g = b.group();
    CollectiveLesson &out = b.out();
    const int n = g.n;
    const double f = busBandwidthFactor(op, n);
    if (op == CollectiveOp::Broadcast) {
        // A pipelined chain: the root's data cut into n chunks, each passed along the ring.
        const int C = n;
        out.chunks = C;
        out.chunkBytes = S / C;
        out.initialChunk.assign(static_cast<std::size_t>(n), -2);
        out.initialChunk[0] = -1;
        const int steps = C + n - 2;
        for (int s = 0; s < steps; ++s) {
            const int first = std::max(0, s - C + 1), last = std::min(s, n - 2);
            const int pattern = b.measure([&](LinkTraffic &tr) {
                for (int j = first; j <= last; ++j)
                    b.ringEdge(tr, j, j + 1, S / C);
            });
            LessonStep &st = b.step(pattern,
                                    "pipeline",
                                    first == last
                                            ? "GPU " + std::to_string(first) + " passes one chunk ("
                                                      + chunkName(S / C) + ") to GPU "
                                                      + std::to_string(first + 1)
                                            : "GPUs " + std::to_string(first) + " to "
                                                      + std::to_string(last)
                                                      + " each pass one chunk (" + chunkName(S / C)
                                                      + ") down the chain",
                                    g.domains > 1);
            for (int j = first; j <= last; ++j)
                b.send(st, j, j + 1, s - j, 1, S / C, false);
        }
        return;
    }
    out.chunks = n;
    out.chunkBytes = S / n;
    if (op == CollectiveOp::AllGather)
        for (int i = 0; i < n; ++i)
            out.initialChunk.push_back(i);
    // Every step of a ring moves the same bytes on the same links: S/n per ring edge.
    const int pattern = b.measure([&](LinkTraffic &tr) {
        addCollectiveTraffic(tr, b.topology(), g, op, Algorithm::Ring, S / (n * f));
    });
    const bool network = g.domains > 1;
    const std::string chunk = chunkName(S / n);
    if (op == CollectiveOp::AllGather) {
        for (int s = 0; s < n - 1; ++s) {
            LessonStep &st = b.step(pattern,
                                    "all-gather",
                                    "each GPU forwards the chunk it got last (" + chunk
                                            + ") to its ring neighbour, which keeps a copy",
                                    network);
            for (int i = 0; i < n; ++i)
                b.send(st, i, (i + 1) % n, mod(i - s, n), 1, S / n, false);
        }
        return;
    }
    const int steps = op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1;
    for (int s = 0; s < steps; ++s) {
        const bool reduce = s < n - 1;
        LessonStep &st = reduce ? b.step(pattern,
                                         "reduce-scatter",
                                         "each GPU sends a chunk (" + chunk
                                                 + ") to its ring neighbour, which adds it to its "
                                                   "own copy of that chunk",
                                         network)
                                : b.step(pattern,
                                         "all-gather",
                                         "each GPU forwards a finished chunk (" + chunk
                                                 + ") to its ring neighbour, which keeps it",
                                         network);
        for (int i = 0; i < n; ++i)
            b.send(st, i, (i + 1) % n, mod(i - s - 1, n), 1, S / n, reduce);
    }
}

// ---- Hierarchical: reduce-scatter inside each domain, the collective across domains between
// GPUs of the same position (one ring per rail), all-gather inside each domain.
void hierarchicalSchedule(LessonBuilder &b, CollectiveOp op, double S)
{
    const GroupShape &g = b.group();
    CollectiveLesson &out = b.out();
    const Topology &t = b.topology();
    const int N = g.domains, P = g.ppn;
    const bool ar = op == CollectiveOp::AllReduce;
    out.chunks = P * N;
    out.chunkBytes = S / (P * N);
    const double flows = g.channelsPerNic;
    const auto intraSteps = [&](bool reduce, bool gatherFromOwn) {
        for (int s = 0; s < P - 1; ++s) {
            const int pattern = b.measure([&](LinkTraffic &tr) { b.intraNvlink(tr, S, S, s); });
            LessonStep &st = b.step(
                    pattern,
                    reduce ? "reduce-scatter in each server" : "all-gather in each server",
                    reduce ? "inside each NVLink domain, each GPU sends a 1/" + std::to_string(P)
                                     + " shard (" + chunkName(S / P)
                                     + ") to its neighbour, which adds it"
                           : "inside each NVLink domain, each GPU forwards a finished shard ("
                                     + chunkName(S / P) + ") to its neighbour",
                    false);
            for (int d = 0; d < N; ++d) {
                const int m = g.members(d);
                if (s >= m - 1)
                    continue;
                for (int i = 0; i < m; ++i) {
                    const int c = gatherFromOwn ? mod(i - s, m) : mod(i - s - 1, m);
                    b.send(st, b.rank(d, i), b.rank(d, (i + 1) % m), c * N, N, S / m, reduce);
                }
            }
        }
    };
    // Across domains: one ring per position k, over the GPUs k of every domain. Reductions
    // (reduce-scatter, then all-gather for all-reduce) send piece d-s-1; an all-gather piece d-s.
    const auto interSteps = [&](int count, bool gatherOnly) {
        if (N < 2)
            return;
        const int pattern = b.measure([&](LinkTraffic &tr) {
            for (int d = 0; d < N; ++d) {
                const int e = (d + 1) % N;
                for (int k = 0; k < g.members(d); ++k)
                    detail::addNetworkFlow(tr,
                                           t,
                                           g.member(d, k),
                                           g.member(e, k % g.members(e)),
                                           S / (P * N),
                                           k,
                                           flows);
            }
        });
        for (int s = 0; s < count; ++s) {
            const bool reduce = !gatherOnly && s < N - 1;
            LessonStep &st = b.step(
                    pattern,
                    reduce ? "reduce-scatter across servers" : "all-gather across servers",
                    "GPU k of each server sends a 1/" + std::to_string(N) + " piece of shard k ("
                            + chunkName(S / (P * N))
                            + ") to GPU k of the next server over its own NIC (one ring per rail)"
                            + (reduce ? ", which adds it" : ", which keeps it"),
                    true);
            for (int d = 0; d < N; ++d) {
                const int e = (d + 1) % N;
                const int piece = gatherOnly ? mod(d - s, N) : mod(d - s - 1, N);
                for (int k = 0; k < g.members(d); ++k)
                    b.send(st,
                           b.rank(d, k),
                           b.rank(e, k % g.members(e)),
                           k * N + piece,
                           1,
                           S / (P * N),
                           reduce);
            }
        }
    };
    if (op == CollectiveOp::AllGather) {
        for (int d = 0; d < N; ++d)
            for (int k = 0; k < g.members(d); ++k)
                out.initialChunk.push_back(k * N + d);
        interSteps(N - 1, true);
        intraSteps(false, true);
        return;
    }
    intraSteps(true, false);
    interSteps(ar ? 2 * (N - 1) : N - 1, false);
    if (ar)
        intraSteps(false, true);
}

} // namespace

namespace detail {

void buildSchedule(LessonBuilder &b, CollectiveOp op, Algorithm algo, double S)
{
    switch (algo) {
    case Algorithm::Ring: ringSchedule(b, op, S); return;
    case Algorithm::Hierarchical: hierarchicalSchedule(b, op, S); return;
    case Algorithm::Tree:
    case Algorithm::NvlsTree: treeSchedule(b, algo, S); return;
    case Algorithm::Nvls: nvlsSchedule(b, S); return;
    case Algorithm::Sharp: sharpSchedule(b, S); return;
    default: throw InputError(std::string("the lesson cannot step through ") + toString(algo));
    }
}

} // namespace detail

} // namespace railyard::engine
