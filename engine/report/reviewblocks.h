#pragma once

// The pieces the design-review reports are made of (reviewreport.cpp for a training step,
// servingreview.cpp for a serving layout): the title page's lines and the blocks of a section.

#include "layout/layout.h"
#include "report/reviewreport.h"
#include "step/evaluate.h"
#include "topology/topology.h"

#include <string>
#include <vector>

namespace railyard::engine::reviewblocks {

inline constexpr const char *kDot = " \u00b7 ";

// Text from the layout as plain one-line text (no control characters).
std::string plain(const std::string &text);
// "2,048 servers of 8 × H100-SXM · 16,384 GPUs · 512 leaves, 32 spines"
std::string clusterLine(const Topology &topology);
// The model's preset, or "custom model (80 layers, hidden 8,192)".
std::string modelName(const Layout &layout);
// "12.3 GiB"
std::string gib(double value);
// From a to b: "+12.3%", "-4%", "same"; empty when a is not above 0.
std::string relativeChange(double a, double b);

ReviewBlock paragraph(std::string text);
ReviewBlock figure(ReviewFigure figure, std::string caption);
ReviewBlock table(std::vector<std::string> columns,
                  std::vector<bool> numeric,
                  std::vector<std::vector<std::string>> rows,
                  std::string caption = {});
ReviewBlock bullets(std::vector<std::string> items);

// "Warnings": severity, message and cost, the cost also as a share (`share`, "of the step") of
// `wholeS` seconds.
ReviewSection warningsSection(const std::vector<Warning> &warnings,
                              double wholeS,
                              const char *share,
                              const char *costColumn);

} // namespace railyard::engine::reviewblocks
