// The LLaMA flavour and token files: the spec parser's flavour keys and presets, the llama
// model under pipeline plans against the single-device reference, and token-file reading and
// sampling against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/tune/LaunchExport.h"
#include "executor/Executor.h"
#include "executor/ModelSpec.h"
#include "executor/TokenFile.h"
#include "tests/common/UnitPlans.h"
#include "tests/executor/ReferenceChecks.h"

namespace {

using mario::Scheme;
using mario::exec::ModelSpec;
using mario::exec::parseModelSpec;
using mario::exec::readTokenFile;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---- ModelSpec ------------------------------------------------------------------------------

TEST(ModelSpecFlavor, GptIsTheDefaultAndItsDescriptionIsUnchanged) {
    auto spec = parseModelSpec("tiny");
    ASSERT_TRUE(spec.ok());
    EXPECT_EQ(spec->flavor, "gpt");
    EXPECT_EQ(mario::exec::describe(*spec), "layers=8,hidden=32,heads=4,seq=16,vocab=64");
}

TEST(ModelSpecFlavor, FlavorKeyInBothSpellings) {
    auto a = parseModelSpec("flavor=llama,layers=3");
    ASSERT_TRUE(a.ok()) << a.error().message;
    EXPECT_EQ(a->flavor, "llama");
    EXPECT_EQ(a->layers, 3);
    EXPECT_EQ(a->hidden, 32);
    auto b = parseModelSpec("flavour=llama");
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(b->flavor, "llama");
    auto c = parseModelSpec("flavor=llama,flavour=gpt");  // the last one wins, like other keys
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->flavor, "gpt");
}

TEST(ModelSpecFlavor, TinyLlamaPresetWithOverrides) {
    auto spec = parseModelSpec("tiny-llama");
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    EXPECT_EQ(spec->flavor, "llama");
    EXPECT_EQ(spec->layers, 8);
    EXPECT_EQ(spec->vocab, 64);
    auto more = parseModelSpec("tiny-llama,layers=4,vocab=256");
    ASSERT_TRUE(more.ok()) << more.error().message;
    EXPECT_EQ(more->flavor, "llama");
    EXPECT_EQ(more->layers, 4);
    EXPECT_EQ(more->vocab, 256);
    auto tiny = parseModelSpec("tiny,seq=8");
    ASSERT_TRUE(tiny.ok()) << tiny.error().message;
    EXPECT_EQ(tiny->flavor, "gpt");
    EXPECT_EQ(tiny->seq, 8);
}

TEST(ModelSpecFlavor, DescriptionRoundTripsThroughTheParser) {
    auto spec = parseModelSpec("tiny-llama,layers=2,hidden=24,heads=2,seq=5,vocab=300");
    ASSERT_TRUE(spec.ok());
    const std::string text = mario::exec::describe(*spec);
    EXPECT_EQ(text, "layers=2,hidden=24,heads=2,seq=5,vocab=300,flavor=llama");
    auto back = parseModelSpec(text);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->flavor, "llama");
    EXPECT_EQ(back->hidden, 24);
    EXPECT_EQ(back->seq, 5);
}

// Launch bundles write --model with core's executorModelSpec (core/tune/LaunchExport.h); the
// executor must read back exactly the tuned model's numbers.
TEST(ModelSpecFlavor, LaunchBundlesModelTextParses) {
    mario::ModelConfig llama;
    llama.layers = 32, llama.hidden = 4096, llama.heads = 32, llama.vocab = 32000, llama.sequence_length = 4096;
    llama.gated_mlp = true;
    auto spec = parseModelSpec(mario::executorModelSpec(llama));
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    EXPECT_EQ(spec->layers, 32);
    EXPECT_EQ(spec->hidden, 4096);
    EXPECT_EQ(spec->heads, 32);
    EXPECT_EQ(spec->seq, 4096);
    EXPECT_EQ(spec->vocab, 32000);
    EXPECT_EQ(spec->flavor, "llama");
    llama.gated_mlp = false;
    EXPECT_EQ(parseModelSpec(mario::executorModelSpec(llama))->flavor, "gpt");
}

