#pragma once

// "What should I buy": for the layout's model and training settings and a token budget, the
// cheapest cluster among the catalog's GPUs (with a price per GPU-hour) that trains it by a
// deadline, each cluster with the planner's fastest plan.

#include "layout/catalog.h"
#include "layout/layout.h"
#include "planner/planner.h"

#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace railyard::engine {

struct BuyOptions
{
    double tokens = 0;       // to train on
    double deadlineDays = 0; // wall time allowed
    int maxGpus = 32768;
    bool keepAll = false;                      // list every cluster priced in BuyAnswer::considered
    const Catalog *catalog = nullptr;          // nullptr: Catalog::builtin()
    const std::atomic<bool> *cancel = nullptr; // stops between clusters and inside searches
};

struct BuyOption
{
    ClusterConfig cluster;
    int gpus = 0;
    bool fits = false; // some plan fits in memory
    Plan plan;         // the fastest
    double days = 0;   // to train on the tokens
    double cost = 0;   // dollars
    bool meetsDeadline = false;
};

struct BuyAnswer
{
    std::string error;             // the layout cannot be planned (no model, ...)
    std::optional<BuyOption> best; // the cheapest that meets the deadline
    std::vector<BuyOption> considered;
    std::vector<std::string> skipped; // catalog GPUs without a price
    std::int64_t evaluated = 0;
    double elapsedS = 0;
    std::vector<std::string> assumptions;
};

BuyAnswer planPurchase(const Layout &layout, const BuyOptions &options);

} // namespace railyard::engine
