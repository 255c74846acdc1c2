import ImprintBundle
import ImprintCRDT

/// The engine actor a device writes with: 8 bytes naming the device, then 8 bytes naming
/// one session (one opening of the bundle).
///
/// A fresh session per opening keeps `(actor, seq)` unique even when one device id is used
/// on two machines or a backup is restored (the situations that make sync tools produce
/// conflict copies of a change log); the device prefix lets `log` attribute every change to
/// a device without any extra bookkeeping.
public enum SessionActor {
    /// Bytes of the device part.
    public static let devicePrefixLength = 8

    /// The device part of every actor `device` writes with.
    public static func devicePrefix(of device: DeviceID) -> [UInt8] {
        Array(ActorID.named(device.rawValue).bytes.prefix(devicePrefixLength))
    }

    /// A new actor for `device`, its session part drawn from `generator`.
    public static func make(for device: DeviceID, using generator: inout some RandomNumberGenerator) -> ActorID {
        let session = (0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return ActorID(bytes: devicePrefix(of: device) + session)!
    }

    /// The device among `candidates` that `actor` belongs to, if any.
    public static func device(of actor: ActorID, among candidates: some Sequence<DeviceID>) -> DeviceID? {
        let prefix = Array(actor.bytes.prefix(devicePrefixLength))
        return candidates.first { devicePrefix(of: $0) == prefix }
    }
}
