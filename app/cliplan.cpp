// `railyard plan`: the planner's ranked configurations for a layout, and "what should I buy".
#include "cliplan.h"
#include "cli_p.h"

#include "base/inputerror.h"
#include "base/jsoncursor.h"
#include "base/showntext.h"
#include "base/units.h"
#include "layout/layout.h"
#include "planner/planner.h"
#include "planner/plannerbuy.h"
#include "planner/planreport.h"
#include "planner/servingplan.h"
#include "report/report.h"
#include "topology/topology.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>

namespace railyard::cli {

using namespace railyard::engine;

namespace {

const char *kPlanHelp
        = "usage: railyard plan FILE [--top N] [--objective step_time|cost|tokens_per_dollar] "
          "[--json]\n"
          "       railyard plan FILE --buy --tokens N --deadline-days D [--max-gpus N] [--json]\n"
          "\n"
          "Searches every valid parallel configuration of the layout FILE's model on its "
          "cluster\n"
          "(TP, CP, EP, PP, VP, DP, micro batch, activation recompute, ZeRO / FSDP sharding), "
          "drops\n"
          "those that do not fit in HBM and ranks the rest. Where the stack offers activation "
          "offload\n"
          "(megatron-core, nemo), a configuration without PP or recomputation that does not "
          "fit is\n"
          "tried again with the fewest layers offloaded to host memory that make it fit "
          "(\"none+20\"). Ranks are placed in Megatron's "
          "default\n"
          "order (tp-cp-ep-dp-pp); the global batch and other training settings are the "
          "layout's.\n"
          "  --top N           how many plans to show (default 10)\n"
          "  --objective OBJ   step_time (default), cost (dollars per step) or "
          "tokens_per_dollar\n"
          "  --json            print one JSON object: ranked `plans`, `evaluated`, `elapsed_s`\n"
          "  --buy             instead: the cheapest cluster among the catalog's priced GPUs "
          "that\n"
          "                    trains the model on --tokens (e.g. 15e12) within --deadline-days\n"
          "  --max-gpus N      the largest cluster --buy considers (default 32768)\n"
          "On a serving layout (one with \"serving\"): searches TP, EP, PP, replicas, attention "
          "DP,\n"
          "disaggregated prefill/decode splits and requests in flight, and prints the Pareto "
          "front\n"
          "of output tokens/s per GPU against tokens/s per user (`front` with --json):\n"
          "  --ttft T          drop configurations whose time to first token is over T "
          "(2s, 500ms)\n"
          "  --tpot T          drop configurations whose time per output token is over T "
          "(50ms)\n"
          "Exit status: 0 plans found, 1 bad input or nothing fits, 2 usage error.\n";

using Usage = detail::UsageError;

struct Args
{
    std::string file;
    std::map<std::string, std::string> values;
    std::set<std::string> flags;
};

Args parse(const std::vector<std::string> &args)
{
    const detail::Options o = detail::parseOptions(
            args,
            2,
            {"top", "objective", "tokens", "deadline-days", "max-gpus", "ttft", "tpot"},
            {"json", "buy", "help"});
    Args a{{}, o.values, o.flags};
    if (!o.flag("help"))
        a.file = detail::oneFile(o, "plan");
    return a;
}

double number(const Args &a, const std::string &name, double least, double most)
{
    const auto it = a.values.find(name);
    const std::string &text = it->second;
    double v = 0;
    try {
        std::size_t used = 0;
        v = std::stod(text, &used);
        if (used != text.size())
            throw std::invalid_argument("");
    } catch (...) {
        throw Usage("--" + name + " needs a number, got '" + echo(text) + "'");
    }
    if (!(v >= least && v <= most))
        throw Usage("--" + name + " must be between " + formatNumber(least) + " and "
                    + formatNumber(most) + ", got '" + echo(text) + "'");
    return v;
}

int wholeNumber(const Args &a, const std::string &name, int least, int most)
{
    const double v = number(a, name, least, most);
    if (v != std::floor(v))
        throw Usage("--" + name + " needs a whole number, got '" + echo(a.values.at(name)) + "'");
    return static_cast<int>(v);
}

std::string padded(const std::string &s, std::size_t width, bool right = true)
{
    if (s.size() >= width)
        return s;
    return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// Thousands separated: 78,132.
std::string count(std::int64_t n)
{
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
        s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

// The recompute column: "none+20" when 20 layers' activations are offloaded to the host.
std::string recomputeCell(const PlanChoice &c)
{
    std::string s = toString(c.recompute);
    if (c.offloadLayers > 0)
        s += "+" + std::to_string(c.offloadLayers);
    return s;
}

void planTable(std::ostream &out, const std::vector<Plan> &plans, bool money)
{
    out << "  #  TP  CP  EP  PP  VP    DP  MB  recompute  shard      step s  band   tokens/s   MFU "
           " "
           "GiB/GPU";
    if (money)
        out << "   $/step  $/M tok";
    out << "  order\n";
    int rank = 0;
    for (const Plan &p : plans) {
        const PlanChoice &c = p.choice;
        const PlanPrice &x = p.price;
        out << padded(std::to_string(++rank), 3) << padded(std::to_string(c.tp), 4)
            << padded(std::to_string(c.cp), 4) << padded(std::to_string(c.ep), 4)
            << padded(std::to_string(c.pp), 4) << padded(std::to_string(c.vp), 4)
            << padded(std::to_string(c.dp), 6) << padded(std::to_string(c.microBatch), 4) << "  "
            << padded(recomputeCell(c), 9, false) << "  "
            << padded(std::string(toString(c.sharding))
                              + (x.shardGroup > 0 ? "/" + std::to_string(x.shardGroup) : ""),
                      8,
                      false)
            << padded(fixed(x.stepTimeS, 3), 9)
            << padded("\u00b1" + fixed(100 * x.bandFraction, 0) + "%", 7)
            << padded(count(static_cast<std::int64_t>(std::llround(x.tokensPerS))), 11)
            << padded(fixed(100 * x.mfu, 1) + "%", 6) << padded(fixed(x.memoryGiB, 1), 9);
        if (money)
            out << padded(fixed(x.costPerStep, 2), 9)
                << padded(fixed(x.costPerMillionTokens, 3), 9);
        out << "  " << toString(c.order) << "\n";
    }
}

// What each step time band shown rests on, the widest first.
void bandNotes(std::ostream &out, const PlanSearch &s)
{
    std::vector<std::pair<double, int>> shown;
    for (const Plan &p : s.plans)
        if (p.price.bandBasis >= 0 && std::find_if(shown.begin(), shown.end(), [&](const auto &b) {
                                          return b.second == p.price.bandBasis;
                                      }) == shown.end())
            shown.emplace_back(p.price.bandFraction, p.price.bandBasis);
    std::sort(shown.rbegin(), shown.rend());
    if (shown.empty())
        return;
    out << "\nStep time bands (how sure the model is in each plan's regime):\n";
    for (const auto &[fraction, basis] : shown)
        out << "  \u00b1" << fixed(100 * fraction, 1)
            << "%: " << terminalText(s.bandBases[std::size_t(basis)]) << "\n";
}

// A time limit: seconds, or a number with s or ms.
double seconds(const Args &a, const std::string &name)
{
    std::string text = a.values.at(name);
    double scale = 1;
    if (text.size() > 2 && text.compare(text.size() - 2, 2, "ms") == 0) {
        scale = 1e-3;
        text.resize(text.size() - 2);
    } else if (text.size() > 1 && text.back() == 's') {
        text.pop_back();
    }
    double v = 0;
    try {
        std::size_t used = 0;
        v = std::stod(text, &used);
        if (used != text.size())
            throw std::invalid_argument("");
    } catch (...) {
        throw Usage("--" + name + " needs a time (2s, 50ms), got '" + echo(a.values.at(name)) + "'");
    }
    if (!(v > 0 && v * scale <= 86400))
        throw Usage("--" + name + " must be more than 0 and at most a day, got '"
                    + echo(a.values.at(name)) + "'");
    return v * scale;
}

std::string poolText(const ServingPool &p)
{
    std::string s = "TP" + std::to_string(p.tp);
    if (p.ep > 1)
        s += " EP" + std::to_string(p.ep);
    if (p.pp > 1)
        s += " PP" + std::to_string(p.pp);
    if (p.attentionDp.value_or(1) > 1)
        s += " ADP" + std::to_string(*p.attentionDp);
    return s + " x" + std::to_string(p.replicas);
}

int planServingLayout(const Args &a,
                      const Layout &layout,
                      const Topology &topology,
                      std::ostream &out,
                      std::ostream &err)
{
    for (const char *trainingOnly : {"top", "objective"})
        if (a.values.count(trainingOnly))
            throw Usage(std::string("--") + trainingOnly
                        + " ranks training plans; a serving layout gets the Pareto front");
    ServingPlanOptions options;
    if (a.values.count("ttft"))
        options.ttftLimitS = seconds(a, "ttft");
    if (a.values.count("tpot"))
        options.tpotLimitS = seconds(a, "tpot");
    const ServingPlanResult r = planServing(layout, topology, options);
    if (!r.ok)
        throw InputError(a.file, "", "cannot plan: " + r.error);
    if (a.flags.count("json")) {
        out << jsonDocument(servingPlanJson(r, options, a.file));
    } else {
        out << terminalText(layout.title.empty() ? a.file : shownTitle(layout.title)) << ": "
            << r.gpus << " x " << terminalText(topology.gpuSpec().id) << "\n"
            << count(r.evaluated) << " configurations priced in " << fixed(r.elapsedS, 2) << " s, "
            << count(r.infeasible) << " do not fit, " << count(r.overLimits)
            << " past the limits; the Pareto front of output tokens/s per GPU against tokens/s "
               "per user:\n\n";
        out << "  tok/s/user  tok/s/GPU    TTFT s   TPOT ms  in flight  GPUs  configuration\n";
        for (const ServingPlanPoint &p : r.front)
            out << padded(fixed(p.tokensPerSPerUser, 1), 12)
                << padded(fixed(p.outputTokensPerSPerGpu, 1), 11) << padded(fixed(p.ttftS, 3), 10)
                << padded(fixed(1e3 * p.tpotS, 2), 10) << padded(std::to_string(p.concurrency), 11)
                << padded(std::to_string(p.gpus), 6) << "  "
                << (p.disaggregated
                            ? "prefill " + poolText(p.prefill) + ", decode " + poolText(p.decode)
                            : poolText(p.serving))
                << "\n";
    }
    if (r.front.empty()) {
        err << "railyard: " << echo(a.file) << ": no serving configuration "
            << (r.overLimits > 0 ? "meets the limits" : "fits") << "\n";
        return 1;
    }
    return 0;
}

int plan(const Args &a, std::ostream &out, std::ostream &err)
{
    PlanOptions options;
    if (a.values.count("top"))
        options.top = wholeNumber(a, "top", 1, 1000000);
    if (const auto it = a.values.find("objective"); it != a.values.end()) {
        const auto o = planObjectiveFromString(it->second);
        if (!o)
            throw Usage("--objective takes step_time, cost or tokens_per_dollar, got '"
                        + echo(it->second) + "'");
        options.objective = *o;
    }
    for (const char *buyOnly : {"tokens", "deadline-days", "max-gpus"})
        if (a.values.count(buyOnly))
            throw Usage(std::string("--") + buyOnly + " goes with --buy");
    const Layout layout = readLayoutFile(a.file);
    const Topology topology = detail::topologyOf(layout.cluster, a.file);
    if (layout.isServing())
        return planServingLayout(a, layout, topology, out, err);
    for (const char *servingOnly : {"ttft", "tpot"})
        if (a.values.count(servingOnly))
            throw Usage(std::string("--") + servingOnly + " limits a serving layout's plans");
    const PlanSearch s = searchPlans(layout, topology, options);
    if (!s.ok)
        throw InputError(a.file, "", "cannot plan: " + s.error);
    if (options.objective != PlanObjective::StepTime && s.pricePerGpuHour <= 0)
        throw InputError(a.file,
                         "cluster.price_per_gpu_hour",
                         std::string("--objective ") + toString(options.objective)
                                 + " needs a price: the catalog has none for "
                                 + topology.gpuSpec().id + "; set price_per_gpu_hour");
    const bool fits = !s.plans.empty();
    if (a.flags.count("json")) {
        out << jsonDocument(planSearchJson(s, {a.file, layout.title, topology.gpuSpec().id}));
    } else {
        out << terminalText(layout.title.empty() ? a.file : shownTitle(layout.title)) << ": "
            << s.gpus << " x " << terminalText(topology.gpuSpec().id) << ", "
            << formatNumber(s.hbmGiB, 3) << " GiB usable HBM per GPU\n"
            << count(s.evaluated) << " configurations priced in " << fixed(s.elapsedS, 2) << " s, "
            << count(s.fitting) << " fit; ranked by " << toString(s.objective) << "\n\n";
        if (fits) {
            planTable(out, s.plans, s.pricePerGpuHour > 0);
            bandNotes(out, s);
        }
        out << "\nAssumptions:\n";
        for (const std::string &x : s.assumptions)
            out << "  - " << terminalText(x) << "\n";
    }
    if (!fits) {
        err << "railyard: " << echo(a.file) << ": nothing fits: "
            << (s.noFit.empty() ? std::string("no configuration was priced") : terminalText(s.noFit))
            << "\n";
        return 1;
    }
    return 0;
}

int buy(const Args &a, std::ostream &out, std::ostream &err)
{
    if (!a.values.count("tokens") || !a.values.count("deadline-days"))
        throw Usage("--buy needs --tokens and --deadline-days");
    for (const char *planOnly : {"top", "objective", "ttft", "tpot"})
        if (a.values.count(planOnly))
            throw Usage(std::string("--") + planOnly + " does not go with --buy");
    BuyOptions options;
    options.tokens = number(a, "tokens", 1, 1e18);
    options.deadlineDays = number(a, "deadline-days", 1e-3, 1e5);
    if (a.values.count("max-gpus"))
        options.maxGpus = wholeNumber(a, "max-gpus", 8, kMaxGpus);
    options.keepAll = true;
    const Layout layout = readLayoutFile(a.file);
    const BuyAnswer b = planPurchase(layout, options);
    if (!b.error.empty())
        throw InputError(a.file, "", "cannot plan: " + b.error);
    if (a.flags.count("json")) {
        out << jsonDocument(purchaseJson(b, options, a.file));
    } else {
        out << "Training " << formatNumber(options.tokens, 3) << " tokens within "
            << formatNumber(options.deadlineDays, 3) << " days (" << count(b.evaluated)
            << " configurations priced in " << fixed(b.elapsedS, 1) << " s)\n\n";
        out << "  GPU        GPUs     days     cost $  plan\n";
        for (const BuyOption &o : b.considered) {
            if (!o.fits)
                continue;
            const PlanChoice &c = o.plan.choice;
            out << "  " << padded(terminalText(o.cluster.gpu), 9, false)
                << padded(std::to_string(o.gpus), 6) << padded(fixed(o.days, 1), 9)
                << padded(count(std::llround(o.cost)), 11) << "  "
                << "TP" << c.tp << " CP" << c.cp << " EP" << c.ep << " PP" << c.pp << " VP" << c.vp
                << " DP" << c.dp << " mb" << c.microBatch << " " << recomputeCell(c) << " "
                << toString(c.sharding) << (o.meetsDeadline ? "" : "  (too slow)")
                << (b.best && o.gpus == b.best->gpus && o.cluster.gpu == b.best->cluster.gpu
                            ? "  <- cheapest"
                            : "")
                << "\n";
        }
        if (b.best)
            out << "\nBuy: " << b.best->gpus << " x " << terminalText(b.best->cluster.gpu) << " ($"
                << formatNumber(b.best->cluster.pricePerGpuHour.value_or(0), 3)
                << "/GPU-hour): " << fixed(b.best->days, 1) << " days, $"
                << count(std::llround(b.best->cost)) << "\n";
        if (!b.skipped.empty()) {
            out << "Not considered (no price in the catalog):";
            for (const std::string &g : b.skipped)
                out << " " << terminalText(g);
            out << "\n";
        }
        out << "\nAssumptions:\n";
        for (const std::string &x : b.assumptions)
            out << "  - " << terminalText(x) << "\n";
    }
    if (!b.best) {
        err << "railyard: " << echo(a.file) << ": no cluster of up to " << options.maxGpus
            << " GPUs trains on " << formatNumber(options.tokens, 3) << " tokens within "
            << formatNumber(options.deadlineDays, 3) << " days\n";
        return 1;
    }
    return 0;
}

} // namespace

int runPlan(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    try {
        const Args a = parse(args);
        if (a.flags.count("help")) {
            out << kPlanHelp;
            return 0;
        }
        return a.flags.count("buy") ? buy(a, out, err) : plan(a, out, err);
    } catch (const Usage &e) {
        err << "railyard plan: " << terminalLines(e.what()) << "\n(see railyard plan --help)\n";
        return 2;
    }
}

} // namespace railyard::cli
