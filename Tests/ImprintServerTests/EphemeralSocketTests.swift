import Foundation
import ImprintDelivery
import ImprintServer
import ImprintServerTestSupport
import Logging
import NIOCore
import NIOWebSocket
import Testing
import WSClient

/// The ephemeral socket (v1.5, `ephemeralSocket`): relays both ways with sockets and SSE
/// streams, refuses before the upgrade exactly as `subscribeEphemeral` does, closes on a
/// malformed frame with a typed reason (the server stays up), closes a removed member's socket
/// as the removal commits (on any instance), and crosses instances on PostgreSQL.
@Suite struct EphemeralSocketTests {
    struct TimeoutError: Error {}

    /// The first element of `stream` not in `stale`, sending with `send` every 50 ms meanwhile
    /// (a message sent before the receiver's socket or stream is open reaches no one, by design);
    /// at most 20 s.
    ///
    /// `stale` names the data of an earlier step's repeated sends: the last of them may still be
    /// on its way when the next step's receiver opens (on PostgreSQL it crosses the server through
    /// `LISTEN`), and reaching the new receiver then is correct relaying, not this step's message.
    static func firstReceived(
        _ stream: AsyncThrowingStream<EphemeralMessage, any Error>, skipping stale: Set<Data> = [],
        sending send: @escaping @Sendable () async throws -> Void
    ) async throws -> EphemeralMessage {
        try await withThrowingTaskGroup(of: EphemeralMessage?.self) { group in
            group.addTask {
                for try await message in stream where !stale.contains(message.data) { return message }
                return nil
            }
            group.addTask {
                for _ in 0..<400 {
                    try await send()
                    try await Task.sleep(for: .milliseconds(50))
                }
                throw TimeoutError()
            }
            let first = try await group.next()!
            group.cancelAll()
            return try #require(first, "the stream ended without a message")
        }
    }

    static func input(_ fixture: ConvoFixture, _ text: String, kind: String? = nil) -> SendEphemeralInput {
        SendEphemeralInput(convoId: fixture.convoId, epoch: fixture.epoch, data: Data(text.utf8), kind: kind)
    }

