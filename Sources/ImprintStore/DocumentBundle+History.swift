import Foundation
import ImprintBundle
import ImprintCRDT

/// One change of a document's history, as `imprint log` shows it.
public struct HistoryEntry: Sendable, Equatable {
    /// Hex of the change hash.
    public var hash: String
    /// Hex of the writing actor.
    public var actor: String
    /// The device the actor belongs to (see `SessionActor`), when known.
    public var device: String?
    /// The actor's sequence number for this change. Every opening of a bundle writes with a
    /// new actor (`SessionActor`), so this is mostly 1; `deviceSeq` counts per device.
    public var seq: Int
    /// This change's number among the changes of its device (or of its actor, when the device
    /// is unknown), from 1, in history order.
    public var deviceSeq: Int
    /// The author's clock, milliseconds since the Unix epoch.
    public var time: Int64
    /// The change message, if any.
    public var message: String?
}

extension DocumentBundle {
    /// Every change, dependencies first.
    public func history() -> [HistoryEntry] {
        let devices = self.devices.sorted()
        var deviceOfActor: [ActorID: String?] = [:]
        var counts: [String: Int] = [:]
        return document.allChanges().map { change in
            let device: String?
            if let known = deviceOfActor[change.actor] {
                device = known
            } else {
                device = SessionActor.device(of: change.actor, among: devices)?.rawValue
                deviceOfActor[change.actor] = device
            }
            let counter = device.map { "device:" + $0 } ?? "actor:" + change.actor.hex
            counts[counter, default: 0] += 1
            return HistoryEntry(hash: change.hash.hex, actor: change.actor.hex, device: device,
                                seq: change.seq, deviceSeq: counts[counter]!, time: change.time, message: change.message)
        }
    }
}
