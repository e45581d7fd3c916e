#include "evaluate.h"

namespace railyard::engine {

Evaluation evaluate(const Layout &, const Topology &, const EvaluateOptions &)
{
    Evaluation e;
    e.error = "the step-time model is not implemented yet";
    return e;
}

} // namespace railyard::engine
