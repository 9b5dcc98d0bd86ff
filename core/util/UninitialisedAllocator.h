#pragma once
// An allocator whose default construction leaves a trivial element as it is: a vector resized
// with it reserves its elements without writing them. For buffers that are written whole before
// they are read, such as the timings the simulator's loop writes for every instruction it reaches:
// value-initialising them was 7% of an 8 × 32 simulation (issue 45). An element given a value
// (`assign(n, T{})`, `push_back`) is constructed as with std::allocator.
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace mario {

template <class T>
struct UninitialisedAllocator : std::allocator<T> {
    using value_type = T;
    template <class U>
    struct rebind {
        using other = UninitialisedAllocator<U>;
    };
    UninitialisedAllocator() noexcept = default;
    template <class U>
    UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}

    template <class U>
    void construct(U* at) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(at)) U;  // default-initialised: nothing written for a trivial U
    }
    template <class U, class... Args>
    void construct(U* at, Args&&... args) {
        ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
    }
};

template <class T, class U>
bool operator==(const UninitialisedAllocator<T>&, const UninitialisedAllocator<U>&) noexcept {
    return true;
}

}  // namespace mario
