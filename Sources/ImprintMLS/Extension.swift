/// An MLS extension (RFC 9420 §13.4): a type and opaque data.
public struct Extension: TLSCodable, Hashable {
    public var type: UInt16
    public var data: [UInt8]
    public init(type: UInt16, data: [UInt8]) { self.type = type; self.data = data }

    public static let applicationID: UInt16 = 1
    public static let ratchetTree: UInt16 = 2
    public static let requiredCapabilities: UInt16 = 3
    public static let externalPub: UInt16 = 4
    public static let externalSenders: UInt16 = 5

    /// Whether `type` is one of the RFC 9420 default extension types.
    static func isDefault(_ type: UInt16) -> Bool { (1 ... 5).contains(type) }

    public init(from r: inout TLSReader) throws {
        type = try r.readUInt16()
        data = try r.readOpaque()
    }
    public func encode(to w: inout TLSWriter) {
        w.writeUInt16(type)
        w.writeOpaque(data)
    }
}

extension TLSReader {
    /// Reads `Extension extensions<V>`, rejecting duplicate types (RFC 9420 §13.4).
    mutating func readExtensions() throws -> [Extension] {
        let exts = try readVector { try Extension(from: &$0) }
        var seen = Set<UInt16>()
        for e in exts where !seen.insert(e.type).inserted {
            throw MLSError(.invalidValue, "duplicate extension type \(e.type)")
        }
        return exts
    }
}

extension TLSWriter {
    mutating func writeExtensions(_ exts: [Extension]) {
        writeVector(exts) { $1.encode(to: &$0) }
    }
}

extension TLSWriter {
    /// Writes a vector of codable items.
    mutating func writeList<T: TLSCodable>(_ items: [T]) {
        writeVector(items) { $1.encode(to: &$0) }
    }
}

extension TLSReader {
    /// Reads a vector of codable items.
    mutating func readList<T: TLSCodable>(_: T.Type = T.self) throws -> [T] {
        try readVector { try T(from: &$0) }
    }
}

extension Array where Element == Extension {
    func first(type: UInt16) -> Extension? { first { $0.type == type } }
}
