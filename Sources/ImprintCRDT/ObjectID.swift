/// Names an object (map, list or text) in a document: the root map, or the id of the
/// op that created the object. Object ids are the same on every replica.
public struct ObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The creating op's counter (0 for the root).
    public let counter: Int
    /// The creating op's actor (`nil` for the root).
    public let actor: ActorID?

    /// The document's root map.
    public static let root = ObjectID(counter: 0, actor: nil)

    public init(counter: Int, actor: ActorID?) {
        self.counter = counter
        self.actor = actor
    }

    public var description: String {
        actor.map { "\(counter)@\($0.hex)" } ?? "_root"
    }
}

/// The kinds of object a document can hold.
public enum ObjectType: UInt8, Hashable, Sendable, CustomStringConvertible {
    case map = 0
    case list = 1
    case text = 2

    public var description: String {
        switch self {
        case .map: "map"
        case .list: "list"
        case .text: "text"
        }
    }
}
