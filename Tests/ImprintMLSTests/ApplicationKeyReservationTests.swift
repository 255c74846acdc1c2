import Testing
@testable import ImprintMLS

/// `MLSGroup.reserveApplicationKeys` and `encrypt(_:authenticatedData:using:)`: messages sent
/// with reserved keys open at the receiver; the saved state is past every reserved key (a
/// restart never reuses one) and never holds one; a reservation dies with its epoch.
@Suite struct ApplicationKeyReservationTests {
    typealias Pair = GroupStateTests

    @Test func reservedKeysEncryptMessagesTheReceiverOpens() throws {
        var (a, b) = try Pair.pair()
        var reserved = try a.reserveApplicationKeys(4)
        #expect(reserved.remaining == 4 && reserved.epoch == a.epoch)
        let saved = a.serializedState()
        for word in ["one", "two", "three"] {
            let message = try a.encrypt(Array(word.utf8), authenticatedData: [9], using: &reserved)
            guard case let .application(data, sender, authenticatedData) = try b.process(message) else {
                Issue.record("not an application message"); return
            }
            #expect(data == Array(word.utf8) && sender == a.myLeaf && authenticatedData == [9])
        }
        #expect(reserved.remaining == 1)
        // Encrypting with a reservation leaves the group as it was saved: nothing to write.
        #expect(a.serializedState() == saved)
        // The next plain encrypt continues after the reservation; the receiver steps over the
        // unused generation and still opens the message.
        guard case let .application(data, _, _) = try b.process(try a.encrypt(Array("after".utf8))) else {
            Issue.record("not an application message"); return
        }
        #expect(data == Array("after".utf8))
    }

    @Test func theSavedStateIsPastAndWithoutEveryReservedKey() throws {
        var (a, b) = try Pair.pair()
        var reserved = try a.reserveApplicationKeys(3)
        let keys = reserved.keys
        let saved = a.serializedState()
        for key in keys {
            #expect(!GroupStateTests.contains(saved, key.key) && !GroupStateTests.contains(saved, key.nonce))
        }
        // A restart from the saved state (the reservation lost with the process) encrypts with
        // the generation after the reservation, never one of its keys.
        var restarted = try MLSGroup(serializedState: saved)
        let fromRestart = try restarted.encrypt(Array("restarted".utf8))
        let fromReservation = try a.encrypt(Array("reserved".utf8), using: &reserved)
        // Both open at the receiver, in either order: no generation was used twice.
        guard case let .application(first, _, _) = try b.process(fromRestart),
              case let .application(second, _, _) = try b.process(fromReservation) else {
            Issue.record("not application messages"); return
        }
        #expect(first == Array("restarted".utf8) && second == Array("reserved".utf8))
    }

    @Test func anEmptyOrOutdatedReservationIsRefused() throws {
        var (a, b) = try Pair.pair()
        var reserved = try a.reserveApplicationKeys(1)
        _ = try a.encrypt([1], using: &reserved)
        #expect { try a.encrypt([2], using: &reserved) } throws: { ($0 as? MLSError)?.code == .secretConsumed }
        var old = try a.reserveApplicationKeys(2)
        let update = try a.commit(options: CommitOptions(forcePath: true))
        _ = try b.process(update.commit)
        #expect { try a.encrypt([3], using: &old) } throws: { ($0 as? MLSError)?.code == .wrongEpoch }
        var other = try b.reserveApplicationKeys(1)
        #expect { try a.encrypt([4], using: &other) } throws: { ($0 as? MLSError)?.code == .wrongEpoch }
        #expect { try a.reserveApplicationKeys(0) } throws: { ($0 as? MLSError)?.code == .invalidValue }
        #expect { try a.reserveApplicationKeys(MLSGroup.maximumReservedApplicationKeys + 1) } throws: { ($0 as? MLSError)?.code == .invalidValue }
    }
}
