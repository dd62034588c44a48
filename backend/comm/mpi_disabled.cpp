// Built when SHARDSCOPE_MPI is OFF (e.g. a cluster's GPU node without OpenMPI headers):
// the MPI entry points exist and say clearly that this build has no MPI.
#include "comm/mpi_communicator.h"
#include "core/error.h"

namespace shardscope::comm {

namespace {
[[noreturn]] void noMpi() {
    throw Error(ErrorKind::InvalidArgument,
                "this build has no MPI support (configure with -DSHARDSCOPE_MPI=ON)");
}
} // namespace

bool mpiCompiledIn() {
    return false;
}
MpiRuntime::MpiRuntime(int*, char***) {}
MpiRuntime::~MpiRuntime() = default;
void MpiRuntime::abort(int exitCode) {
    std::_Exit(exitCode);
}
std::unique_ptr<Communicator> makeMpiWorldCommunicator(device::Device*) {
    noMpi();
}
std::unique_ptr<Communicator> makeMpiSplitCommunicator(device::Device*, int, int) {
    noMpi();
}

} // namespace shardscope::comm
