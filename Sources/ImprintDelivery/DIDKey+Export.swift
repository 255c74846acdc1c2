// did:key (Ed25519) lives in the ImprintEd25519 leaf so the key store can use it without the
// HTTP client; re-exported here, where the service-auth tokens use it.
@_exported import struct ImprintEd25519.DIDKey
@_exported import struct ImprintEd25519.DIDKeyError
@_exported import enum ImprintEncoding.Base58BTC
