#include "LiveRun.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QTimer>

namespace mario::gui {

namespace {
constexpr int kProtocol = 1;

QString firstLine(const QByteArray& text) {
    for (const QByteArray& line : text.split('\n')) {
        const QString trimmed = QString::fromUtf8(line).trimmed();
        if (!trimmed.isEmpty()) return trimmed;
    }
    return {};
}
}  // namespace

LiveRun::LiveRun(QObject* parent) : QObject(parent), killTimer_(new QTimer(this)) {
    killTimer_->setSingleShot(true);
    killTimer_->setInterval(2000);
    connect(killTimer_, &QTimer::timeout, this, [this] {
        if (isRunning()) process_->kill();
    });
}

LiveRun::~LiveRun() {
    if (isRunning()) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(3000);
    }
}

bool LiveRun::isRunning() const { return process_ && process_->state() != QProcess::NotRunning; }

bool LiveRun::start(const QString& planPath, const QString& executablePath, const QString& modelSpec,
                    const QStringList& extraArgs) {
    if (isRunning()) return false;
    if (process_) process_->deleteLater();
    process_ = new QProcess(this);
    buffer_.clear();
    stderr_.clear();
    lastText_.clear();
    summary_ = {};
    hello_ = {};
    stopRequested_ = false;
    failedReported_ = false;
    ended_ = false;
    connect(process_, &QProcess::started, this, &LiveRun::started);
    connect(process_, &QProcess::readyReadStandardOutput, this, &LiveRun::readOutput);
    connect(process_, &QProcess::readyReadStandardError, this, [this] { stderr_ += process_->readAllStandardError(); });
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;  // crashes arrive through finished
        fail(tr("could not start the executor %1: %2").arg(process_->program(), process_->errorString()));
        end();
    });
    connect(process_, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        killTimer_->stop();
        readOutput();
        if (!buffer_.trimmed().isEmpty()) handleLine(buffer_);  // a last line without '\n'
        buffer_.clear();
        stderr_ += process_->readAllStandardError();
        if (!stopRequested_) {
            if (status == QProcess::CrashExit)
                fail(tr("the executor crashed%1").arg(stderr_.isEmpty() ? QString() : ": " + firstLine(stderr_)));
            else if (exitCode != 0)
                fail(!stderr_.trimmed().isEmpty() ? firstLine(stderr_)
                     : !lastText_.isEmpty()       ? lastText_
                                                  : tr("the executor exited with code %1").arg(exitCode));
        }
        end();
    });
    QStringList args{QStringLiteral("run"), planPath, QStringLiteral("--backend"), QStringLiteral("cpu"),
                     QStringLiteral("--model"), modelSpec, QStringLiteral("--events")};
    args += extraArgs;
    process_->start(executablePath, args, QIODevice::ReadOnly);
    return true;
}

QString LiveRun::modelSpecFor(const std::optional<std::string>& profilePath) {
    const QString fallback = QStringLiteral("tiny");
    if (!profilePath) return fallback;
    QFile file(QString::fromStdString(*profilePath));
    if (!file.open(QIODevice::ReadOnly)) return fallback;
    const QString model = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("model")).toString();
    return model.trimmed().isEmpty() ? fallback : model;
}

void LiveRun::stop() {
    if (!isRunning()) return;
    stopRequested_ = true;
    process_->terminate();
    killTimer_->start();
}

void LiveRun::readOutput() {
    if (!process_) return;
    buffer_ += process_->readAllStandardOutput();
    qsizetype from = 0;
    for (qsizetype nl; (nl = buffer_.indexOf('\n', from)) >= 0; from = nl + 1)
        handleLine(buffer_.mid(from, nl - from));
    buffer_.remove(0, from);
}

void LiveRun::handleLine(const QByteArray& line) {
    if (line.trimmed().isEmpty()) return;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
    if (!doc.isObject()) {  // not an event: remember it, it may be the error message
        lastText_ = QString::fromUtf8(line).trimmed();
        return;
    }
    const QJsonObject o = doc.object();
    const QString event = o.value("event").toString();
    if (event == QLatin1String("instruction")) {
        emit instructionFinished(o.value("device").toInt(), o.value("index").toInt(), o.value("start_us").toDouble() / 1000.0,
                                 o.value("end_us").toDouble() / 1000.0, o.value("iteration").toInt());
    } else if (event == QLatin1String("iteration")) {
        emit iterationFinished(o.value("step_ms").toDouble(), o.value("loss").toDouble());
    } else if (event == QLatin1String("hello")) {
        hello_ = o;
        if (o.value("protocol").toInt() != kProtocol) {
            fail(tr("the executor speaks protocol %1, the workbench %2").arg(o.value("protocol").toInt()).arg(kProtocol));
            stop();
        }
    } else if (event == QLatin1String("error")) {
        fail(o.value("message").toString(QString::fromUtf8(line)));
    } else if (event.isEmpty()) {
        summary_ = o;
    }
}

void LiveRun::fail(const QString& message) {
    if (failedReported_) return;
    failedReported_ = true;
    QString one = message;
    one.replace('\n', ' ');
    emit failed(one);
}

void LiveRun::end() {
    if (ended_) return;
    ended_ = true;
    emit finished();
}

}  // namespace mario::gui
