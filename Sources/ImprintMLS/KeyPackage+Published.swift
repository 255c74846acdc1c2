import ImprintMLSWire

extension KeyPackage {
    /// A key package as a Delivery Service hands it out (`MLSMessage(KeyPackage)` bytes, next
    /// to the suite the publisher stated), checked first by the same public-structure rules
    /// the Delivery Service applied when it was published (`KeyPackageShape`, the leaf both
    /// sides share), then parsed in full. Its signatures are still to be verified by the
    /// caller (`validate`), as for any key package.
    ///
    /// ```swift
    /// let keyPackage = try KeyPackage(published: Array(ref.keyPackage), cipherSuite: .x25519Aes128GcmSha256Ed25519)
    /// ```
    public init(published bytes: [UInt8], cipherSuite: CipherSuite) throws {
        do {
            _ = try KeyPackageShape(bytes, cipherSuite: Int(cipherSuite.rawValue))
        } catch {
            let code: MLSError.Code = switch error.code {
            case .truncated: .truncated
            case .trailingBytes: .trailingBytes
            case .invalidLength: .invalidVarint
            case .suiteMismatch: .unsupportedCipherSuite
            case .notKeyPackage, .invalidField: .invalidValue
            }
            throw MLSError(code, "published key package: \(error.message)")
        }
        guard case let .keyPackage(keyPackage) = try MLSMessage(tlsBytes: bytes), keyPackage.cipherSuite == cipherSuite else {
            throw MLSError(.invalidValue, "published key package: not a KeyPackage of suite \(cipherSuite.rawValue)")
        }
        self = keyPackage
    }
}
