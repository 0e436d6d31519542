// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Thread domains, parent domains and the memory of objects made on them
// (td.cc), without a device: none of it reaches the kernel.

#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "provider.h"

namespace vrnic::prov {
namespace {

struct Calls {
    int alloc = 0, freed = 0;
    bool use_default = false;
    bool fail = false;
    uint64_t last_type = 0;
    size_t last_size = 0, last_align = 0;
};

void* counting_alloc(ibv_pd*, void* ctx, size_t size, size_t align, uint64_t type) {
    auto* c = static_cast<Calls*>(ctx);
    c->last_type = type;
    c->last_size = size;
    c->last_align = align;
    if (c->use_default)
        return IBV_ALLOCATOR_USE_DEFAULT;
    if (c->fail)
        return nullptr;
    c->alloc++;
    void* p = std::aligned_alloc(align, (size + align - 1) / align * align);
    std::memset(p, 0x5a, size); // the object must not rely on zeroed memory
    return p;
}

void counting_free(ibv_pd*, void* ctx, void* p, uint64_t) {
    static_cast<Calls*>(ctx)->freed++;
    std::free(p);
}

struct Domains : ::testing::Test {
    ibv_context* ctx = reinterpret_cast<ibv_context*>(0x1000); // never dereferenced
    Pd pd;
    Calls calls;

    void SetUp() override {
        pd.pd.context = ctx;
        pd.pd.handle = 42;
    }
    Pd* parent(ibv_td* td = nullptr, bool allocators = true) {
        ibv_parent_domain_init_attr a{};
        a.pd = &pd.pd;
        a.td = td;
        if (allocators) {
            a.comp_mask =
                IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
            a.alloc = counting_alloc;
            a.free = counting_free;
            a.pd_context = &calls;
        }
        ibv_pd* p = alloc_parent_domain(ctx, &a);
        return p ? to_pd(p) : nullptr;
    }
};

TEST_F(Domains, ParentDomainStandsForItsPd) {
    Pd* p = parent();
    ASSERT_NE(nullptr, p);
    EXPECT_TRUE(p->is_parent());
    EXPECT_EQ(42u, p->pd.handle);
    EXPECT_EQ(ctx, p->pd.context);
    EXPECT_EQ(1, pd.users.load());
    // A PD with a parent domain, and a parent of a parent, are refused.
    EXPECT_EQ(EBUSY, context_ops().dealloc_pd(&pd.pd));
    ibv_parent_domain_init_attr a{};
    a.pd = &p->pd;
    EXPECT_EQ(nullptr, alloc_parent_domain(ctx, &a));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, context_ops().dealloc_pd(&p->pd));
    EXPECT_EQ(0, pd.users.load());
}

TEST_F(Domains, BadArgumentsAreRefused) {
    ibv_parent_domain_init_attr a{};
    EXPECT_EQ(nullptr, alloc_parent_domain(ctx, &a)); // no PD
    a.pd = &pd.pd;
    a.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS; // no functions
    EXPECT_EQ(nullptr, alloc_parent_domain(ctx, &a));
    a.comp_mask = 1u << 7;
    EXPECT_EQ(nullptr, alloc_parent_domain(ctx, &a));
    a.comp_mask = 0;
    EXPECT_EQ(nullptr, alloc_parent_domain(reinterpret_cast<ibv_context*>(0x2000), &a));
    ibv_td_init_attr ta{};
    ta.comp_mask = 1;
    EXPECT_EQ(nullptr, alloc_td(ctx, &ta));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, pd.users.load());
}

TEST_F(Domains, ThreadDomainIsBusyWhileNamed) {
    ibv_td_init_attr ta{};
    ibv_td* td = alloc_td(ctx, &ta);
    ASSERT_NE(nullptr, td);
    EXPECT_EQ(ctx, td->context);
    Pd* p = parent(td);
    ASSERT_NE(nullptr, p);
    EXPECT_EQ(reinterpret_cast<Td*>(td), p->td);
    EXPECT_EQ(EBUSY, dealloc_td(td));
    EXPECT_EQ(0, dealloc_parent_domain(p));
    EXPECT_EQ(0, dealloc_td(td));
}

TEST_F(Domains, ObjectsTakeTheDomainsMemory) {
    Pd* p = parent();
    ASSERT_NE(nullptr, p);
    Qp* qp = make_object<Qp>(p, kResTypeQp);
    EXPECT_EQ(1, calls.alloc);
    EXPECT_EQ(kResTypeQp, calls.last_type);
    EXPECT_EQ(sizeof(Qp), calls.last_size);
    EXPECT_EQ(alignof(Qp), calls.last_align);
    EXPECT_EQ(nullptr, qp->send_cq); // constructed, not the allocator's bytes
    EXPECT_FALSE(qp->rings.sq_lock.single_threaded());
    EXPECT_EQ(1, p->users.load());
    EXPECT_EQ(EBUSY, dealloc_parent_domain(p));
    destroy_object(qp, kResTypeQp);
    EXPECT_EQ(1, calls.freed);
    EXPECT_EQ(0, p->users.load());

    // IBV_ALLOCATOR_USE_DEFAULT: our heap, and no call to free.
    calls.use_default = true;
    Cq* cq = make_object<Cq>(p, kResTypeCq);
    EXPECT_EQ(kResTypeCq, calls.last_type);
    EXPECT_EQ(1, calls.alloc);
    destroy_object(cq, kResTypeCq);
    EXPECT_EQ(1, calls.freed);

    // A failing allocator fails the object.
    calls.use_default = false;
    calls.fail = true;
    EXPECT_THROW(make_object<Qp>(p, kResTypeQp), std::bad_alloc);
    EXPECT_EQ(0, p->users.load());
    EXPECT_EQ(0, dealloc_parent_domain(p));
}

TEST_F(Domains, PlainPdOrNoneUsesTheHeap) {
    Qp* qp = make_object<Qp>(&pd, kResTypeQp);
    EXPECT_EQ(0, pd.users.load());
    destroy_object(qp, kResTypeQp);
    Cq* cq = make_object<Cq>(nullptr, kResTypeCq);
    destroy_object(cq, kResTypeCq);
    Pd* p = parent(nullptr, false); // a parent domain without allocators
    ASSERT_NE(nullptr, p);
    qp = make_object<Qp>(p, kResTypeQp);
    EXPECT_EQ(0, calls.alloc);
    destroy_object(qp, kResTypeQp);
    EXPECT_EQ(0, dealloc_parent_domain(p));
}

} // namespace
} // namespace vrnic::prov