TEST(ModelSpecFlavor, ErrorsNameTheEntry) {
    auto unknown = parseModelSpec("layers=2,flavor=bert");
    ASSERT_FALSE(unknown.ok());
    EXPECT_TRUE(contains(unknown.error().message, "flavor=bert")) << unknown.error().message;
    EXPECT_TRUE(contains(unknown.error().message, "llama")) << unknown.error().message;

    auto misplaced = parseModelSpec("layers=2,tiny-llama");
    ASSERT_FALSE(misplaced.ok());
    EXPECT_TRUE(contains(misplaced.error().message, "\"tiny-llama\"")) << misplaced.error().message;
    EXPECT_TRUE(contains(misplaced.error().message, "first")) << misplaced.error().message;

    auto word = parseModelSpec("small");
    ASSERT_FALSE(word.ok());
    EXPECT_TRUE(contains(word.error().message, "\"small\" is not key=value")) << word.error().message;
}

TEST(ModelSpecFlavor, LlamaNeedsAnEvenHeadSize) {
    // 36/12 = 3: rotary embeddings turn pairs of dimensions, so odd heads are refused...
    auto odd = parseModelSpec("flavor=llama,hidden=36,heads=12");
    ASSERT_FALSE(odd.ok());
    EXPECT_TRUE(contains(odd.error().message, "36/12 = 3")) << odd.error().message;
    // ...but only for llama: the gpt flavour has no such constraint.
    EXPECT_TRUE(parseModelSpec("hidden=36,heads=12").ok());
    EXPECT_TRUE(parseModelSpec("flavor=llama,hidden=36,heads=6").ok());
}

TEST(ModelSpecFlavor, LlamaFfnSizeFollowsLlamasRule) {
    // int(2/3 · 4h), rounded up to a multiple of 8.
    EXPECT_EQ(mario::exec::llamaFfnSize(32), 88);       // 85.33 -> 85 -> 88
    EXPECT_EQ(mario::exec::llamaFfnSize(24), 64);       // exactly 64
    EXPECT_EQ(mario::exec::llamaFfnSize(4096), 10928);  // 10922.67 -> 10922 -> 10928
    EXPECT_EQ(mario::exec::llamaFfnSize(1), 8);         // 2.67 -> 2 -> 8
}

// ---- The llama model under pipeline plans ------------------------------------------------------

struct LlamaCase {
    const char* name;
    Scheme scheme;
    bool passes;
};

mario::Plan unitPlan(Scheme scheme, bool passes) {
    auto plan = passes ? mario::test::makeUnitPlanWithPasses(scheme, 4, 4) : mario::test::makeUnitPlan(scheme, 4, 4);
    EXPECT_TRUE(plan.ok()) << (plan.ok() ? "" : plan.error().message);
    return std::move(plan).value();
}

mario::exec::ExecutorOptions llamaOptions() {
    auto options = mario::test::referenceOptions();
    auto spec = parseModelSpec("tiny-llama");
    EXPECT_TRUE(spec.ok());
    options.model = *spec;
    return options;
}

class LlamaReference : public ::testing::TestWithParam<LlamaCase> {};

TEST_P(LlamaReference, LossAndEveryGradientMatchTheSingleDeviceRun) {
    const mario::Plan plan = unitPlan(GetParam().scheme, GetParam().passes);
    auto report = mario::exec::runPlan(plan, llamaOptions());
    ASSERT_TRUE(report.ok()) << report.error().message;
    mario::test::expectMatchesReference(*report);
    // 8 blocks × (2 norms + wq, wk, wv, wo + w1, w2, w3) + token embedding + final norm + head;
    // no position embedding and no biases.
    EXPECT_EQ(report->compared_parameters, 8u * 9 + 3);
}

