// The `railyard` executable of a GUI-less build (-DRAILYARD_BUILD_GUI=OFF): the subcommands of
// DESIGN.md without Qt. Diagrams (`export` to SVG, PNG, PDF) and the window need the GUI build.
#include "base/inputerror.h"
#include "base/safetext.h"
#include "cli.h"
#include "layout/layout.h"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    const std::vector<std::string> args(argv, argv + argc);
    const auto outcome = railyard::cli::run(args, std::cout, std::cerr);
    if (outcome.handled)
        return outcome.exitCode;
    // What would open the GUI. A bad FILE is bad input, as in a GUI build without a display.
    if (!outcome.guiFile.empty()) {
        try {
            railyard::engine::readLayoutFile(outcome.guiFile);
        } catch (const std::exception &e) {
            std::cerr << "railyard: " << railyard::engine::terminalLines(e.what()) << "\n";
            return 1;
        }
    }
    std::cerr << "railyard: " << railyard::cli::noGuiMessage(outcome.guiFile) << "\n\n"
              << railyard::cli::usage();
    return 2;
}
