import Foundation
import ImprintServer
import ImprintServerTestSupport
import Testing

/// A graceful shutdown waits for requests in progress, not for connections that sit idle: one
/// that never sent a byte (HTTP clients open such connections ahead of need) and one kept
/// alive after its answer are closed at once, so a stop takes milliseconds, not the idle
/// timeout; one caught halfway through its first request head is answered, then closed.
@Suite struct GracefulShutdownTests {
    /// A server whose idle timeout (90 s) is longer than a stop may take here: a connection
    /// the shutdown missed would hold the stop for all of it.
    static func startServer(_ kind: StoreKind) async throws -> RunningServer {
        try await RunningServer.start(kind, configure: { $0.connectionLimits.idleTimeout = .seconds(90) })
    }

    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.available)
    func idleConnectionsDoNotHoldUpAStop(kind: StoreKind) async throws {
        let server = try await Self.startServer(kind)
        let unused = try await RawSocket.connect(port: server.port)
        let keptAlive = try await RawSocket.connect(port: server.port)
        try await keptAlive.send("GET /xrpc/_health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(await keptAlive.waitUntilReceived(atLeast: 12, timeout: .seconds(60)), "_health answered")

        let started = ContinuousClock.now
        try await server.stop()
        let took = ContinuousClock.now - started
        #expect(took < .seconds(60), "the stop took \(took)")
        let unusedOutcome = await unused.outcome(timeout: .seconds(1))
        #expect(unusedOutcome.closedByServer && unusedOutcome.bytes.isEmpty, "the unused connection is closed without an answer")
        #expect(await keptAlive.outcome(timeout: .seconds(1)).closedByServer, "the kept-alive connection is closed")
    }

    /// A connection whose first request head is still arriving when the stop begins gets its
    /// answer and is closed after it: kept alive, a client reusing it would keep the server
    /// from stopping.
    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.available)
    func aConnectionStoppedMidwayThroughItsFirstHeadIsClosedAfterItsAnswer(kind: StoreKind) async throws {
        let server = try await Self.startServer(kind)
        let midway = try await RawSocket.connect(port: server.port)
        try await midway.send("GET /xrpc/_health HTTP/1.1\r\n")
        try await Task.sleep(for: .milliseconds(300))  // the first bytes are read
        let started = ContinuousClock.now
        let stop = Task { try await server.stop() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(midway.isOpen, "a connection that sent part of a head is not cut off")
        try await midway.send("Host: 127.0.0.1\r\n\r\n")
        let outcome = await midway.outcome(timeout: .seconds(60))
        #expect(outcome.statusLine == "HTTP/1.1 200 OK", "answered: \(outcome.statusLine)")
        #expect(outcome.closedByServer, "closed after its answer, not kept alive")
        try await stop.value
        let took = ContinuousClock.now - started
        #expect(took < .seconds(60), "the stop took \(took)")
    }

    /// A request whose body is still arriving when the stop begins is answered in full; the
    /// stop ends once it is.
    @Test(.timeLimit(.minutes(3)), arguments: StoreKind.available)
    func aRequestInProgressIsAnsweredBeforeTheStopEnds(kind: StoreKind) async throws {
        let server = try await Self.startServer(kind)
        let inProgress = try await RawSocket.connect(port: server.port)
        let body = #"{"cipherSuite":1}"#
        try await inProgress.send(try SlowAndBrokenClientTests.head(.createConvo, extra: "Content-Length: \(body.utf8.count)\r\n"))
        try await inProgress.send(Array(body.utf8.prefix(5)))
        // The head has been read before the stop begins.
        try await Task.sleep(for: .milliseconds(300))
        let stop = Task { try await server.stop() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(inProgress.isOpen, "the connection with a request in progress is not closed")
        try await inProgress.send(Array(body.utf8.dropFirst(5)))
        let outcome = await inProgress.outcome(timeout: .seconds(60))
        #expect(outcome.statusLine.hasPrefix("HTTP/1.1 "), "answered: \(outcome.statusLine)")
        #expect(!outcome.statusLine.hasPrefix("HTTP/1.1 5"), "\(outcome.statusLine)")
        #expect(outcome.closedByServer, "closed after its answer")
        try await stop.value
    }
}
