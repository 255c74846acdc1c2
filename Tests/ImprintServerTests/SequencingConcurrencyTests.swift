import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import Testing

/// The contract's concurrency guarantees, exercised over real HTTP.
@Suite struct SequencingConcurrencyTests {
    @Test(arguments: StoreKind.available)
    func twoHundredConcurrentSendsGetGaplessUniqueSeqs(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 3)
            let senders = [fixture.owner] + fixture.members
            let seqs = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<200 {
                    group.addTask {
                        try await senders[n % senders.count].sendMessage(SendMessageInput(
                            convoId: fixture.convoId, epoch: fixture.epoch, messageType: .app, hash: fakeHash(n), size: n)).seq
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            // seq 1 is the commit that added the members.
            #expect(seqs.sorted() == Array(2...201))
            let stored = try await fixture.owner.getMessages(convoId: fixture.convoId, limit: 1000).messages
            #expect(stored.map(\.seq) == Array(1...201))
            #expect(Set(stored.dropFirst().map(\.hash)).count == 200)
        }
    }

    /// Concurrent writes share transactions on SQLite (group commit) and run in parallel on
    /// PostgreSQL; refused sends mixed among them must not disturb the accepted ones.
    @Test(arguments: StoreKind.available)
    func refusedSendsAmongConcurrentOnesFailAloneAndLeaveNoGap(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 3)
            let senders = [fixture.owner] + fixture.members
            let outcomes = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
                for n in 0..<120 {
                    group.addTask {
                        let stale = n % 4 == 1
                        do {
                            let seq = try await senders[n % senders.count].sendMessage(SendMessageInput(
                                convoId: fixture.convoId, epoch: stale ? fixture.epoch + 9 : fixture.epoch, messageType: .app,
                                hash: fakeHash(n), size: n)).seq
                            return (n, seq)
                        } catch let error as DeliveryServiceError where stale && error.status == 409 && error.name == "EpochMismatch" {
                            #expect(error.body.currentEpoch == fixture.epoch)
                            return (n, nil)
                        }
                    }
                }
                return try await group.reduce(into: [(Int, Int?)]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0.1 == nil }.map(\.0).sorted() == (0..<120).filter { $0 % 4 == 1 })
            #expect(outcomes.compactMap(\.1).sorted() == Array(2...91))
            let stored = try await fixture.owner.getMessages(convoId: fixture.convoId, limit: 1000).messages
            #expect(stored.map(\.seq) == Array(1...91))
        }
    }

    @Test(arguments: StoreKind.available)
    func racingCommitsForOneEpochHaveExactlyOneWinner(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 7)
            let committers = [fixture.owner] + fixture.members
            for round in 0..<3 {
                let epoch = fixture.epoch + round
                let outcomes = await withTaskGroup(of: Result<SendMessageOutput, Error>.self) { group in
                    for (n, committer) in committers.enumerated() {
                        group.addTask {
                            await Result {
                                try await committer.sendMessage(SendMessageInput(
                                    convoId: fixture.convoId, epoch: epoch, messageType: .commit, hash: fakeHash(round * 100 + n), size: 10))
                            }
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                let winners = outcomes.compactMap { try? $0.get() }
                #expect(winners.count == 1)
                #expect(winners.first?.epoch == epoch + 1)
                for case .failure(let error) in outcomes {
                    let serviceError = try #require(error as? DeliveryServiceError)
                    #expect(serviceError.status == 409)
                    #expect(serviceError.name == "EpochMismatch")
                    #expect(serviceError.body.currentEpoch == epoch + 1)
                }
            }
            let convo = try #require(try await fixture.owner.getConvos().convos.first)
            #expect(convo.epoch == fixture.epoch + 3)
            let messages = try await fixture.owner.getMessages(convoId: fixture.convoId).messages
            #expect(messages.map(\.seq) == [1, 2, 3, 4])
            #expect(messages.map(\.epoch) == [0, 1, 2, 3])
        }
    }

    @Test(arguments: StoreKind.available)
    func racingAddMembersAndRemoveHaveOneWinner(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let fixture = try await ConvoFixture.make(on: server, extraMembers: 2)
            let newcomers = (0..<6).map { _ in server.client() }
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for newcomer in newcomers {
                    group.addTask {
                        (try? await fixture.owner.addMembers(AddMembersInput(
                            convoId: fixture.convoId, epoch: fixture.epoch, dids: [newcomer.did], commit: Data([1]), welcome: Data([2])))) != nil
                    }
                }
                group.addTask {
                    (try? await fixture.owner.removeMember(RemoveMemberInput(
                        convoId: fixture.convoId, epoch: fixture.epoch, did: fixture.members[1].did, commit: Data([3])))) != nil
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
            let convo = try #require(try await fixture.owner.getConvos().convos.first)
            #expect(convo.epoch == fixture.epoch + 1)
        }
    }
}

extension Result where Failure == Error {
    init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
