#include "cli.h"
#include "cli_p.h"
#include "cliimport.h"
#include "cliplan.h"

#include "base/inputerror.h"
#include "topology/topology.h"

#include <railyard/version.h>

#include <filesystem>
#include <ostream>
#include <set>

namespace railyard::cli {

using namespace railyard::engine;

namespace detail {

Options parseOptions(const std::vector<std::string> &args,
                     std::size_t first,
                     const std::set<std::string> &valued,
                     const std::set<std::string> &flags)
{
    Options o;
    bool optionsEnd = false;
    for (std::size_t i = first; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (optionsEnd) {
            o.positional.push_back(a);
        } else if (a == "--") {
            optionsEnd = true; // what follows is a FILE, even if it starts with '-'
        } else if (a.rfind("--", 0) == 0 && a.size() > 2) {
            std::string name = a.substr(2);
            std::optional<std::string> inlineValue;
            if (const auto eq = name.find('='); eq != std::string::npos) {
                inlineValue = name.substr(eq + 1);
                name = name.substr(0, eq);
            }
            if (valued.count(name)) {
                if (inlineValue) {
                    o.values[name] = *inlineValue;
                } else {
                    if (i + 1 >= args.size())
                        throw UsageError("--" + name + " needs a value");
                    o.values[name] = args[++i];
                }
            } else if (flags.count(name)) {
                if (inlineValue)
                    throw UsageError("--" + name + " takes no value, got '" + echo(*inlineValue)
                                     + "'");
                o.flags.insert(name);
            } else {
                throw UsageError("unknown option --" + echo(name));
            }
        } else if (a.size() > 1 && a[0] == '-') {
            throw UsageError("unknown option " + echo(a)
                             + " (a FILE starting with '-': put -- "
                               "before it)");
        } else {
            o.positional.push_back(a);
        }
    }
    return o;
}

// The one layout FILE a subcommand takes (usage error otherwise).
const std::string &oneFile(const Options &o, const char *subcommand)
{
    if (o.positional.size() != 1)
        throw UsageError(std::string(subcommand)
                         + (o.positional.empty() ? " needs a layout FILE" : " takes one FILE"));
    return o.positional[0];
}

namespace {

template<class F>
engine::Topology naming(const std::string &file, F build)
{
    try {
        return build();
    } catch (const InputError &e) {
        if (!e.file().empty())
            throw;
        throw InputError(file, e.where(), e.message());
    }
}

} // namespace

engine::Topology topologyOf(const engine::ClusterConfig &cluster, const std::string &file)
{
    return naming(file, [&] { return buildTopology(cluster, Catalog::builtin()); });
}

engine::Topology topologyWithFaults(const engine::Topology &healthy,
                                    const std::vector<engine::Fault> &faults,
                                    const std::string &file)
{
    return naming(file, [&] { return withFaults(healthy, faults); });
}

} // namespace detail

namespace {

using detail::OutOfMemory;
using detail::UsageError;

// The subcommands this version runs.
const std::set<std::string> kSubcommands = {"collective", "evaluate", "export", "import", "plan"};

// Qt's own options (QGuiApplication, QApplication and the xcb platform), in their one- and
// two-dash forms, "-name value" or "-name=value": `valued` takes a value. Any other option is
// not the GUI's.
bool isQtOption(std::string a, bool &valued)
{
    static const std::set<std::string> withValue = {"-platform",
                                                    "-platformpluginpath",
                                                    "-platformtheme",
                                                    "-plugin",
                                                    "-qmljsdebugger",
                                                    "-style",
                                                    "-stylesheet",
                                                    "-session",
                                                    "-display",
                                                    "-name",
                                                    "-geometry",
                                                    "-title",
                                                    "-qwindowgeometry",
                                                    "-qwindowtitle",
                                                    "-qwindowicon",
                                                    "-visual",
                                                    "-ncols",
                                                    "-cmap",
                                                    "-im"};
    static const std::set<std::string> flags
            = {"-reverse", "-widgetcount", "-nograb", "-dograb", "-sync", "-testability"};
    if (a.rfind("--", 0) == 0)
        a.erase(0, 1);
    const auto eq = a.find('=');
    const bool inlineValue = eq != std::string::npos;
    if (inlineValue)
        a.erase(eq);
    valued = withValue.count(a) > 0 && !inlineValue;
    return withValue.count(a) > 0 || (flags.count(a) > 0 && !inlineValue);
}

// A word that names a subcommand rather than a file: no path separator, no extension.
bool isBareWord(const std::string &s)
{
    return !s.empty() && s[0] != '-' && s.find_first_of("/.") == std::string::npos;
}

// A message from anywhere, kept to a screenful whatever it echoes, with its control
// characters escaped (the parts a message quotes from a file already are; this catches the
// rest).
std::string bounded(const std::string &message)
{
    return message.size() <= 2000 ? terminalLines(message) : echo(message, 1000);
}

// Not a subcommand: the GUI's arguments (Qt's options and at most one FILE), or a usage error.
Outcome guiOrUsageError(const std::vector<std::string> &args, std::ostream &err)
{
    std::vector<std::string> files;
    std::string unknownOption; // the first option neither Qt's nor ours
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (a.size() > 1 && a[0] == '-') {
            bool valued = false;
            if (!isQtOption(a, valued)) {
                if (unknownOption.empty())
                    unknownOption = a;
            } else if (valued) {
                ++i;
            }
            continue;
        }
        files.push_back(a);
    }
    const std::string word = files.empty() ? std::string() : files.front();
    std::error_code ec;
    const bool exists = !word.empty() && std::filesystem::exists(word, ec);
    std::string problem;
    if (files.empty() || (files.size() == 1 && !word.empty() && (exists || !isBareWord(word)))) {
        if (unknownOption.empty())
            return {false, 0, word}; // the GUI, on FILE if one was given
        problem = "unknown option " + echo(unknownOption)
                  + " (before a subcommand: --help, --version, or Qt's options for the GUI; a "
                    "FILE starting with '-': write ./ before it)";
    } else if (word.empty()) {
        problem = "an empty argument (expected a layout FILE or a subcommand)";
    } else if (kSubcommands.count(word)) {
        problem = "'" + word + "' must be the first argument";
    } else if (isBareWord(word) && !exists) {
        std::string list;
        for (const auto &c : kSubcommands)
            list += (list.empty() ? "" : ", ") + c;
        problem = "unknown subcommand '" + echo(word) + "' (this version has: " + list
                  + "; to open a layout, give its file name)";
    } else {
        problem = "the GUI opens one layout FILE, got " + std::to_string(files.size()) + " ('"
                  + echo(word) + "', '" + echo(files[1]) + "'" + (files.size() > 2 ? ", ..." : "")
                  + ")";
    }
    err << "railyard: " << problem << "\n\n" << usage();
    return {true, 2, {}};
}

} // namespace

