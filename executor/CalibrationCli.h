#pragma once
// `mario-executor calibrate` on the command line (docs/calibration.md):
//   mario-executor calibrate [--device cpu|cuda[:N]] [--dtype T] [--model SPEC]
//                            [--micro-batch-size B] [--quick] [--repeats R] [--name NAME]
//                            [--links-from PRESET] -o PRESET.json
// writes a "mario-hardware" preset through core's one writer (core/io/TextFile.h) and prints one
// JSON summary line; bad arguments and failed measurements: one line on stderr, exit 2.

namespace mario::exec {

int calibrateMain(int argc, char** argv);

}  // namespace mario::exec
