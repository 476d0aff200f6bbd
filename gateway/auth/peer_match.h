#pragma once

#include "gateway/auth/auth_config.h"
#include "gateway/tls/peer_identity.h"

namespace fencegate::gateway::auth {

// Whether a client certificate identifies `principal`: only a chain verified against the
// client CA counts; then its subject (exact RFC 2253 text), a DNS SAN (case-insensitive) or a
// URI SAN (exact) must equal one the principal lists.
bool PeerMatches(const PeerIdentity& peer, const PrincipalConfig& principal);

}  // namespace fencegate::gateway::auth
