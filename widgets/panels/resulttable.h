#pragma once

class QTableWidget;

namespace railyard {

// The Planner dock's result tables (training plans, the serving front): whole rows selected one
// at a time, read-only, no row numbers (a column ranks them), `stretch` takes the width the
// others leave and wraps, rows as tall as their text, no horizontal scrolling.
void setUpResultTable(QTableWidget *table, int stretch);

} // namespace railyard
