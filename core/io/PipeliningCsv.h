#pragma once
// PyTorch pipelining's schedule CSV (torch.distributed.pipelining: _dump_csv / _load_csv):
// one line per rank, the comma-separated action strings of that rank's program in order.
// Two formats exist. "compute_only" holds F, B, I and W (and OVERLAP_F_B cells); PyTorch
// lowers it itself, adding UNSHARD/RESHARD, REDUCE_GRAD and SEND/RECV, and since 2.15 a wait
// for each send and reduction (WAIT_SEND_F, WAIT_SEND_B, WAIT_REDUCE_GRAD). "compute_comms"
// holds the lowered program, communication and waits included, and PyTorch runs it as written.
//
// Export writes what PyTorch 2.x loads, and refuses what it cannot express: plans with more
// than one stage chain (PyTorch runs one chain, stages 0..S-1) and, unless told to drop them,
// recomputations (PyTorch has no R action). OPT is never written: PyTorch's
// optimizer step lies outside the schedule.
//
// Import reads either format and what spreadsheets make of it: blank cells and "None" for
// idle slots, surrounding whitespace, quoted cells, trailing commas, CRLF line endings, a
// UTF-8 byte-order mark. A blank line in the middle is a rank with no actions (the line
// number is the rank); blank lines at the end are ignored. What Mario cannot use is kept
// with its kind, so that the importer can infer placement from every cell, as PyTorch does,
// and say what it dropped (PipeliningImport.h).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/schedule/Instruction.h"
#include "core/schedule/Plan.h"
#include "core/schedule/ScheduleShape.h"
#include "core/util/Result.h"

namespace mario {

enum class PipeliningCsvFormat {
    ComputeOnly,   // F, B, I, W per rank; PyTorch adds communication when it loads the file
    ComputeComms,  // the same order lowered as PyTorch lowers it: SEND/RECV and REDUCE_GRAD
                   // (io/PipeliningLowering.h)
};

struct PipeliningCsvOptions {
    PipeliningCsvFormat format = PipeliningCsvFormat::ComputeOnly;
    // PyTorch has no R: true writes the order without them, false refuses a plan that
    // recomputes, so that a caller drops them only knowingly (`mario export
    // --drop-recompute`; the window drops them and says how many in its status line).
    bool drop_recompute = false;
};

// "compute_only" or "compute_comms", as PyTorch's _dump_csv and _load_csv name them.
Result<PipeliningCsvFormat> parsePipeliningCsvFormat(std::string_view name);

// How many R instructions the plan holds (what drop_recompute leaves out).
int recomputeCount(const Plan& plan);

// Line r (0-based) holds the device with index r; a missing index gives an empty line.
// Every line, the last included, ends in '\n' (PyTorch writes "\r\n" and reads either).
// Fails, in one sentence, for plans PyTorch cannot express.
Result<std::string> toPipeliningCsv(const Plan& plan, const PipeliningCsvOptions& options = {});

// Writes toPipeliningCsv() to `path`; the error names the path.
Result<bool> writePipeliningCsv(const Plan& plan, const std::string& path, const PipeliningCsvOptions& options = {});

// One action of an imported file. An OVERLAP_F_B cell gives one entry per sub-action, each
// with the cell's column: one forward and one backward become an overlapped pair (forward
// first, marked overlapped); other mixes run part after part, in the cell's order.
struct PipeliningCsvAction {
    enum class Kind : std::uint8_t {
        Compute,        // F, R (Mario's own, which PyTorch rejects), B, I, W
        Communication,  // SEND_F, RECV_F, SEND_B, RECV_B
        Gradient,       // REDUCE_GRAD, and Mario's OPT
        Unshard,        // FSDP; `instruction` holds only the stage
        Reshard,        // FSDP; `instruction` holds only the stage
        Wait,           // PyTorch 2.15's WAIT_SEND_F, WAIT_SEND_B (`instruction` is the send it
                        // retires) and WAIT_REDUCE_GRAD (`instruction` is the REDUCE_GRAD)
    };
    Instruction instruction;
    Kind kind = Kind::Compute;
    int column = 0;  // 1-based cell

    // The action as the file spelled it ("1F0", "2UNSHARD"); a sub-action without its cell.
    std::string text() const;
};

struct PipeliningCsv {
    std::vector<std::vector<PipeliningCsvAction>> ranks;  // line r holds rank r
    int overlap_cells = 0;                                // OVERLAP_F_B cells read as overlapped pairs
    int unpaired_overlap_cells = 0;                       // OVERLAP_F_B cells run part after part

    int count(PipeliningCsvAction::Kind kind) const;
    // Per rank, its compute actions in order: what planFromComputeOrder takes.
    ComputeOrder computeOrder() const;
};

// Errors name the 1-based line (rank + 1) and the 1-based column (cell), e.g.
// `line 2, column 5: unknown instruction "1Q3"`.
Result<PipeliningCsv> parsePipeliningCsv(std::string_view text);

// Reads and parses a file; errors are prefixed with the path.
Result<PipeliningCsv> readPipeliningCsvFile(const std::string& path);

}  // namespace mario
