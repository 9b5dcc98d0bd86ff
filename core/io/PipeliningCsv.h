#pragma once
// PyTorch pipelining's "compute_only" CSV (torch.distributed.pipelining: _dump_csv /
// PipelineScheduleMulti._load_csv): one line per rank, the comma-separated action strings of
// that rank's compute actions in order ("0F0,0F1,0B0,..."). PyTorch inserts the
// communication itself, so the format has no SEND/RECV.
//
// Export writes F, R, B, I and W (R is a Mario extension that PyTorch does not know; a plan
// with recomputation exports it, and PyTorch would reject the file). REDUCE_GRAD and OPT are
// left out: PyTorch's runtime does them after the schedule. Import accepts what PyTorch and
// spreadsheets write: blank cells, "None" for idle slots, surrounding whitespace, quoted
// cells, trailing commas, CRLF line endings, a UTF-8 byte-order mark. A blank line in the
// middle is a rank with no actions (the line number is the rank); blank lines at the end are
// ignored. REDUCE_GRAD and OPT cells are accepted on import, being Mario compute instructions.
#include <string>
#include <string_view>
#include <vector>

#include "schedule/Instruction.h"
#include "schedule/Plan.h"
#include "util/Result.h"

namespace mario {

// Line r (0-based) holds the device with index r; a missing index gives an empty line.
// Every line, the last included, ends in '\n'.
std::string toPipeliningCsv(const Plan& plan);

// Writes toPipeliningCsv() to `path`; the error names the path.
Result<bool> writePipeliningCsv(const Plan& plan, const std::string& path);

// One compute-only program per rank, in line order. Errors name the 1-based line (rank + 1)
// and the 1-based column (cell), e.g. `line 2, column 5: unknown instruction "1Q3"`; SEND and
// RECV cells are errors too, since compute_only files do not hold them.
Result<std::vector<std::vector<Instruction>>> parsePipeliningCsv(std::string_view text);

// Reads and parses a file; errors are prefixed with the path.
Result<std::vector<std::vector<Instruction>>> readPipeliningCsvFile(const std::string& path);

}  // namespace mario
