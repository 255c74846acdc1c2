/// One step that turns a UI's view of a document into a later (or other) version's view;
/// ``Document/diff(from:to:)`` returns them in the order to apply.
///
/// Objects are named by id. A `put` or `insert` of an object value means "a new, empty
/// object with this id", and the patches that fill it follow. Sequence indices count the
/// view as it is when the patch applies (after the previous patches).
public enum Patch: Hashable, Sendable {
    /// Sets a map key (`.key`) or overwrites a list element (`.index`).
    case put(obj: ObjectID, key: PathElement, value: Value)
    /// Removes a map key.
    case delete(obj: ObjectID, key: String)
    /// Inserts list elements at `index`.
    case insert(obj: ObjectID, index: Int, values: [Value])
    /// Inserts text at code point `index`.
    case splice(obj: ObjectID, index: Int, text: String)
    /// Removes `count` items of a list or text from `index`.
    case remove(obj: ObjectID, index: Int, count: Int)
    /// Adds `by` to the counter at a map key or list element.
    case increment(obj: ObjectID, key: PathElement, by: Int64)
    /// The set of concurrent values at a key changed: these are all of them now, winner
    /// last (one value means the conflict is resolved). The winner is also set by `put`.
    case conflict(obj: ObjectID, key: PathElement, values: [Value])
    /// The `count` characters of a text from `index` now carry exactly `marks` (empty:
    /// none); see ``Mark``. Text a `splice` inserts carries no marks until a `marks` patch
    /// that follows it says otherwise (text typed at the end of a bold run, say).
    case marks(obj: ObjectID, index: Int, count: Int, marks: [Mark])
}
