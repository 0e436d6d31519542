// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Thread domains and parent domains. A parent domain stands for a PD (it
// carries the PD's kernel handle, so commands that name it name the PD) and
// may add a thread domain, whose QPs post without the provider's locks, and
// an allocator for the memory of the QP and CQ objects made on it.

#include <cstdlib>

#include "guard.h"
#include "provider.h"

namespace vrnic::prov {

void* domain_alloc(Pd* domain, size_t size, size_t align, uint64_t type, bool& custom) noexcept {
    custom = false;
    if (domain && domain->alloc) {
        void* p = domain->alloc(&domain->pd, domain->pd_context, size, align, type);
        if (p != IBV_ALLOCATOR_USE_DEFAULT) {
            custom = p != nullptr;
            return p; // null: the user's allocator failed, and so do we
        }
    }
    // operator new's alignment covers every provider object.
    static_assert(alignof(std::max_align_t) >= 8);
    return ::operator new(size, std::nothrow);
}

void domain_free(Pd* domain, void* p, uint64_t type, bool custom) noexcept {
    if (custom)
        domain->free(&domain->pd, domain->pd_context, p, type);
    else
        ::operator delete(p);
}

ibv_td* alloc_td(ibv_context* context, ibv_td_init_attr* attr) noexcept {
    return guarded_ptr<ibv_td>([&](ibv_td*& out) {
        if (!attr || attr->comp_mask)
            return EINVAL;
        auto* td = new Td();
        td->td.context = context;
        out = &td->td;
        return 0;
    });
}

int dealloc_td(ibv_td* ibtd) noexcept {
    auto* td = reinterpret_cast<Td*>(ibtd);
    if (td->users.load(std::memory_order_relaxed))
        return EBUSY;
    delete td;
    return 0;
}

ibv_pd* alloc_parent_domain(ibv_context* context, ibv_parent_domain_init_attr* attr) noexcept {
    return guarded_ptr<ibv_pd>([&](ibv_pd*& out) {
        constexpr uint32_t known =
            IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
        if (!attr || !attr->pd || attr->comp_mask & ~known)
            return EINVAL;
        Pd* protection = to_pd(attr->pd);
        if (protection->is_parent() || attr->pd->context != context ||
            (attr->td && attr->td->context != context))
            return EINVAL;
        const bool allocators = attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
        if (allocators && (!attr->alloc || !attr->free))
            return EINVAL;
        auto* pd = new Pd();
        pd->pd.context = context;
        pd->pd.handle = attr->pd->handle;
        pd->protection = protection;
        pd->td = attr->td ? reinterpret_cast<Td*>(attr->td) : nullptr;
        if (allocators) {
            pd->alloc = attr->alloc;
            pd->free = attr->free;
        }
        if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
            pd->pd_context = attr->pd_context;
        protection->users.fetch_add(1, std::memory_order_relaxed);
        if (pd->td)
            pd->td->users.fetch_add(1, std::memory_order_relaxed);
        out = &pd->pd;
        return 0;
    });
}

int dealloc_parent_domain(Pd* pd) noexcept {
    if (pd->users.load(std::memory_order_relaxed))
        return EBUSY;
    pd->protection->users.fetch_sub(1, std::memory_order_relaxed);
    if (pd->td)
        pd->td->users.fetch_sub(1, std::memory_order_relaxed);
    delete pd;
    return 0;
}

} // namespace vrnic::prov
