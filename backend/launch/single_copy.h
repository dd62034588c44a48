#pragma once
// Whether the processes of a job on this machine may read each other's memory with
// process_vm_readv (Linux cross-memory attach, CMA): Open MPI's shared-memory transport then
// moves a large message in one copy, read by the receiver, instead of in fragments through a
// shared FIFO that advance only while the sender calls into MPI.
//
// Note: CMA needs ptrace access from one rank to a sibling rank, which containers (seccomp,
// no CAP_SYS_PTRACE) and Yama's ptrace_scope often deny; there Open MPI fails the job at its
// first large message. So the launcher asks this probe, which tries exactly that — one child
// reads a value from its sibling — once per process, and keeps the fragment path
// (btl_vader_single_copy_mechanism none) wherever it fails.
namespace shardscope::launch {

bool crossMemoryAttachWorks();

} // namespace shardscope::launch
