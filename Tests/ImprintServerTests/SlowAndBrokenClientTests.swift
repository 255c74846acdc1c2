import AsyncHTTPClient
import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import ImprintZones
import NIOCore
import Testing

/// Clients that break HTTP framing, send slowly or hold many connections: the server answers
/// 4xx or closes the connection, never a 5xx, never waits forever, never lets one address hold
/// every descriptor. Bodies of the wrong media type and JSON with repeated keys are refused.
@Suite struct SlowAndBrokenClientTests {
    /// A signed request head for `method` whose body the handler will read.
    static func head(_ method: DeliveryMethod, extra: String) throws -> String {
        let token = try ServiceAuthSigner().token(audience: RunningServer.serviceDID, method: method.nsid)
        return "POST \(method.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\n\(extra)\r\n"
    }

    /// The client keeps an idle connection for less time than the server does
    /// (`HTTPClient.imprint`): with the server closing first, a request could take a pooled
    /// connection while the server closes it and fail with `remoteConnectionClosed` although
    /// the server never saw it (the test suite's own client once did, polling for over 30 s).
    @Test func imprintsClientsCloseIdleConnectionsBeforeTheServerDoes() {
        let client = HTTPClient.Configuration.imprint.connectionPool.idleTimeout
        #expect(Duration.nanoseconds(client.nanoseconds) < ConnectionLimits().idleTimeout)
        let signer = ServiceAuthSigner()
        #expect(DeliveryClient(baseURL: "http://127.0.0.1:1", serviceDID: "", signer: signer).httpClient === HTTPClient.imprint)
        #expect(HTTPZoneStore(baseURL: "http://127.0.0.1:1", serviceDID: "", signer: signer).httpClient === HTTPClient.imprint)
    }

    @Test(arguments: StoreKind.available)
    func bodiesThatBreakFramingAre400OrAClosedConnection(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            // An invalid chunk-size line.
            let badChunk = try await RawSocket.connect(port: server.port)
            try await badChunk.send(try Self.head(.createConvo, extra: "Transfer-Encoding: chunked\r\n") + "zz\r\n{}\r\n0\r\n\r\n")
            // Usually a 400 within milliseconds. On a loaded machine (CI at load 8) the server
            // twice answered nothing and closed the connection after 24 s instead, which the
            // suite's rule allows (4xx or a close, never a 5xx, never forever) as for the two
            // cases below; why the 400 is lost then is not found yet (docs/delivery-service.md).
            let first = await badChunk.outcome(timeout: .seconds(40))
            #expect(first.statusLine.hasPrefix("HTTP/1.1 400") || (first.bytes.isEmpty && first.closedByServer),
                    "\(first.statusLine) (\(first.bytes.count) bytes, closed by the server: \(first.closedByServer), after \(first.seconds) s)")

