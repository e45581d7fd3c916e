#pragma once

#include "layout/layout.h"
#include "layout/parallel.h"
#include "layout/placement.h"

#include <QString>

#include <optional>
#include <vector>

namespace railyard {

// What the user drags and colours by: a group of ranks that communicate together. TP, CP and EP
// groups are the engine's groups of those dimensions; a PP stage is every rank with one pipeline
// coordinate, a DP replica every rank with one data-parallel coordinate (one copy of the model).
enum class GroupKind { Tp, Cp, Ep, PpStage, DpReplica };
inline constexpr GroupKind kAllGroupKinds[] = {GroupKind::Tp,
                                               GroupKind::Cp,
                                               GroupKind::Ep,
                                               GroupKind::PpStage,
                                               GroupKind::DpReplica};

struct GroupRef
{
    GroupKind kind = GroupKind::Tp;
    int index = 0;
    bool operator==(const GroupRef &) const = default;
};

engine::Dim dimOf(GroupKind kind);
// "TP group", "PP stage", "DP replica"
QString kindNoun(GroupKind kind);
// "TP", "CP", "EP", "PP stage", "DP replica": short, for menus and legends.
QString kindLabel(GroupKind kind);
// "tp", "cp", "ep", "pp", "dp": the layout file's "view": {"color_by": ...} values.
QString kindKey(GroupKind kind);
std::optional<GroupKind> kindFromKey(const QString &key);
// "TP group 3", "PP stage 2", "DP replica 1"
QString groupName(const GroupRef &group);

// How many groups of a kind the job has, and which one a rank belongs to.
int groupCount(const engine::RankLayout &ranks, GroupKind kind);
int groupOfRank(const engine::RankLayout &ranks, GroupKind kind, int rank);
std::vector<int> groupRanks(const engine::RankLayout &ranks, const GroupRef &group);
std::vector<int> groupGpus(const engine::RankLayout &ranks, const GroupRef &group);

// Places the group on `targets` (one GPU per rank, in order), swapping with what was there.
engine::MappingEdit placeGroup(const engine::Layout &layout,
                               const GroupRef &group,
                               const std::vector<int> &targets);
// "Make a TP group here": the group of `kind` that the first selected GPU runs moves onto the
// selected GPUs.
engine::MappingEdit makeGroupHere(const engine::Layout &layout,
                                  GroupKind kind,
                                  const std::vector<int> &selected);

// The mapping to store: empty when it is what the order alone gives, so a group moved back to
// where it started leaves the layout as it was.
std::vector<int> normalizedMapping(std::vector<int> mapping);

// "1 GPU", "8 GPUs": a count with its noun (English plurals; no translations ship yet).
QString counted(int n, const QString &one, const QString &many);

// "GPUs 4–11", "GPUs 0–3, 8–11", "GPU 7": a short description of a set of GPU indices.
QString gpuListText(std::vector<int> gpus);

// The job a group index refers to: group 3 means different ranks under other sizes or another
// order. Chips and dragged GPUs carry it, so a drop from another job is refused.
QString jobSignature(const engine::Layout &layout);

} // namespace railyard
