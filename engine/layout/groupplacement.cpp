#include "layout/groupplacement.h"

#include "base/inputerror.h"

#include <numeric>

namespace railyard::engine {

namespace {

bool isCoordinate(GroupKind kind)
{
    return kind == GroupKind::PpStage || kind == GroupKind::DpReplica;
}

std::vector<int> run(int first, int count)
{
    std::vector<int> gpus(static_cast<std::size_t>(std::max(0, count)));
    std::iota(gpus.begin(), gpus.end(), first);
    return gpus;
}

// The plan an edit gives: refused with its reason, or the mapping to store.
PlacementPlan settle(const Layout &l, MappingEdit edit, std::vector<int> targets)
{
    PlacementPlan plan;
    plan.targets = std::move(targets);
    if (!edit.ok()) {
        plan.refusal = PlacementPlan::Refusal::Refused;
        plan.error = std::move(edit.error);
        return plan;
    }
    std::vector<int> mapping = normalizedMapping(std::move(edit.mapping));
    if (mapping == normalizedMapping(l.mapping))
        plan.noChange = true;
    else
        plan.mapping = std::move(mapping);
    return plan;
}

} // namespace

Dim dimOf(GroupKind kind)
{
    switch (kind) {
    case GroupKind::Tp: return Dim::TP;
    case GroupKind::Cp: return Dim::CP;
    case GroupKind::Ep: return Dim::EP;
    case GroupKind::PpStage: return Dim::PP;
    case GroupKind::DpReplica: return Dim::DP;
    }
    return Dim::TP;
}

const char *groupKindNoun(GroupKind kind)
{
    switch (kind) {
    case GroupKind::Tp: return "TP group";
    case GroupKind::Cp: return "CP group";
    case GroupKind::Ep: return "EP group";
    case GroupKind::PpStage: return "PP stage";
    case GroupKind::DpReplica: return "DP replica";
    }
    return "group";
}

std::string describeGroup(const GroupRef &group)
{
    return std::string(groupKindNoun(group.kind)) + " " + std::to_string(group.index);
}

int groupCount(const RankLayout &ranks, GroupKind kind)
{
    return isCoordinate(kind) ? ranks.size(dimOf(kind)) : ranks.groupCount(dimOf(kind));
}

int groupOfRank(const RankLayout &ranks, GroupKind kind, int rank)
{
    return isCoordinate(kind) ? ranks.coord(rank, dimOf(kind)) : ranks.groupOf(rank, dimOf(kind));
}

std::vector<int> groupRanks(const RankLayout &ranks, const GroupRef &group)
{
    if (group.index < 0 || group.index >= groupCount(ranks, group.kind))
        return {};
    return isCoordinate(group.kind) ? ranks.ranksAt(dimOf(group.kind), group.index)
                                    : ranks.groupRanks(dimOf(group.kind), group.index);
}

std::vector<int> groupGpus(const RankLayout &ranks, const GroupRef &group)
{
    std::vector<int> gpus = groupRanks(ranks, group);
    for (int &r : gpus)
        r = ranks.gpuOfRank(r);
    return gpus;
}

std::optional<GroupRef> groupAtGpu(const RankLayout &ranks, GroupKind kind, int gpu)
{
    if (gpu < 0 || gpu >= ranks.worldSize())
        return std::nullopt;
    const int rank = ranks.rankOfGpu(gpu);
    if (rank < 0)
        return std::nullopt;
    return GroupRef{kind, groupOfRank(ranks, kind, rank)};
}

// A disaggregated serving layout's pools ("-prefill-tp4pp1x11-decode-tp4pp1x7"): its groups
// are numbered through them, so another split is another job.
static std::string servingPools(const Layout &l)
{
    if (!l.serving || !l.serving->disaggregated)
        return {};
    const auto pool = [](const char *name, const ServingPool &p) {
        return std::string("-") + name + "-tp" + std::to_string(p.tp) + "ep" + std::to_string(p.ep)
               + "pp" + std::to_string(p.pp) + "x" + std::to_string(p.replicas);
    };
    return pool("prefill", l.serving->disaggregated->prefill)
           + pool("decode", l.serving->disaggregated->decode);
}

std::string jobId(const Layout &l)
{
    const ParallelConfig &p = l.parallel;
    return "gpus" + std::to_string(l.cluster.gpuCount()) + "-tp" + std::to_string(p.tp) + "-cp"
           + std::to_string(p.cp) + "-ep" + std::to_string(p.ep) + "-etp"
           + std::to_string(p.etp.value_or(1)) + "-pp" + std::to_string(p.pp) + "-dp"
           + std::to_string(l.dataParallel()) + "-" + p.order + servingPools(l);
}

std::vector<int> normalizedMapping(std::vector<int> mapping)
{
    for (std::size_t i = 0; i < mapping.size(); ++i)
        if (mapping[i] != static_cast<int>(i))
            return mapping;
    return {};
}

MappingEdit placeGroup(const RankLayout &ranks,
                       const GroupRef &group,
                       const std::vector<int> &targets)
{
    return isCoordinate(group.kind)
                   ? placeCoordinate(ranks, dimOf(group.kind), group.index, targets)
                   : placeGroup(ranks, dimOf(group.kind), group.index, targets);
}

MappingEdit placeGroup(const Layout &l, const GroupRef &group, const std::vector<int> &targets)
{
    return isCoordinate(group.kind) ? placeCoordinate(l, dimOf(group.kind), group.index, targets)
                                    : placeGroup(l, dimOf(group.kind), group.index, targets);
}

DropSite DropSite::gpu(int gpu)
{
    return DropSite{Kind::Gpu, gpu, gpu, 1};
}

DropSite DropSite::server(int node, int gpusPerNode, bool tray)
{
    return DropSite{tray ? Kind::Tray : Kind::Server, node, node * gpusPerNode, gpusPerNode};
}

DropSite DropSite::rack(int rack, int firstNode, int endNode, int gpusPerNode)
{
    return DropSite{Kind::Rack, rack, firstNode * gpusPerNode, (endNode - firstNode) * gpusPerNode};
}

std::string DropSite::name() const
{
    switch (kind) {
    case Kind::Gpu: return "GPU " + std::to_string(index);
    case Kind::Server: return "server " + std::to_string(index);
    case Kind::Tray: return "tray " + std::to_string(index);
    case Kind::Rack: return "rack " + std::to_string(index);
    }
    return {};
}

std::optional<PlacementPlan> siteRefusal(const std::string &name,
                                         int size,
                                         int count,
                                         const DropSite &site)
{
    const int first = site.firstGpu;
    if (first < 0 || first >= count)
        return PlacementPlan::refused(PlacementPlan::Refusal::DoesNotFit,
                                      site.name() + " is not in the cluster");
    if (first + size <= count)
        return std::nullopt;
    const std::string from = site.kind == DropSite::Kind::Gpu
                                     ? "GPU " + std::to_string(first)
                                     : "GPU " + std::to_string(first) + " (" + site.name() + ")";
    PlacementPlan plan = PlacementPlan::refused(PlacementPlan::Refusal::DoesNotFit,
                                                name + " needs " + std::to_string(size)
                                                        + " GPUs from " + from
                                                        + ", but the cluster ends at GPU "
                                                        + std::to_string(count - 1));
    plan.targets = run(first, count - first); // the GPUs it would run over
    return plan;
}

PlacementPlan planGroupDrop(const Layout &l,
                            const RankLayout *ranks,
                            const GroupRef &group,
                            const std::optional<DropSite> &site)
{
    using Refusal = PlacementPlan::Refusal;
    const std::string name = describeGroup(group);
    if (!ranks)
        return PlacementPlan::refused(
                Refusal::NoRanks,
                "the parallel sizes do not fill the cluster, so there are no ranks to place");
    const int size = static_cast<int>(groupRanks(*ranks, group).size());
    if (size == 0)
        return PlacementPlan::refused(Refusal::NoSuchGroup, name + " does not exist in this job");
    if (!site)
        return PlacementPlan::refused(Refusal::NoSite,
                                      "drop " + name + " on a GPU, a server or a rack");
    if (auto refused = siteRefusal(name, size, ranks->worldSize(), *site))
        return std::move(*refused);
    std::vector<int> targets = run(site->firstGpu, size);
    MappingEdit edit = placeGroup(*ranks, group, targets);
    return settle(l, std::move(edit), std::move(targets));
}

PlacementPlan planGpuSwap(const Layout &l, int fromGpu, int toGpu)
{
    return settle(l, swapGpus(l, fromGpu, toGpu), {fromGpu, toGpu});
}

PlacementPlan planMakeGroup(const Layout &l,
                            const RankLayout *ranks,
                            GroupKind kind,
                            const std::vector<int> &selected)
{
    using Refusal = PlacementPlan::Refusal;
    if (selected.empty())
        return PlacementPlan::refused(Refusal::Refused, "select the GPUs first");
    if (!ranks) {
        // The engine's own reason the sizes do not describe the cluster.
        try {
            (void)RankLayout(l);
        } catch (const InputError &e) {
            return PlacementPlan::refused(Refusal::NoRanks, e.what());
        }
        return PlacementPlan::refused(Refusal::NoRanks,
                                      "the parallel sizes do not fill the cluster");
    }
    if (!isCoordinate(kind))
        return settle(l, makeGroupHere(*ranks, dimOf(kind), selected), selected);
    const std::optional<GroupRef> group = groupAtGpu(*ranks, kind, selected.front());
    if (!group)
        return PlacementPlan::refused(Refusal::Refused,
                                      "GPU " + std::to_string(selected.front()) + " runs no rank");
    return settle(l, placeGroup(*ranks, *group, selected), selected);
}

} // namespace railyard::engine
