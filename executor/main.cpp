// mario-executor: runs a plan on LibTorch stages (CPU backend in this version).
//   mario-executor run PLAN --backend cpu [--model SPEC] [--iterations N] [--reference]
//                           [--seed S] [--lr LR] [--recv-timeout-s T] [--optimizer sgd|adam]
//                           [--events]
// The last stdout line is one JSON summary; --events streams JSON lines before it (a hello with
// the protocol version, every instruction's start/end, a summary per iteration).
// Exit codes: 0 ok, 2 usage or unreadable/malformed plan, 3 a worker failed.
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "Executor.h"
#include "io/PlanJson.h"

namespace {

int usage(const std::string& why) {
    std::cerr << "mario-executor: " << why << "\n"
              << "usage: mario-executor run PLAN --backend cpu [--model SPEC] [--iterations N] [--reference] "
                 "[--seed S] [--lr LR] [--recv-timeout-s T] [--optimizer sgd|adam] [--events]\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3 || std::string(argv[1]) != "run") return usage("expected: run PLAN");
    const std::string planPath = argv[2];
    mario::exec::ExecutorOptions options;
    std::string backend = "cpu";
    bool events = false;  // live JSON lines (hello, instructions, iterations) before the summary
    try {
        for (int i = 3; i < argc; ++i) {
            const std::string arg = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
                return argv[++i];
            };
            if (arg == "--backend") backend = value();
            else if (arg == "--model") {
                auto spec = mario::exec::parseModelSpec(value());
                if (!spec) return usage(spec.error().message);
                options.model = *spec;
            } else if (arg == "--iterations") options.iterations = std::stoi(value());
            else if (arg == "--seed") options.seed = std::stoull(value());
            else if (arg == "--lr") options.lr = std::stod(value());
            else if (arg == "--recv-timeout-s") options.recv_timeout_s = std::stod(value());
            else if (arg == "--reference") options.reference = true;
            else if (arg == "--events") events = true;
            else if (arg == "--optimizer") {
                const std::string name = value();
                if (name != "sgd" && name != "adam") return usage("--optimizer is sgd or adam");
                options.adam = name == "adam";
            }
            else return usage("unknown option " + arg);
        }
    } catch (const std::exception& e) {
        return usage(std::string("bad option value: ") + e.what());
    }
    if (backend == "cuda") {
        std::cout << "mario-executor: the CUDA backend is not built in this version" << std::endl;
        return 2;
    }
    if (backend != "cpu") return usage("unknown backend \"" + backend + "\"");
    if (options.iterations < 1) return usage("--iterations must be at least 1");

    auto plan = mario::readPlanFile(planPath);
    if (!plan) {
        std::cout << "mario-executor: " << plan.error().message << std::endl;
        return 2;
    }
    if (events) {
        std::cout << nlohmann::json{{"event", "hello"},
                                    {"protocol", 1},
                                    {"backend", backend},
                                    {"model", mario::exec::describe(options.model)},
                                    {"devices", plan->devices.size()},
                                    {"instructions", plan->instructionCount()}}
                         .dump()
                  << std::endl;
        options.on_event = [](const std::string& line) { std::cout << line << '\n'; };
    }
    auto report = mario::exec::runPlan(*plan, options);
    if (!report) {
        std::cout << "mario-executor: " << report.error().message << std::endl;
        return 3;
    }
    nlohmann::json line = {{"loss", report->loss},
                           {"instructions", report->instructions},
                           {"devices", report->devices}};
    if (report->reference_loss) {
        line["reference_loss"] = *report->reference_loss;
        line["max_grad_rel_diff"] = report->max_grad_rel_diff;
        line["max_grad_abs_diff"] = report->max_grad_abs_diff;
        line["grads_match"] = report->grads_match;
    }
    std::cout << line.dump() << std::endl;
    return 0;
}
