/// A member credential (RFC 9420 §5.3): basic (an identity) or X.509 (a chain).
public enum Credential: TLSCodable, Hashable {
    /// `basic` credential: an application-defined identity.
    case basic(identity: [UInt8])
    /// `x509` credential: DER certificates, leaf first (not validated by ImprintMLS).
    case x509(certificates: [[UInt8]])

    public static let basicType: UInt16 = 1
    public static let x509Type: UInt16 = 2

    /// The credential type code.
    public var type: UInt16 {
        switch self {
        case .basic: Credential.basicType
        case .x509: Credential.x509Type
        }
    }

    public init(from r: inout TLSReader) throws {
        switch try r.readUInt16() {
        case 1: self = .basic(identity: try r.readOpaque())
        case 2: self = .x509(certificates: try r.readVector { try $0.readOpaque() })
        case let t: throw MLSError(.invalidValue, "unsupported credential type \(t)")
        }
    }

    public func encode(to w: inout TLSWriter) {
        w.writeUInt16(type)
        switch self {
        case let .basic(identity): w.writeOpaque(identity)
        case let .x509(certs): w.writeVector(certs) { $0.writeOpaque($1) }
        }
    }
}
