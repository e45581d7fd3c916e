#pragma once
// The command line's option parsing, shared by the subcommands' files (cli.cpp,
// clicollective.cpp, clievaluate.cpp, cliexport.cpp). Not part of the CLI's interface.

#include "cli.h"

#include "topology/topology.h"

#include <functional>
#include <map>
#include <new>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace railyard::cli::detail {

// Memory ran out: what was being done, for the message (the work's memory is already freed
// when this is caught).
struct OutOfMemory : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

// Runs `work`; a std::bad_alloc inside becomes OutOfMemory naming `what`. The work's own
// locals (topology, link loads) are gone by the time the message is built.
template<class F>
int guardMemory(const std::string &what, F work)
{
    try {
        return work();
    } catch (const std::bad_alloc &) {
        throw OutOfMemory(what);
    }
}

// A usage error: exit status 2, with the subcommand's --help hint.
struct UsageError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

// Options of one subcommand: "--name value", "--name=value" or a bare flag.
struct Options
{
    std::vector<std::string> positional;
    std::map<std::string, std::string> values;
    std::set<std::string> flags;

    bool flag(const std::string &name) const { return flags.count(name) > 0; }
    std::optional<std::string> value(const std::string &name) const
    {
        const auto it = values.find(name);
        if (it == values.end())
            return std::nullopt;
        return it->second;
    }
};

Options parseOptions(const std::vector<std::string> &args,
                     std::size_t first,
                     const std::set<std::string> &valued,
                     const std::set<std::string> &flags);

// The one layout FILE a subcommand takes (usage error otherwise).
const std::string &oneFile(const Options &o, const char *subcommand);

// buildTopology(cluster), an error in the cluster (a fault naming nothing, traffic that cannot
// be routed) naming `file` as well as the JSON path.
engine::Topology topologyOf(const engine::ClusterConfig &cluster, const std::string &file);
// `healthy` with `faults` applied, errors naming `file` the same way.
engine::Topology topologyWithFaults(const engine::Topology &healthy,
                                    const std::vector<engine::Fault> &faults,
                                    const std::string &file);

// `railyard collective` (clicollective.cpp) and `railyard evaluate` (clievaluate.cpp): the exit
// status; usage errors throw UsageError, bad files InputError.
int runCollective(const std::vector<std::string> &args, std::ostream &out);
int runEvaluate(const std::vector<std::string> &args, std::ostream &out);

// `railyard export` (cliexport.cpp).
int runExport(const std::vector<std::string> &args,
              std::ostream &out,
              std::ostream &err,
              const DiagramWriter &diagram);

} // namespace railyard::cli::detail
