/// How much of a document's history ``Document/save(history:)`` writes.
///
/// A save always keeps the whole *structure* of the history: every change's actor,
/// sequence number, dependencies and op ids, every item of every text and list with its
/// place and whether it is deleted. What differs is the *content* of deleted text and
/// deleted list items.
///
/// ```swift
/// // The snapshot a new member receives: the current text, no deleted text.
/// let snapshot = try doc.save(history: .redacted)
/// let joined = try Document.load(snapshot)
/// // `joined` reads as `doc` does and merges any later or concurrent change as `doc` would.
/// ```
public enum HistoryRetention: Sendable, Hashable {
    /// Every change in full: deleted text included, so every past version reads as it
    /// was, and every change can be sent on to other replicas. What ``Document/save()``
    /// writes for a document that has its whole history.
    case full
    /// The current state only: the content of every deleted character is dropped (the
    /// save holds no byte of it), so is the value of every deleted list item holding a
    /// scalar (it reads as null), and the changes that inserted them keep only their hashes. The result merges exactly as a full save would with every change
    /// made before, after or concurrently with it, but those *redacted* changes cannot be
    /// sent to anyone (``Document/allChanges()`` leaves them out), and versions before
    /// the save show each deleted character as ``Document/redactedCharacter``
    /// (`docs/crdt-semantics.md`, "Redacted history").
    case redacted
}
