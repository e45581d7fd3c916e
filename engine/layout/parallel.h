#pragma once

#include "layout/layout.h"

#include <array>
#include <string>
#include <vector>

namespace railyard::engine {

// Parallel dimensions. Dense groups: TP, CP, DP, PP (GPUs = TP x CP x PP x DP). Expert groups
// (EP) are carved out of the TP x CP x DP ranks of a pipeline stage, as in Megatron-Core.
enum class Dim { TP, CP, EP, DP, PP };
inline constexpr std::array<Dim, 5> kAllDims = {Dim::TP, Dim::CP, Dim::EP, Dim::DP, Dim::PP};
const char *toString(Dim d); // "tp", ...
const char *dimLabel(Dim d); // "TP", ...
// A group of `d` is the ranks that differ only in their `d` coordinate: "TP group", "CP group",
// "EP group", "DP group", "pipeline" (one rank per stage). A PP stage and a DP replica are
// instead the ranks that share a PP or DP coordinate (RankLayout::ranksAt).
const char *groupNoun(Dim d);

// Ranks, their coordinates in each dimension, and the rank -> GPU mapping.
class RankLayout
{
public:
    // Builds the layout's ranks. Throws InputError when the sizes cannot describe the cluster
    // (the product of TP, CP, PP and DP differs from the GPU count; EP x ETP does not divide
    // TP x CP x DP; the mapping has the wrong length).
    explicit RankLayout(const Layout &layout);

    int worldSize() const { return m_world; }
    int size(Dim d) const;
    int expertTensorParallel() const { return m_etp; }

    // Coordinate of `rank` along `d` (the index inside its group) and its group's index.
    int coord(int rank, Dim d) const;
    int groupOf(int rank, Dim d) const;
    int groupCount(Dim d) const;
    // Ranks of group `g` of dimension `d`, in rank order along `d`.
    std::vector<int> groupRanks(Dim d, int g) const;
    // The same as GPU indices (through the mapping).
    std::vector<int> groupGpus(Dim d, int g) const;

    // The ranks whose `d` coordinate is `value`: a pipeline stage (PP), a model replica (DP).
    std::vector<int> ranksAt(Dim d, int value) const;

    int gpuOfRank(int rank) const { return m_rankToGpu[static_cast<std::size_t>(rank)]; }
    int rankOfGpu(int gpu) const; // -1 if no rank runs there
    const std::vector<int> &mapping() const { return m_rankToGpu; }
    // The mapping the order alone gives (rank r on GPU r).
    bool isIdentityMapping() const;

    // Dense dims from fastest to slowest, as the order string gives them.
    const std::vector<Dim> &order() const { return m_order; }

private:
    int computeCoord(int rank, Dim d) const;

    int m_tp = 1, m_cp = 1, m_pp = 1, m_dp = 1, m_ep = 1, m_etp = 1, m_edp = 1;
    int m_world = 1;
    std::vector<Dim> m_order;      // among TP, CP, DP, PP
    std::array<int, 5> m_stride{}; // rank stride of each dense dim
    std::vector<int> m_rankToGpu;
    std::vector<int> m_gpuToRank;
    std::vector<int> m_coords; // rank x 5 dims
};

// Megatron's default order, TP fastest ("topology-aware": TP inside a server), and the naive
// order with DP fastest.
inline const char *kTopologyAwareOrder = "tp-cp-ep-dp-pp";
inline const char *kNaiveOrder = "dp-tp-cp-ep-pp";

} // namespace railyard::engine
