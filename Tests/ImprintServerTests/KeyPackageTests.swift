import Foundation
import ImprintServerTestSupport
import ImprintDelivery
import Testing

@Suite struct KeyPackageTests {
    static func package(_ n: Int, suite: Int = 1, expiresIn: TimeInterval = 3600) -> PublishKeyPackageInput {
        PublishKeyPackageInput(keyPackage: Data("kp-\(n)".utf8), cipherSuite: suite, expiresAt: Date().addingTimeInterval(expiresIn))
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
            #expect(bySuite.keyPackages.first?.keyPackage == Data("kp-2".utf8))
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
}
