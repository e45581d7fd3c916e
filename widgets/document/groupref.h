#pragma once

#include "layout/groupplacement.h"
#include "layout/layout.h"
#include "serving/servinggroups.h"

#include <QString>

#include <optional>
#include <vector>

namespace railyard {

// What the user drags and colours by, and what a group index means: the engine's (see
// layout/groupplacement.h). This header adds only the words the windows show for them.
using engine::dimOf;
using engine::groupCount;
using engine::groupGpus;
using engine::GroupKind;
using engine::groupOfRank;
using engine::groupRanks;
using engine::GroupRef;
using engine::kAllGroupKinds;

// "TP group", "PP stage", "DP replica"
QString kindNoun(GroupKind kind);
// "TP", "CP", "EP", "PP stage", "DP replica": short, for menus and legends.
QString kindLabel(GroupKind kind);
// On a serving layout the colour modes are the serving engine's groups: TP and EP groups,
// pipeline stages, replicas, and in the CP slot (context parallelism is not served) the
// prefill and decode pools. Their nouns ("TP group", "replica", "prefill/decode pool") and the
// engine's group kind of each.
QString servingKindNoun(GroupKind kind);
QString servingKindLabel(GroupKind kind); // short: "TP", "EP", "PP", "replica", "pool"
engine::ServingGpuGroups::Kind servingKind(GroupKind kind);

// "tp", "cp", "ep", "pp", "dp": the layout file's "view": {"color_by": ...} values.
QString kindKey(GroupKind kind);
std::optional<GroupKind> kindFromKey(const QString &key);
// "TP group 3", "PP stage 2", "DP replica 1"
QString groupName(const GroupRef &group);

// "1 GPU", "8 GPUs": a count with its noun (English plurals; no translations ship yet).
QString counted(int n, const QString &one, const QString &many);

// "GPUs 4–11", "GPUs 0–3, 8–11", "GPU 7": a short description of a set of GPU indices.
QString gpuListText(std::vector<int> gpus);

// The job a group index refers to (engine::jobId): chips and dragged GPUs carry it, so a drop
// from another job is refused.
QString jobSignature(const engine::Layout &layout);

} // namespace railyard
