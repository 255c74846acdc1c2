import ImprintDelivery

/// Where a convo's history may be cut: the newest **checkpoint** that every active member's
/// **processed cursor** has reached (v1.3).
///
/// - A member's processed cursor is the seq up to which it has processed every message
///   (`updateCursor`, monotonic). A member added by a commit starts at that commit's seq: it
///   cannot decrypt anything older and needs nothing older.
/// - A checkpoint is an application message whose payload holds the whole document (a
///   snapshot), marked by its sender (`markCheckpoint`).
///
/// Once every active member has passed checkpoint `S`, no active member will ever read a
/// message below `S` again, and a member added later starts from its own Welcome and the
/// snapshot sent with it. So the zone's change and commit records below `S` can be deleted,
/// and the Delivery Service can forget those messages; `S` itself and everything after it
/// stay. A member that does not acknowledge holds the point where it is: compaction waits for
/// it, it never skips it.
///
/// ```
/// cursors:      alice 140, bob 97, carol 212
/// checkpoints:  12, 90, 150
/// point:        90  (the newest checkpoint ≤ min(140, 97, 212) = 97)
/// ```
package enum CompactionPoint {
    /// `updateCursor`'s input rule: between 0 and the convo's last seq.
    package static func checkCursor(_ processedSeq: Int, lastSeq: Int) throws {
        guard processedSeq >= 0 else { throw DeliveryError.invalidRequest("processedSeq must not be negative") }
        guard processedSeq <= lastSeq else {
            throw DeliveryError.invalidRequest("processedSeq \(processedSeq) is past the convo's last seq \(lastSeq)")
        }
    }

    /// `markCheckpoint`'s rule, on the stored message (`sender` nil: no such seq, or forgotten).
    package static func checkCheckpoint(seq: Int, sender: String?, messageType: String?, caller: String) throws {
        guard let sender else { throw DeliveryError.notFound("no message \(seq) (never sent, or compacted)") }
        guard sender == caller, messageType == MessageType.app.rawValue else {
            throw DeliveryError.forbidden("only the sender of an application message marks it as a checkpoint")
        }
    }
}