            // A body that ends before its Content-Length.
            let short = try await RawSocket.connect(port: server.port)
            try await short.send(try Self.head(.createConvo, extra: "Content-Length: 100\r\n") + #"{"cipherSuite":"#)
            try await short.finishSending()
            let second = await short.outcome(timeout: .seconds(30))
            #expect(second.statusLine.hasPrefix("HTTP/1.1 400") || (second.bytes.isEmpty && second.closedByServer), "\(second.statusLine)")

            // A chunked body abandoned midway.
            let abandoned = try await RawSocket.connect(port: server.port)
            try await abandoned.send(try Self.head(.createConvo, extra: "Transfer-Encoding: chunked\r\n") + "5\r\n{\"ci")
            try await abandoned.finishSending()
            let third = await abandoned.outcome(timeout: .seconds(30))
            #expect(third.statusLine.hasPrefix("HTTP/1.1 400") || (third.bytes.isEmpty && third.closedByServer), "\(third.statusLine)")

            for outcome in [first, second, third] {
                #expect(!outcome.statusLine.contains(" 5"), "a 5xx: \(outcome.statusLine)")
            }
            // The server is fine afterwards.
            _ = try await server.client().getConvos()
        }
    }

    @Test func halfSentHeadsAndStalledBodiesAreClosedAndEventStreamsAreNot() async throws {
        try await withServer(.sqlite, configure: {
            // Long enough that a loaded machine still sends its first bytes in time.
            $0.connectionLimits.idleTimeout = .seconds(3)
            $0.connectionLimits.bodyIdleTimeout = .milliseconds(500)
        }) { server in
            // The timeouts are 3 s and 0.5 s; the tests wait up to `Self.closeWindow` for the
            // close, because a connection is only timed once the server has accepted it, and
            // with every suite sharing two cores that can come late (a 15 s window once ran out
            // in CI). A server that never closes still fails, after the window.
            // Slowloris: half a head, then nothing.
            let half = try await RawSocket.connect(port: server.port)
            try? await half.send("POST \(DeliveryMethod.createConvo.path) HTTP/1.1\r\nHost: x\r\n")
            let halfOutcome = await half.outcome(timeout: Self.closeWindow)
            #expect(halfOutcome.closedByServer, "closed \(halfOutcome.closedByServer) after \(halfOutcome.seconds) s")

            // A connection that never sends anything.
            let silent = try await RawSocket.connect(port: server.port)
            let silentOutcome = await silent.outcome(timeout: Self.closeWindow)
            #expect(silentOutcome.closedByServer, "closed \(silentOutcome.closedByServer) after \(silentOutcome.seconds) s")

            // A whole head, then a body that stops. (The idle timeout does not run while a
            // request is under way, so only the body timeout can close this one.)
            let stalled = try await Self.connectAndSend(server, try Self.head(.createConvo, extra: "Content-Length: 100\r\n") + #"{"cipherSuite":"#)
            let stalledOutcome = await stalled.outcome(timeout: Self.closeWindow)
            #expect(stalledOutcome.closedByServer, "closed \(stalledOutcome.closedByServer) after \(stalledOutcome.seconds) s")
            #expect(!stalledOutcome.statusLine.contains(" 5"), "\(stalledOutcome.statusLine)")

            // An event stream is a request in progress, not an idle connection: it outlives
            // the idle timeout (heartbeats every second in tests).
            let client = server.client()
            let token = try client.signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.subscribeConvoEvents.nsid)
            let stream = try await Self.connectAndSend(server, "GET \(DeliveryMethod.subscribeConvoEvents.path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n")
            let streamOutcome = await stream.outcome(timeout: .seconds(5))
            #expect(!streamOutcome.closedByServer, "the event stream was closed after \(streamOutcome.seconds) s")
            #expect(streamOutcome.statusLine.hasPrefix("HTTP/1.1 200"), "\(streamOutcome.statusLine)")

            // Ordinary calls are unaffected.
            _ = try await client.getConvos()
        }
    }

    /// How long a test waits for the server to close a connection its timeouts should close.
    static let closeWindow: Duration = .seconds(60)

    /// A new connection that has sent `bytes`. If the server closed it first (its idle timeout
    /// ran out before this process, on a loaded machine, got to send: what the test expects of
    /// an idle connection anyway), a fresh one is tried, up to ten times. (Three were not
    /// enough once in CI, in a run where this test took 345 s: every send found its connection
    /// closed, "I/O on closed channel".)
    static func connectAndSend(_ server: RunningServer, _ bytes: String) async throws -> RawSocket {
        for attempt in 1...10 {
            let socket = try await RawSocket.connect(port: server.port)
            do {
                try await socket.send(bytes)
                return socket
            } catch where attempt < 10 {
                continue
            }
        }
        preconditionFailure("unreachable: the last attempt returns or throws")
    }

    /// A connection that has sent one keep-alive request and been answered, so the server has
    /// counted it for certain, whatever the scheduler did.
    static func answeredConnection(_ server: RunningServer, _ label: String, path: String = "/xrpc/_health",
                                   headers: String = "") async throws -> RawSocket {
        let socket = try await RawSocket.connect(port: server.port)
        try await socket.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\(headers)\r\n")
        #expect(await socket.waitUntilReceived(atLeast: 12, timeout: .seconds(60)), "\(label) answered")
        return socket
    }

    /// One more unauthenticated connection is closed before any answer. (Closed at once when
    /// refused; the timeout only bounds a server that wrongly serves it.)
    static func expectRefused(_ server: RunningServer, _ label: String) async throws {
        let extra = try await RawSocket.connect(port: server.port)
        try? await extra.send("GET /xrpc/_health HTTP/1.1\r\nHost: x\r\n\r\n")
        let refused = await extra.outcome(timeout: .seconds(60))
        #expect(refused.closedByServer && refused.bytes.isEmpty, "\(label): \(refused.statusLine)")
    }

    @Test func oneAddressCannotHoldMoreThanItsConnections() async throws {
        // Held connections idle between the steps; on a loaded machine the steps can take
        // longer than the default idle timeout, which would free their places.
        try await withServer(.sqlite, configure: {
            $0.connectionLimits.maxConnectionsPerAddress = 3
            $0.connectionLimits.idleTimeout = .seconds(600)
        }) { server in
            var held: [RawSocket] = []
            for _ in 0..<3 { held.append(try await Self.answeredConnection(server, "held connection")) }
            // Then one more is closed at once.
            try await Self.expectRefused(server, "a fourth connection")
            // Once one closes, a new connection is served.
            _ = await held.removeLast().outcome(timeout: .milliseconds(1))
            // The server notices the close on its own schedule: try again until a new
            // connection is served (bounded), rather than sleeping a guess.
            var served: RawSocket.Outcome?
            let retryUntil = ContinuousClock.now + .seconds(60)
            repeat {
                let next = try await RawSocket.connect(port: server.port)
                try? await next.send("GET /xrpc/_health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                served = await next.outcome(timeout: .seconds(10))
            } while served?.bytes.isEmpty != false && ContinuousClock.now < retryUntil
            #expect(served?.statusLine.hasPrefix("HTTP/1.1 200") == true, "\(served?.statusLine ?? "")")
            for socket in held { _ = await socket.outcome(timeout: .milliseconds(1)) }
        }
    }

    /// The cap counts only connections that have not carried an authenticated request: four
    /// members on one address (twice the cap) keep their connections, and the unauthenticated
    /// ones are still capped beside them.
    @Test func authenticatedConnectionsDoNotCountAgainstTheCap() async throws {
        try await withServer(.sqlite, configure: {
            $0.connectionLimits.maxConnectionsPerAddress = 2
            $0.connectionLimits.idleTimeout = .seconds(600)
        }) { server in
            var members: [RawSocket] = []
            for _ in 0..<4 {
                let token = try ServiceAuthSigner().token(audience: RunningServer.serviceDID, method: DeliveryMethod.getConvos.nsid)
                members.append(try await Self.answeredConnection(
                    server, "member connection", path: DeliveryMethod.getConvos.path, headers: "Authorization: Bearer \(token)\r\n"))
            }
            var anonymous: [RawSocket] = []
            for _ in 0..<2 { anonymous.append(try await Self.answeredConnection(server, "unauthenticated connection")) }
            try await Self.expectRefused(server, "a third unauthenticated connection")
            let stillOpen = members.filter { $0.isOpen }.count
            #expect(stillOpen == members.count, "\(members.count - stillOpen) member connections were closed")
            for socket in members + anonymous { _ = await socket.outcome(timeout: .milliseconds(1)) }
        }
    }

    @Test(arguments: StoreKind.available)
    func jsonMethodsTakeJSONOnly(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let signer = ServiceAuthSigner()
            for contentType in ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", nil] {
                let token = try signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.createConvo.nsid)
                var headers = [("Authorization", "Bearer \(token)")]
                if let contentType { headers.append(("Content-Type", contentType)) }
                let response = try await RawHTTP.send(server, .POST, DeliveryMethod.createConvo.path, headers: headers,
                                                      body: Data(json: #"{"cipherSuite": 1}"#))
                #expect(response.status == 415, "\(contentType ?? "none"): \(response.text)")
                #expect(response.errorName == "UnsupportedMediaType")
            }
            let token = try signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.createConvo.nsid)
            let withCharset = try await RawHTTP.send(server, .POST, DeliveryMethod.createConvo.path,
                                                     headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "Application/JSON; charset=utf-8")],
                                                     body: Data(json: #"{"cipherSuite": 1}"#))
            #expect(withCharset.status == 200, "\(withCharset.text)")
        }
    }

    @Test(arguments: StoreKind.available)
    func repeatedKeysAreRefused(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let signer = ServiceAuthSigner()
            let bodies = [
                #"{"cipherSuite": 1, "cipherSuite": 2}"#,
                #"{"cipherSuite": 1, "title": "a", "\u0074itle": "b"}"#,
                #"{"cipherSuite": 1, "title": "x", "convoId": "c1", "convoId": "c2"}"#,
            ]
            for body in bodies {
                let response = try await RawHTTP.call(server, .createConvo, signer: signer, body: Data(json: body))
                #expect(response.status == 400 && response.errorName == "InvalidRequest", "\(body): \(response.text)")
                #expect(response.errorBody?.message.contains("appears twice") == true, "\(response.text)")
            }
            // sendMessage's flat fast path declines a repeated key, and the full path refuses it.
            let send = try await RawHTTP.call(server, .sendMessage, signer: signer, body: Data(json:
                #"{"convoId": "a", "epoch": 0, "messageType": "app", "hash": "\#(fakeHash(1))", "size": 1, "convoId": "b"}"#))
            #expect(send.status == 400 && send.errorBody?.message.contains("appears twice") == true, "\(send.text)")
            // The same key in different objects is fine.
            let nested = try await RawHTTP.call(server, .registerStorage, signer: signer,
                                                body: Data(json: #"{"provider": {"type": "folder", "config": {"type": "x"}}}"#))
            #expect(nested.status == 200, "\(nested.text)")
        }
    }

    @Test(arguments: StoreKind.available)
    func aMemberCannotRemoveItselfAndTheLastToLeaveClosesTheConvo(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            let owner = fixture.owner
            await expectServiceError(400, "InvalidRequest") {
                try await owner.removeMember(RemoveMemberInput(convoId: fixture.convoId, epoch: 0, did: owner.did, commit: Data([1, 2])))
            }
            // The creator is the only member; leaving closes the convo: nobody can act on it.
            try await owner.leaveConvo(convoId: fixture.convoId)
            #expect(try await owner.getConvos().convos.allSatisfy { $0.id != fixture.convoId })
            await expectServiceError(403, "NotMember") {
                try await owner.sendMessage(SendMessageInput(convoId: fixture.convoId, epoch: 0, messageType: .app, hash: fakeHash(1), size: 1))
            }
        }
    }
}
