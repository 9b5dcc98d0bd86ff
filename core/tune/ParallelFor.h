#pragma once
// The worker threads of every batch of independent evaluations in core: the tuner's candidates
// and the sweep's points (core/sweep). Work is handed out by index, so results stored by index
// are the same for any thread count; a set cancel flag stops the hand-out, so a cancelled batch
// returns within one evaluation per thread.
#include <atomic>
#include <thread>
#include <vector>

namespace mario {

// Runs `work(i)` for every i in [0, count) on `threads` threads (the caller's among them).
template <class Work>
void parallelFor(int count, int threads, const std::atomic<bool>* cancel, Work work) {
    std::atomic<int> next{0};
    auto worker = [&] {
        for (;;) {
            if (cancel && cancel->load(std::memory_order_relaxed)) return;
            const int i = next.fetch_add(1);
            if (i >= count) return;
            work(i);
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads && t < count; ++t) pool.emplace_back(worker);
    worker();
    for (auto& thread : pool) thread.join();
}

// The threads a batch gets: `requested` when positive, else one per core.
inline int workerThreads(int requested) {
    if (requested > 0) return requested;
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    return cores > 0 ? cores : 1;
}

}  // namespace mario
