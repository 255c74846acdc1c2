import Foundation
import ImprintDelivery
import ImprintSync

/// A Delivery Service stand-in in front of the real one for the preview tests: it can hold
/// `sendMessage` calls until released (the durable send is slow, the preview is not), and
/// keeps a copy of every preview sent through it, which it can also keep from the real
/// service (`forwardPreviews = false`). Everything else goes through unchanged.
struct PreviewTapDeliveryService: ForwardingDeliveryService {
    final class Tap: @unchecked Sendable {
        private let lock = NSLock()
        private var holding = false
        private var waiters: [CheckedContinuation<Void, Never>] = []
        private var _previews: [SendEphemeralInput] = []
        private var _forwardPreviews = true

        /// Previews sent so far, oldest first.
        var previews: [SendEphemeralInput] { lock.withLock { _previews } }
        var forwardPreviews: Bool {
            get { lock.withLock { _forwardPreviews } }
            set { lock.withLock { _forwardPreviews = newValue } }
        }

        /// From now on, `sendMessage` waits until `release`.
        func hold() { lock.withLock { holding = true } }

        func release() {
            let resumed = lock.withLock {
                holding = false
                defer { waiters = [] }
                return waiters
            }
            for waiter in resumed { waiter.resume() }
        }

        func passGate() async {
            await withCheckedContinuation { continuation in
                let wait = lock.withLock {
                    if holding { waiters.append(continuation) }
                    return holding
                }
                if !wait { continuation.resume() }
            }
        }

        func record(_ input: SendEphemeralInput) -> Bool {
            lock.withLock {
                if input.kind == EphemeralKind.preview { _previews.append(input) }
                return input.kind != EphemeralKind.preview || _forwardPreviews
            }
        }
    }

    let real: any DeliveryService
    let tap = Tap()

    func sendMessage(_ input: SendMessageInput) async throws -> SendMessageOutput {
        await tap.passGate()
        return try await real.sendMessage(input)
    }

    func sendEphemeral(_ input: SendEphemeralInput) async throws {
        if tap.record(input) { try await real.sendEphemeral(input) }
    }
}
