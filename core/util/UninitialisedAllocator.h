#pragma once
// An allocator whose default construction leaves a trivial element as it is: a vector resized
// with it reserves its elements without writing them. For buffers that are written whole before
// they are read, such as the timings the simulator's loop writes for every instruction it reaches:
// value-initialising them was 7% of an 8 × 32 simulation (issue 45). Everything else (an element
// given a value by `assign(n, T{})` or `push_back`, rebinding, equality) is std::allocator's:
// std::allocator_traits uses this `construct` only where no value is given.
#include <memory>
#include <new>
#include <type_traits>

namespace mario {

template <class T>
struct UninitialisedAllocator : std::allocator<T> {
    UninitialisedAllocator() noexcept = default;
    template <class U>
    UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}

    template <class U>
    void construct(U* at) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(at)) U;  // default-initialised: nothing written for a trivial U
    }
};

}  // namespace mario
