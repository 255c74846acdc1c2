import AsyncHTTPClient
import Foundation
import NIOCore
import ImprintServerTestSupport
import ImprintDelivery
import Testing

@Suite struct EventStreamTests {
    /// Reads `count` events from a new subscription, then drops the connection.
    static func read(_ count: Int, from client: DeliveryClient, cursor: Int64?) async throws -> [ConvoEvent] {
        try await withThrowingTaskGroup(of: [ConvoEvent].self) { group in
            group.addTask {
                var events: [ConvoEvent] = []
                for try await event in client.subscribeConvoEvents(cursor: cursor) {
                    events.append(event)
                    if events.count == count { break }
                }
                return events
            }
            group.addTask {
                // Only a stream that stalls waits this long; with every suite sharing two
                // cores (CI at load 10+), 20 s once ran out while 20 events were on their way.
                try await Task.sleep(for: .seconds(90))
                throw TimeoutError()
            }
            let events = try await group.next()!
            group.cancelAll()
            return events
        }
    }

    struct TimeoutError: Error {}

    static func send(_ fixture: ConvoFixture, _ n: Int) async throws -> Int {
        try await fixture.owner.sendMessage(SendMessageInput(
            convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(n), size: n)).seq
    }

    @Test(arguments: StoreKind.available)
    func resumesAfterDisconnectWithoutLoss(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 1)
            let bob = fixture.members[0]
            // bob's history: message(commit seq 1), membership(added), welcome.
            let opening = try await Self.read(3, from: bob, cursor: nil)
            #expect(opening.map(\.payload.name) == ["message", "membership", "welcome"])
            guard case .membership(let added) = opening[1].payload else { Issue.record("no membership"); return }
            #expect(added.did == bob.did)
            #expect(added.action == .added)

            // Live: subscribe, then send; events arrive as they are written.
            async let live = Self.read(5, from: bob, cursor: opening.last!.cursor)
            try await Task.sleep(for: .milliseconds(200))
            for n in 0..<5 { _ = try await Self.send(fixture, n) }
            let firstFive = try await live
            #expect(firstFive.compactMap { if case .message(let m) = $0.payload { m.message.seq } else { nil } } == [2, 3, 4, 5, 6])

            // Disconnected: more messages are written; resuming from the last cursor loses none.
            for n in 5..<25 { _ = try await Self.send(fixture, n) }
            let resumed = try await Self.read(20, from: bob, cursor: firstFive.last!.cursor)
            #expect(resumed.compactMap { if case .message(let m) = $0.payload { m.message.seq } else { nil } } == Array(7...26))
            #expect(zip(resumed, resumed.dropFirst()).allSatisfy { $0.cursor < $1.cursor })
            #expect(resumed.allSatisfy { $0.payload.convoId == fixture.convoId })
        }
    }

    @Test(arguments: StoreKind.available)
    func lastEventIDHeaderResumesAndRemovedMembersStopReceiving(kind: StoreKind) async throws {
        // Stopped inside the test: graceful shutdown must end open event streams.
        let server = try await RunningServer.start(kind)
        do {
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            let carol = fixture.members[1]
            // message (commit), membership carol, welcome carol: not bob's `added`, who came
            // in the same commit (carol learns him from her Welcome; `PendingEvent.addition`).
            let history = try await Self.read(3, from: carol, cursor: nil)
            #expect(history.map(\.payload.name) == ["message", "membership", "welcome"])
            _ = try await Self.send(fixture, 1)
            let removal = try await fixture.owner.removeMember(RemoveMemberInput(
                convoId: fixture.convoId, epoch: fixture.epoch, did: carol.did, commit: Data([9])))
            _ = try await fixture.owner.sendMessage(SendMessageInput(
                convoId: fixture.convoId, epoch: removal.epoch, messageType: .app, hash: fakeHash(2), size: 2))

            let token = try carol.signer.token(audience: RunningServer.serviceDID, method: DeliveryMethod.subscribeConvoEvents.nsid)
            var request = HTTPClientRequest(url: server.baseURL + DeliveryMethod.subscribeConvoEvents.path)
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Last-Event-ID", value: String(history.last!.cursor))
            let response = try await TestHTTP.client.execute(request, timeout: .seconds(120))
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "content-type") == "text/event-stream")
            // Read until carol's two events are there (not for a fixed time), then stop the
            // server: its graceful shutdown must end the stream, and whatever else the stream
            // carried until then is read too.
            var parser = ServerSentEventParser()
            var events: [ServerSentEvent] = []
            var body = response.body.makeAsyncIterator()
            while events.count < 2, let chunk = try await body.next() { events += parser.feed(Array(buffer: chunk)) }
            try await server.stop()
            while let chunk = try await body.next() { events += parser.feed(Array(buffer: chunk)) }
            // carol sees message seq 2 and her own removal, then nothing (not the removal commit, nor later messages).
            #expect(events.map(\.event) == ["message", "membership"], "\(events)")
            #expect(events.first?.data.contains("\"seq\":2") == true)
            #expect(events.last?.data.contains("\"removed\"") == true)
        } catch {
            try? await server.stop()
            throw error
        }
    }

    @Test(arguments: StoreKind.available)
    func rejectsBadCursor(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let signer = ServiceAuthSigner()
            for query in ["cursor=-1", "cursor=abc", "cursor=1&cursor=2", "from=3"] {
                let response = try await RawHTTP.call(server, .subscribeConvoEvents, signer: signer, query: query)
                #expect(response.status == 400, "\(query)")
                #expect(response.errorName == "InvalidRequest")
            }
            let header = try await RawHTTP.call(server, .subscribeConvoEvents, signer: signer, extraHeaders: [("Last-Event-ID", "x")])
            #expect(header.status == 400)
        }
    }
}
