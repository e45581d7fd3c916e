#pragma once

#include <functional>

class QHBoxLayout;
class QObject;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace railyard {

// The Planner dock's result tables (training plans, the serving front): whole rows selected one
// at a time, read-only, no row numbers (a column ranks them), `stretch` takes the width the
// others leave and wraps, rows as tall as their text, no horizontal scrolling.
void setUpResultTable(QTableWidget *table, int stretch);

// The row under a planner's form: Search, then Cancel (hidden until a search runs), and Apply at
// the right (off until a row is chosen). The progress bar under it stays hidden until a search
// runs and counts in thousandths.
QHBoxLayout *searchButtonRow(QPushButton *search,
                             QPushButton *cancel,
                             QPushButton *apply,
                             QProgressBar *progress);

// How a result table's rows are chosen and applied: choosing a row calls `chosen` with it (-1:
// none) and turns Apply on unless `stale()` (the document changed since the search); Apply
// applies the chosen row (the first when none is), a double-click the row clicked.
void connectResultChoice(QTableWidget *table,
                         QPushButton *apply,
                         QObject *context,
                         std::function<void(int row)> applyRow,
                         std::function<void(int row)> chosen,
                         std::function<bool()> stale);

} // namespace railyard
