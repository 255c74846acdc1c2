import Crypto
import Foundation

/// An Ed25519 public key prepared for fast, repeated signature verification.
///
/// Verification follows RFC 8032 §5.1.7 as BoringSSL (and so swift-crypto) implements it:
/// `S` must be below the group order, `k = SHA-512(R ‖ A ‖ M) mod L`, and the signature holds
/// when the canonical encoding of `[S]B - [k]A` equals the 32 bytes of `R` (no cofactor).
/// The two scalar multiplications use precomputed multiples of B (shared) and of A (built by
/// `init`), so a verification costs about a third of BoringSSL's. Building the key costs about
/// two verifications; `Ed25519SignatureVerifier` decides when that pays.
///
/// Only public data passes through here, and all of it runs in variable time.
public struct Ed25519VerifyingKey: Sendable {
    /// The 32-byte encoding this key was made from.
    public let rawRepresentation: [UInt8]
    let table: MultiplesTable

    /// Prepares a key. Returns nil when the bytes are not 32 long or not a canonical encoding
    /// of a curve point with nonzero x: verify such keys with swift-crypto instead, which
    /// decides for them exactly as before.
    public init?(rawRepresentation bytes: [UInt8]) {
        guard bytes.count == 32,
              let point = bytes.withUnsafeBytes({ EdwardsPoint(strictlyDecoding: $0) })
        else { return nil }
        rawRepresentation = bytes
        // The table holds multiples of -A, so verification only adds.
        table = MultiplesTable(EdwardsPoint(x: -point.x, y: point.y, z: point.z, t: -point.t))
    }

    /// Whether `signature` (64 bytes) is a valid signature of `message` by this key.
    public func isValidSignature<S: DataProtocol, M: DataProtocol>(_ signature: S, for message: M) -> Bool {
        withContiguous(signature) { sig in
            withContiguous(message) { msg in isValidSignature(sig, for: msg) }
        }
    }

    func isValidSignature(_ signature: UnsafeRawBufferPointer, for message: UnsafeRawBufferPointer) -> Bool {
        guard signature.count == 64,
              let s = Scalar(canonical: UnsafeRawBufferPointer(rebasing: signature[32..<64]))
        else { return false }
        var hasher = SHA512()
        hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: signature[0..<32]))
        rawRepresentation.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        hasher.update(bufferPointer: message)
        let k = hasher.finalize().withUnsafeBytes { Scalar(reducing: $0) }
        let r = Self.combine(s: s, k: k, minusA: table)
        return r.encoded().withUnsafeBytes { computed in
            computed.elementsEqual(UnsafeRawBufferPointer(rebasing: signature[0..<32]))
        }
    }

    /// `[s]B + [k](-A)`, both by the even/odd radix-16 comb over precomputed multiples.
    static func combine(s: Scalar, k: Scalar, minusA: MultiplesTable) -> EdwardsPoint {
        let sDigits = s.radix16Digits(), kDigits = k.radix16Digits()
        return BasePointTable.shared.entries.withUnsafeBufferPointer { bTable in
            minusA.entries.withUnsafeBufferPointer { aTable in
                var h = EdwardsPoint.identity
                for i in stride(from: 1, to: 64, by: 2) {
                    h = h.adding(digit: sDigits[i], row: i >> 1, of: bTable)
                    h = h.adding(digit: kDigits[i], row: i >> 1, of: aTable)
                }
                h = h.doubled().doubled().doubled().doubled()
                for i in stride(from: 0, to: 64, by: 2) {
                    h = h.adding(digit: sDigits[i], row: i >> 1, of: bTable)
                    h = h.adding(digit: kDigits[i], row: i >> 1, of: aTable)
                }
                return h
            }
        }
    }
}

extension EdwardsPoint {
    /// self + digit·(row's base), digit in [-8, 8].
    @inline(__always)
    func adding(digit: Int8, row: Int, of table: UnsafeBufferPointer<AffineNielsPoint>) -> EdwardsPoint {
        if digit > 0 { return adding(table[row &* 8 &+ Int(digit) &- 1]) }
        if digit < 0 { return subtracting(table[row &* 8 &- Int(digit) &- 1]) }
        return self
    }
}

/// The multiples table of the base point B, built once per process.
enum BasePointTable {
    /// B's encoding: y = 4/5, x even.
    static let encoding: [UInt8] = [0x58] + [UInt8](repeating: 0x66, count: 31)
    static let point: EdwardsPoint = encoding.withUnsafeBytes { EdwardsPoint(strictlyDecoding: $0)! }
    static let shared = MultiplesTable(point)
}

/// Runs `body` over the bytes of `data`, copying only when they are not contiguous.
@inline(__always)
func withContiguous<D: DataProtocol, R>(_ data: D, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if let result = data.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
        return result
    }
    return Array(data).withUnsafeBytes(body)
}
