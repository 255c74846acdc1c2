import Foundation
import ImprintServerTestSupport
import ImprintSync
import ImprintTestSupport
import Testing

/// The `imprint` CLI killed with SIGKILL at random points of `push` and `pull`: nothing
/// acknowledged is lost, no generation is used twice for sending (a reader would fail to
/// decrypt the second message: `secretConsumed`), no seq is left without its record (the
/// reader's final pull reports no gap). `IMPRINT_SYNC_KILL_RUNS` widens the run (default 12).
extension SyncSuites {
@Suite struct KilledClientTests {
    @Test(arguments: StoreKind.available)
    func killedPushesAndPullsLoseNothing(kind: StoreKind) async throws {
        let imprint = try #require(siblingExecutable("imprint"), "the imprint executable is built by swift build --build-tests")
        let runs = Int(ProcessInfo.processInfo.environment["IMPRINT_SYNC_KILL_RUNS"] ?? "") ?? 12
        let seed = testSeed("KilledClientTests.\(kind)", fallback: 0x5eed_c0de)
        var random = SplitMix64(seed: seed)
        try await SyncTestServer.with(kind) { server in
            let alice = try await server.person("alice"), bob = try await server.person("bob")
            try alice.createBundle(text: "start.")
            let aliceDoc = try await alice.share()
            try await aliceDoc.invite([bob.did])
            _ = try await bob.join(aliceDoc.convoId)
            let cli = CLI(executable: imprint, server: server.server.baseURL)
            var killed = 0
            for run in 0..<runs {
                try await cli.run(["edit", bob.bundlePath, "--insert", "0", "b\(run) ", "--device", "bob"])
                try await cli.run(["edit", alice.bundlePath, "--insert", "0", "a\(run) ", "--device", "alice"])
                // Each side's command is killed somewhere between its start and its end.
                let bobDelay = Int.random(in: 0...200, using: &random), aliceDelay = Int.random(in: 0...200, using: &random)
                let bobPush = try cli.start(["push", bob.bundlePath, "--home", bob.account.home.path, "--device", "bob"])
                let alicePull = try cli.start(["pull", alice.bundlePath, "--home", alice.account.home.path, "--device", "alice"])
                let alicePush = try cli.start(["push", alice.bundlePath, "--home", alice.account.home.path, "--device", "alice"])
                killed += await cli.kill(bobPush, afterMilliseconds: bobDelay) ? 1 : 0
                killed += await cli.kill(alicePull, afterMilliseconds: aliceDelay) ? 1 : 0
                killed += await cli.kill(alicePush, afterMilliseconds: aliceDelay / 2) ? 1 : 0
            }
            // Let both finish what was interrupted, then exchange everything.
            for _ in 0..<2 {
                for person in [bob, alice] {
                    try await cli.run(["push", person.bundlePath, "--home", person.account.home.path, "--device", person.name])
                    try await cli.run(["pull", person.bundlePath, "--home", person.account.home.path, "--device", person.name])
                }
            }
            let aliceText = try alice.text(), bobText = try bob.text()
            #expect(aliceText == bobText, "seed \(seed)")
            for run in 0..<runs {
                #expect(aliceText.contains("a\(run) ") && aliceText.contains("b\(run) "), "edit \(run) lost (seed \(seed))")
            }
            for person in [alice, bob] {
                let status = try await person.open().status()
                #expect(status.gaps.isEmpty && status.outbox == 0 && status.unpushedChanges == 0 && status.alerts.isEmpty,
                        "\(person.name): \(status) (seed \(seed))")
                #expect(status.latestSeq == status.processedSeq)
            }
            print("KilledClientTests.\(kind): \(killed) of \(runs * 3) commands killed before they finished")
        }
    }
}
}

/// The `imprint` executable as a test drives it.
struct CLI {
    let executable: String
    let server: String

    func process(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["IMPRINT_SERVER"] = server
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        return process
    }

    /// Runs to the end; throws on a non-zero exit. Waits without blocking a thread (the
    /// server under test runs on the same concurrency pool).
    func run(_ arguments: [String]) async throws {
        _ = try await output(arguments)
    }

    /// Starts `process`; the returned task ends when it exits.
    func start(_ arguments: [String]) throws -> (Process, Task<Void, Never>) {
        let process = process(arguments)
        return (process, try ChildProcess.start(process))
    }

    /// SIGKILLs the process after `milliseconds` unless it ended first; returns whether it was killed.
    func kill(_ started: (Process, Task<Void, Never>), afterMilliseconds milliseconds: Int) async -> Bool {
        let (process, ended) = started
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(milliseconds))
            if !Task.isCancelled && process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }
        await ended.value
        timer.cancel()
        return process.terminationReason == .uncaughtSignal
    }

    struct CLIError: Error, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var stderr: String
        var description: String { "imprint \(arguments.joined(separator: " ")) exited \(status): \(stderr)" }
    }
}