std::string noGuiMessage(const std::string &file)
{
    return "this railyard was built without its GUI (-DRAILYARD_BUILD_GUI=OFF), so it opens no "
           "window"
           + (file.empty() ? std::string() : " on '" + echo(file) + "'")
           + ": run a subcommand (railyard evaluate FILE, railyard --help), or build with the GUI";
}

std::string noDiagramMessage(const std::string &output)
{
    return "'" + echo(output)
           + "': diagrams (.svg, .png, .pdf) are drawn by the GUI build of railyard; this one "
             "was built without it (-DRAILYARD_BUILD_GUI=OFF). The reports (.md, .csv, .json) "
             "work here";
}

std::string usage()
{
    return "usage: railyard [FILE]                 open the GUI on FILE (default: one HGX H100 "
           "server)\n"
           "       railyard evaluate FILE [--json]\n"
           "       railyard collective FILE --op OP --size SIZE [options] [--json]\n"
           "       railyard export FILE -o OUT.svg|png|pdf|md|csv|json [options]\n"
           "       railyard import IN -o OUT.railyard.json [--gpu ID] [--json]\n"
           "       railyard plan FILE [--top N] [--objective OBJ] [--json] | --buy [options]\n"
           "       railyard --help | --version\n"
           "\n"
           "Railyard shows where a distributed training or serving job's traffic goes on a GPU\n"
           "cluster and what it costs. Subcommands run without a display; `railyard SUBCOMMAND "
           "--help`\n"
           "describes each. Exit status: 0 success, 1 bad input, 2 usage error.\n";
}

