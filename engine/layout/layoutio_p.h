#pragma once
// The layout document's sections that have files of their own (servinglayout.cpp: `serving` and
// the serving checks across sections). Private to the layout folder.

#include "base/jsoncursor.h"
#include "layout/layout.h"

namespace railyard::engine::detail {

// Reads `serving`; `c` is the section. Throws InputError naming the JSON path.
ServingConfig readServing(const JsonCursor &c);
// `parallel.attention_dp`: true (the whole TP group), false (1) or a number of ranks.
std::optional<int> readAttentionDp(const JsonCursor &parallel);
// The checks of a serving layout that read several sections (the cluster's GPUs against the
// pools, EP and attention DP against TP, no context parallelism). `root` is the document.
void checkServingLayout(const JsonCursor &root, const Layout &layout);
// The GPUs a serving layout's ranks take: the pools' when disaggregated, else TP x PP x DP.
std::int64_t servingRanks(const Layout &layout);

// Writes `serving` into `section` (an object), keeping keys it does not know.
void writeServing(Json &section, const ServingConfig &serving);
// `attention_dp` as written: true for the whole TP group, else the number.
Json attentionDpJson(int attentionDp);

} // namespace railyard::engine::detail
