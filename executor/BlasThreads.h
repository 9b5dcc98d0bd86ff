#pragma once
// One BLAS thread per device thread. Debian's LibTorch does its float64 matrix products in
// OpenBLAS, whose own thread pool ignores at::set_num_threads: two device threads each asking
// OpenBLAS for all cores made a 2-device CPU run 5x slower than its profile (measured: 1084 ms
// vs 220 ms per step). Looked up at run time, so builds whose BLAS is another library (MKL in
// PyTorch's wheels, which follows at::set_num_threads) need nothing.
#include <dlfcn.h>

namespace mario::exec {

inline void useOneBlasThread() {
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(1);
}

}  // namespace mario::exec
