#pragma once
// Function multiversioning for the hot loops (private to src/erm). The portable build targets
// baseline x86-64 (SSE2), where the Box–Muller transform and the row kernels barely vectorise;
// with GCC on x86-64 Linux the marked functions are compiled three times (baseline, x86-64-v3
// = AVX2/FMA, x86-64-v4 = AVX-512) and the loader picks the best for the running CPU. The
// helpers they call are force-inlined so that they are vectorised for each clone. With
// SLR_NATIVE (-march=native) or other compilers the marker is empty.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__AVX2__)
#define SLR_ERM_VECTOR_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#define SLR_ERM_HAVE_CLONES 1 // also for kernels dispatched by hand (one variant per level)
#else
#define SLR_ERM_VECTOR_CLONES
#define SLR_ERM_HAVE_CLONES 0
#endif
#define SLR_ERM_INLINE [[gnu::always_inline]] inline

// For kernels whose loop bodies use each loaded vector several times (a token row against k and
// v, k against several rows): without pre-allocation scheduling GCC (12) folds the load into
// every instruction that uses it, so a row of R tokens is read 2R times from L1 instead of R.
// Scheduling changes no arithmetic.
#if defined(__GNUC__) && !defined(__clang__)
#define SLR_ERM_KEEP_LOADS __attribute__((optimize("schedule-insns")))
#else
#define SLR_ERM_KEEP_LOADS
#endif
