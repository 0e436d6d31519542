// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Control-path entry points run inside a guard that turns any exception
// into an errno, so none crosses the C ABI.

#ifndef VRNIC_PROVIDER_GUARD_H
#define VRNIC_PROVIDER_GUARD_H

#include <cerrno>
#include <new>

namespace vrnic::prov {

// Runs f, turning any exception into an errno so none crosses the C ABI.
template <class F> int guarded(F&& f) noexcept {
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return ENOMEM;
    } catch (...) {
        return EIO;
    }
}

// For entry points returning an object: f(out) returns 0 or an errno, which
// becomes errno and a null result.
template <class T, class F> T* guarded_ptr(F&& f) noexcept {
    T* out = nullptr;
    int err = guarded([&] { return f(out); });
    if (err) {
        errno = err;
        return nullptr;
    }
    return out;
}

} // namespace vrnic::prov

#endif // VRNIC_PROVIDER_GUARD_H
