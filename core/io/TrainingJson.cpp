#include "core/io/TrainingJson.h"

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/io/JsonFieldReader.h"

namespace mario {

namespace {

constexpr std::string_view kTrainingKeys[] = {"attention",           "recompute",           "sequence_parallel",
                                              "overlap_grad_reduce", "grad_reduce_dtype",   "dropout",
                                              "overlap_tp_comm",     "overlap_param_gather",
                                              "framework",           "cuda_graphs",         "host_op_us",
                                              "overlap_p2p_comm"};

const char* attentionName(TrainingConfig::Attention attention) {
    switch (attention) {
        case TrainingConfig::Attention::Materialized: return "materialized";
        case TrainingConfig::Attention::Eager: return "eager";
        default: return "flash";
    }
}

const char* recomputeName(TrainingConfig::Recompute recompute) {
    switch (recompute) {
        case TrainingConfig::Recompute::Selective: return "selective";
        case TrainingConfig::Recompute::Full: return "full";
        default: return "none";
    }
}

const char* frameworkName(TrainingConfig::Framework framework) {
    switch (framework) {
        case TrainingConfig::Framework::Torchtitan: return "torchtitan";
        case TrainingConfig::Framework::DeepSpeed: return "deepspeed";
        default: return "megatron";
    }
}

}  // namespace

Result<TrainingConfig> readTraining(const nlohmann::json& object) {
    using Need = JsonFieldReader::Need;
    JsonFieldReader in(object, "training");
    in.onlyKeys(kTrainingKeys);
    TrainingConfig t;
    std::string attention = "flash";
    in.string("attention", attention, Need::Optional);
    if (attention == "flash") t.attention = TrainingConfig::Attention::Flash;
    else if (attention == "materialized") t.attention = TrainingConfig::Attention::Materialized;
    else if (attention == "eager") t.attention = TrainingConfig::Attention::Eager;
    else if (in.ok())
        in.fail("attention", "expected \"flash\", \"materialized\" or \"eager\" (got \"" + attention + "\")");
    std::string recompute = "none";
    in.string("recompute", recompute, Need::Optional);
    if (in.ok()) {
        if (recompute == "none") t.recompute = TrainingConfig::Recompute::None;
        else if (recompute == "selective") t.recompute = TrainingConfig::Recompute::Selective;
        else if (recompute == "full") t.recompute = TrainingConfig::Recompute::Full;
        else in.fail("recompute", "expected \"none\", \"selective\" or \"full\" (got \"" + recompute + "\")");
    }
    in.boolean("sequence_parallel", t.sequence_parallel, Need::Optional);
    in.boolean("overlap_grad_reduce", t.overlap_grad_reduce, Need::Optional);
    in.boolean("overlap_tp_comm", t.overlap_tp_comm, Need::Optional);
    in.boolean("overlap_param_gather", t.overlap_param_gather, Need::Optional);
    if (in.has("overlap_p2p_comm")) {
        bool overlap = false;
        in.boolean("overlap_p2p_comm", overlap, Need::Required);
        t.overlap_p2p_comm = overlap;
    }
    if (in.has("dropout")) {
        bool dropout = false;
        in.boolean("dropout", dropout, Need::Required);
        t.dropout = dropout;
    }
    std::string reduceDtype = "fp32";
    in.string("grad_reduce_dtype", reduceDtype, Need::Optional);
    if (in.ok() && reduceDtype != "fp32" && reduceDtype != "bf16")
        in.fail("grad_reduce_dtype", "expected \"fp32\" or \"bf16\" (got \"" + reduceDtype + "\")");
    t.grad_reduce_in_bf16 = reduceDtype == "bf16";
    std::string framework = "megatron";
    in.string("framework", framework, Need::Optional);
    if (framework == "megatron") t.framework = TrainingConfig::Framework::Megatron;
    else if (framework == "torchtitan") t.framework = TrainingConfig::Framework::Torchtitan;
    else if (framework == "deepspeed") t.framework = TrainingConfig::Framework::DeepSpeed;
    else if (in.ok())
        in.fail("framework", "expected \"megatron\", \"torchtitan\" or \"deepspeed\" (got \"" + framework + "\")");
    in.boolean("cuda_graphs", t.cuda_graphs, Need::Optional);
    if (in.has("host_op_us")) {
        double us = 0;
        in.number("host_op_us", us, Need::Required, JsonFieldReader::Check::NonNegative);
        t.host_op_us = us;
    }
    if (in.error()) return *in.error();
    return t;
}

nlohmann::json writeTraining(const TrainingConfig& t) {
    nlohmann::json out = {{"attention", attentionName(t.attention)},
                          {"recompute", recomputeName(t.recompute)},
                          {"sequence_parallel", t.sequence_parallel},
                          {"overlap_grad_reduce", t.overlap_grad_reduce},
                          {"overlap_tp_comm", t.overlap_tp_comm},
                          {"overlap_param_gather", t.overlap_param_gather},
                          {"grad_reduce_dtype", t.grad_reduce_in_bf16 ? "bf16" : "fp32"}};
    // Written only when they differ from their defaults, so that configs written before them
    // read back byte for byte.
    if (t.framework != TrainingConfig::Framework::Megatron) out["framework"] = frameworkName(t.framework);
    if (t.cuda_graphs) out["cuda_graphs"] = true;
    if (t.dropout) out["dropout"] = *t.dropout;  // unset means the model's default
    if (t.overlap_p2p_comm) out["overlap_p2p_comm"] = *t.overlap_p2p_comm;  // unset: the scheme's default
    if (t.host_op_us) out["host_op_us"] = *t.host_op_us;  // unset means the framework's constant
    return out;
}

}  // namespace mario
