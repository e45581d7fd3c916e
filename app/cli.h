#pragma once

#include <string>
#include <vector>

namespace railyard::cli {

// The headless command line (no Qt, no display): `railyard --help`, `--version`, and the
// subcommands of DESIGN.md. Exit status 0 on success, 1 on bad input, 2 on usage errors.
struct Outcome
{
    bool handled = false; // false: not a CLI invocation, open the GUI
    int exitCode = 0;
};

Outcome run(const std::vector<std::string> &args, std::string &out, std::string &err);

// The usage text printed by --help.
std::string usage();

} // namespace railyard::cli
