#pragma once

// How the Fault dock writes its numbers and builds its tables: the metric names and values of a
// fault's impact (training and serving), and read-only tables as tall as their rows.

#include <QString>
#include <QStringList>

#include <string>

class QTableWidget;
class QTableWidgetItem;
class QWidget;

namespace railyard::faulttables {

QString text(const std::string &s);
QString seconds(double s);
QString pct(double fraction);
QString bytes(double b);
// The impact's metric keys (faultImpactJson's "metrics") as the dock names and writes them.
QString metricName(const std::string &key);
QString metricValue(const std::string &key, double v);
QTableWidget *makeTable(int columns, const QStringList &headers, QWidget *parent);
QTableWidgetItem *cell(const QString &s, bool number = false);
// A table as tall as its rows (up to `maxRows`), so the dock scrolls as one page.
void fitHeight(QTableWidget *t, int maxRows);

} // namespace railyard::faulttables
