/// A Lamport identifier: the op's counter and the document-local index of its actor.
///
/// Counters are global Lamport clocks: a new local op gets one more than the largest
/// counter the document has seen. The actor index points into `Document.actors`;
/// encoders map it to `ActorID` bytes, so indices never leave the process.
struct OpID: Hashable, Sendable {
    var counter: Int
    var actor: Int32

    /// The root map's id; never the id of a real op.
    static let root = OpID(counter: 0, actor: -1)
    /// Stands for "no item" (start or end of a sequence) in origins.
    static let none = OpID(counter: 0, actor: -2)

    @inline(__always) var isNone: Bool { actor == -2 }

    @inline(__always) func advanced(by n: Int) -> OpID { OpID(counter: counter + n, actor: actor) }
}
