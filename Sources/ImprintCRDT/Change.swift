/// A change in its portable form: the canonical bytes and the header decoded from them.
///
/// Changes are what replicas exchange. `hash` is the SHA-256 of `bytes`; `deps` are the
/// hashes of the changes this one was made on top of.
public struct Change: Hashable, Sendable {
    public let hash: ChangeHash
    public let actor: ActorID
    public let seq: Int
    /// Counter of the change's first op.
    public let startOp: Int
    /// Number of op counters the change uses.
    public let opCount: Int
    /// Milliseconds since the Unix epoch, as the author's clock said.
    public let time: Int64
    public let message: String?
    public let deps: [ChangeHash]
    /// The canonical encoding (`docs/format.md`, "Change").
    public let bytes: [UInt8]

    let decoded: DecodedChange

    /// Decodes and checks a change's canonical bytes.
    public init(bytes: [UInt8]) throws {
        let d = try ChangeCoding.decode(bytes)
        self.init(decoded: d, bytes: bytes, hash: ChangeHash(unchecked: SHA256Digest.of(bytes)))
    }

    init(decoded d: DecodedChange, bytes: [UInt8], hash: ChangeHash) {
        self.decoded = d
        self.bytes = bytes
        self.hash = hash
        actor = d.actors[0]
        seq = d.seq
        startOp = d.startOp
        opCount = d.opCount
        time = d.time
        message = d.message
        deps = d.deps
    }

    public static func == (a: Change, b: Change) -> Bool { a.hash == b.hash }
    public func hash(into h: inout Hasher) { h.combine(hash) }
}

/// A decoded change whose ops reference actors by index into `actors`.
struct DecodedChange: Sendable {
    var actors: [ActorID]
    var seq: Int
    var startOp: Int
    var opCount: Int
    var time: Int64
    var message: String?
    var deps: [ChangeHash]
    var ops: [Op]
}
