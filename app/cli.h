#pragma once

#include <iosfwd>
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

// Output goes to `out` as it is made (every link of a large cluster is streamed, not gathered),
// messages to `err`.
Outcome run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

// The usage text printed by --help.
std::string usage();

} // namespace railyard::cli
