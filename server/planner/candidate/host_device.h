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

#endif  // CHUNKPLAN_SERVER_PLANNER_CANDIDATE_HOST_DEVICE_H_
