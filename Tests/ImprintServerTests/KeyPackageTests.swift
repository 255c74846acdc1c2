import Foundation
import ImprintServerTestSupport
import ImprintDelivery
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

    @Test(arguments: StoreKind.available)
    func handsOutOldestMatchingSuiteAndSkipsExpired(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let owner = server.client()
            let fetcher = server.client()
            let expiringInput = Self.package(0, expiresIn: 4)
            let expiring = try await owner.publishKeyPackage(expiringInput)
            let suiteTwo = try await owner.publishKeyPackage(Self.package(1, suite: 2))
            let suiteOne = try await owner.publishKeyPackage(Self.package(2, suite: 1))
            // Wait until the first package has expired (by the clock, not a fixed delay).
            try await Task.sleep(for: .seconds(max(0, expiringInput.expiresAt.timeIntervalSinceNow) + 0.2))
            let bySuite = try await fetcher.getKeyPackages(dids: [owner.did], cipherSuite: 1)
            #expect(bySuite.keyPackages.map(\.id) == [suiteOne.id])
            #expect(bySuite.keyPackages.first?.keyPackage == keyPackageBytes(2, suite: 1))
            let any = try await fetcher.getKeyPackages(dids: [owner.did])
            #expect(any.keyPackages.map(\.id) == [suiteTwo.id])
            #expect(!any.keyPackages.map(\.id).contains(expiring.id))
            let none = try await fetcher.getKeyPackages(dids: [owner.did, fetcher.did])
            #expect(none.keyPackages.isEmpty)
            #expect(none.missing == [owner.did, fetcher.did])
        }
    }

    @Test(arguments: StoreKind.available)
    func atMostTwoHundredUnconsumedPerDID(kind: StoreKind) async throws {
        try await withServer(kind) { server in
            let owner = server.client()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<200 { group.addTask { _ = try await owner.publishKeyPackage(Self.package(n)) } }
                try await group.waitForAll()
            }
            await expectServiceError(429, "TooManyKeyPackages") { try await owner.publishKeyPackage(Self.package(201)) }
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
