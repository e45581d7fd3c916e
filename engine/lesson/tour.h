#pragma once

#include <string>
#include <vector>

namespace railyard::engine {

inline constexpr int kTourFormatVersion = 1;

// One of the layouts a teaching scenario opens: a file among the shipped layouts (layouts/),
// and what distinguishes it from the scenario's other layout ("A: one queue pair").
struct TourLayout
{
    std::string file; // a file name under layouts/, "qp-tuning-gb300-qps1.railyard.json"
    std::string label;
};

// A guided teaching scenario (resources/tour/scenarios.json): what it shows, one thing to try
// and what to look for, and what the model assumes in getting its numbers.
struct TourScenario
{
    std::string id;                  // stable, lower case: "qp-tuning"
    std::string title;               // "Queue pairs per connection"
    std::vector<TourLayout> layouts; // one or two; the first opens when the scenario is chosen
    std::string intro;
    std::string tryThis;
    std::string lookFor;
    std::string assumes;
};

// Reads the tour file (`"format": "railyard-tour", "version": 1`, `"scenarios": [...]`).
// `file` names it in errors. Throws InputError naming the file, the JSON path and what was
// expected: a missing text, a layout that is not a plain *.railyard.json file name, an id given
// twice.
std::vector<TourScenario> parseTour(const std::string &text, const std::string &file);

} // namespace railyard::engine
