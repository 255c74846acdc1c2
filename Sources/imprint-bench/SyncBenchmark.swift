import ArgumentParser
import AsyncHTTPClient
#if canImport(Glibc)
import Glibc
#endif
import EditingTraces
import Foundation
import ImprintBundle
import ImprintCRDT
import ImprintKeys
import ImprintStore
import ImprintSync
import ImprintZones

/// `imprint-bench sync`: end-to-end encrypted co-editing over loopback against a real
/// `imprint-server` process (SQLite in a temporary directory):
/// - `latency`: an edit by one member until another member's view shows it (push: ChangeSet,
///   MLS, the preview relayed by the DS, merged; without a preview, `--preview-bytes 0`: DS
///   `sendMessage`, zone records, the SSE event, pull: records, MLS, merge; then the patch to
///   the view), and until that member's pull has also made it durable (bundle fsync, MLS
///   commit: `durable_*`), sequentially over `--edits` edits; p50 and p99. The view's time is
///   taken as the view receives the edit, which may be before Alice's own edit call returns
///   (the preview leaves before her fsync); `loop_*` is the earlier measure, taken when the
///   bench loop, which awaits that call first, sees it.
/// - `join`: a document holding a whole trace's history (default `automerge-paper`) is shared,
///   `--members` − 1 members invited in one commit (key packages, commit + Welcome, the
///   snapshot); the time of that invite, and from `join` to one joiner reading the final text.
/// - `sustained`: `--members` members each push a small change set every `--interval-ms`
///   for `--seconds`, pulling as announced; at the end every member holds every edit; CPU per
///   change set (client process and server process) and bytes stored per change set.
/// - `compaction`: zone bytes after `--changes` change sets with and without epoch-tied
///   compaction, beside the document's full-history save (`SyncBenchmark+Compaction.swift`).
/// - `mailbox`: a push to `--members` members with every copy saved into each recipient's
///   inbox, against a push of the same payload to the shared zone only, same run.
struct SyncBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Encrypted co-editing over loopback: edit-to-visible latency, join time, sustained typing.")

    enum Mode: String, ExpressibleByArgument, CaseIterable { case latency, join, sustained, compaction, mailbox }

    @Argument(help: "latency | join | sustained | compaction | mailbox") var mode: Mode
    @Option(help: "latency, mailbox: edits measured.") var edits = 1000
    @Option(help: "join: the trace whose history the document holds.") var trace: String?
    @Option(help: "sustained: members typing (default 3); mailbox: members of the document (default 3); join: members after the invite, the sharer included (default 2).")
    var members: Int?
    @Option(help: "sustained: milliseconds between one member's pushes.") var intervalMs = 50
    @Option(help: "sustained: seconds of typing.") var seconds = 60
    @Option(help: "mailbox: characters each edit inserts (default: a short word; past ~80,000 random letters a message no longer travels inline, and its copies go as uploaded chunks).")
    var editBytes: Int?
    @Option(help: "compaction: change sets pushed into each document.") var changes = 10_000
    @Option(help: "compaction: change sets between two compactions.") var snapshotEvery = 1_000
    @Option(help: "latency, sustained: SyncOptions.sendingKeysAhead (default: the library's; 1 commits the ratchet per message).")
    var sendingKeysAhead: Int?
    @Option(help: "latency, sustained: SyncOptions.previewMaximumBytes (default: the library's; 0 turns previews off).")
    var previewBytes: Int?
    @Flag(inversion: .prefixedNo, help: "latency, sustained: SyncOptions.ephemeralSocket (v1.5: previews and presence on one WebSocket per live document).")
    var ephemeralSocket = true
    @Flag(inversion: .prefixedNo, help: "latency: Alice's document runs live() too, as an editor's does (her previews then leave on her ephemeral socket).")
    var senderLive = true
    @Option(help: "The imprint-server executable (default: beside this one).") var server: String?
    @Option(help: "The server's --db URL, e.g. a PostgreSQL one (default: SQLite in the run's directory).") var db: String?
    @Flag(help: "Print one JSON object.") var json = false
    @Option(help: "latency: the python that runs the plaintext Yjs relay peer (empty: skip it).")
    var relayPython = ".venv-peers/bin/python"
    @Option(help: "latency: the relay peer script.") var relayScript = "Benchmarks/peers/yjs_relay_bench.py"

    func run() async throws {
        let directory = NSTemporaryDirectory() + "imprint-bench-sync-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/server", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = try ServerProcess.start(executable: server, data: directory + "/server", db: db)
        defer { process.stop() }
        let fields: [(String, String)]
        switch mode {
        case .latency: fields = try await latency(directory: directory, serverURL: process.url)
        case .join: fields = try await join(directory: directory, serverURL: process.url)
        case .sustained: fields = try await sustained(directory: directory, serverURL: process.url, serverPID: process.pid,
                                                      serverData: directory + "/server")
        case .compaction: fields = try await compaction(directory: directory, serverURL: process.url, serverData: directory + "/server")
        case .mailbox: fields = try await mailbox(directory: directory, serverURL: process.url)
        }
        let all = [("mode", "\"\(mode.rawValue)\"")] + fields + [("load_avg_1m", Clock.format(SystemLoad.oneMinute()))]
        if json {
            print("{" + all.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
        } else {
            for (key, value) in all { print("\(key): \(value)") }
        }
    }

    // MARK: Modes

    func latency(directory: String, serverURL: String) async throws -> [(String, String)] {
        let alice = try await BenchMember.make("alice", directory: directory, serverURL: serverURL, sendingKeysAhead: sendingKeysAhead, previewBytes: previewBytes, ephemeralSocket: ephemeralSocket)
        let bob = try await BenchMember.make("bob", directory: directory, serverURL: serverURL, sendingKeysAhead: sendingKeysAhead, previewBytes: previewBytes, ephemeralSocket: ephemeralSocket)
        _ = try DocumentBundle.create(at: alice.bundlePath, device: alice.device, title: "bench")
        let aliceDoc = try await SharedDocument.share(bundleAt: alice.bundlePath, device: alice.device, account: alice.account)
        try await aliceDoc.invite([bob.account.did])
        let bobDoc = try await SharedDocument.join(convoId: aliceDoc.convoId, account: bob.account, bundleAt: bob.bundlePath, device: bob.device)
        if !json { FileHandle.standardError.write(Data("latency: shared and joined\n".utf8)) }
        // Visible: Bob's editor view, bound to the document's patch stream, shows the edit (the
        // changes are merged; the bundle's fsync and the MLS commit follow). Durable: the pull
        // that merged them has also made them durable (`live`'s `.pulled` event).
        // Each batch is timed as Bob's view receives it: the edit may show there while Alice's
        // own call is still writing it to her disk (the preview leaves before her fsync).
        let (visible, visibleSignal) = AsyncStream.makeStream(of: (length: Int, at: UInt64).self)
        let initialLength = try await bobDoc.text().count
        let view = await bobDoc.patches()
        let viewer = Task {
            var length = initialLength
            for await batch in view where batch.origin == .remote {
                for patch in batch.patches {
                    switch patch {
                    case let .splice(_, _, text): length += text.count
                    case let .remove(_, _, count): length -= count
                    default: break
                    }
                }
                visibleSignal.yield((length, DispatchTime.now().uptimeNanoseconds))
            }
        }
        defer { viewer.cancel() }
        let (durable, durableSignal) = AsyncStream.makeStream(of: Int.self)
        let watcher = Task {
            for try await event in bobDoc.live(pollInterval: .seconds(3600), pullInterval: .seconds(3600)) {
                switch event {
                case .pulled: durableSignal.yield(try await bobDoc.text().count)
                case let .retrying(reason), let .reconnecting(reason, _):
                    FileHandle.standardError.write(Data("latency: bob: \(reason)\n".utf8))
                default: break
                }
            }
        }
        defer { watcher.cancel() }
        let sender = Task {
            guard senderLive else { return }
            for try await event in aliceDoc.live(pollInterval: .seconds(3600), pullInterval: .seconds(3600)) {
                if case let .reconnecting(reason, _) = event { FileHandle.standardError.write(Data("latency: alice: \(reason)\n".utf8)) }
            }
        }
        defer { sender.cancel() }
        // Both ephemeral sockets open before the first edit (at most 10 s).
        for _ in 0..<1000 where ephemeralSocket {
            let aliceReady = await aliceDoc.isEphemeralSocketOpen || !senderLive
            if aliceReady, await bobDoc.isEphemeralSocketOpen { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let socketsOpen = (await aliceDoc.isEphemeralSocketOpen, await bobDoc.isEphemeralSocketOpen)
        let stall = Task {
            var last = -1
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                let now = (try? await bobDoc.text().count) ?? -1
                if now == last {
                    let status = await bobDoc.status()
                    FileHandle.standardError.write(Data("latency: stalled at \(now) characters; bob: epoch \(status.epoch) processed \(status.processedSeq) latest \(status.latestSeq ?? -1) gaps \(status.gaps.map(\.seq)) buffered \(status.bufferedSeqs) alerts \(status.alerts)\n".utf8))
                }
                last = now
            }
        }
        defer { stall.cancel() }
        var visibleIterator = visible.makeAsyncIterator(), durableIterator = durable.makeAsyncIterator()
        var samples: [Double] = [], durableSamples: [Double] = [], editTimes: [Double] = [], pushTimes: [Double] = []
        var afterEdit: [Double] = [], loopSamples: [Double] = [], shownBeforeReturn = 0
        var length = initialLength
        for index in 0..<(edits + 10) {
            let word = "w\(index) "
            let start = DispatchTime.now().uptimeNanoseconds
            let at = length
            try await aliceDoc.edit { bundle in try bundle.insert(word, at: at) }
            let edited = DispatchTime.now().uptimeNanoseconds
            // The push runs as an app runs it, beside the view: what it does after the records
            // are in the zone (its own bookkeeping) is not on the way to Bob's screen.
            let push = Task { try await aliceDoc.push(); return DispatchTime.now().uptimeNanoseconds }
            length += word.count
            var shownAt = start
            while let shown = await visibleIterator.next() {
                shownAt = shown.at
                if shown.length >= length { break }
            }
            let loopSawIt = DispatchTime.now().uptimeNanoseconds
            while let stored = await durableIterator.next(), stored < length {}
            let storedAt = DispatchTime.now().uptimeNanoseconds
            // The next edit starts once this one has settled everywhere, as in the relay's run.
            let pushed = try await push.value
            if index >= 10 { // the first ten warm up connections and caches
                samples.append(Double(shownAt - start) / 1_000_000)
                durableSamples.append(Double(storedAt - start) / 1_000_000)
                editTimes.append(Double(edited - start) / 1_000_000)
                afterEdit.append(Double(loopSawIt - edited) / 1_000_000)
                loopSamples.append(Double(loopSawIt - start) / 1_000_000)
                if shownAt < edited { shownBeforeReturn += 1 }
                pushTimes.append(Double(pushed - edited) / 1_000_000)
            }
            if !json && index % 100 == 0 { FileHandle.standardError.write(Data("latency: \(index) edits\n".utf8)) }
        }
        guard try await bobDoc.text() == aliceDoc.text() else { throw ValidationError("latency: the two copies differ at the end") }
        let p50 = Clock.median(samples), p99 = Clock.percentile(samples, 0.99)
        var fields = [("edits", "\(samples.count)"), ("p50_ms", Clock.format(p50)), ("p99_ms", Clock.format(p99)),
                      ("sender_live", "\(senderLive)"), ("sender_socket", "\(socketsOpen.0)"), ("receiver_socket", "\(socketsOpen.1)"),
                      ("mean_ms", Clock.format(samples.reduce(0, +) / Double(max(1, samples.count)))),
                      ("durable_p50_ms", Clock.format(Clock.median(durableSamples))),
                      ("durable_p99_ms", Clock.format(Clock.percentile(durableSamples, 0.99))),
                      // Alice's edit call, her fsync included.
                      ("edit_p50_ms", Clock.format(Clock.median(editTimes))),
                      ("shown_before_edit_returned", "\(shownBeforeReturn)"),
                      // As measured before session 17: until this loop, which awaits Alice's
                      // edit call first, sees Bob's view has it (never less than that call).
                      ("loop_p50_ms", Clock.format(Clock.median(loopSamples))),
                      ("loop_p99_ms", Clock.format(Clock.percentile(loopSamples, 0.99))),
                      // From the edit call's return to this loop seeing Bob's view have it.
                      ("after_edit_p50_ms", Clock.format(Clock.median(afterEdit))),
                      ("after_edit_p99_ms", Clock.format(Clock.percentile(afterEdit, 0.99))),
                      ("push_p50_ms", Clock.format(Clock.median(pushTimes)))]
        // The plaintext Yjs relay, same machine, same run, same number of sequential edits.
        if !relayPython.isEmpty {
            if !json { FileHandle.standardError.write(Data("latency: the plaintext Yjs relay\n".utf8)) }
            let relay = try RelayPeer.run(python: relayPython, script: relayScript, edits: edits)
            fields += [("relay_p50_ms", Clock.format(relay.p50)), ("relay_p99_ms", Clock.format(relay.p99)),
                       ("ratio_p50", Clock.format(p50 / relay.p50)), ("ratio_p99", Clock.format(p99 / relay.p99))]
        }
        return fields
    }

    func join(directory: String, serverURL: String) async throws -> [(String, String)] {
        let path = trace ?? EditingTrace.sharedDirectory() + "/automerge-paper.json.gz"
        let editing = try EditingTrace.load(path: path)
        guard !editing.isConcurrent else { throw ValidationError("join: a sequential trace is needed") }
        let invitees = max(1, (members ?? 2) - 1)
        let alice = try await BenchMember.make("alice", directory: directory, serverURL: serverURL)
        let bob = try await BenchMember.make("bob", directory: directory, serverURL: serverURL)
        // The other invitees publish one key package each (all an invite takes from them), 16 at a time.
        let others = try await concurrentMap(Array(1..<invitees), width: 16) { index in
            try await BenchMember.make("m\(index)", directory: directory, serverURL: serverURL, keyPackages: 1)
        }
        if !json && invitees > 1 { FileHandle.standardError.write(Data("join: \(invitees) identities with key packages\n".utf8)) }
        let document = Document()
        let body = try document.change(message: "create") { tx -> ObjectID in
            try tx.put(.root, DocumentSchema.schemaKey, .scalar(.int(DocumentSchema.version)))
            try tx.put(.root, DocumentSchema.titleKey, "paper")
            return try tx.put(.root, DocumentSchema.bodyKey, .text)!
        }
        var reader = editing.transactionReader()
        while reader.hasNext {
            try document.change { tx in try reader.readTransaction { pos, del, ins in try tx.splice(body, at: pos, delete: del, insert: ins) } }
        }
        _ = try DocumentBundle.create(at: alice.bundlePath, device: alice.device, adopting: document, documentID: "paper")
        let (shareMs, aliceDoc) = try await Clock.measureAsync {
            try await SharedDocument.share(bundleAt: alice.bundlePath, device: alice.device, account: alice.account)
        }
        let dids = [bob.account.did] + others.map(\.account.did)
        let (inviteMs, _) = try await Clock.measureAsync { try await aliceDoc.invite(dids) }
        let welcome = try await bob.account.delivery.getWelcome(convoId: aliceDoc.convoId)
        let (joinMs, text) = try await Clock.measureAsync { () -> String in
            let bobDoc = try await SharedDocument.join(convoId: aliceDoc.convoId, account: bob.account, bundleAt: bob.bundlePath, device: bob.device)
            return try await bobDoc.text()
        }
        guard text == editing.endContent else { throw ValidationError("join: the joiner's text differs from the trace's end content") }
        return [("trace", "\"\(editing.name)\""), ("characters", "\(text.count)"), ("members", "\(invitees + 1)"),
                ("share_ms", Clock.format(shareMs)), ("invite_ms", Clock.format(inviteMs)),
                ("welcome_bytes", "\(welcome.welcome.count)"),
                ("join_ms", Clock.format(joinMs)), ("invite_to_text_ms", Clock.format(inviteMs + joinMs))]
    }

    func sustained(directory: String, serverURL: String, serverPID: Int32, serverData: String) async throws -> [(String, String)] {
        var people: [BenchMember] = []
        for index in 0..<max(2, members ?? 3) {
            people.append(try await BenchMember.make("m\(index)", directory: directory, serverURL: serverURL, sendingKeysAhead: sendingKeysAhead, previewBytes: previewBytes, ephemeralSocket: ephemeralSocket))
        }
        _ = try DocumentBundle.create(at: people[0].bundlePath, device: people[0].device, title: "typing")
        let first = try await SharedDocument.share(bundleAt: people[0].bundlePath, device: people[0].device, account: people[0].account)
        try await first.invite(people.dropFirst().map(\.account.did))
        var docs = [first]
        for person in people.dropFirst() {
            docs.append(try await SharedDocument.join(convoId: first.convoId, account: person.account, bundleAt: person.bundlePath, device: person.device))
        }
        let storedBefore = DirectorySize.bytes(under: serverData)
        let seqBefore = await first.status().latestSeq ?? 0
        let cpuBefore = (ProcessCPU.seconds(), ProcessCPU.seconds(pid: serverPID))
        let deadline = ContinuousClock.now + .seconds(seconds)
        let interval = Duration.milliseconds(intervalMs)
        let results = try await withThrowingTaskGroup(of: (pushes: Int, plaintext: Int).self) { group in
            for (index, doc) in docs.enumerated() {
                group.addTask {
                    var pushes = 0, plaintext = 0
                    var next = ContinuousClock.now
                    let listener = Task { for try await _ in doc.live(pollInterval: .seconds(3600), pullInterval: .seconds(3600)) {} }
                    defer { listener.cancel() }
                    while ContinuousClock.now < deadline {
                        let word = "m\(index).\(pushes) "
                        try await doc.edit { bundle in try bundle.insert(word, at: 0) }
                        let report = try await doc.push()
                        if ProcessInfo.processInfo.environment["IMPRINT_BENCH_VERBOSE"] != nil {
                            FileHandle.standardError.write(Data("sustained: m\(index) pushed \(report.changes) changes, \(report.bytes) bytes, seq \(report.seq ?? -1)\n".utf8))
                        }
                        pushes += 1
                        plaintext += word.utf8.count
                        _ = report
                        next += interval
                        try await Task.sleep(until: next, clock: .continuous)
                    }
                    return (pushes, plaintext)
                }
            }
            var all: [(Int, Int)] = []
            for try await result in group { all.append(result) }
            return all
        }
        // Everyone catches up; every edit must be everywhere.
        for _ in 0..<3 { for doc in docs { try await doc.pull() } }
        let texts = try await docs.asyncMap { try await $0.text() }
        guard Set(texts).count == 1 else { throw ValidationError("sustained: the members' texts differ at the end") }
        let edits = results.reduce(0) { $0 + $1.0 }
        // `live` pushes too (it sees each edit land in the bundle): count the messages sent.
        let pushes = (await first.status().latestSeq ?? seqBefore) - seqBefore
        let cpuAfter = (ProcessCPU.seconds(), ProcessCPU.seconds(pid: serverPID))
        let stored = DirectorySize.bytes(under: serverData) - storedBefore
        let plaintext = results.reduce(0) { $0 + $1.1 }
        return [("members", "\(docs.count)"), ("seconds", "\(seconds)"), ("edits", "\(edits)"), ("change_sets", "\(pushes)"),
                ("all_visible", "true"),
                ("client_cpu_ms_per_change_set", Clock.format((cpuAfter.0 - cpuBefore.0) * 1000 / Double(max(1, pushes)))),
                ("server_cpu_ms_per_change_set", Clock.format((cpuAfter.1 - cpuBefore.1) * 1000 / Double(max(1, pushes)))),
                ("stored_bytes_per_change_set", Clock.format(Double(stored) / Double(max(1, pushes)))),
                ("plaintext_bytes_per_edit", Clock.format(Double(plaintext) / Double(max(1, edits))))]
    }
}

/// One member of a benchmark: a home with a key store (key file), an account on the server.
struct BenchMember {
    let account: SyncAccount
    let device: DeviceID
    let bundlePath: String

    /// A member with its own home; `keyPackages` overrides how many key packages it publishes.
    static func make(_ name: String, directory: String, serverURL: String, keyPackages: Int? = nil,
                     sendingKeysAhead: Int? = nil, previewBytes: Int? = nil, ephemeralSocket: Bool = true) async throws -> BenchMember {
        let home = ImprintHome(path: directory + "/home-\(name)")
        try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
        var options = SyncOptions()
        if let keyPackages { options.keyPackageBatch = keyPackages }
        if let sendingKeysAhead { options.sendingKeysAhead = sendingKeysAhead }
        if let previewBytes { options.previewMaximumBytes = previewBytes }
        options.ephemeralSocket = ephemeralSocket
        let account = try await SyncAccount.connect(home: home, keyStore: try home.openKeyStore(passphrase: nil), serverURL: serverURL,
                                                    httpClient: benchHTTPClient, options: options)
        try await account.topUpKeyPackages()
        return BenchMember(account: account, device: try DeviceID(name), bundlePath: directory + "/\(name).imprint")
    }
}

let benchHTTPClient: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}()

