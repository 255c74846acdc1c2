/// Why bytes are not a well-formed KeyPackage message (``KeyPackageShape``).
public struct KeyPackageShapeError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// The bytes end inside a field.
        case truncated
        /// Bytes follow the message.
        case trailingBytes
        /// A length prefix is not a minimal, valid MLS varint.
        case invalidLength
        /// Not an MLS 1.0 `MLSMessage` carrying a KeyPackage.
        case notKeyPackage
        /// The KeyPackage's cipher suite is not the one stated beside it.
        case suiteMismatch
        /// A key or signature has the wrong size for the suite, or a field is empty.
        case invalidField
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
