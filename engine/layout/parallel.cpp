#include "layout/parallel.h"

#include "base/inputerror.h"

#include <sstream>

namespace railyard::engine {

const char *toString(Dim d)
{
    switch (d) {
    case Dim::TP: return "tp";
    case Dim::CP: return "cp";
    case Dim::EP: return "ep";
    case Dim::DP: return "dp";
    case Dim::PP: return "pp";
    }
    return "tp";
}

const char *dimLabel(Dim d)
{
    switch (d) {
    case Dim::TP: return "TP";
    case Dim::CP: return "CP";
    case Dim::EP: return "EP";
    case Dim::DP: return "DP";
    case Dim::PP: return "PP";
    }
    return "TP";
}

const char *groupNoun(Dim d)
{
    switch (d) {
    case Dim::TP: return "TP group";
    case Dim::CP: return "CP group";
    case Dim::EP: return "EP group";
    case Dim::DP: return "DP group";
    case Dim::PP: return "pipeline";
    }
    return "group";
}

RankLayout::RankLayout(const Layout &l)
{
    const ParallelConfig &p = l.parallel;
    m_tp = p.tp;
    m_cp = p.cp;
    m_pp = p.pp;
    m_dp = l.dataParallel();
    m_ep = p.ep;
    m_etp = p.etp.value_or(1);
    // Sizes come from files (up to kMaxGpus each): products in 64 bits, saturating.
    const std::int64_t world = sizeProduct({m_tp, m_cp, m_pp, m_dp});
    const int gpus = l.cluster.gpuCount();
    // With faults (GPUs out, a job re-formed around them), an explicit mapping may leave GPUs
    // of the cluster idle.
    const bool idleAllowed = !l.cluster.faults.empty() && !l.mapping.empty() && world < gpus;
    if ((world != gpus && !idleAllowed) || m_tp < 1 || m_cp < 1 || m_pp < 1 || m_dp < 1)
        throw InputError("parallel: TP x CP x PP x DP = " + std::to_string(m_tp) + " x "
                         + std::to_string(m_cp) + " x " + std::to_string(m_pp) + " x "
                         + std::to_string(m_dp) + " = " + sizeText(world) + ", but the cluster has "
                         + std::to_string(gpus) + " GPUs");
    m_world = static_cast<int>(world);
    const std::int64_t stageRanks = sizeProduct({m_tp, m_cp, m_dp});
    const std::int64_t expertRanks = sizeProduct({m_ep, m_etp});
    if (m_ep < 1 || m_etp < 1 || stageRanks % expertRanks != 0)
        throw InputError("parallel: EP x expert TP = " + std::to_string(m_ep) + " x "
                         + std::to_string(m_etp) + " = " + sizeText(expertRanks)
                         + " must divide TP x CP x DP = " + std::to_string(stageRanks)
                         + " (expert parallelism is carved out of a pipeline stage's ranks)");
    m_edp = static_cast<int>(stageRanks / expertRanks);

    std::stringstream ss(p.order);
    std::string part;
    while (std::getline(ss, part, '-')) {
        if (part == "tp")
            m_order.push_back(Dim::TP);
        else if (part == "cp")
            m_order.push_back(Dim::CP);
        else if (part == "dp")
            m_order.push_back(Dim::DP);
        else if (part == "pp")
            m_order.push_back(Dim::PP);
    }
    int stride = 1;
    for (Dim d : m_order) {
        m_stride[static_cast<std::size_t>(d)] = stride;
        stride *= size(d);
    }

    m_rankToGpu.resize(static_cast<std::size_t>(m_world));
    m_gpuToRank.assign(static_cast<std::size_t>(gpus), -1);
    if (l.mapping.empty()) {
        for (int r = 0; r < m_world; ++r)
            m_rankToGpu[static_cast<std::size_t>(r)] = r;
    } else {
        if (static_cast<int>(l.mapping.size()) != m_world)
            throw InputError("mapping: expected " + std::to_string(m_world)
                             + " entries (one GPU per rank), got "
                             + std::to_string(l.mapping.size()));
        m_rankToGpu = l.mapping;
    }
    // A mapping built in code has not been through the loader's checks.
    for (int r = 0; r < m_world; ++r) {
        const int g = m_rankToGpu[static_cast<std::size_t>(r)];
        if (g < 0 || g >= gpus || m_gpuToRank[static_cast<std::size_t>(g)] != -1)
            throw InputError("mapping: rank " + std::to_string(r) + " is on GPU "
                             + std::to_string(g) + ", which "
                             + (g < 0 || g >= gpus ? "does not exist" : "another rank has"));
        m_gpuToRank[static_cast<std::size_t>(g)] = r;
    }
    // Coordinates are read in every inner loop of the cost engine: compute them once.
    m_coords.resize(static_cast<std::size_t>(m_world) * 5);
    for (int r = 0; r < m_world; ++r)
        for (Dim d : kAllDims)
            m_coords[static_cast<std::size_t>(r) * 5 + static_cast<std::size_t>(d)]
                    = computeCoord(r, d);
}

int RankLayout::size(Dim d) const
{
    switch (d) {
    case Dim::TP: return m_tp;
    case Dim::CP: return m_cp;
    case Dim::EP: return m_ep;
    case Dim::DP: return m_dp;
    case Dim::PP: return m_pp;
    }
    return 1;
}

int RankLayout::coord(int rank, Dim d) const
{
    return m_coords[static_cast<std::size_t>(rank) * 5 + static_cast<std::size_t>(d)];
}

int RankLayout::computeCoord(int rank, Dim d) const
{
    if (d == Dim::EP) {
        // The rank's place among its stage's TP x CP x DP ranks, TP fastest; experts take
        // expert-TP fastest, then EP.
        const int s = computeCoord(rank, Dim::TP)
                      + m_tp * (computeCoord(rank, Dim::CP) + m_cp * computeCoord(rank, Dim::DP));
        return (s / m_etp) % m_ep;
    }
    return (rank / m_stride[static_cast<std::size_t>(d)]) % size(d);
}

int RankLayout::groupCount(Dim d) const
{
    return m_world / size(d);
}

int RankLayout::groupOf(int rank, Dim d) const
{
    if (d == Dim::EP) {
        const int s = coord(rank, Dim::TP)
                      + m_tp * (coord(rank, Dim::CP) + m_cp * coord(rank, Dim::DP));
        const int etp = s % m_etp;
        const int edp = s / (m_etp * m_ep);
        const int perStage = m_etp * m_edp;
        return coord(rank, Dim::PP) * perStage + edp * m_etp + etp;
    }
    // Index the other dense dims in order, skipping d.
    int g = 0, mul = 1;
    for (Dim o : m_order) {
        if (o == d)
            continue;
        g += coord(rank, o) * mul;
        mul *= size(o);
    }
    return g;
}

std::vector<int> RankLayout::groupRanks(Dim d, int g) const
{
    std::vector<int> ranks;
    ranks.reserve(static_cast<std::size_t>(size(d)));
    if (d == Dim::EP) {
        const int perStage = m_etp * m_edp;
        const int pp = g / perStage;
        const int rest = g % perStage;
        const int edp = rest / m_etp;
        const int etp = rest % m_etp;
        for (int e = 0; e < m_ep; ++e) {
            const int s = etp + m_etp * (e + m_ep * edp);
            const int tp = s % m_tp;
            const int cp = (s / m_tp) % m_cp;
            const int dp = s / (m_tp * m_cp);
            ranks.push_back(tp * m_stride[0] + cp * m_stride[1] + dp * m_stride[3]
                            + pp * m_stride[4]);
        }
        return ranks;
    }
    // Decode g into the other dims' coordinates.
    int base = 0, rest = g;
    for (Dim o : m_order) {
        if (o == d)
            continue;
        base += (rest % size(o)) * m_stride[static_cast<std::size_t>(o)];
        rest /= size(o);
    }
    for (int i = 0; i < size(d); ++i)
        ranks.push_back(base + i * m_stride[static_cast<std::size_t>(d)]);
    return ranks;
}

std::vector<int> RankLayout::groupGpus(Dim d, int g) const
{
    std::vector<int> gpus = groupRanks(d, g);
    for (int &r : gpus)
        r = gpuOfRank(r);
    return gpus;
}

int RankLayout::rankOfGpu(int gpu) const
{
    if (gpu < 0 || gpu >= static_cast<int>(m_gpuToRank.size()))
        return -1;
    return m_gpuToRank[static_cast<std::size_t>(gpu)];
}

std::vector<int> RankLayout::ranksAt(Dim d, int value) const
{
    std::vector<int> out;
    for (int r = 0; r < m_world; ++r)
        if (coord(r, d) == value)
            out.push_back(r);
    return out;
}

bool RankLayout::isIdentityMapping() const
{
    for (int r = 0; r < m_world; ++r)
        if (m_rankToGpu[static_cast<std::size_t>(r)] != r)
            return false;
    return true;
}

} // namespace railyard::engine