/// An `imprint-server` child process on a free loopback port.
struct ServerProcess {
    let process: Process
    let url: String
    var pid: Int32 { process.processIdentifier }

    /// - Parameters:
    ///   - db: the `--db` URL (default: SQLite under `data`).
    ///   - extraArguments: more flags (`--benchmark-endpoints`).
    static func start(executable: String?, data: String, db: String? = nil, extraArguments: [String] = []) throws -> ServerProcess {
        let binary = executable ?? (CommandLine.arguments[0] as NSString).deletingLastPathComponent + "/imprint-server"
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationError("no imprint-server at \(binary): build it (swift build -c release --product imprint-server) or pass --server")
        }
        for attempt in 0..<5 {
            let port = Int.random(in: 20_000...60_000)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            // The per-DID rate limit (100/s, bursts of 500) is raised: one benchmark member sends
            // and fetches far more often than a person types, and throttling it would measure
            // the limiter, not the path.
            process.arguments = ["--host", "127.0.0.1", "--port", "\(port)", "--db", db ?? "sqlite:\(data)/ds.sqlite", "--data", data,
                                 "--rate-limit", "100000", "--rate-burst", "100000", "--max-connections-per-address", "100000"]
                + extraArguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let url = "http://127.0.0.1:\(port)"
            for _ in 0..<200 where process.isRunning {
                if Self.isListening(port: port) { return ServerProcess(process: process, url: url) }
                usleep(20_000)
            }
            process.terminate()
            if attempt == 4 { break }
        }
        throw ValidationError("imprint-server did not start")
    }

    static func isListening(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { _ = Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

enum SystemLoad {
    static func oneMinute() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return 0 }
        return Double(text.split(separator: " ").first ?? "0") ?? 0
    }
}