    @Test(.timeLimit(.minutes(5)), arguments: StoreKind.available)
    func socketsRelayToSocketsAndStreams(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            let (bob, carol) = (fixture.members[0], fixture.members[1])
            let ownerChannel = try #require(try await fixture.owner.openEphemeralChannel(convoId: fixture.convoId))
            let bobChannel = try #require(try await bob.openEphemeralChannel(convoId: fixture.convoId))
            defer { ownerChannel.close(); bobChannel.close() }

            // Socket to socket, kind and epoch as given.
            let toSocket = try await Self.firstReceived(bobChannel.messages) {
                try await ownerChannel.send(Self.input(fixture, "caret at 7", kind: EphemeralKind.preview))
            }
            #expect(toSocket == EphemeralMessage(convoId: fixture.convoId, sender: fixture.owner.did, epoch: fixture.epoch,
                                                 data: Data("caret at 7".utf8), kind: EphemeralKind.preview))
            // Socket to an SSE stream.
            let toStream = try await Self.firstReceived(
                carol.subscribeEphemeral(convoId: fixture.convoId), skipping: [Data("caret at 7".utf8)]
            ) {
                try await ownerChannel.send(Self.input(fixture, "to sse"))
            }
            #expect(toStream.sender == fixture.owner.did && toStream.data == Data("to sse".utf8) && toStream.kind == nil)
            // A POST to a socket; the owner's own sends never came back to it, so the first
            // message it has not skipped over is Carol's (Bob's socket got the owner's, above).
            let fromPost = try await Self.firstReceived(ownerChannel.messages) {
                try await carol.sendEphemeral(Self.input(fixture, "from post"))
            }
            #expect(fromPost.sender == carol.did && fromPost.data == Data("from post".utf8))
        }
    }

    /// An upgrade is answered before it happens, with the error `subscribeEphemeral` gives.
    @Test(.timeLimit(.minutes(5)), arguments: StoreKind.available)
    func refusedBeforeTheUpgrade(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server)
            let stranger = server.client()
            let path = DeliveryMethod.ephemeralSocket.path + "?convoId=" + fixture.convoId
            #expect(try await Self.upgrade(server, path: path, token: nil).hasPrefix("HTTP/1.1 401"))
            let strangerToken = try stranger.signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.ephemeralSocket.nsid)
            let refused = try await Self.upgrade(server, path: path, token: strangerToken)
            #expect(refused.hasPrefix("HTTP/1.1 403") && refused.contains("NotMember"))
            let wrongMethodToken = try fixture.owner.signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.subscribeEphemeral.nsid)
            #expect(try await Self.upgrade(server, path: path, token: wrongMethodToken).hasPrefix("HTTP/1.1 401"))
            let ownerToken = try fixture.owner.signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.ephemeralSocket.nsid)
            let unknown = try await Self.upgrade(server, path: DeliveryMethod.ephemeralSocket.path + "?convoId=no-such-convo", token: ownerToken)
            #expect(unknown.hasPrefix("HTTP/1.1 404"))
            // Through the client: the same errors, typed.
            await expectServiceError(403, "NotMember") { _ = try await stranger.openEphemeralChannel(convoId: fixture.convoId) }
            await expectServiceError(404, "NotFound") { _ = try await fixture.owner.openEphemeralChannel(convoId: "no-such-convo") }
            // A member's plain GET (no upgrade) is told to upgrade.
            let plain = try await RawHTTP.call(server, .ephemeralSocket, signer: fixture.owner.signer, query: "convoId=" + fixture.convoId)
            #expect(plain.status == 400 && plain.errorName == "InvalidRequest")
            // And the server still upgrades a member.
            let channel = try await fixture.owner.openEphemeralChannel(convoId: fixture.convoId)
            #expect(channel != nil)
            channel?.close()
        }
    }

    /// Each malformed frame closes its socket with a code and an `InvalidRequest` reason;
    /// the server stays up and serves the next socket.
    @Test(.timeLimit(.minutes(10)), arguments: StoreKind.available)
    func malformedFramesCloseTheSocket(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            func send(_ bytes: [UInt8]) -> WebSocketOutboundWriter.OutboundFrame { .binary(ByteBuffer(bytes: bytes)) }
            let header: [UInt8] = [0x01, 0, 0, 0, 0, 0, 0, 0, 1]
            let cases: [(String, WebSocketOutboundWriter.OutboundFrame, Int)] = [
                ("text", .text("hello"), 1003),
                ("garbage", send([0xFF, 1, 2]), 1008),
                ("short header", send([0x01, 0, 0]), 1008),
                ("no data", send(header + [0]), 1008),
                ("data too big", send(header + [0] + [UInt8](repeating: 7, count: 2049)), 1008),
                ("bad kind", send(header + [2] + Array("P!".utf8) + [1]), 1008),
                ("kind too long", send(header + [33] + [UInt8](repeating: 0x61, count: 33) + [1]), 1008),
                ("negative epoch", send([0x01, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 1]), 1008),
            ]
            for (name, frame, code) in cases {
                let close: EphemeralChannelClosed?
                do { close = try await Self.closeAfterSending(frame, server: server, as: fixture.owner, convoId: fixture.convoId) } catch {
                    Issue.record("\(name): the socket was not closed within 90 s (\(error))")
                    continue
                }
                #expect(close?.code == code, "\(name)")
                if code == 1008 { #expect(close?.reason.hasPrefix("InvalidRequest: ") == true, "\(name): \(close?.reason ?? "")") }
            }
            // A frame past the size limit ends the socket at the frame layer (1009, or the
            // connection closed); either way only that socket.
            _ = try? await Self.closeAfterSending(send(header + [0] + [UInt8](repeating: 7, count: 100_000)), server: server,
                                                  as: fixture.owner, convoId: fixture.convoId)
            _ = try await fixture.owner.getConvos()
            let ownerChannel = try #require(try await fixture.owner.openEphemeralChannel(convoId: fixture.convoId))
            let bobChannel = try #require(try await fixture.members[0].openEphemeralChannel(convoId: fixture.convoId))
            defer { ownerChannel.close(); bobChannel.close() }
            let received = try await Self.firstReceived(bobChannel.messages) { try await ownerChannel.send(Self.input(fixture, "still up")) }
            #expect(received.data == Data("still up".utf8))
        }
    }

    /// A send split into fragments is relayed whole, and the send written after it is relayed
    /// after it: on SQLite a single-frame send is relayed on the event loop
    /// (`EphemeralSendFastPath`), a fragmented one by the session, and once a data frame went
    /// to the session every later one does too. Each round sends "fragmented N" in three
    /// fragments, then "after N" in one frame, until Bob's socket has three messages.
    @Test(.timeLimit(.minutes(5)), arguments: StoreKind.available)
    func aFragmentedSendIsRelayedWholeAndInOrder(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let bobChannel = try #require(try await fixture.members[0].openEphemeralChannel(convoId: fixture.convoId))
            defer { bobChannel.close() }
            let (url, configuration) = try Self.rawSocket(on: server, as: fixture.owner, convoId: fixture.convoId)
            let sender = Task {
                try await WebSocketClient.connect(url: url, configuration: configuration, logger: testLogger) { _, outbound, _ in
                    for round in 0..<400 {
                        var whole = EphemeralSocketFrame.encodeSend(Self.input(fixture, "fragmented \(round)"))
                        try await outbound.withBinaryMessageWriter { write in
                            for size in [4, 5] { try await write(whole.readSlice(length: size)!) }
                            try await write(whole)
                        }
                        try await outbound.write(.binary(EphemeralSocketFrame.encodeSend(Self.input(fixture, "after \(round)"))))
                        try await Task.sleep(for: .milliseconds(50))
                    }
                }
            }
            defer { sender.cancel() }
            var received: [String] = []
            for try await message in bobChannel.messages {
                received.append(String(decoding: message.data, as: UTF8.self))
                if received.count == 3 { break }
            }
            // The first whole round Bob's socket saw (it may have opened between the two
            // sends of a round): its fragmented send, then its single frame.
            let first = try #require(received.firstIndex { $0.hasPrefix("fragmented ") }, "\(received)")
            let round = received[first].dropFirst("fragmented ".count)
            #expect(first + 1 < received.count && received[first + 1] == "after \(round)", "\(received)")
            #expect(!received[..<first].contains("after \(round)"), "\(received)")
        }
    }

    /// Sends past the member's rate limit are dropped, and counted as `RateLimited`
    /// rejections (the bucket refills at one message in 1,000 s here).
    @Test(.timeLimit(.minutes(5))) func sendsPastTheRateLimitAreDroppedAndCounted() async throws {
        try await withServer(.sqlite, configure: {
            $0.rateLimitPerSecond = 0.001
            $0.rateLimitBurst = 40
        }) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let channel = try #require(try await fixture.members[0].openEphemeralChannel(convoId: fixture.convoId))
            defer { channel.close() }
            for index in 0..<60 { try await channel.send(Self.input(fixture, "caret \(index)")) }
            // The socket's messages are handled in order: once a later request is answered,
            // count what the 60 sends left. The metrics route is not rate limited.
            var rejected = 0
            for _ in 0..<200 {
                rejected = Int(try await RawHTTP.metric(server, #"imprint_rejections_total{error="RateLimited"}"#) ?? 0)
                if rejected > 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(rejected > 0, "no send past the limit was counted")
            #expect(rejected < 60, "some sends were within the burst")
        }
    }

    /// A member whose socket stopped reading misses the messages published while the server's
    /// send buffer for it is full, and each one missed is counted
    /// (`imprint_ephemeral_dropped_total{subscriber="socket"}`); another member's socket keeps
    /// getting every message meanwhile; and the server's graceful shutdown does not wait for
    /// the stalled socket to take its close frame (`closeHandshakeTimeout`).
    @Test(.timeLimit(.minutes(5))) func aSocketThatStopsReadingMissesMessagesAndDoesNotHoldUpShutdown() async throws {
        let server = try await RunningServer.start(.sqlite, configure: Self.floodable)
        do {
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            let stalled = try await Self.socketThatStopsReading(on: server, as: fixture.members[0], convoId: fixture.convoId)
            let carolChannel = try #require(try await fixture.members[1].openEphemeralChannel(convoId: fixture.convoId))
            defer { carolChannel.close() }
            let ownerChannel = try #require(try await fixture.owner.openEphemeralChannel(convoId: fixture.convoId))
            defer { ownerChannel.close() }
            let carolSawLast = Task { () -> Bool in
                for try await message in carolChannel.messages where message.data == Data("last".utf8) { return true }
                return false
            }
            defer { carolSawLast.cancel() }

            var dropped = 0.0
            try await Self.flood(ownerChannel, fixture) {
                dropped = try await RawHTTP.metric(server, Self.droppedOnSockets) ?? 0
                return dropped > 0
            }
            #expect(dropped > 0, "nothing was dropped for the socket that stopped reading")
            #expect(stalled.isOpen, "a slow reader is skipped, not closed")
            for _ in 0..<200 {  // once the owner's socket has drained
                if (try? ownerChannel.sendNow(Self.input(fixture, "last"))) != nil { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            let timeout = Task {
                try await Task.sleep(for: .seconds(60))
                carolSawLast.cancel()
            }
            defer { timeout.cancel() }
            #expect(try await carolSawLast.value, "the member who reads got the message sent after the drops")
        } catch {
            try? await server.stop()
            throw error
        }
        // A shutdown held up for ever would hang the run: it is waited for 60 s at most.
        let (stopped, signal) = AsyncStream.makeStream(of: Bool.self)
        Task { try? await server.stop(); signal.yield(true) }
        Task { try? await Task.sleep(for: .seconds(60)); signal.yield(false) }
        var outcome = stopped.makeAsyncIterator()
        #expect(await outcome.next() == true, "the shutdown waited over 60 s for a socket that stopped reading")
    }

    /// A socket whose send buffer stays full for `ephemeralStallTimeout` while messages keep
    /// coming is dropped (its member has stopped reading); until then it only misses them.
    @Test(.timeLimit(.minutes(5))) func aSocketThatStaysFullIsDropped() async throws {
        try await withServer(.sqlite, configure: {
            Self.floodable(&$0)
            $0.ephemeralStallTimeout = .seconds(1)
        }) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            _ = try await Self.socketThatStopsReading(on: server, as: fixture.members[0], convoId: fixture.convoId)
            let ownerChannel = try #require(try await fixture.owner.openEphemeralChannel(convoId: fixture.convoId))
            defer { ownerChannel.close() }
            // The client, which reads nothing, does not see the close: the server's count of
            // subscribers does (the owner's socket and the stalled one, then the owner's alone).
            var dropped = 0.0, subscribers = 0.0
            try await Self.flood(ownerChannel, fixture, rounds: 1500) {
                dropped = try await RawHTTP.metric(server, Self.droppedOnSockets) ?? 0
                subscribers = try await RawHTTP.metric(server, "imprint_event_subscribers") ?? 0
                return dropped > 0 && subscribers == 1
            }
            #expect(dropped > 0 && subscribers == 1, "dropped \(dropped), subscribers \(subscribers)")
        }
    }

    /// Room for 50 KB messages sent as fast as a socket takes them (`flood`).
    static func floodable(_ configuration: inout DeliveryServerConfiguration) {
        configuration.maxEphemeralBytes = 60_000
        configuration.rateLimitPerSecond = 1_000_000
        configuration.rateLimitBurst = 1_000_000
    }

    /// The metric of messages skipped for sockets whose send buffer was full.
    static let droppedOnSockets = #"imprint_ephemeral_dropped_total{subscriber="socket"}"#

    /// `member`'s ephemeral socket on `convoId`, upgraded, then never read again.
    static func socketThatStopsReading(on server: RunningServer, as member: DeliveryClient, convoId: String) async throws -> RawSocket {
        let socket = try await RawSocket.connect(port: server.port, reading: false)
        let token = try member.signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.ephemeralSocket.nsid)
        var request = "GET \(DeliveryMethod.ephemeralSocket.path)?convoId=\(convoId) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        request += "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        request += "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n"
        try await socket.send(request)
        return socket
    }

    /// Sends 50 KB messages on `channel`, 20 every 20 ms, until `done` (at most `rounds`
    /// rounds). What the channel's own full send buffer refuses is sent again next round.
    static func flood(_ channel: EphemeralChannel, _ fixture: ConvoFixture, rounds: Int = 1000,
                      until done: () async throws -> Bool) async throws {
        let bulk = SendEphemeralInput(convoId: fixture.convoId, epoch: fixture.epoch, data: Data(repeating: 0x5A, count: 50_000), kind: nil)
        for _ in 0..<rounds {
            for _ in 0..<20 { try? channel.sendNow(bulk) }
            if try await done() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// A graceful shutdown closes the sockets it serves ("going away", 1001): the client's
    /// stream ends without an error, as for any close that is not for a reason.
    @Test(.timeLimit(.minutes(5))) func shutdownClosesTheSockets() async throws {
        let server = try await RunningServer.start(.sqlite)
        do {
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let channel = try #require(try await fixture.members[0].openEphemeralChannel(convoId: fixture.convoId))
            let (reached, ended) = Self.watch(channel)
            await EphemeralRelayTests.sendUntil(reached) { try await fixture.owner.sendEphemeral(Self.input(fixture, "before")) }
            try await server.stop()
            let error = await ended.value
            #expect(error == nil, "ended with \(String(describing: error))")
        } catch {
            try? await server.stop()
            throw error
        }
    }

    /// An hour: longer than any test, so a check that closes a socket was not the heartbeat's.
    static func noHeartbeat(_ configuration: inout DeliveryServerConfiguration) { configuration.eventHeartbeat = .seconds(3600) }

    /// The socket of a member who is removed is closed as the removal commits, `NotMember`,
    /// not at the next heartbeat (an hour here).
    @Test(.timeLimit(.minutes(5)), arguments: StoreKind.available)
    func aRemovedMembersSocketIsClosed(kind: StoreKind) async throws {
        try await withServer(kind, configure: Self.noHeartbeat) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            let closed = try await Self.closeOnRemoval(of: fixture.members[1], from: fixture, socketOn: server)
            #expect(closed.code == 4403 && closed.name == "NotMember")
        }
    }

    /// The removal commits through one instance; the removed member's socket on the other is
    /// closed at once (`NOTIFY imprint_events` rings its bell there).
    @Test(.timeLimit(.minutes(5))) func aRemovedMembersSocketOnAnotherInstanceIsClosed() async throws {
        guard StoreKind.available.contains(.postgres) else { return }
        try await withTwoPostgresInstances(configure: Self.noHeartbeat) { first, second in
            let fixture = try await ConvoFixture.make(on: first, extraMembers: 2)
            let closed = try await Self.closeOnRemoval(of: fixture.members[1], from: fixture, socketOn: second)
            #expect(closed.code == 4403 && closed.name == "NotMember")
        }
    }

    /// Opens `member`'s socket on `server`, waits until a message of the owner reached it
    /// through it (so it is subscribed), has the owner remove `member`, and returns how the
    /// socket closed (it is closed by the test after 30 s).
    static func closeOnRemoval(of member: DeliveryClient, from fixture: ConvoFixture, socketOn server: RunningServer) async throws
        -> EphemeralChannelClosed
    {
        let channel = try #require(try await server.client(member.signer).openEphemeralChannel(convoId: fixture.convoId))
        let ownerChannel = try #require(try await fixture.owner.openEphemeralChannel(convoId: fixture.convoId))
        defer { ownerChannel.close() }
        let (reached, ended) = watch(channel)
        try await EphemeralRelayTests.remove(member.did, from: fixture, onceReached: reached) {
            try await ownerChannel.send(input(fixture, "before"))
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(30))
            channel.close()
        }
        let error = await ended.value
        timeout.cancel()
        return try #require(error as? EphemeralChannelClosed, "ended with \(String(describing: error))")
    }

    /// Reads `channel` in a task of its own: `reached` yields at each message, `ended` is how
    /// the stream ended (nil: without an error).
    static func watch(_ channel: EphemeralChannel) -> (reached: AsyncStream<Void>, ended: Task<(any Error)?, Never>) {
        let (reached, signal) = AsyncStream.makeStream(of: Void.self)
        let ended = Task { () -> (any Error)? in
            do {
                for try await _ in channel.messages { signal.yield() }
                return nil
            } catch { return error }
        }
        return (reached, ended)
    }

    /// Sent on a socket of one instance, received on a socket of the other.
    @Test(.timeLimit(.minutes(5))) func crossesInstancesOnPostgres() async throws {
        guard StoreKind.available.contains(.postgres) else { return }
        try await withTwoPostgresInstances { first, second in
            let fixture = try await ConvoFixture.make(on: first, extraMembers: 1)
            let bobOnSecond = second.client(fixture.members[0].signer)
            let ownerChannel = try #require(try await fixture.owner.openEphemeralChannel(convoId: fixture.convoId))
            let bobChannel = try #require(try await bobOnSecond.openEphemeralChannel(convoId: fixture.convoId))
            defer { ownerChannel.close(); bobChannel.close() }
            let received = try await Self.firstReceived(bobChannel.messages) { try await ownerChannel.send(Self.input(fixture, "hello")) }
            #expect(received.sender == fixture.owner.did && received.data == Data("hello".utf8))
        }
    }

    // MARK: Raw sockets

    /// What the server answers to an upgrade request for `path` (its first bytes, as text).
    static func upgrade(_ server: RunningServer, path: String, token: String?) async throws -> String {
        let socket = try await RawSocket.connect(port: server.port)
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        request += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        try await socket.send(request + "\r\n")
        _ = await socket.waitUntilReceived(atLeast: 12, timeout: .seconds(10))
        return String(decoding: await socket.outcome(timeout: .milliseconds(300)).bytes, as: UTF8.self)
    }

    /// Where and how a raw WebSocket client (frames of the test's own choosing) opens
    /// `client`'s ephemeral socket on `convoId`.
    static func rawSocket(on server: RunningServer, as client: DeliveryClient, convoId: String) throws
        -> (url: String, configuration: WebSocketClientConfiguration)
    {
        let token = try client.signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.ephemeralSocket.nsid)
        var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
        configuration.additionalHeaders[.authorization] = "Bearer " + token
        return (server.baseURL + DeliveryMethod.ephemeralSocket.path + "?convoId=" + convoId, configuration)
    }

    /// The close the server answers `frame` with, on a socket of `client` (at most 20 s).
    static func closeAfterSending(
        _ frame: WebSocketOutboundWriter.OutboundFrame, server: RunningServer, as client: DeliveryClient, convoId: String
    ) async throws -> EphemeralChannelClosed? {
        let (url, configuration) = try rawSocket(on: server, as: client, convoId: convoId)
        let connection = Task {
            try await WebSocketClient.connect(url: url, configuration: configuration, logger: testLogger) { inbound, outbound, _ in
                try await outbound.write(frame)
                for try await _ in inbound {}
            }
        }
        // Generous: on a loaded CI machine a connect, one frame and the server's close have
        // taken over 20 s. A socket the server never closes still fails the test, by name.
        let timeout = Task {
            try await Task.sleep(for: .seconds(90))
            connection.cancel()
        }
        defer { timeout.cancel() }
        let outcome: WebSocketCloseFrame?
        do { outcome = try await connection.value } catch is CancellationError { throw TimeoutError() }
        guard let close = outcome else { return nil }
        return EphemeralChannelClosed(code: Int(UInt16(webSocketErrorCode: close.closeCode)), reason: close.reason ?? "")
    }
}
