/*!
 * \file transport_loader.h
 * \brief Picks and creates the engine's transport: "local" (one process) is built in; the
 * MPI transports are plugins loaded from the directory libir itself was loaded from.
 */
#ifndef IR_RUNTIME_COLLECTIVE_TRANSPORT_LOADER_H_
#define IR_RUNTIME_COLLECTIVE_TRANSPORT_LOADER_H_

#include <memory>
#include <string>

#include "ir/collective.h"

namespace ir {
namespace collective {
namespace detail {

/*!
 * \brief The transport InitOptions::transport names: "" reads IR_COLLECTIVE_TRANSPORT, else the
 * launcher's variables (OMPI_COMM_WORLD_SIZE: "openmpi", PMI_SIZE: "mpich"), else "local";
 * "mpi" is whichever launcher started the process. Throws for an unknown name.
 */
std::string ResolveTransportName(const std::string& requested);

/*! \brief A started transport of a resolved name (loads the MPI plugins); throws with the reason. */
std::unique_ptr<Transport> CreateTransport(const std::string& name);

}  // namespace detail
}  // namespace collective
}  // namespace ir

#endif  // IR_RUNTIME_COLLECTIVE_TRANSPORT_LOADER_H_