enum ProcessCPU {
    /// User + system CPU seconds of this process.
    static func seconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1_000_000
    }

    /// Minor page faults of this process so far: pages the kernel had to map in on first
    /// touch (memory the allocator took from, or gave back to, the kernel).
    static func minorFaults() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_minflt
    }

    /// User + system CPU seconds of process `pid` (from /proc).
    static func seconds(pid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3; utime and stime are fields 14 and 15.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

enum DirectorySize {
    static func bytes(under root: String) -> Int {
        guard let walker = FileManager.default.enumerator(atPath: root) else { return 0 }
        var total = 0
        while let relative = walker.nextObject() as? String {
            if let size = (try? FileManager.default.attributesOfItem(atPath: root + "/" + relative))?[.size] as? Int { total += size }
        }
        return total
    }
}

extension Clock {
    static func measureAsync<T>(_ body: () async throws -> T) async rethrows -> (Double, T) {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try await body()
        return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000, result)
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for element in self { out.append(try await transform(element)) }
        return out
    }
}

/// `Benchmarks/peers/yjs_relay_bench.py`: pycrdt-websocket with an SQLite store, measured
/// the way `latency` measures Imprint.
enum RelayPeer {
    static func run(python: String, script: String, edits: Int) throws -> (p50: Double, p99: Double) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("relay-\(UUID().uuidString).json").path
        _ = FileManager.default.createFile(atPath: output, contents: nil)  // the FileHandle below throws if it failed
        defer { try? FileManager.default.removeItem(atPath: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, "--edits", "\(edits)", "--json"]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: output),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let p50 = object["p50_ms"] as? Double, let p99 = object["p99_ms"] as? Double else {
            throw ValidationError("the Yjs relay peer failed (run Benchmarks/peers/setup.sh; or pass --relay-python '' to skip it)")
        }
        return (p50, p99)
    }
}
