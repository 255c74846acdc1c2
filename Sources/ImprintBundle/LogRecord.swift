/// One record of a change log: opaque bytes (an encoded change, as the engine hands it over)
/// plus the hash naming them. Named apart from the engine's `ChangeRecord`: the bundle layer
/// never looks inside.
public struct LogRecord: Hashable, Sendable {
    public var hash: RecordHash
    public var bytes: [UInt8]

    public init(hash: RecordHash, bytes: [UInt8]) {
        self.hash = hash
        self.bytes = bytes
    }
}
