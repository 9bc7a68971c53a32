// Programmatic dependent launch from the device side (PTX ISA
// "griddepcontrol"; sm_90). A kernel launched with programmatic stream
// serialization (kernels/launch.cuh, launch_dependent_kernel) may begin
// while the kernel before it on the stream is still running: its launch and
// prologue (barrier setup, cluster sync) overlap that kernel's tail.
#pragma once

namespace tcgemm::ptx {

// Blocks the calling thread until every grid this one depends on has
// completed and its memory operations are visible. Call it before the first
// global-memory access (read or write) and before any early return; a no-op
// for a kernel launched without the attribute.
__device__ __forceinline__ void griddep_wait() {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
}

// Lets the kernel after this one on the stream, when launched with the
// attribute, be scheduled as soon as every CTA of this grid has called it (or
// exited). It gives no ordering: the dependent still waits in griddep_wait
// for this grid to complete.
__device__ __forceinline__ void griddep_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

}  // namespace tcgemm::ptx