const LlamaCase kLlamaCases[] = {
    {"onefoneb", Scheme::OneFOneB, false},
    {"onefoneb_passes", Scheme::OneFOneB, true},
    {"chimera", Scheme::Chimera, false},
    {"chimera_passes", Scheme::Chimera, true},
};

INSTANTIATE_TEST_SUITE_P(Schemes, LlamaReference, ::testing::ValuesIn(kLlamaCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(LlamaModel, OptimizerStepsStayEqualToTheReference) {
    const mario::Plan plan = unitPlan(Scheme::Chimera, true);
    auto options = llamaOptions();
    options.iterations = 3;
    options.adam = true;
    auto report = mario::exec::runPlan(plan, options);
    ASSERT_TRUE(report.ok()) << report.error().message;
    mario::test::expectSameStepsAsReference(*report);
}

TEST(LlamaModel, TheFlavourReallyChangesTheModel) {
    const mario::Plan plan = unitPlan(Scheme::OneFOneB, false);
    auto llama = llamaOptions();
    auto gpt = llamaOptions();
    gpt.model.flavor = "gpt";
    auto a = mario::exec::runPlan(plan, llama);
    auto b = mario::exec::runPlan(plan, gpt);
    ASSERT_TRUE(a.ok()) << a.error().message;
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(b->compared_parameters, 8u * 12 + 2 + 4);
    EXPECT_GT(std::abs(a->loss - b->loss), 1e-3) << "llama " << a->loss << ", gpt " << b->loss;
    EXPECT_TRUE(std::isfinite(a->loss));
    EXPECT_GT(a->loss, 0);
}

// ---- Token files ---------------------------------------------------------------------------

class TokenFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("mario_token_file_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& bytes) {
        const auto path = dir_ / name;
        std::ofstream(path, std::ios::binary) << bytes;
        return path.string();
    }

    std::filesystem::path dir_;
};

std::string errorOf(const mario::Result<mario::exec::TokenFile>& r) {
    return r.ok() ? "(no error)" : r.error().message;
}

TEST_F(TokenFileTest, TextRoundTrip) {
    const std::string path = write("tokens.txt", "3 1 4\n1\t5   9\n\n  2 6 65535 70000\n");
    auto file = readTokenFile(path);
    ASSERT_TRUE(file.ok()) << file.error().message;
    EXPECT_EQ(file->ids, (std::vector<std::int64_t>{3, 1, 4, 1, 5, 9, 2, 6, 65535, 70000}));
    EXPECT_EQ(file->path, path);
    EXPECT_EQ(file->max_id, 70000);
}

TEST_F(TokenFileTest, BinIsLittleEndianUint16) {
    // 0x0001, 0x0100, 0xFFFF, 0x1234 written byte by byte, low byte first.
    const std::string bytes{'\x01', '\x00', '\x00', '\x01', '\xff', '\xff', '\x34', '\x12'};
    auto file = readTokenFile(write("train.bin", bytes));
    ASSERT_TRUE(file.ok()) << file.error().message;
    EXPECT_EQ(file->ids, (std::vector<std::int64_t>{1, 256, 65535, 4660}));
    // Any other extension is text, even with the same bytes.
    EXPECT_FALSE(readTokenFile(write("train.dat", bytes)).ok());
}

TEST_F(TokenFileTest, ErrorsSayWhatAndWhere) {
    const std::string missing = (dir_ / "missing.txt").string();
    auto r = readTokenFile(missing);
    EXPECT_TRUE(contains(errorOf(r), "cannot read token file \"" + missing + "\"")) << errorOf(r);

    const std::string odd = write("odd.bin", std::string("\x01\x00\x02", 3));
    r = readTokenFile(odd);
    EXPECT_TRUE(contains(errorOf(r), odd)) << errorOf(r);
    EXPECT_TRUE(contains(errorOf(r), "3 bytes")) << errorOf(r);

    const std::string word = write("word.txt", "1 2 3\n4 5\n6 seven 8\n");
    r = readTokenFile(word);
    EXPECT_TRUE(contains(errorOf(r), word + "\" line 3")) << errorOf(r);
    EXPECT_TRUE(contains(errorOf(r), "\"seven\"")) << errorOf(r);

    const std::string real = write("real.txt", "1\n2.5\n");
    r = readTokenFile(real);
    EXPECT_TRUE(contains(errorOf(r), "line 2")) << errorOf(r);
    EXPECT_TRUE(contains(errorOf(r), "\"2.5\"")) << errorOf(r);

    const std::string negative = write("negative.txt", "1 2\n\n3 -4\n");
    r = readTokenFile(negative);
    EXPECT_TRUE(contains(errorOf(r), "line 3")) << errorOf(r);
    EXPECT_TRUE(contains(errorOf(r), "negative token id \"-4\"")) << errorOf(r);

    for (const std::string& empty : {write("empty.txt", ""), write("blank.txt", " \n\t\n"), write("empty.bin", "")}) {
        r = readTokenFile(empty);
        EXPECT_TRUE(contains(errorOf(r), "\"" + empty + "\" has no tokens")) << errorOf(r);
    }

    r = readTokenFile(dir_.string());
    EXPECT_TRUE(contains(errorOf(r), "is a directory")) << errorOf(r);
    for (const auto& message : {errorOf(readTokenFile(odd)), errorOf(readTokenFile(word))})
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST_F(TokenFileTest, SamplesTileTheFileAndWrap) {
    // Ten tokens 10..19, seq 3: samples are 4 long and start at (4·i) mod (10 − 3 = 7).
    std::string text;
    for (int i = 10; i < 20; ++i) text += std::to_string(i) + " ";
    auto file = readTokenFile(write("ten.txt", text));
    ASSERT_TRUE(file.ok()) << file.error().message;
    const std::vector<std::pair<std::int64_t, int>> expectedStart = {
        {0, 0}, {1, 4}, {2, 1}, {3, 5}, {4, 2}, {5, 6}, {6, 3}, {7, 0}, {-1, 3}, {-7, 0}, {700000000000007LL, 0}};
    for (const auto& [index, start] : expectedStart) {
        auto s = file->sample(index, 3, 64);
        ASSERT_TRUE(s.ok()) << s.error().message;
        const std::vector<std::int64_t> want = {10 + start, 11 + start, 12 + start, 13 + start};
        EXPECT_EQ(*s, want) << "sample " << index;
    }
    // The last possible start (6) reaches the last token exactly.
    EXPECT_EQ(file->sample(5, 3, 64)->back(), 19);
    // seq = n − 1: one sample, the whole file, whatever the index.
    auto whole = file->sample(12345, 9, 64);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(whole->front(), 10);
    EXPECT_EQ(whole->size(), 10u);
}

TEST_F(TokenFileTest, SampleErrors) {
    const std::string path = write("few.txt", "1 2 3 300 5");
    auto file = readTokenFile(path);
    ASSERT_TRUE(file.ok());
    auto tooShort = file->sample(0, 5, 1000);
    ASSERT_FALSE(tooShort.ok());
    EXPECT_TRUE(contains(tooShort.error().message, "needs at least 6 tokens for seq=5, has 5"))
        << tooShort.error().message;
    EXPECT_TRUE(contains(tooShort.error().message, path)) << tooShort.error().message;

    // Sample 0 with seq 2 is {1, 2, 3}: inside a vocabulary of 256. Sample 1 with seq 3 starts
    // at (4·1) mod (5 − 3) = 0 and is {1, 2, 3, 300}: 300 is at position 3.
    EXPECT_TRUE(file->sample(0, 2, 256).ok());
    auto outside = file->sample(1, 3, 256);
    ASSERT_FALSE(outside.ok());
    EXPECT_TRUE(contains(outside.error().message, "token 300 at position 3 of \"" + path + "\""))
        << outside.error().message;
    EXPECT_TRUE(contains(outside.error().message, "vocabulary of 256; use --model vocab=301"))
        << outside.error().message;
}

}  // namespace
