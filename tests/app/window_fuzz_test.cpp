// Hostile files through the window's own file loading (issue 10): the bundled examples and
// plans generated from them, mutated with a fixed seed — huge and non-finite numbers written
// as text (1e999), wrong types, truncations, duplicated, missing and swapped instructions —
// each opened by MainWindow::openFile. Every case must end either in a shown schedule or in
// one error line in the banner, with the window alive and the previous schedule still shown.
// (A local set of mutations; tests/common may grow a shared one.)
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "app/gui/MainWindow.h"
#include "app/gui/SummaryPanel.h"

using namespace mario;
using namespace mario::gui;

namespace {

const QString kExamples = QStringLiteral(MARIO_TEST_SOURCE_DIR "/resources/examples");

struct Mutant {
    QString name;
    QByteArray text;
};

QByteArray readAll(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Every number token, replaced (a few positions, chosen by the seed) by each hostile value.
void replaceNumbers(const QString& base, const QByteArray& text, int positions, std::mt19937& random,
                    QList<Mutant>& out) {
    static const QRegularExpression number(R"([:\[,]\s*(-?\d+(\.\d+)?([eE][+-]?\d+)?))");
    static const char* const values[] = {"1e999", "-1e999", "1.8e308", "-1", "0", "4294967299", "2147483648", "0.5",
                                         "\"7\"", "null", "[]",
                                         // Sizes that once froze the window (10^8 micro-batches grew it past 12 GB)
                                         // or divided by zero (dp × micro_batch_size wrapping to 0).
                                         "100000000", "65536"};
    QList<QRegularExpressionMatch> matches;
    for (auto it = number.globalMatch(QString::fromUtf8(text)); it.hasNext();) matches << it.next();
    std::shuffle(matches.begin(), matches.end(), random);
    for (int p = 0; p < positions && p < matches.size(); ++p) {
        const auto& m = matches[p];
        for (const char* value : values) {
            QString mutated = QString::fromUtf8(text);
            mutated.replace(m.capturedStart(1), m.capturedLength(1), QString::fromLatin1(value));
            out.append({QStringLiteral("%1: number at %2 → %3").arg(base).arg(m.capturedStart(1)).arg(value),
                        mutated.toUtf8()});
        }
    }
}

void truncations(const QString& base, const QByteArray& text, QList<Mutant>& out) {
    for (double fraction : {0.0, 0.1, 0.5, 0.9, 0.99})
        out.append(
            {QStringLiteral("%1: cut at %2").arg(base).arg(fraction), text.left(qsizetype(text.size() * fraction))});
}

// Plan files: instruction-level damage in a device's program, and missing pieces.
void instructionMutations(const QString& base, const QByteArray& text, std::mt19937& random, QList<Mutant>& out) {
    const QJsonObject root = QJsonDocument::fromJson(text).object();
    const QJsonArray devices = root["devices"].toArray();
    if (devices.isEmpty()) return;
    auto with = [&](const QString& what, auto change) {
        QJsonObject copy = root;
        QJsonArray ds = copy["devices"].toArray();
        const int d = std::uniform_int_distribution<int>(0, int(ds.size()) - 1)(random);
        QJsonObject device = ds[d].toObject();
        QJsonArray program = device["program"].toArray();
        if (program.size() < 3) return;
        const int i = std::uniform_int_distribution<int>(0, int(program.size()) - 2)(random);
        change(program, i);
        device["program"] = program;
        ds[d] = device;
        copy["devices"] = ds;
        out.append(
            {QStringLiteral("%1: %2 (device %3, #%4)").arg(base, what).arg(d).arg(i), QJsonDocument(copy).toJson()});
    };
    for (int round = 0; round < 3; ++round) {
        with("duplicated instruction", [](QJsonArray& p, int i) { p.insert(i, p[i]); });
        with("missing instruction", [](QJsonArray& p, int i) { p.removeAt(i); });
        with("swapped instructions", [](QJsonArray& p, int i) {
            const QJsonValue a = p[i];
            p[i] = p[i + 1];
            p[i + 1] = a;
        });
        with("unknown action", [](QJsonArray& p, int i) { p[i] = "9Q99"; });
        with("stage past the end", [](QJsonArray& p, int i) { p[i] = p[i].toString().prepend("4294967299"); });
    }
    for (const char* key : {"devices", "stages", "version", "format"}) {
        QJsonObject copy = root;
        copy.remove(key);
        out.append({QStringLiteral("%1: no \"%2\"").arg(base, key), QJsonDocument(copy).toJson()});
    }
}

}  // namespace

class WindowFuzzTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void mutatedFilesEndInAScheduleOrOneErrorLine() {
        QTemporaryDir dir;
        std::mt19937 random(20240610);  // fixed: the same cases every run
        QList<Mutant> mutants;
        MainWindow window;
        window.document()->setSynchronous(true);
        for (const QString& name : QDir(kExamples).entryList({"*.json"}, QDir::Files, QDir::Name)) {
            const QByteArray config = readAll(QDir(kExamples).filePath(name));
            replaceNumbers(name, config, 12, random, mutants);
            truncations(name, config, mutants);
            // The example's plan (passes applied), as Save as writes it.
            QVERIFY(window.openFile(QDir(kExamples).filePath(name)));
            const QString planPath = dir.filePath(name + ".mario.json");
            QString error;
            QVERIFY2(window.document()->saveAs(planPath, &error), qPrintable(error));
            const QByteArray plan = readAll(planPath);
            replaceNumbers(name + " plan", plan, 6, random, mutants);
            truncations(name + " plan", plan, mutants);
            instructionMutations(name + " plan", plan, random, mutants);
        }
        qInfo("%lld mutated files", qlonglong(mutants.size()));
        QVERIFY(mutants.size() > 400);

        const QString baseline = QDir(kExamples).filePath("figure2.config.json");
        QVERIFY(window.openFile(baseline));
        int shown = 0, refused = 0;
        for (int i = 0; i < mutants.size(); ++i) {
            const Mutant& mutant = mutants[i];
            const QString path = dir.filePath(QStringLiteral("case-%1.json").arg(i));
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(mutant.text);
            file.close();
            const QString before = window.document()->path();
            const double makespan = window.document()->current().result.makespan_ms;
            const std::size_t devices = window.document()->current().plan.devices.size();
            if (window.openFile(path)) {
                ++shown;
                QVERIFY2(window.document()->hasSchedule(), qPrintable(mutant.name));
                QVERIFY2(window.errorText().isEmpty(), qPrintable(mutant.name));
                QVERIFY2(window.document()->path() == path, qPrintable(mutant.name));
                QVERIFY2(window.openFile(baseline), qPrintable(mutant.name));  // back to a known schedule
                continue;
            }
            ++refused;
            const QString error = window.errorText();
            QVERIFY2(!error.isEmpty() && !error.contains('\n'), qPrintable(mutant.name + ": " + error));
            QVERIFY2(error.contains(QFileInfo(path).fileName()), qPrintable(mutant.name + ": " + error));
            QVERIFY2(window.document()->path() == before, qPrintable(mutant.name));
            QVERIFY2(window.document()->current().result.makespan_ms == makespan, qPrintable(mutant.name));
            QVERIFY2(window.document()->current().plan.devices.size() == devices, qPrintable(mutant.name));
        }
        qInfo("%lld mutated files: %d shown, %d refused with one line", qlonglong(mutants.size()), shown, refused);
        QVERIFY(refused > mutants.size() / 2);
    }
};

QTEST_MAIN(WindowFuzzTest)
#include "window_fuzz_test.moc"
