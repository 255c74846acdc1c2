import ImprintDelivery

/// The ephemeral socket (Delivery Service v1.5) of a live document.
///
/// `live` opens one per connection of its ephemeral listener and hands it here while it is
/// open; previews (`sendPreview`) and presence (`sendPresence`)
/// then go through it: one WebSocket frame, no request, no per-message authentication or
/// membership query. When no socket is open (not live, a service before v1.5, between
/// reconnections) or a send on it fails, the message goes by `sendEphemeral` as before, so
/// nothing depends on the socket: only the latency does.
extension SharedDocument {
    /// Whether ``live(pollInterval:pullInterval:)`` holds this member's ephemeral socket now
    /// (`SyncOptions.ephemeralSocket`): previews and presence then leave through it.
    public var isEphemeralSocketOpen: Bool { ephemeralChannel != nil }

    /// Where this member's ephemeral messages go now.
    var ephemeralRoute: EphemeralRoute { EphemeralRoute(channel: ephemeralChannel, delivery: account.delivery) }

    /// `live`'s listener opened `channel`: sends use it from now on.
    func adoptEphemeralChannel(_ channel: EphemeralChannel) {
        ephemeralChannel = channel
    }

    /// `channel` ended: sends go by `sendEphemeral` again (unless another listener's socket
    /// replaced it meanwhile).
    func releaseEphemeralChannel(_ channel: EphemeralChannel) {
        channel.close()
        if ephemeralChannel === channel { ephemeralChannel = nil }
    }
}

/// One ephemeral send's way out: the socket when there is one, else `sendEphemeral`.
struct EphemeralRoute: Sendable {
    let channel: EphemeralChannel?
    let delivery: any DeliveryService

    /// Sends `input` on the socket; when there is none or the send fails, by `sendEphemeral`.
    func send(_ input: SendEphemeralInput) async throws {
        if sendNow(input) { return }
        try await delivery.sendEphemeral(input)
    }

    /// Hands `input` to the socket without suspending (``EphemeralChannel/sendNow(_:)``);
    /// false when there is no socket or it did not take the frame (closed, or its send
    /// buffer full): the caller then sends by `sendEphemeral`.
    func sendNow(_ input: SendEphemeralInput) -> Bool {
        guard let channel else { return false }
        return (try? channel.sendNow(input)) != nil
    }
}