Outcome run(const std::vector<std::string> &args,
            std::ostream &out,
            std::ostream &err,
            const DiagramWriter &diagram)
{
    Outcome result;
    if (args.size() < 2)
        return result;
    const std::string &first = args[1];
    if (first == "--help" || first == "-h" || first == "help") {
        out << usage();
        return {true, 0, {}};
    }
    if (first == "--version" || first == "-v") {
        out << "railyard " << RAILYARD_VERSION << " (layout format " << kLayoutFormatVersion
            << ")\n";
        return {true, 0, {}};
    }
    if (!kSubcommands.count(first))
        return guiOrUsageError(args, err);
    result.handled = true;
    // A bad user catalog: every subcommand refuses (its numbers would come from another
    // catalog than the user's); its --help still answers, as --help and --version do above.
    if (const std::string &bad = Catalog::userCatalogError();
        !bad.empty() && std::find(args.begin() + 2, args.end(), "--help") == args.end()
        && std::find(args.begin() + 2, args.end(), "-h") == args.end()) {
        err << "railyard: " << bounded(bad) << "\n";
        return {true, 1, {}};
    }
    try {
        if (first == "collective")
            result.exitCode = detail::runCollective(args, out);
        else if (first == "evaluate")
            result.exitCode = detail::runEvaluate(args, out);
        else if (first == "plan")
            result.exitCode = runPlan(args, out, err);
        else if (first == "export")
            result.exitCode = detail::runExport(args, out, err, diagram);
        else if (first == "import")
            result.exitCode = runImport(args, out, err);
    } catch (const ImportUsageError &e) {
        err << "railyard import: " << bounded(e.what()) << "\n(see railyard import --help)\n";
        result.exitCode = 2;
    } catch (const UsageError &e) {
        err << "railyard " << first << ": " << bounded(e.what()) << "\n(see railyard " << first
            << " --help)\n";
        result.exitCode = 2;
    } catch (const OutOfMemory &e) {
        err << "railyard: " << bounded(e.what())
            << " (the cluster needs more memory than this process may use)\n";
        result.exitCode = 1;
    } catch (const std::bad_alloc &) {
        // A subcommand without a message of its own: name the files it was given.
        std::string files;
        for (std::size_t i = 2; i < args.size(); ++i)
            if (!args[i].empty() && args[i][0] != '-' && std::filesystem::is_regular_file(args[i]))
                files += (files.empty() ? "" : ", ") + args[i];
        err << "railyard " << first << ": " << (files.empty() ? std::string() : files + ": ")
            << "out of memory (the cluster needs more memory than this process may use; try a "
               "smaller cluster or fewer outputs)\n";
        result.exitCode = 1;
    } catch (const InputError &e) {
        err << "railyard: " << bounded(e.what()) << "\n";
        result.exitCode = 1;
    } catch (const std::exception &e) {
        err << "railyard: " << bounded(e.what()) << "\n";
        result.exitCode = 1;
    }
    out.flush();
    if (result.exitCode == 0 && !out) {
        err << "railyard: cannot write the output\n";
        result.exitCode = 1;
    }
    return result;
}

} // namespace railyard::cli
