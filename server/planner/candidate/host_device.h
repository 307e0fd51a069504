#ifndef CHUNKPLAN_SERVER_PLANNER_CANDIDATE_HOST_DEVICE_H_
#define CHUNKPLAN_SERVER_PLANNER_CANDIDATE_HOST_DEVICE_H_

// CHUNKPLAN_HOST_DEVICE marks a function that both host code and CUDA kernels
// call. It is empty outside nvcc, so plain C++ compilers see ordinary inline
// functions.
#if defined(__CUDACC__)
#define CHUNKPLAN_HOST_DEVICE __host__ __device__
#else
#define CHUNKPLAN_HOST_DEVICE
#endif

// CHUNKPLAN_ALWAYS_INLINE marks a small host+device function that must be
// inlined into its caller: the CPU compiles its callers for several
// instruction sets (layout/measure_lanes.cc), and an inlined body takes the
// caller's.
#if defined(__CUDACC__)
#define CHUNKPLAN_ALWAYS_INLINE __forceinline__
#elif defined(__GNUC__)
#define CHUNKPLAN_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define CHUNKPLAN_ALWAYS_INLINE inline
#endif

#endif  // CHUNKPLAN_SERVER_PLANNER_CANDIDATE_HOST_DEVICE_H_
