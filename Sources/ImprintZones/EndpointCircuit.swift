import AsyncHTTPClient
import Foundation
import ImprintEncoding

/// Whether a zone server is answering, so that requests to one that stopped fail at once for
/// a while instead of each waiting out its timeout.
///
/// A server that is down refuses connections, which costs a request milliseconds. One that
/// drops packets (a host gone from the network, a firewall) refuses nothing: each request
/// waits for its whole timeout, and a sender with copies for several inboxes there would wait
/// that long for every one of them, at every push. An ``HTTPZoneStore`` given a circuit
/// (``HTTPZoneStore/circuit``) reports each request that timed out to it and asks it before
/// each request:
/// - after a timeout the circuit is **open** for a backoff, 5 seconds at first and
///   twice the last after each further failure, up to 5 minutes; while open, requests fail at
///   once with ``ZoneError/Code/transport`` and a message saying when the server is asked again
///   (a refused connection does not open it: it costs no wait);
/// - once the backoff has passed, requests go through again; any answer from the server (an
///   error status too) **closes** the circuit and resets the backoff.
///
/// One circuit per server, shared by every store that talks to it (a class: copies of a store
/// share it).
///
/// ```swift
/// var store = HTTPZoneStore(baseURL: "https://zones.example.org", serviceDID: did, signer: signer)
/// store.circuit = EndpointCircuit()
/// ```
public final class EndpointCircuit: @unchecked Sendable {
    private let lock = NSLock()
    private let firstBackoff: Duration
    private let maximumBackoff: Duration
    private var openUntil: ContinuousClock.Instant?
    private var backoff: Duration?

    public init(firstBackoff: Duration = .seconds(5), maximumBackoff: Duration = .seconds(300)) {
        self.firstBackoff = firstBackoff
        self.maximumBackoff = max(firstBackoff, maximumBackoff)
    }

    /// Throws ``ZoneError/Code/transport`` while the circuit is open.
    public func check(_ server: String) throws(ZoneError) {
        let now = ContinuousClock.now
        let until: ContinuousClock.Instant? = lock.withLock { openUntil.flatMap { now < $0 ? $0 : nil } }
        if let until {
            throw ZoneError(.transport, "\(server) did not answer a moment ago; asked again in \(Self.describe(until - now))")
        }
    }

    /// Records a request that got no answer in time: opens the circuit.
    public func failed() {
        lock.withLock {
            let next = backoff.map { min($0 * 2, maximumBackoff) } ?? firstBackoff
            backoff = next
            openUntil = ContinuousClock.now + next
        }
    }

    /// Records an answer from the server: closes the circuit.
    public func answered() {
        lock.withLock {
            backoff = nil
            openUntil = nil
        }
    }

    /// Whether requests are refused right now.
    public var isOpen: Bool {
        let now = ContinuousClock.now
        return lock.withLock { openUntil.map { now < $0 } ?? false }
    }

    /// Whether `error`, thrown by an HTTP request, means the server did not answer in time
    /// (rather than refused the connection, or answered).
    public static func isTimeout(_ error: any Error) -> Bool {
        guard let error = error as? HTTPClientError else { return false }
        return error == .deadlineExceeded || error == .connectTimeout || error == .readTimeout
    }

    private static func describe(_ duration: Duration) -> String {
        let seconds = duration.inSeconds
        return seconds < 1 ? "\(Int(seconds * 1000)) ms" : "\(Int(seconds.rounded(.up))) s"
    }
}
