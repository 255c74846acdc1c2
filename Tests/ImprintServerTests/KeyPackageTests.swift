import Foundation
import ImprintServerTestSupport
import ImprintDelivery
@testable import ImprintServer
import Testing

@Suite struct KeyPackageTests {
    static func package(_ n: Int, suite: Int = 1, expiresIn: TimeInterval = 3600) -> PublishKeyPackageInput {
        PublishKeyPackageInput(keyPackage: keyPackageBytes(n, suite: suite), cipherSuite: suite, expiresAt: Date().addingTimeInterval(expiresIn))
    }

    @Test(arguments: StoreKind.available)
    func fiftyConcurrentFetchesOverTenPackagesHandOutExactlyTen(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let owner = server.client()
            var published = Set<String>()
            for n in 0..<10 { published.insert(try await owner.publishKeyPackage(Self.package(n)).id) }
            let results = try await withThrowingTaskGroup(of: GetKeyPackagesOutput.self) { group in
                for _ in 0..<50 {
                    group.addTask { try await server.client().getKeyPackages(dids: [owner.did]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let handedOut = results.flatMap(\.keyPackages)
            #expect(handedOut.count == 10)
            #expect(Set(handedOut.map(\.id)) == published)
            #expect(results.filter { $0.missing == [owner.did] }.count == 40)
            let again = try await server.client().getKeyPackages(dids: [owner.did])
            #expect(again.keyPackages.isEmpty)
            #expect(again.missing == [owner.did])
        }
    }

    /// Expiry against the store's own clock argument (no waiting for a real package to
    /// expire): at `now` + 5 s the package that expired at + 4 s is skipped, and the oldest
    /// package of the asked suite is handed out first.
    @Test(arguments: StoreKind.available)
    func handsOutOldestMatchingSuiteAndSkipsExpired(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let did = ServiceAuthSigner().did, other = ServiceAuthSigner().did
            let now = Date()
            func publish(_ n: Int, suite: Int, expiresIn: TimeInterval) async throws -> String {
                try await server.store.publishKeyPackage(NewKeyPackage(
                    did: did, keyPackage: keyPackageBytes(n, suite: suite), cipherSuite: suite,
                    expiresAt: now.addingTimeInterval(expiresIn), now: now, limit: 200))
            }
            let expiring = try await publish(0, suite: 1, expiresIn: 4)
            let suiteTwo = try await publish(1, suite: 2, expiresIn: 3600)
            let suiteOne = try await publish(2, suite: 1, expiresIn: 3600)
            let later = now.addingTimeInterval(5)
            let bySuite = try await server.store.consumeKeyPackages(dids: [did], cipherSuite: 1, now: later)
            #expect(bySuite.map(\.id) == [suiteOne])
            #expect(bySuite.first?.keyPackage == keyPackageBytes(2, suite: 1))
            let any = try await server.store.consumeKeyPackages(dids: [did], cipherSuite: nil, now: later)
            #expect(any.map(\.id) == [suiteTwo])
            #expect(!any.map(\.id).contains(expiring))
            let none = try await server.store.consumeKeyPackages(dids: [did, other], cipherSuite: nil, now: later)
            #expect(none.isEmpty)
            // At `now` the same package is handed out: it was skipped for its expiry alone.
            #expect(try await server.store.consumeKeyPackages(dids: [did], cipherSuite: 1, now: now).map(\.id) == [expiring])
        }
    }

    /// Over HTTP: the oldest package of the asked suite first, then any suite, then `missing`.
    @Test(arguments: StoreKind.available)
    func getKeyPackagesPrefersTheSuiteAndNamesTheMissing(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let owner = server.client()
            let fetcher = server.client()
            let suiteTwo = try await owner.publishKeyPackage(Self.package(1, suite: 2))
            let suiteOne = try await owner.publishKeyPackage(Self.package(2, suite: 1))
            let bySuite = try await fetcher.getKeyPackages(dids: [owner.did], cipherSuite: 1)
            #expect(bySuite.keyPackages.map(\.id) == [suiteOne.id])
            let any = try await fetcher.getKeyPackages(dids: [owner.did])
            #expect(any.keyPackages.map(\.id) == [suiteTwo.id])
            let none = try await fetcher.getKeyPackages(dids: [owner.did, fetcher.did])
            #expect(none.keyPackages.isEmpty)
            #expect(none.missing == [owner.did, fetcher.did])
        }
    }

    @Test(arguments: StoreKind.available)
    func atMostTwoHundredUnconsumedPerDID(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            // 200 publishes at once through 64 pooled connections, while the whole suite runs
            // beside this test on two cores: the count is what is checked, not the latency.
            let owner = {
                var client = server.client()
                client.timeout = .seconds(180)
                return client
            }()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<200 { group.addTask { _ = try await owner.publishKeyPackage(Self.package(n)) } }
                try await group.waitForAll()
            }
            await expectServiceError(429, "TooManyKeyPackages") { try await owner.publishKeyPackage(Self.package(201)) }
            // A 429 too, but no rate limit: the client hands it over without sending again.
            let refusals = try await RawHTTP.metric(server, #"imprint_rejections_total{error="TooManyKeyPackages"}"#)
            #expect(refusals == 1, "the client sent the refused publish \(refusals ?? 0) times")
            _ = try await server.client().getKeyPackages(dids: [owner.did])
            _ = try await owner.publishKeyPackage(Self.package(203))
        }
    }

    @Test(arguments: StoreKind.available)
    func rejectsPastExpiryAndBadSuite(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let owner = server.client()
            for input in [Self.package(0, expiresIn: -10), Self.package(1, suite: 0), Self.package(2, suite: 70000)] {
                await expectServiceError(400, "InvalidRequest") { try await owner.publishKeyPackage(input) }
            }
        }
    }

    /// The DS holds no MLS state but checks a published package's public structure: bytes
    /// that are not an MLSMessage(KeyPackage) of the stated suite are refused, and stored
    /// nowhere (the next fetch finds none).
    @Test(arguments: StoreKind.available)
    func refusesBytesThatAreNotAKeyPackageOfTheStatedSuite(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let owner = server.client()
            let good = keyPackageBytes(7)
            var truncated = good; truncated.removeLast()
            var trailing = good; trailing.append(0)
            var welcome = good; welcome[3] = 3                       // wire_format mls_welcome
            var shortKey = good; shortKey[8] = 31                    // init_key of 31 bytes in suite 1
            let cases: [(String, Data, Int)] = [
                ("placeholder", Data("kp-1".utf8), 1), ("truncated", truncated, 1), ("trailing", trailing, 1),
                ("welcome", welcome, 1), ("short key", shortKey, 1), ("suite 1 stated as 2", good, 2),
            ]
            for (name, bytes, suite) in cases {
                let input = PublishKeyPackageInput(keyPackage: bytes, cipherSuite: suite, expiresAt: Date().addingTimeInterval(600))
                let error = await expectServiceError(400, "InvalidRequest") { try await owner.publishKeyPackage(input) }
                #expect(error?.body.message.contains("KeyPackage") == true || name == "placeholder", "\(name): \(String(describing: error))")
            }
            let fetched = try await server.client().getKeyPackages(dids: [owner.signer.did], cipherSuite: nil)
            #expect(fetched.keyPackages.isEmpty)
            _ = try await owner.publishKeyPackage(Self.package(8, suite: 2))
        }
    }
}
