#pragma once
// Layouts for the engine's evaluation tests: the shipped example, a minimal layout of H100
// servers built from JSON fragments, and evaluating one with links and timeline, as the app
// does. Shared by tst_evaluate and tst_stackmechanisms.

#include "layout/catalog.h"
#include "layout/layout.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <QtGlobal>

#include <string>

namespace railyard::test {

inline engine::Layout example()
{
    return engine::readLayoutFile(RAILYARD_TEST_DATA "/example.railyard.json");
}

inline engine::Evaluation run(const engine::Layout &l)
{
    const engine::Topology t = engine::buildTopology(l.cluster, engine::Catalog::builtin());
    return engine::evaluate(l, t);
}

// The evaluation of `l` on `t`, which must price (the test stops with the engine's error if not).
inline engine::Evaluation evaluateOk(const engine::Layout &l, const engine::Topology &t)
{
    engine::Evaluation e = engine::evaluate(l, t);
    if (!e.ok)
        qFatal("%s", e.error.c_str());
    return e;
}

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// `nodes` servers of eight H100 running GPT-3 175B, with the layout's "training" and
// "parallel" objects given as JSON text.
inline engine::Layout minimal(const std::string &training, const std::string &parallel, int nodes)
{
    const std::string text = R"({"format": "railyard-layout", "version": 1,
        "cluster": {"gpu": "H100-SXM", "nodes": )"
                             + std::to_string(nodes) + R"(, "gpus_per_node": 8},
        "model": {"preset": "gpt3-175b"}, "training": )"
                             + training + R"(, "parallel": )" + parallel + "}";
    return engine::parseLayout(text, "test.railyard.json");
}

inline bool hasWarning(const engine::Evaluation &e, const std::string &code)
{
    for (const engine::Warning &w : e.warnings)
        if (w.code == code)
            return true;
    return false;
}

} // namespace railyard::test
