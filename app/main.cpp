#include "cli.h"
#include "document/document.h"
#include "layout.h"
#include "mainwindow.h"

#include <railyard/version.h>

#include <QApplication>
#include <QFile>
#include <QScreen>
#include <QTimer>

#include <cstdio>
#include <iostream>

int main(int argc, char **argv)
{
    std::string file;
    {
        const std::vector<std::string> args(argv, argv + argc);
        std::string out, err;
        const auto outcome = railyard::cli::run(args, out, err);
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fwrite(err.data(), 1, err.size(), stderr);
        if (outcome.handled)
            return outcome.exitCode;
        file = outcome.guiFile;
    }

    // Check the file before any window exists, so a bad file fails fast and headless.
    if (!file.empty()) {
        try {
            railyard::engine::readLayoutFile(file);
        } catch (const std::exception &e) {
            std::cerr << "railyard: " << e.what() << "\n";
            return 1;
        }
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Railyard"));
    QApplication::setOrganizationName(QStringLiteral("Railyard"));
    QApplication::setApplicationVersion(QStringLiteral(RAILYARD_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.railyard.Railyard"));

    railyard::MainWindow window;
    QString error;
    std::unique_ptr<railyard::Document> doc;
    if (!file.empty()) {
        doc = railyard::Document::load(QString::fromStdString(file), &error);
    } else {
        QFile f(QStringLiteral(":/layouts/hgx-h100-server.railyard.json"));
        f.open(QIODevice::ReadOnly);
        doc = railyard::Document::fromText(f.readAll(), QStringLiteral("hgx-h100-server"), &error);
    }
    if (!doc) {
        std::cerr << "railyard: " << error.toStdString() << "\n";
        return 1;
    }
    window.setDocument(std::move(doc));
    if (const QScreen *screen = QGuiApplication::primaryScreen()) {
        // Fill a small screen; keep a comfortable size on a large one.
        const QSize avail = screen->availableGeometry().size();
        window.resize(std::min(avail.width(), 2400), std::min(avail.height(), 1500));
    }
    window.show();
    // After a crash, the last session's unsaved work waits in the recovery folder.
    QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });
    return app.exec();
}
