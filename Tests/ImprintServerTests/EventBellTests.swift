import Testing
@testable import ImprintServer

/// The bell is keyed by recipient DID: a ring for some recipients wakes their subscriptions only.
@Suite struct EventBellTests {
    /// How many wake-ups a subscription had buffered: ends it, then reads what is left.
    static func wakeups(_ subscription: (id: UInt64, rings: AsyncStream<Void>), of bell: EventBell) async -> Int {
        bell.unsubscribe(subscription.id)
        var count = 0
        for await _ in subscription.rings { count += 1 }
        return count
    }

    @Test func ringingRecipientsWakesOnlyTheirSubscriptions() async {
        let bell = EventBell()
        let alice = bell.subscribe(recipient: "did:plc:alice")
        let aliceElsewhere = bell.subscribe(recipient: "did:plc:alice")
        let bob = bell.subscribe(recipient: "did:plc:bob")
        bell.ring(recipients: ["did:plc:alice", "did:plc:carol"])
        #expect(await Self.wakeups(alice, of: bell) == 1)
        #expect(await Self.wakeups(aliceElsewhere, of: bell) == 1)
        #expect(await Self.wakeups(bob, of: bell) == 0)
        #expect(bell.subscriberCount == 0)
    }

    @Test func heartbeatsAndRingAllStillWake() async {
        let bell = EventBell()
        let alice = bell.subscribe(recipient: "did:plc:alice")
        let bob = bell.subscribe(recipient: "did:plc:bob")
        bell.ring(bob.id)
        #expect(await Self.wakeups(bob, of: bell) == 1)
        let carol = bell.subscribe(recipient: "did:plc:carol")
        bell.ringAll()
        #expect(await Self.wakeups(alice, of: bell) == 1)
        #expect(await Self.wakeups(carol, of: bell) == 1)
    }

    @Test func unsubscribedAndClosedSubscriptionsAreForgotten() async {
        let bell = EventBell()
        let first = bell.subscribe(recipient: "did:plc:alice")
        let second = bell.subscribe(recipient: "did:plc:alice")
        bell.unsubscribe(first.id)
        bell.ring(recipients: ["did:plc:alice"])
        var remaining = 0
        for await _ in first.rings { remaining += 1 }
        #expect(remaining == 0)
        #expect(bell.subscriberCount == 1)
        bell.closeAll()
        var buffered = 0
        for await _ in second.rings { buffered += 1 }
        #expect(buffered == 1)  // finished after its ring, which is still delivered
        #expect(bell.subscriberCount == 0)
    }
}

@Suite struct EventNotificationPayloadTests {
    @Test func recipientsRoundTrip() {
        let payload = EventNotificationPayload(recipients: ["did:plc:alice", "did:web:example.com%3A8080"])
        #expect(payload == .recipients(["did:plc:alice", "did:web:example.com%3A8080"]))
        #expect(EventNotificationPayload(text: payload.text) == payload)
    }

    @Test func whatCannotBeCarriedMeansEveryone() {
        #expect(EventNotificationPayload(recipients: ["did:plc:a", "did:plc:b"], maximumBytes: 20) == .everyone)
        #expect(EventNotificationPayload(recipients: ["did:plc:a", "did:plc:b"], maximumBytes: 30) != .everyone)
        let many = (0..<400).map { "did:plc:\(String(repeating: "x", count: 24))\($0)" }
        #expect(EventNotificationPayload(recipients: many) == .everyone)
        #expect(EventNotificationPayload(recipients: ["did:plc:a\nb"]) == .everyone)
        #expect(EventNotificationPayload(recipients: [""]) == .everyone)
        #expect(EventNotificationPayload.everyone.text.isEmpty)
    }

    @Test func whatIsNotUnderstoodMeansEveryone() {
        for text in ["", "recipients", "recipients\n", "recipients\ndid:plc:a\n", "keys\ndid:plc:a", "did:plc:a"] {
            #expect(EventNotificationPayload(text: text) == .everyone, "\(text)")
        }
        #expect(EventNotificationPayload(text: "recipients\ndid:plc:a\ndid:plc:b") == .recipients(["did:plc:a", "did:plc:b"]))
    }
}
