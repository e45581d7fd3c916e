#pragma once
// A training layout given as JSON text, evaluated as the app would (numbers only: no link loads,
// no timeline), and what its assumptions say. Shared by the engine tests that build layouts
// inline.

#include "layout/catalog.h"
#include "layout/layout.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <QtGlobal>

#include <algorithm>
#include <exception>
#include <string>

namespace railyard::test {

inline engine::Evaluation evaluateText(const std::string &text)
{
    engine::Layout l;
    try {
        l = engine::parseLayout(text, "test.railyard.json");
    } catch (const std::exception &e) {
        qFatal("%s", e.what());
    }
    engine::EvaluateOptions o;
    o.linkLoads = false;
    o.timeline = false;
    return engine::evaluate(l, engine::buildTopology(l.cluster, engine::Catalog::builtin()), o);
}

// Whether one of `e`'s assumptions contains `words`.
inline bool mentions(const engine::Evaluation &e, const std::string &words)
{
    return std::any_of(e.assumptions.begin(), e.assumptions.end(), [&](const std::string &a) {
        return a.find(words) != std::string::npos;
    });
}

// The first of `e`'s warnings with `code`; nullptr when none.
inline const engine::Warning *findWarning(const engine::Evaluation &e, const std::string &code)
{
    for (const engine::Warning &w : e.warnings)
        if (w.code == code)
            return &w;
    return nullptr;
}

} // namespace railyard::test
